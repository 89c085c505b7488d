/*
 * llama-bench output as people save and paste it: -o md tables (with or
 * without outer pipes, quoted with "> ", with log lines between rows, a
 * build line above, below or missing), -o csv, -o sql and -o json/jsonl
 * rows among log lines (2>&1, tee), shell prompts and wrapper text.
 *
 * The text is cleaned line by line first (CR, ANSI escapes and a "> "
 * quote prefix removed; line numbers kept), then scanned once. What is
 * output must be well formed, or the file is refused naming the line;
 * everything else is set aside and listed by reason, never guessed at.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/lbformats.h"
#include "evidence/lbfields.h"
#include "evidence/llamabench.h"
#include "base/json.h"
#include "base/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A row of a table has at most this many cells; more is not a table. */
#define MAX_CELLS 256

struct line {
	size_t start, len;      /* in the cleaned text (no '\n') */
	size_t orig;            /* where it starts in the text given */
	unsigned nul : 1;       /* the original line had a NUL byte */
	unsigned ended : 1;     /* the original line ended with '\n' */
};

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

struct scan {
	const char *name;
	struct lb_output *out;
	struct buf text;        /* cleaned lines, each followed by '\n' */
	struct line *lines;
	size_t nlines;
	const char *fmt;        /* "md", "csv", "sql" or "json" (family) */
	size_t fmt_line;
	struct table t;         /* the md table being read */
	int in_table;
	/* a build line not yet given to a table */
	char *loose_commit;
	long loose_number;
	size_t loose_line;
	int has_loose;
	/* csv */
	char **csv_cols;
	size_t ncsv;
	int in_csv;
	size_t csv_rows;
	/* sql */
	char **sql_cols, **sql_types;
	size_t nsql;
	int in_sql;
	size_t sql_rows;
	/* json array */
	int in_array;
	size_t block;           /* blocks started so far */
	int cut;                /* the last line was cut off */
	int empty_header;       /* a header (md, csv, sql) had no rows */
};

/* ---- cleaning ------------------------------------------------------------- */

/* Appends line [p, p+n) cleaned: no CR, no ANSI escape, no "> " prefix. */
static void
clean_line(struct scan *s, const char *p, size_t n, int first)
{
	struct line *l;
	size_t i = 0, q;
	size_t start = s->text.len;

	/* capacity doubles: a text of n lines costs n, not n² */
	if (s->nlines == 0 || (s->nlines >= 8 &&
			       !(s->nlines & (s->nlines - 1))))
		s->lines = xrealloc(s->lines, (s->nlines ? 2 * s->nlines : 8) *
				    sizeof(*s->lines));
	l = &s->lines[s->nlines++];
	memset(l, 0, sizeof(*l));
	if (first && n >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		i = 3;   /* a byte order mark */
	/* quoting: "> " (any depth), possibly after spaces */
	for (q = i; q < n && (p[q] == ' ' || p[q] == '\t'); q++)
		;
	while (q < n && p[q] == '>') {
		q++;
		if (q < n && p[q] == ' ')
			q++;
		i = q;
		while (q < n && (p[q] == ' ' || p[q] == '\t'))
			q++;
	}
	for (; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == 0x1b) {
			/* CSI: ESC [ parameters final; or ESC + one byte */
			if (i + 1 < n && p[i + 1] == '[') {
				i += 2;
				while (i < n && !((unsigned char)p[i] >= 0x40 &&
						  (unsigned char)p[i] <= 0x7e))
					i++;
			} else {
				i++;
			}
			continue;
		}
		if (c == '\r')
			continue;
		if (c == '\0') {
			l->nul = 1;
			c = ' ';
		}
		buf_addch(&s->text, c);
	}
	l->start = start;
	l->len = s->text.len - start;
	buf_addch(&s->text, '\n');
}

static void
clean(struct scan *s, const char *data, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - data) : len;

		clean_line(s, data + pos, end - pos, pos == 0);
		s->lines[s->nlines - 1].ended = nl != NULL;
		s->lines[s->nlines - 1].orig = pos;
		pos = end + 1;
	}
}

/* Line i, trimmed, as a new string. */
static char *
line_dup(const struct scan *s, size_t i)
{
	const char *p = s->text.buf + s->lines[i].start;
	size_t n = s->lines[i].len;

	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	return xstrndup(p, n);
}

