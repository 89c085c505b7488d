/*
 * llama-bench -o md tables as saved and pasted: with or without outer
 * pipes, with log lines between rows, a "build:" line above, below or
 * missing, the 2023-24 test names ("pp 512"), rows without their header,
 * and an -ot value holding '|'. One row of lbscan.c's table of formats.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/lbscan.h"
#include "evidence/lbread.h"
#include "evidence/llamabench.h"
#include "base/json.h"
#include "base/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct table {
	int kind;               /* 'm' md, 'h' md rows without header */
	size_t header_line;
	char **cols;            /* header cells (md) */
	size_t ncols;
	int piped;              /* rows start with '|' */
	size_t first_row, nrows;
	int has_build, has_pre;
	char *pre_commit;       /* a build line above the table */
	long pre_number;
};

/* The md reader's state. */
struct md {
	struct table t;         /* the table being read */
	int in_table;
	/* a build line not yet given to a table */
	char *loose_commit;
	long loose_number;
	size_t loose_line;
	int has_loose;
};

static int
starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* ---- build lines --------------------------------------------------------- */

/* "build: 9c699074c (8664)", with backticks or text after it. */
static int
parse_build(const char *t, char **commit, long *number)
{
	const char *p = t, *sp, *close;
	long n = 0;

	while (*p == '`')
		p++;
	if (!starts(p, "build: "))
		return 0;
	p += 7;
	sp = strchr(p, ' ');
	if (!sp || sp == p || sp[1] != '(')
		return 0;
	close = strchr(sp + 2, ')');
	if (!close || close == sp + 2)
		return 0;
	for (const char *d = sp + 2; d < close; d++) {
		if (*d < '0' || *d > '9')
			return 0;
		n = n * 10 + (*d - '0');
		if (n > INT_MAX)
			return 0;
	}
	*commit = xstrndup(p, (size_t)(sp - p));
	*number = n;
	return 1;
}

/* Gives a build to the rows [from, from+n), raw fields included. */
static void
give_build(struct lb_output *out, size_t from, size_t n, const char *commit,
	   long number)
{
	size_t i, end;

	for (i = from; i < from + n; i++) {
		struct lb_row *r = &out->rows[i];
		struct json *o = json_parse_prefix(r->raw_json,
						   strlen(r->raw_json), &end);

		free(r->build_commit);
		r->build_commit = xstrdup(commit);
		r->build_number = number;
		json_set_str(o, "build_commit", commit);
		json_set_num(o, "build_number", (double)number);
		free(r->raw_json);
		r->raw_json = json_print(o, 0);
		json_free(o);
	}
}

/* ---- md tables ----------------------------------------------------------- */

/*
 * The cells of a table line (trimmed, malloc'd; free with strv_free).
 * Outer pipes are dropped when piped. NULL when there are too many.
 */
static char **
split_cells(const char *t, int piped, size_t *n)
{
	char **v = NULL;
	const char *p = t, *bar;
	size_t len = strlen(t);

	*n = 0;
	if (piped) {
		if (*p != '|')
			return NULL;
		p++;
		if (len > 1 && t[len - 1] == '|')
			len--;
	}
	for (;;) {
		const char *stop = t + len;
		const char *a, *b;

		bar = memchr(p, '|', (size_t)(stop - p));
		b = bar ? bar : stop;
		a = p;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		v = strv_push(v, n, xstrndup(a, (size_t)(b - a)));
		if (*n > LB_MAX_CELLS) {
			strv_free(v);
			*n = 0;
			return NULL;
		}
		if (!bar)
			break;
		p = bar + 1;
	}
	return v;
}

static int
is_separator(const char *t)
{
	int dash = 0, bar = 0;

	for (; *t; t++) {
		if (*t == '-')
			dash = 1;
		else if (*t == '|')
			bar = 1;
		else if (*t != ':' && *t != ' ' && *t != '\t')
			return 0;
	}
	return dash && bar;
}

