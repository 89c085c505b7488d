/*
 * Reading llama-bench -o sql: "CREATE TABLE IF NOT EXISTS test (" with
 * one "  name TYPE," line per column, then one INSERT per result, values
 * quoted as llama-bench quotes them. One row of lbscan.c's table of
 * formats. (Writing that format for llama.cpp's tools is lbsql.c.)
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/lbscan.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* The sql reader's state. */
struct sqlin {
	char **cols, **types;   /* CREATE TABLE's columns and their types */
	size_t ncols;
	int in_sql;             /* a CREATE TABLE or an INSERT was seen */
	size_t rows;            /* INSERTs since the CREATE TABLE */
};

static int
starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void
sql_reset(struct sqlin *q)
{
	strv_free(q->cols);
	strv_free(q->types);
	q->cols = q->types = NULL;
	q->ncols = 0;
}

/*
 * "CREATE TABLE IF NOT EXISTS test (" and "  col TYPE," lines up to ");".
 * Returns the last line used, or (size_t)-1 after error().
 */
static size_t
sql_create(struct lb_scan *s, struct sqlin *q, size_t i)
{
	size_t j, ntypes = 0;

	if (q->in_sql && !q->rows)
		s->incomplete = 1;
	sql_reset(q);
	for (j = i + 1; j < s->nlines; j++) {
		char *t = lb_line_dup(s, j), *sp;
		size_t len = strlen(t);

		if (starts(t, ")")) {
			free(t);
			q->in_sql = 1;
			q->rows = 0;
			return j;
		}
		if (lb_cut_line(s, j)) {
			free(t);
			break;   /* cut off inside CREATE TABLE */
		}
		if (len && t[len - 1] == ',')
			t[--len] = '\0';
		sp = strchr(t, ' ');
		if (!sp || q->ncols >= LB_MAX_CELLS) {
			error("'%s' line %zu: not a column of CREATE TABLE",
			      s->name, j + 1);
			free(t);
			return (size_t)-1;
		}
		*sp = '\0';
		if (!lb_is_ident(t)) {
			error("'%s' line %zu: '%s' is not a column name",
			      s->name, j + 1, t);
			free(t);
			return (size_t)-1;
		}
		q->cols = strv_push(q->cols, &q->ncols, xstrdup(t));
		q->types = strv_push(q->types, &ntypes,
					 xstrdup(sp + 1));
		free(t);
	}
	/* cut off inside CREATE TABLE */
	s->cut = 1;
	q->in_sql = 1;
	return s->nlines - 1;
}

/* "(a, b, c)" at *p: names; NULL if malformed. */
static char **
sql_names(const char **p, size_t *n)
{
	char **v = NULL;
	const char *q = *p;

	*n = 0;
	if (*q++ != '(')
		return NULL;
	for (;;) {
		const char *a;

		while (*q == ' ')
			q++;
		a = q;
		while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ||
		       *q == '_')
			q++;
		if (q == a || *n >= LB_MAX_CELLS) {
			strv_free(v);
			return NULL;
		}
		v = strv_push(v, n, xstrndup(a, (size_t)(q - a)));
		while (*q == ' ')
			q++;
		if (*q == ')')
			break;
		if (*q++ != ',') {
			strv_free(v);
			return NULL;
		}
	}
	*p = q + 1;
	return v;
}

/* "('v', 'w', 12)": values, '' inside quotes for a quote. */
static char **
sql_values(const char **p, size_t *n)
{
	char **v = NULL;
	const char *q = *p;
	struct buf b = BUF_INIT;

	*n = 0;
	if (*q++ != '(')
		return NULL;
	for (;;) {
		while (*q == ' ')
			q++;
		buf_reset(&b);
		if (*q == '\'') {
			q++;
			for (;;) {
				if (!*q)
					goto bad;
				if (*q == '\'' && q[1] == '\'') {
					buf_addch(&b, '\'');
					q += 2;
				} else if (*q == '\'') {
					q++;
					break;
				} else {
					buf_addch(&b, *q++);
				}
			}
		} else {
			while (*q && *q != ',' && *q != ')' && *q != ' ')
				buf_addch(&b, *q++);
			if (!b.len)
				goto bad;
		}
		v = strv_push(v, n, xstrdup(b.buf));
		if (*n > LB_MAX_CELLS)
			goto bad;
		while (*q == ' ')
			q++;
		if (*q == ')')
			break;
		if (*q++ != ',')
			goto bad;
	}
	buf_release(&b);
	*p = q + 1;
	return v;
bad:
	buf_release(&b);
	strv_free(v);
	return NULL;
}

static int
sql_insert(struct lb_scan *s, struct sqlin *q, size_t i, const char *t)
{
	const char *p = t + strlen("INSERT INTO ");
	char **names = NULL, **vals = NULL, **types = NULL;
	size_t nn = 0, nv = 0, k, j;
	int rc = -1;

	while (*p && *p != ' ' && *p != '(')
		p++;
	while (*p == ' ')
		p++;
	names = sql_names(&p, &nn);
	while (names && *p == ' ')
		p++;
	if (names && starts(p, "VALUES")) {
		p += 6;
		while (*p == ' ')
			p++;
		vals = sql_values(&p, &nv);
	}
	if (!names || !vals || nv != nn || strcmp(p, ";")) {
		if (lb_cut_line(s, i)) {
			s->cut = 1;
			rc = 0;
		} else {
			error("'%s' line %zu: not an INSERT of llama-bench "
			      "values", s->name, i + 1);
		}
		goto out;
	}
	if (lb_check_nul(s, i, i) < 0)
		goto out;
	if (q->ncols) {
		types = xcalloc(nn + 1, sizeof(char *));
		for (k = 0; k < nn; k++)
			for (j = 0; j < q->ncols; j++)
				if (!strcmp(names[k], q->cols[j]))
					types[k] = q->types[j];
	}
	rc = lb_named_row(s, i, names, types, vals, nn);
	if (rc == 0)
		q->rows++;
out:
	free(types);
	strv_free(names);
	strv_free(vals);
	return rc;
}

static int
sql_line(struct lb_scan *s, void *state, size_t *ip, const char *t)
{
	struct sqlin *q = state;
	size_t j;

	if (starts(t, "CREATE TABLE ")) {
		if (lb_scan_claim(s, *ip, &lb_format_sql) < 0)
			return -1;
		j = sql_create(s, q, *ip);
		if (j == (size_t)-1)
			return -1;
		s->block++;
		*ip = j;
		return 1;
	}
	if (starts(t, "INSERT INTO ")) {
		if (lb_scan_claim(s, *ip, &lb_format_sql) < 0)
			return -1;
		if (!q->in_sql) {
			q->in_sql = 1;
			s->block++;
		}
		return sql_insert(s, q, *ip, t) < 0 ? -1 : 1;
	}
	return 0;
}

static void
sql_end(struct lb_scan *s, void *state)
{
	struct sqlin *q = state;

	if (q->in_sql && !q->rows)
		s->incomplete = 1;
}

static void
sql_release(void *state)
{
	sql_reset(state);
}

const struct lb_format lb_format_sql = {
	"sql", sizeof(struct sqlin), sql_line, sql_end, sql_release,
};