/* The last line with any text. */
static size_t
last_text_line(const struct scan *s)
{
	size_t i = s->nlines;

	while (i > 0) {
		const struct line *l = &s->lines[i - 1];
		size_t k;

		for (k = 0; k < l->len; k++)
			if (s->text.buf[l->start + k] != ' ' &&
			    s->text.buf[l->start + k] != '\t')
				return i - 1;
		i--;
	}
	return 0;
}

/* Line i is the last one and has no newline: the text was cut there. */
static int
cut_line(const struct scan *s, size_t i)
{
	return i + 1 == s->nlines && !s->lines[i].ended;
}

/* ---- what the other lines are ---------------------------------------------- */

static int
starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Lines that llama.cpp and ggml print on stderr. */
static int
is_log_line(const char *t)
{
	static const char *const prefixes[] = {
		"ggml_", "llama_", "llm_load_", "load_tensors:",
		"load_backend:", "print_info:", "llama-bench:", "main:",
		"system_info:", "build_info:", "[SYCL]", "[LumeMetalCapabilities]",
		"get_memory_info:", "gguf_", "common_", "register_backend",
		"llama_model_", "load:", "graph_", "sched_", "init_tokenizer",
		"============ Repacked", "version: ", "built with ",
		"found ", "Available devices:", "rpc_", "ggml-",
		"create_tensor:",
	};
	size_t i;
	int n;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (starts(t, prefixes[i]))
			return !strcmp(prefixes[i], "found ") ?
				strstr(t, " devices") != NULL : 1;
	/* "Device 0: NAME, compute capability …", "Vulkan0: NAME | uma …" */
	if (sscanf(t, "Device %d:", &n) == 1)
		return 1;
	if (starts(t, "Vulkan") && t[6] >= '0' && t[6] <= '9' &&
	    strchr(t, ':') && strstr(t, "uma"))
		return 1;
	return 0;
}

/* A crash, an abort, a kill or a failed test. */
static int
is_crash_line(const char *t)
{
	static const char *const marks[] = {
		"ggml_abort", "GGML_ASSERT", "ggml_print_backtrace",
		"terminate called after throwing", "Segmentation fault",
		"(core dumped)", "Aborted", "Killed", "failed (exit ",
		"HSA_STATUS_ERROR", "ROCm error", "CUDA error", "server crashed",
		"failed to load model", "failed to create context",
		"failed to decode", "Failed to allocate", "out of memory",
		"Illegal instruction", "Bus error", "DeviceLostError",
		"Failed to connect to",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(marks); i++)
		if (strstr(t, marks[i]))
			return 1;
	return 0;
}

/* A shell prompt, a command line or its continuation. */
static int
is_prompt_line(const char *t)
{
	size_t n = strlen(t);

	if (starts(t, "$ ") || starts(t, "# ") || starts(t, "PS ") ||
	    starts(t, "\xE2\x9D\xAF") || starts(t, "\xE2\x9E\x9C") ||
	    !strcmp(t, "$"))
		return 1;
	if (strstr(t, ":~$") || (n && t[n - 1] == '$'))
		return 1;
	if (n > 3 && t[1] == ':' && t[2] == '\\' && strchr(t, '>'))
		return 1;   /* C:\dir>command */
	if (strstr(t, "llama-bench ") || strstr(t, "llama-bench\t") ||
	    (n && t[n - 1] == '\\') || starts(t, "-m ") || starts(t, "--"))
		return 1;
	return 0;
}

static void
ignore(struct scan *s, size_t i, const char *t, const char *why)
{
	struct lb_output *out = s->out;
	size_t k;

	for (k = 0; k < out->n_ignored; k++)
		if (!strcmp(out->ignored[k].why, why))
			break;
	if (k == out->n_ignored) {
		out->ignored = xrealloc(out->ignored,
					(k + 1) * sizeof(*out->ignored));
		out->ignored[k].why = why;
		out->ignored[k].count = 0;
		out->ignored[k].first_line = i + 1;
		out->ignored[k].example = xstrndup(t, 120);
		out->n_ignored++;
	}
	out->ignored[k].count++;
	out->mixed = 1;
}