/* A header: first cell "model", a "test" cell, last cell "t/s". */
static char **
header_cells(const char *t, size_t *n, int *piped)
{
	char **v;
	size_t k;
	int has_test = 0;

	*piped = t[0] == '|';
	if (!strchr(t, '|'))
		return NULL;
	v = split_cells(t, *piped, n);
	if (!v || *n < 3 || strcmp(v[0], "model") ||
	    strcmp(v[*n - 1], "t/s")) {
		strv_free(v);
		return NULL;
	}
	for (k = 0; k < *n; k++)
		has_test |= !strcmp(v[k], "test");
	if (!has_test) {
		strv_free(v);
		return NULL;
	}
	return v;
}

/*
 * "A ± B" as llama-bench prints t/s ("%.2f ± %.2f"), also with the sign
 * mangled by a terminal or an encoding ("_", "Â±", U+FFFD, "+-").
 */
static int
parse_pm(const char *cell, double *avg, double *sd)
{
	static const char *const signs[] = {
		"\xC2\xB1", "\xC3\x82\xC2\xB1", "\xEF\xBF\xBD", "+/-", "+-",
		"_", "?",
	};
	const char *sp = strchr(cell, ' '), *q;
	char *a = NULL;
	size_t k;
	int rc = -1;

	if (!sp)
		return -1;
	a = xstrndup(cell, (size_t)(sp - cell));
	for (q = sp; *q == ' '; q++)
		;
	for (k = 0; k < ARRAY_SIZE(signs); k++)
		if (starts(q, signs[k]))
			break;
	if (k == ARRAY_SIZE(signs))
		goto out;
	q += strlen(signs[k]);
	if (*q != ' ')
		goto out;
	while (*q == ' ')
		q++;
	if (lb_strict_num(a, avg) == 0 && lb_strict_num(q, sd) == 0 &&
	    *avg >= 0 && *sd >= 0)
		rc = 0;
out:
	free(a);
	return rc;
}

/* What a table column means for a row; NULL: kept raw only. */
static int
set_column(struct lb_row *r, const char *col, const char *v,
	   const char *where)
{
	static const struct { const char *col; size_t off; } ints[] = {
		{ "ngl", offsetof(struct lb_row, n_gpu_layers) },
		{ "n_gpu_layers", offsetof(struct lb_row, n_gpu_layers) },
		{ "threads", offsetof(struct lb_row, n_threads) },
		{ "n_threads", offsetof(struct lb_row, n_threads) },
		{ "n_batch", offsetof(struct lb_row, n_batch) },
		{ "n_ubatch", offsetof(struct lb_row, n_ubatch) },
	};
	long long x;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(ints); k++) {
		if (strcmp(col, ints[k].col))
			continue;
		if (lb_strict_int(v, &x) < 0 || x < INT_MIN || x > INT_MAX)
			return error("%s: column '%s' is '%s', not an integer",
				     where, col, v);
		*(long *)(void *)((char *)r + ints[k].off) = (long)x;
		return 0;
	}
	if (!strcmp(col, "model")) {
		free(r->model_type);
		r->model_type = xstrdup(v);
	} else if (!strcmp(col, "backend")) {
		free(r->backends);
		r->backends = xstrdup(v);
	} else if (!strcmp(col, "type_k")) {
		free(r->type_k);
		r->type_k = xstrdup(v);
	} else if (!strcmp(col, "type_v")) {
		free(r->type_v);
		r->type_v = xstrdup(v);
	} else if (!strcmp(col, "fa") || !strcmp(col, "flash_attn")) {
		free(r->flash_attn);
		r->flash_attn = xstrdup(
			!strcmp(v, "1") || !strcmp(v, "on") ||
			!strcmp(v, "true") || !strcmp(v, "enabled") ? "on" :
			!strcmp(v, "0") || !strcmp(v, "off") ||
			!strcmp(v, "false") || !strcmp(v, "disabled") ? "off" :
			!strcmp(v, "-1") || !strcmp(v, "auto") ? "auto" : v);
	}
	return 0;
}

