/*
 * llama-bench -o csv: a header of field names (n_prompt, n_gen and
 * avg_ts among them), then RFC 4180 rows, every value quoted. One row of
 * lbscan.c's table of formats.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/lbscan.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Commas of a line (outside no quotes: a bare row has none). */
static size_t
lb_count_commas(const char *t)
{
	size_t n = 0;

	for (; *t; t++)
		n += *t == ',';
	return n;
}

/* The csv reader's state. */
struct csv {
	char **cols;            /* the header's names */
	size_t ncols;
	int in_csv;             /* a header was seen */
	size_t rows;            /* rows since it */
};

/* "build_commit,build_number,…": every name an identifier, n_prompt in. */
static char **
csv_header(const char *t, size_t *n)
{
	char **v = NULL;
	const char *p = t;
	int prompt = 0, gen = 0, avg = 0;

	*n = 0;
	if (!strchr(t, ','))
		return NULL;
	for (;;) {
		const char *c = strchr(p, ',');
		char *name = xstrndup(p, c ? (size_t)(c - p) : strlen(p));

		if (!lb_is_ident(name) || *n >= LB_MAX_CELLS) {
			free(name);
			strv_free(v);
			return NULL;
		}
		prompt |= !strcmp(name, "n_prompt");
		gen |= !strcmp(name, "n_gen");
		avg |= !strcmp(name, "avg_ts");
		v = strv_push(v, n, name);
		if (!c)
			break;
		p = c + 1;
	}
	if (!prompt || !gen || !avg) {
		strv_free(v);
		return NULL;
	}
	return v;
}

/*
 * RFC 4180 fields ("…" with "" for a quote, or bare); NULL if malformed,
 * with *cut set when the text ends inside a quoted field.
 */
static char **
csv_fields(const char *t, size_t *n, int *cut)
{
	char **v = NULL;
	const char *p = t;
	struct buf b = BUF_INIT;

	*n = 0;
	*cut = 0;
	for (;;) {
		buf_reset(&b);
		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p) {
					*cut = 1;
					goto bad;
				}
				if (*p == '"' && p[1] == '"') {
					buf_addch(&b, '"');
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					buf_addch(&b, *p++);
				}
			}
		} else {
			while (*p && *p != ',')
				buf_addch(&b, *p++);
		}
		v = strv_push(v, n, xstrdup(b.buf));
		if (*n > LB_MAX_CELLS)
			goto bad;
		if (!*p)
			break;
		if (*p != ',')
			goto bad;
		p++;
	}
	buf_release(&b);
	return v;
bad:
	buf_release(&b);
	strv_free(v);
	return NULL;
}

static int
csv_row(struct lb_scan *s, struct csv *c, size_t i, const char *t)
{
	size_t n = 0;
	int cut, rc;
	char **v = csv_fields(t, &n, &cut);

	if (lb_cut_line(s, i) && (v ? n <= c->ncols : cut)) {
		/* the last line, without its newline: a whole row, or cut */
		error_silent++;
		rc = v && n == c->ncols && !s->lines[i].nul ?
			lb_named_row(s, i, c->cols, NULL, v, n) : -1;
		error_silent--;
		strv_free(v);
		if (rc < 0)
			s->cut = 1;
		else
			c->rows++;
		return 0;
	}
	if (!v || n != c->ncols) {
		strv_free(v);
		return error("'%s' line %zu: a CSV row with %s fields, but the "
			     "header has %zu", s->name, i + 1,
			     v ? "a different number of" : "malformed",
			     c->ncols);
	}
	if (lb_check_nul(s, i, i) < 0) {
		strv_free(v);
		return -1;
	}
	rc = lb_named_row(s, i, c->cols, NULL, v, n);
	strv_free(v);
	if (rc == 0)
		c->rows++;
	return rc;
}

/* A header starts a block of rows; a row needs a header above it. */
static int
csv_line(struct lb_scan *s, void *state, size_t *ip, const char *t)
{
	struct csv *c = state;
	size_t n = 0;
	char **v;

	if ((v = csv_header(t, &n))) {
		static const char *const own[] = {
			"build_commit", "test_time", "avg_ns",
		};
		size_t k, j;

		/* every llama-bench since 2023 prints these: a header
		 * without them is some wrapper's own summary */
		for (k = 0; k < ARRAY_SIZE(own); k++) {
			for (j = 0; j < n && strcmp(v[j], own[k]); j++)
				;
			if (j == n) {
				strv_free(v);
				return error("'%s' line %zu: a CSV with n_prompt, "
					     "n_gen and avg_ts but no %s column: "
					     "not llama-bench -o csv (every "
					     "version prints build_commit, "
					     "test_time and avg_ns; a wrapper's "
					     "own summary?)", s->name, *ip + 1,
					     own[k]);
			}
		}
		if (lb_scan_claim(s, *ip, &lb_format_csv) < 0) {
			strv_free(v);
			return -1;
		}
		if (c->in_csv && !c->rows)
			s->incomplete = 1;
		strv_free(c->cols);
		c->cols = v;
		c->ncols = n;
		c->in_csv = 1;
		c->rows = 0;
		s->block++;
		return 1;
	}
	if (c->in_csv && t[0] == '"')
		return csv_row(s, c, *ip, t) < 0 ? -1 : 1;
	if (c->in_csv && !c->rows && strchr(t, ',') &&
	    lb_count_commas(t) + 1 == c->ncols)
		return error("'%s' line %zu: a CSV row whose values are not "
			     "quoted: llama-bench -o csv quotes every value "
			     "(a wrapper's own CSV?)", s->name, *ip + 1);
	return 0;
}

static void
csv_end(struct lb_scan *s, void *state)
{
	struct csv *c = state;

	if (c->in_csv && !c->rows)
		s->incomplete = 1;
}

static void
csv_release(void *state)
{
	strv_free(((struct csv *)state)->cols);
}

const struct lb_format lb_format_csv = {
	"csv", sizeof(struct csv), csv_line, csv_end, csv_release,
};