static void
ignore_line(struct scan *s, size_t i, const char *t)
{
	if (s->lines[i].nul) {
		ignore(s, i, t, "binary bytes (NUL)");
	} else if (is_crash_line(t)) {
		s->out->crashed = 1;
		ignore(s, i, t, "crash, abort or failure message");
	} else if (is_log_line(t)) {
		s->out->log_lines++;
		ignore(s, i, t, "llama.cpp or ggml log line");
	} else if (is_prompt_line(t)) {
		ignore(s, i, t, "shell prompt or command line");
	} else if (t[0] == '|' || strstr(t, " | ")) {
		ignore(s, i, t, "table line outside a llama-bench table");
	} else {
		ignore(s, i, t, "other text");
	}
}

/* ---- shared helpers -------------------------------------------------------- */

/*
 * The format of the output at line i; output in two formats (-o md and
 * -oe json captured together) would be counted twice, so it is refused.
 */
static int
set_format(struct scan *s, size_t i, const char *fmt)
{
	if (!s->fmt) {
		s->fmt = fmt;
		s->fmt_line = i + 1;
		return 0;
	}
	if (!strcmp(s->fmt, fmt))
		return 0;
	return error("'%s' line %zu: %s output, but line %zu began %s "
		     "output; the same results in two formats (llama-bench -o "
		     "and -oe captured together?) would be counted twice: give "
		     "one stream", s->name, i + 1, fmt, s->fmt_line, s->fmt);
}

static int
check_nul(const struct scan *s, size_t from, size_t to)
{
	size_t i;

	for (i = from; i <= to && i < s->nlines; i++)
		if (s->lines[i].nul)
			return error("'%s' line %zu: a NUL byte inside "
				     "llama-bench output", s->name, i + 1);
	return 0;
}

/* A whole decimal integer, strictly (no "0x200", no spaces). */
static int
strict_int(const char *v, long long *out)
{
	const char *p = v;
	char *end;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	*out = strtoll(v, &end, 10);
	return *end ? -1 : 0;
}

/* A finite, non-negative decimal number. */
static int
strict_num(const char *v, double *out)
{
	const char *p;

	for (p = v; *p; p++)
		if (!strchr("0123456789.-+eE", *p))
			return -1;
	if (parse_double(v, out) < 0 || !isfinite(*out))
		return -1;
	return 0;
}

/* ---- build lines ---------------------------------------------------------- */

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