static void
row_init(struct lb_row *r)
{
	memset(r, 0, sizeof(*r));
	r->build_commit = xstrdup("");
	r->build_number = -1;
	r->backends = xstrdup("");
	r->cpu_info = xstrdup("");
	r->gpu_info = xstrdup("");
	r->model_filename = xstrdup("");
	r->model_type = xstrdup("");
	r->type_k = xstrdup("");
	r->type_v = xstrdup("");
	r->flash_attn = xstrdup("");
	r->test_time = xstrdup("");
	r->model_size = r->model_n_params = -1;
	r->n_batch = r->n_ubatch = r->n_threads = r->n_gpu_layers = -1;
	r->stddev_ts = NAN;
	r->spread_source = "table";
}

/*
 * One table row from its cells; cols names them (NULL entries: columns
 * without a name, left out). -1 after error() naming the line.
 */
static int
table_row(struct lb_scan *s, struct md *m, size_t i, char *const *cols,
	  char *const *cells, size_t n)
{
	struct lb_row r;
	struct json *raw = json_new_object();
	char *where = xstrfmt("'%s' line %zu", s->name, i + 1);
	int have_test = 0, have_ts = 0, rc = -1;
	size_t k;

	row_init(&r);
	for (k = 0; k < n; k++) {
		if (!cols[k])
			continue;
		json_set_str(raw, cols[k], cells[k]);
		if (!strcmp(cols[k], "test")) {
			if (lb_test_parse(cells[k], &r.n_prompt, &r.n_gen,
					  &r.n_depth) < 0) {
				error("%s: '%s' is not a llama-bench test name",
				      where, cells[k]);
				goto out;
			}
			snprintf(r.test_label, sizeof(r.test_label), "%s",
				 cells[k]);
			have_test = 1;
		} else if (!strcmp(cols[k], "t/s")) {
			if (parse_pm(cells[k], &r.avg_ts, &r.stddev_ts) < 0) {
				error("%s: t/s is '%s', not \"MEAN ± STDDEV\"",
				      where, cells[k]);
				goto out;
			}
			have_ts = 1;
		} else if (set_column(&r, cols[k], cells[k], where) < 0) {
			goto out;
		}
	}
	if (!have_test || !have_ts) {
		error("%s: a table row without %s", where,
		      have_test ? "t/s" : "a test");
		goto out;
	}
	lb_test_name(r.n_prompt, r.n_gen, r.n_depth, r.test, sizeof(r.test));
	r.raw_json = json_print(raw, 0);
	r.line = i + 1;
	r.block = (int)s->block - 1;
	lb_rows_push(s->out, &r);
	m->t.nrows++;
	rc = 0;
out:
	if (rc < 0)
		lb_row_release(&r);
	json_free(raw);
	free(where);
	return rc;
}

/* The table being read ends: its build, or the one above it. */
static void
close_table(struct lb_scan *s, struct md *m)
{
	struct table *t = &m->t;

	if (!m->in_table)
		return;
	if (!t->has_build && t->has_pre && t->nrows)
		give_build(s->out, t->first_row, t->nrows, t->pre_commit,
			   t->pre_number);
	else if (!t->has_build && t->nrows)
		s->out->tables_without_build++;
	if (!t->nrows && t->kind == 'm')
		s->incomplete = 1;
	strv_free(t->cols);
	free(t->pre_commit);
	memset(t, 0, sizeof(*t));
	m->in_table = 0;
}

static int
open_table(struct lb_scan *s, struct md *m, size_t i, char **cols, size_t n,
	   int piped, int kind)
{
	struct table *t = &m->t;

	close_table(s, m);
	if (lb_scan_claim(s, i, &lb_format_md) < 0) {
		strv_free(cols);
		return -1;
	}
	t->kind = kind;
	t->header_line = i + 1;
	t->cols = cols;
	t->ncols = n;
	t->piped = piped;
	t->first_row = s->out->n;
	if (m->has_loose) {
		t->has_pre = 1;
		t->pre_commit = m->loose_commit;
		t->pre_number = m->loose_number;
		m->loose_commit = NULL;
		m->has_loose = 0;
	}
	m->in_table = 1;
	s->block++;
	return 0;
}

