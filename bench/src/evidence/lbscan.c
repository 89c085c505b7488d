/*
 * llama-bench output among other lines: -o md tables (with or without
 * outer pipes, quoted with "> ", with log lines between rows, a build
 * line above, below or missing), -o csv, -o sql and -o json/jsonl rows
 * among log lines (2>&1, tee), shell prompts and wrapper text.
 *
 * This file cleans the text, hands every line to the format readers
 * (lbscan.h) and sets aside, by reason, the lines none of them takes.
 * What is output must be well formed, or the file is refused naming the
 * line; everything else is listed, never guessed at.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/lbscan.h"
#include "evidence/lbread.h"
#include "evidence/llamabench.h"
#include "base/json.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The formats, in the order a line is offered to them (after the format
 * the output is already in): md first, as its build lines and headers
 * come before anything else; then JSON rows, csv, sql.
 */
static const struct lb_format *const formats[] = {
	&lb_format_md,
	&lb_format_json,
	&lb_format_csv,
	&lb_format_sql,
};

/* ---- cleaning ------------------------------------------------------------ */

/* Appends line [p, p+n) cleaned: no CR, no ANSI escape, no "> " prefix. */
static void
clean_line(struct lb_scan *s, const char *p, size_t n, int first)
{
	struct lb_line *l;
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
clean(struct lb_scan *s, const char *data, size_t len)
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

char *
lb_line_dup(const struct lb_scan *s, size_t i)
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

size_t
lb_last_text_line(const struct lb_scan *s)
{
	size_t i = s->nlines;

	while (i > 0) {
		const struct lb_line *l = &s->lines[i - 1];
		size_t k;

		for (k = 0; k < l->len; k++)
			if (s->text.buf[l->start + k] != ' ' &&
			    s->text.buf[l->start + k] != '\t')
				return i - 1;
		i--;
	}
	return 0;
}

int
lb_cut_line(const struct lb_scan *s, size_t i)
{
	return i + 1 == s->nlines && !s->lines[i].ended;
}

size_t
lb_line_of(const struct lb_scan *s, size_t i, size_t off)
{
	while (i + 1 < s->nlines && s->lines[i + 1].start <= off)
		i++;
	return i;
}

/* ---- what the other lines are -------------------------------------------- */

static int
starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * The prefix llama.cpp's common logger writes with LLAMA_LOG_TIMESTAMPS
 * and LLAMA_LOG_PREFIX (as ggml-ci runs set them): "0.00.012.345 I ";
 * its length, or 0.
 */
static size_t
log_timestamp(const char *t)
{
	const char *p = t;
	static const int digits[] = { 0, 2, 3, 3 };   /* 0: one or more */
	size_t k;
	int n;

	for (k = 0; k < ARRAY_SIZE(digits); k++) {
		for (n = 0; p[n] >= '0' && p[n] <= '9'; n++)
			;
		if (!n || (digits[k] && n != digits[k]))
			return 0;
		p += n;
		if (k + 1 < ARRAY_SIZE(digits) && *p++ != '.')
			return 0;
	}
	if (p[0] != ' ' || !strchr("IWEDN", p[1]) || !p[1] || p[2] != ' ')
		return 0;
	return (size_t)(p + 3 - t);
}

int
lb_is_log_line(const char *t)
{
	static const char *const prefixes[] = {
		"ggml_", "llama_", "llm_load_", "load_tensors:",
		"load_backend:", "print_info:", "llama-bench:", "main:",
		"system_info:", "build_info:", "[SYCL]", "[LumeMetalCapabilities]",
		"[VulkanCapabilities]",
		"get_memory_info:", "gguf_", "common_", "register_backend",
		"llama_model_", "load:", "graph_", "sched_", "init_tokenizer",
		"============ Repacked", "version: ", "built with ",
		"found ", "Available devices:", "rpc_", "ggml-",
		"create_tensor:",
	};
	size_t i;
	int n;

	if (log_timestamp(t))
		return 1;   /* whatever it logged, it is the logger's line */
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
		"Failed to connect to", "Exception caught at file",
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

static int
is_table_line(const char *t)
{
	return t[0] == '|' || strstr(t, " | ") != NULL;
}

static int
is_any_line(const char *t)
{
	(void)t;
	return 1;
}

/*
 * What a line no format takes is, first match wins; `note` says what it
 * tells of the run. (A line with a NUL byte is set aside as binary
 * before any of these.)
 */
enum { NOTE_CRASH = 1, NOTE_LOG = 2 };
static const struct {
	int (*is)(const char *t);
	const char *why;
	unsigned note;
} other_lines[] = {
	{ is_crash_line, "crash, abort or failure message", NOTE_CRASH },
	{ lb_is_log_line, "llama.cpp or ggml log line", NOTE_LOG },
	{ is_prompt_line, "shell prompt or command line", 0 },
	{ is_table_line, "table line outside a llama-bench table", 0 },
	{ is_any_line, "other text", 0 },
};

void
lb_ignore(struct lb_scan *s, size_t i, const char *t, const char *why)
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

void
lb_ignore_line(struct lb_scan *s, size_t i, const char *t)
{
	size_t k;

	if (s->lines[i].nul) {
		lb_ignore(s, i, t, "binary bytes (NUL)");
		return;
	}
	for (k = 0; !other_lines[k].is(t); k++)
		;
	if (other_lines[k].note & NOTE_CRASH)
		s->out->crashed = 1;
	if (other_lines[k].note & NOTE_LOG)
		s->out->log_lines++;
	lb_ignore(s, i, t, other_lines[k].why);
}

/* ---- shared by the readers ----------------------------------------------- */

int
lb_scan_claim(struct lb_scan *s, size_t i, const struct lb_format *f)
{
	if (!s->fmt) {
		s->fmt = f;
		s->fmt_line = i + 1;
		return 0;
	}
	if (s->fmt == f)
		return 0;
	return error("'%s' line %zu: %s output, but line %zu began %s "
		     "output; the same results in two formats (llama-bench -o "
		     "and -oe captured together?) would be counted twice: give "
		     "one stream", s->name, i + 1, f->name, s->fmt_line,
		     s->fmt->name);
}

int
lb_check_nul(const struct lb_scan *s, size_t from, size_t to)
{
	size_t i;

	for (i = from; i <= to && i < s->nlines; i++)
		if (s->lines[i].nul)
			return error("'%s' line %zu: a NUL byte inside "
				     "llama-bench output", s->name, i + 1);
	return 0;
}

int
lb_is_ident(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return 0;
	return 1;
}

int
lb_named_row(struct lb_scan *s, size_t i, char *const *keys,
	     char *const *types, char *const *vals, size_t n)
{
	struct json *o = json_new_object();
	char *where = xstrfmt("'%s' line %zu", s->name, i + 1);
	struct lb_row r;
	size_t k;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	for (k = 0; k < n; k++)
		if (lb_typed_value(o, keys[k], vals[k],
				   types ? types[k] : NULL, where) < 0)
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

/* ---- the scan ------------------------------------------------------------ */

/*
 * Line i: the format the output is in has it first, then each format in
 * table order; a line none takes is set aside.
 */
static int
scan_line(struct lb_scan *s, void **states, size_t *ip, const char *t)
{
	size_t k;
	int rc;

	for (k = 0; s->fmt && formats[k] != s->fmt; k++)
		;
	if (s->fmt && (rc = s->fmt->line(s, states[k], ip, t)) != 0)
		return rc < 0 ? -1 : 0;
	for (k = 0; k < ARRAY_SIZE(formats); k++) {
		if (formats[k] == s->fmt)
			continue;
		if ((rc = formats[k]->line(s, states[k], ip, t)) != 0)
			return rc < 0 ? -1 : 0;
	}
	lb_ignore_line(s, *ip, t);
	return 0;
}

/* Text that is neither output nor log lines: refused, naming a line. */
static int
not_output(const struct lb_scan *s)
{
	const struct lb_output *out = s->out;
	const char *why = out->n_ignored ? out->ignored[0].example : "";
	size_t l = out->n_ignored ? out->ignored[0].first_line : 1;

	return error("'%s': not llama-bench output: no table, CSV, SQL or "
		     "JSON rows and no llama.cpp log lines (line %zu, byte "
		     "%zu: '%s')", s->name, l,
		     l <= s->nlines ? s->lines[l - 1].orig : 0, why);
}

int
lb_parse_text(const char *data, size_t len, const char *name,
	      struct lb_output *out)
{
	void *states[ARRAY_SIZE(formats)];
	struct lb_scan s;
	size_t i, k;
	int rc = 0;

	memset(&s, 0, sizeof(s));
	s.name = name;
	s.out = out;
	for (k = 0; k < ARRAY_SIZE(formats); k++)
		states[k] = xcalloc(1, formats[k]->state_size);
	buf_init(&s.text, len + 1);
	clean(&s, data, len);
	for (i = 0; i < s.nlines && !s.cut; i++) {
		char *t = lb_line_dup(&s, i);

		if (*t)
			rc = scan_line(&s, states, &i, t);
		free(t);
		if (rc < 0)
			goto out;
	}
	for (k = 0; k < ARRAY_SIZE(formats); k++)
		if (formats[k]->end)
			formats[k]->end(&s, states[k]);
	out->blocks = s.block;
	if (!s.fmt) {
		if (!out->log_lines) {
			rc = not_output(&s);
			goto out;
		}
		out->format = "log";
	} else if (!out->format) {
		out->format = s.fmt->name;
	}
	out->incomplete = s.cut || s.incomplete || out->crashed;
	rc = 0;
out:
	for (k = 0; k < ARRAY_SIZE(formats); k++) {
		if (formats[k]->release)
			formats[k]->release(states[k]);
		free(states[k]);
	}
	free(s.lines);
	buf_release(&s.text);
	return rc;
}