/* ---- md tables -------------------------------------------------------------- */

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
		if (*n > MAX_CELLS) {
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
	if (strict_num(a, avg) == 0 && strict_num(q, sd) == 0 && *avg >= 0 &&
	    *sd >= 0)
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
		if (strict_int(v, &x) < 0 || x < INT_MIN || x > INT_MAX)
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
table_row(struct scan *s, size_t i, char *const *cols, char *const *cells,
	  size_t n)
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
	s->t.nrows++;
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
close_table(struct scan *s)
{
	struct table *t = &s->t;

	if (!s->in_table)
		return;
	if (!t->has_build && t->has_pre && t->nrows)
		give_build(s->out, t->first_row, t->nrows, t->pre_commit,
			   t->pre_number);
	else if (!t->has_build && t->nrows)
		s->out->tables_without_build++;
	if (!t->nrows && t->kind == 'm')
		s->empty_header = 1;
	strv_free(t->cols);
	free(t->pre_commit);
	memset(t, 0, sizeof(*t));
	s->in_table = 0;
}

static int
open_table(struct scan *s, size_t i, char **cols, size_t n, int piped,
	   int kind)
{
	struct table *t = &s->t;

	close_table(s);
	if (set_format(s, i, "md") < 0) {
		strv_free(cols);
		return -1;
	}
	t->kind = kind;
	t->header_line = i + 1;
	t->cols = cols;
	t->ncols = n;
	t->piped = piped;
	t->first_row = s->out->n;
	if (s->has_loose) {
		t->has_pre = 1;
		t->pre_commit = s->loose_commit;
		t->pre_number = s->loose_number;
		s->loose_commit = NULL;
		s->has_loose = 0;
	}
	s->in_table = 1;
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
headerless_row(struct scan *s, size_t i, char **cells, size_t n)
{
	static const char *const fixed[] = { "model", "size", "params",
					     "backend" };
	char **cols = xcalloc(n + 1, sizeof(char *));
	size_t k;
	int rc;

	if (!s->in_table || s->t.kind != 'h') {
		if (open_table(s, i, NULL, 0, 1, 'h') < 0) {
			free(cols);
			return -1;
		}
	}
	for (k = 0; k < ARRAY_SIZE(fixed); k++)
		cols[k] = (char *)fixed[k];
	cols[n - 2] = (char *)"test";
	cols[n - 1] = (char *)"t/s";
	rc = table_row(s, i, cols, cells, n);
	free(cols);
	return rc;
}

/*
 * A line inside a table: a row, another table's header (then the table
 * ends), a row cut off at the end of the text, or an error.
 */
static int
md_line(struct scan *s, size_t i, const char *t, int *consumed)
{
	struct table *tb = &s->t;
	size_t n = 0;
	char **cells;
	int rc;

	*consumed = 0;
	if (tb->piped ? t[0] != '|' : !strchr(t, '|'))
		return 0;
	if (is_separator(t)) {
		close_table(s);   /* another table begins */
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
	if (cut_line(s, i) && (!cells || n <= tb->ncols)) {
		/* the last line, without its newline: a whole row, or cut */
		error_silent++;
		rc = cells && n == tb->ncols && !s->lines[i].nul ?
			table_row(s, i, tb->cols, cells, n) : -1;
		error_silent--;
		strv_free(cells);
		if (rc < 0)
			s->cut = 1;
		return 0;
	}
	if (cells && n == tb->ncols) {
		if (s->lines[i].nul) {
			strv_free(cells);
			return check_nul(s, i, i);
		}
		rc = table_row(s, i, tb->cols, cells, n);
		strv_free(cells);
		return rc;
	}
	strv_free(cells);
	if (i + 1 < s->nlines) {
		char *next = line_dup(s, i + 1);
		int sep = is_separator(next);

		free(next);
		if (sep) {   /* the header of another (not llama-bench) table */
			close_table(s);
			*consumed = 0;
			return 0;
		}
	}
	return error("'%s' line %zu: a table row with %zu cells, but the "
		     "header at line %zu has %zu", s->name, i + 1, n,
		     tb->header_line, tb->ncols);
}

/* ---- csv ------------------------------------------------------------------- */

/*
 * A value of a CSV or SQL row as the JSON llama-bench would print: by
 * the declared SQL type when there is one, else by the field.
 */
static int
typed_value(struct json *o, const char *key, const char *v, const char *type,
	    const char *where)
{
	int kind = lb_field_kind(key);
	long long x;
	double d;

	if (type && !strcmp(type, "TEXT"))
		kind = kind == 'b' ? 'b' : 's';
	if (type && !strcmp(type, "REAL"))
		kind = 'r';
	if (kind == 'i' || (type && !strcmp(type, "INTEGER") && kind != 'b')) {
		if (strict_int(v, &x) < 0)
			return error("%s: %s is '%s', not an integer", where,
				     key, v);
		json_set_num(o, key, (double)x);
	} else if (kind == 'r') {
		if (parse_double(v, &d) < 0 || !isfinite(d))
			return error("%s: %s is '%s', not a number", where, key,
				     v);
		json_set_num(o, key, d);
	} else if (kind == 'b') {
		if (strict_int(v, &x) == 0)
			json_set_num(o, key, (double)x);
		else if (!strcmp(v, "true") || !strcmp(v, "false"))
			json_set_bool(o, key, !strcmp(v, "true"));
		else
			json_set_str(o, key, v);
	} else {
		json_set_str(o, key, v);
	}
	return 0;
}

static int
is_ident(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return 0;
	return 1;
}

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

		if (!is_ident(name) || *n >= MAX_CELLS) {
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
		if (*n > MAX_CELLS)
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

/* Adds a row of named values (CSV, SQL); types: declared SQL types. */
static int
named_row(struct scan *s, size_t i, char *const *keys, char *const *types,
	  char *const *vals, size_t n)
{
	struct json *o = json_new_object();
	char *where = xstrfmt("'%s' line %zu", s->name, i + 1);
	struct lb_row r;
	size_t k;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	for (k = 0; k < n; k++)
		if (typed_value(o, keys[k], vals[k], types ? types[k] : NULL,
				where) < 0)
			goto out;
	if (lb_row_from_json(o, &r, where, LB_ROW_TABLE) < 0)
		goto out;
	r.line = i + 1;
	r.block = (int)s->block - 1;
	lb_rows_push(s->out, &r);
	rc = 0;
out:
	if (rc < 0)
		lb_row_release(&r);
	json_free(o);
	free(where);
	return rc;
}

static int
csv_row(struct scan *s, size_t i, const char *t)
{
	size_t n = 0;
	int cut, rc;
	char **v = csv_fields(t, &n, &cut);

	if (cut_line(s, i) && (v ? n <= s->ncsv : cut)) {
		/* the last line, without its newline: a whole row, or cut */
		error_silent++;
		rc = v && n == s->ncsv && !s->lines[i].nul ?
			named_row(s, i, s->csv_cols, NULL, v, n) : -1;
		error_silent--;
		strv_free(v);
		if (rc < 0)
			s->cut = 1;
		else
			s->csv_rows++;
		return 0;
	}
	if (!v || n != s->ncsv) {
		strv_free(v);
		return error("'%s' line %zu: a CSV row with %s fields, but the "
			     "header has %zu", s->name, i + 1,
			     v ? "a different number of" : "malformed",
			     s->ncsv);
	}
	if (check_nul(s, i, i) < 0) {
		strv_free(v);
		return -1;
	}
	rc = named_row(s, i, s->csv_cols, NULL, v, n);
	strv_free(v);
	if (rc == 0)
		s->csv_rows++;
	return rc;
}

/* ---- sql ------------------------------------------------------------------- */

static void
sql_reset(struct scan *s)
{
	strv_free(s->sql_cols);
	strv_free(s->sql_types);
	s->sql_cols = s->sql_types = NULL;
	s->nsql = 0;
}

/*
 * "CREATE TABLE IF NOT EXISTS test (" and "  col TYPE," lines up to ");".
 * Returns the last line used, or (size_t)-1 after error().
 */
static size_t
sql_create(struct scan *s, size_t i)
{
	size_t j, ntypes = 0;

	if (s->in_sql && !s->sql_rows)
		s->empty_header = 1;
	sql_reset(s);
	for (j = i + 1; j < s->nlines; j++) {
		char *t = line_dup(s, j), *sp;
		size_t len = strlen(t);

		if (starts(t, ")")) {
			free(t);
			s->in_sql = 1;
			s->sql_rows = 0;
			return j;
		}
		if (cut_line(s, j)) {
			free(t);
			break;   /* cut off inside CREATE TABLE */
		}
		if (len && t[len - 1] == ',')
			t[--len] = '\0';
		sp = strchr(t, ' ');
		if (!sp || s->nsql >= MAX_CELLS) {
			error("'%s' line %zu: not a column of CREATE TABLE",
			      s->name, j + 1);
			free(t);
			return (size_t)-1;
		}
		*sp = '\0';
		if (!is_ident(t)) {
			error("'%s' line %zu: '%s' is not a column name",
			      s->name, j + 1, t);
			free(t);
			return (size_t)-1;
		}
		s->sql_cols = strv_push(s->sql_cols, &s->nsql, xstrdup(t));
		s->sql_types = strv_push(s->sql_types, &ntypes,
					 xstrdup(sp + 1));
		free(t);
	}
	/* cut off inside CREATE TABLE */
	s->cut = 1;
	s->in_sql = 1;
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
		if (q == a || *n >= MAX_CELLS) {
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
		if (*n > MAX_CELLS)
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
sql_insert(struct scan *s, size_t i, const char *t)
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
		if (cut_line(s, i)) {
			s->cut = 1;
			rc = 0;
		} else {
			error("'%s' line %zu: not an INSERT of llama-bench "
			      "values", s->name, i + 1);
		}
		goto out;
	}
	if (check_nul(s, i, i) < 0)
		goto out;
	if (s->nsql) {
		types = xcalloc(nn + 1, sizeof(char *));
		for (k = 0; k < nn; k++)
			for (j = 0; j < s->nsql; j++)
				if (!strcmp(names[k], s->sql_cols[j]))
					types[k] = s->sql_types[j];
	}
	rc = named_row(s, i, names, types, vals, nn);
	if (rc == 0)
		s->sql_rows++;
out:
	free(types);
	strv_free(names);
	strv_free(vals);
	return rc;
}

/* ---- json among other lines ---------------------------------------------- */

/* The line holding byte offset off of the cleaned text (from line i on). */
static size_t
line_of(const struct scan *s, size_t i, size_t off)
{
	while (i + 1 < s->nlines && s->lines[i + 1].start <= off)
		i++;
	return i;
}

/*
 * A JSON object starting on line i (at offset off): one jsonl line or
 * an object of a pretty-printed array, possibly over many lines.
 * Returns the last line used, (size_t)-1 after error(), or s->nlines
 * when the text ends inside it (cut off).
 */
static size_t
json_object(struct scan *s, size_t i, size_t off)
{
	const char *text = s->text.buf + off;
	/* the '\n' cleaning added after a last line that had none is not
	 * part of the text: "…, f" is a cut "false", "…, f\n" garbage */
	size_t len = s->text.len - off - !s->lines[s->nlines - 1].ended;
	size_t end = 0, j, k;
	struct json *o = json_parse_prefix(text, len, &end);
	struct lb_row r;
	char *where;
	int whole, rc;

	if (!o) {
		size_t bad = json_prefix_len(text, len, &whole);

		if (bad == len && !whole) {
			s->cut = 1;
			return s->nlines;
		}
		j = line_of(s, i, off + bad);
		error("'%s' line %zu: not valid JSON at column %zu", s->name,
		      j + 1, off + bad - s->lines[j].start + 1);
		return (size_t)-1;
	}
	j = line_of(s, i, off + end - 1);
	if (check_nul(s, i, j) < 0 ||
	    set_format(s, i, "json") < 0) {
		json_free(o);
		return (size_t)-1;
	}
	/*
	 * After the object: nothing, the ',' of an array, or a log line
	 * glued to it (llama-bench -o json ends a row without a newline
	 * until the next row comes; stderr may print in between).
	 */
	for (k = off + end; k < s->lines[j].start + s->lines[j].len; k++) {
		char c = s->text.buf[k];
		char *rest;

		if ((c == ',' && s->in_array) || c == ' ' || c == '\t')
			continue;
		rest = xstrndup(s->text.buf + k,
				s->lines[j].start + s->lines[j].len - k);
		if (is_log_line(rest) || cut_line(s, j)) {
			ignore_line(s, j, rest);
			free(rest);
			break;
		}
		free(rest);
		json_free(o);
		error("'%s' line %zu: text after the JSON object at column %zu",
		      s->name, j + 1, k - s->lines[j].start + 1);
		return (size_t)-1;
	}
	where = xstrfmt("'%s' line %zu", s->name, i + 1);
	rc = lb_row_from_json(o, &r, where, LB_ROW_SAMPLES);
	free(where);
	json_free(o);
	if (rc < 0) {
		lb_row_release(&r);
		return (size_t)-1;
	}
	r.line = i + 1;
	if (!s->in_array && !s->block)
		s->block = 1;
	r.block = (int)s->block - 1;
	if (j > i && !s->in_array)
		s->out->format = "json";
	lb_rows_push(s->out, &r);
	return j;
}

/* ---- the scan ------------------------------------------------------------- */

static int
scan_line(struct scan *s, size_t *ip, const char *t)
{
	size_t i = *ip, n = 0, j;
	char **v, *commit;
	long number;
	int piped, consumed;

	if (s->in_array) {
		if (t[0] == ']') {
			s->in_array = 0;
			return 0;
		}
		if (t[0] == ',' && !t[1])
			return 0;
		if (t[0] == '{') {
			j = json_object(s, i, s->lines[i].start +
					(size_t)(strchr(s->text.buf +
							s->lines[i].start, '{') -
						 (s->text.buf + s->lines[i].start)));
			if (j == (size_t)-1)
				return -1;
			*ip = j;
			return 0;
		}
		ignore_line(s, i, t);
		return 0;
	}
	if (parse_build(t, &commit, &number)) {
		if (s->in_table && !s->t.has_build && s->t.nrows) {
			give_build(s->out, s->t.first_row, s->t.nrows, commit,
				   number);
			s->t.has_build = 1;
			close_table(s);
			free(commit);
		} else {
			close_table(s);
			free(s->loose_commit);
			s->loose_commit = commit;
			s->loose_number = number;
			s->loose_line = i;
			s->has_loose = 1;
		}
		return 0;
	}
	if ((v = header_cells(t, &n, &piped))) {
		char *next = i + 1 < s->nlines ? line_dup(s, i + 1) : NULL;
		int sep = next && is_separator(next);

		free(next);
		if (sep) {
			if (open_table(s, i, v, n, piped, 'm') < 0)
				return -1;
			*ip = i + 1;
			return 0;
		}
		strv_free(v);
		if (i == last_text_line(s)) {
			/* a header cut off before its separator line */
			if (set_format(s, i, "md") < 0)
				return -1;
			s->empty_header = 1;
			return 0;
		}
	}
	if (s->in_table && s->t.kind == 'm') {
		if (md_line(s, i, t, &consumed) < 0)
			return -1;
		if (consumed)
			return 0;
	}
	if ((v = headerless_cells(t, &n))) {
		int rc;

		if (s->in_table && s->t.kind == 'm')
			close_table(s);
		if (s->lines[i].nul) {
			strv_free(v);
			return check_nul(s, i, i);
		}
		rc = headerless_row(s, i, v, n);
		strv_free(v);
		return rc;
	}
	if (!strcmp(t, "[")) {
		close_table(s);
		if (check_nul(s, i, i) < 0 || set_format(s, i, "json") < 0)
			return -1;
		s->out->format = "json";
		s->in_array = 1;
		s->block++;
		return 0;
	}
	if (t[0] == '{') {
		close_table(s);
		j = json_object(s, i, s->lines[i].start +
				(size_t)(strchr(s->text.buf + s->lines[i].start,
						'{') -
					 (s->text.buf + s->lines[i].start)));
		if (j == (size_t)-1)
			return -1;
		*ip = j;
		return 0;
	}
	if ((v = csv_header(t, &n))) {
		close_table(s);
		if (set_format(s, i, "csv") < 0) {
			strv_free(v);
			return -1;
		}
		if (s->in_csv && !s->csv_rows)
			s->empty_header = 1;
		strv_free(s->csv_cols);
		s->csv_cols = v;
		s->ncsv = n;
		s->in_csv = 1;
		s->csv_rows = 0;
		s->block++;
		return 0;
	}
	if (s->in_csv && t[0] == '"')
		return csv_row(s, i, t);
	if (starts(t, "CREATE TABLE ")) {
		close_table(s);
		if (set_format(s, i, "sql") < 0)
			return -1;
		j = sql_create(s, i);
		if (j == (size_t)-1)
			return -1;
		s->block++;
		*ip = j;
		return 0;
	}
	if (starts(t, "INSERT INTO ")) {
		close_table(s);
		if (set_format(s, i, "sql") < 0)
			return -1;
		if (!s->in_sql) {
			s->in_sql = 1;
			s->block++;
		}
		return sql_insert(s, i, t);
	}
	ignore_line(s, i, t);
	return 0;
}

int
lb_parse_text(const char *data, size_t len, const char *name,
	      struct lb_output *out)
{
	struct scan s;
	size_t i;
	int rc = 0;

	memset(&s, 0, sizeof(s));
	s.name = name;
	s.out = out;
	buf_init(&s.text, len + 1);
	clean(&s, data, len);
	for (i = 0; i < s.nlines && !s.cut; i++) {
		char *t = line_dup(&s, i);

		if (*t)
			rc = scan_line(&s, &i, t);
		free(t);
		if (rc < 0)
			goto out;
	}
	close_table(&s);
	if (s.in_csv && !s.csv_rows)
		s.empty_header = 1;
	if (s.in_sql && !s.sql_rows)
		s.empty_header = 1;
	if (s.has_loose) {
		char *t = line_dup(&s, s.loose_line);

		ignore(&s, s.loose_line, t, "build line without a table");
		free(t);
	}
	out->blocks = s.block;
	if (!s.fmt) {
		if (!out->log_lines) {
			const char *why = out->n_ignored ?
				out->ignored[0].example : "";

			size_t l = out->n_ignored ?
				out->ignored[0].first_line : 1;

			rc = error("'%s': not llama-bench output: no table, CSV, "
				   "SQL or JSON rows and no llama.cpp log lines "
				   "(line %zu, byte %zu: '%s')", name, l,
				   l <= s.nlines ? s.lines[l - 1].orig : 0, why);
			goto out;
		}
		out->format = "log";
	} else if (!out->format) {
		out->format = !strcmp(s.fmt, "json") ? "jsonl" : s.fmt;
	}
	out->incomplete = s.cut || s.in_array || s.empty_header ||
			  out->crashed;
	rc = 0;
out:
	close_table(&s);
	strv_free(s.csv_cols);
	sql_reset(&s);
	free(s.loose_commit);
	free(s.lines);
	buf_release(&s.text);
	return rc;
}