/*
 * "| llama 7B | 3.56 GiB | 6.74 B | CUDA | 99 | pp512 | 1.0 ± 0.1 |"
 * without a header above it: the first four columns and the last two
 * have a fixed meaning in every version; the middle ones are not named,
 * so they are left out.
 */
static char **
headerless_cells(const char *t, size_t *n)
{
	char **v;
	long a, b, c;
	double x, y;

	if (t[0] != '|')
		return NULL;
	v = split_cells(t, 1, n);
	if (!v || *n < 6 || parse_pm(v[*n - 1], &x, &y) < 0 ||
	    lb_test_parse(v[*n - 2], &a, &b, &c) < 0) {
		strv_free(v);
		return NULL;
	}
	return v;
}

static int
headerless_row(struct lb_scan *s, struct md *m, size_t i, char **cells,
	       size_t n)
{
	static const char *const fixed[] = { "model", "size", "params",
					     "backend" };
	char **cols = xcalloc(n + 1, sizeof(char *));
	size_t k;
	int rc;

	if (!m->in_table || m->t.kind != 'h') {
		if (open_table(s, m, i, NULL, 0, 1, 'h') < 0) {
			free(cols);
			return -1;
		}
	}
	for (k = 0; k < ARRAY_SIZE(fixed); k++)
		cols[k] = (char *)fixed[k];
	cols[n - 2] = (char *)"test";
	cols[n - 1] = (char *)"t/s";
	rc = table_row(s, m, i, cols, cells, n);
	free(cols);
	return rc;
}

/*
 * A line of ggml-sycl's device table ("|ID|        Device Type|…",
 * "|--|----…", "|  |   |…", "| 0| [level_zero:gpu:0]|…"), which a 2>&1
 * capture shows between llama-bench's table header and its first row
 * (the device is opened when the first model loads): its first cell is
 * two characters wide (ggml prints "%2d"), a llama-bench table's never.
 */
static int
sycl_device_line(const char *t)
{
	if (t[0] != '|' || !t[1] || !t[2] || t[3] != '|')
		return 0;
	if (!strncmp(t + 1, "ID", 2) || !strncmp(t + 1, "--", 2) ||
	    !strncmp(t + 1, "  ", 2))
		return 1;
	return (t[1] == ' ' || (t[1] >= '0' && t[1] <= '9')) &&
	       t[2] >= '0' && t[2] <= '9' && strchr(t + 4, '[') != NULL;
}

/*
 * A line inside a table: a row, another table's header (then the table
 * ends), a line of the SYCL device table (set aside), a row cut off at
 * the end of the text, or an error.
 */
static int
md_line(struct lb_scan *s, struct md *m, size_t i, const char *t, int *consumed)
{
	struct table *tb = &m->t;
	size_t n = 0;
	char **cells;
	int rc;

	*consumed = 0;
	if (tb->piped ? t[0] != '|' : !strchr(t, '|'))
		return 0;
	if (sycl_device_line(t)) {
		lb_ignore(s, i, t, "SYCL device table (ggml-sycl log lines)");
		*consumed = 1;
		return 0;
	}
	if (is_separator(t)) {
		close_table(s, m);   /* another table begins */
		return 0;
	}
	cells = split_cells(t, tb->piped, &n);
	/* an -ot value may hold '|': the cells between belong to "ot" */
	if (cells && n > tb->ncols) {
		size_t ot, k;

		for (ot = 0; ot < tb->ncols && strcmp(tb->cols[ot], "ot"); ot++)
			;
		if (ot < tb->ncols) {
			struct buf b = BUF_INIT;
			size_t extra = n - tb->ncols;

			for (k = ot; k <= ot + extra; k++)
				buf_addf(&b, "%s%s", k > ot ? "|" : "",
					 cells[k]);
			free(cells[ot]);
			cells[ot] = buf_detach(&b, NULL);
			for (k = ot + 1; k <= ot + extra; k++)
				free(cells[k]);
			memmove(&cells[ot + 1], &cells[ot + extra + 1],
				(n - ot - extra) * sizeof(char *));
			n -= extra;
		}
	}
	*consumed = 1;
	if (lb_cut_line(s, i) && (!cells || n <= tb->ncols)) {
		/* the last line, without its newline: a whole row, or cut */
		error_silent++;
		rc = cells && n == tb->ncols && !s->lines[i].nul ?
			table_row(s, m, i, tb->cols, cells, n) : -1;
		error_silent--;
		strv_free(cells);
		if (rc < 0)
			s->cut = 1;
		return 0;
	}
	if (cells && n == tb->ncols) {
		if (s->lines[i].nul) {
			strv_free(cells);
			return lb_check_nul(s, i, i);
		}
		rc = table_row(s, m, i, tb->cols, cells, n);
		strv_free(cells);
		return rc;
	}
	strv_free(cells);
	if (i + 1 < s->nlines) {
		char *next = lb_line_dup(s, i + 1);
		int sep = is_separator(next);

		free(next);
		if (sep) {   /* the header of another (not llama-bench) table */
			close_table(s, m);
			*consumed = 0;
			return 0;
		}
	}
	return error("'%s' line %zu: a table row with %zu cells, but the "
		     "header at line %zu has %zu", s->name, i + 1, n,
		     tb->header_line, tb->ncols);
}

/* ---- the reader ---------------------------------------------------------- */

/* A build line: the table above takes it, else it waits for one below. */
static void
build_line(struct lb_scan *s, struct md *m, size_t i, char *commit,
	   long number)
{
	if (m->in_table && !m->t.has_build && m->t.nrows) {
		give_build(s->out, m->t.first_row, m->t.nrows, commit, number);
		m->t.has_build = 1;
		close_table(s, m);
		free(commit);
	} else {
		close_table(s, m);
		free(m->loose_commit);
		m->loose_commit = commit;
		m->loose_number = number;
		m->loose_line = i;
		m->has_loose = 1;
	}
}

/*
 * In this order: a build line, a header (with its separator line below,
 * or cut off before it at the end of the text), a line of the table
 * being read, a row without a header.
 */
static int
md_scan_line(struct lb_scan *s, void *state, size_t *ip, const char *t)
{
	struct md *m = state;
	size_t i = *ip, n = 0;
	char **v, *commit;
	long number;
	int piped, consumed, rc;

	if (parse_build(t, &commit, &number)) {
		build_line(s, m, i, commit, number);
		return 1;
	}
	if ((v = header_cells(t, &n, &piped))) {
		char *next = i + 1 < s->nlines ? lb_line_dup(s, i + 1) : NULL;
		int sep = next && is_separator(next);

		free(next);
		if (sep) {
			if (open_table(s, m, i, v, n, piped, 'm') < 0)
				return -1;
			*ip = i + 1;
			return 1;
		}
		strv_free(v);
		if (i == lb_last_text_line(s)) {
			/* a header cut off before its separator line */
			if (lb_scan_claim(s, i, &lb_format_md) < 0)
				return -1;
			s->incomplete = 1;
			return 1;
		}
	}
	if (m->in_table && m->t.kind == 'm') {
		if (md_line(s, m, i, t, &consumed) < 0)
			return -1;
		if (consumed)
			return 1;
	}
	if (!(v = headerless_cells(t, &n)))
		return 0;
	if (m->in_table && m->t.kind == 'm')
		close_table(s, m);
	if (s->lines[i].nul) {
		strv_free(v);
		return lb_check_nul(s, i, i) < 0 ? -1 : 1;
	}
	rc = headerless_row(s, m, i, v, n);
	strv_free(v);
	return rc < 0 ? -1 : 1;
}

static void
md_end(struct lb_scan *s, void *state)
{
	struct md *m = state;

	close_table(s, m);
	if (m->has_loose) {
		char *t = lb_line_dup(s, m->loose_line);

		lb_ignore(s, m->loose_line, t, "build line without a table");
		free(t);
	}
}

static void
md_release(void *state)
{
	struct md *m = state;

	strv_free(m->t.cols);
	free(m->t.pre_commit);
	free(m->loose_commit);
}

const struct lb_format lb_format_md = {
	"md", sizeof(struct md), md_scan_line, md_end, md_release,
};
