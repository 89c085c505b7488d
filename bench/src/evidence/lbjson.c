/*
 * llama-bench output that is JSON: -o json (an array, rows printed as
 * each test finishes, so a run that died leaves it open), -o jsonl (one
 * object per line), and either among log lines (2>&1, tee), where each
 * object is read where it stands. The last is one row of lbscan.c's
 * table of formats.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/lbscan.h"
#include "evidence/lbread.h"
#include "evidence/llamabench.h"
#include "base/json.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- a whole text of JSON ------------------------------------------------ */

static int
add_row(struct lb_output *out, const struct json *o, const char *name)
{
	struct lb_row r;
	char *where = xstrfmt("'%s' row %zu", name, out->n + 1);
	int rc = lb_row_from_json(o, &r, where, LB_ROW_SAMPLES);

	free(where);
	if (rc < 0) {
		lb_row_release(&r);
		return -1;
	}
	lb_rows_push(out, &r);
	return 0;
}

static int
only_space(const char *p, size_t len, size_t *first)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' &&
		    p[i] != '\r')
			break;
	if (first)
		*first = i;
	return i == len;
}

/* Refuses the text at data[at] (what cannot be there), naming the byte. */
static int
bad_byte(const char *data, size_t len, size_t at, const char *name,
	 const char *what_fails)
{
	unsigned char c = at < len ? (unsigned char)data[at] : 0;

	if (c >= 0x20 && c < 0x7f)
		return error("'%s': %s: unexpected '%c' at byte %zu", name,
			     what_fails, c, at);
	return error("'%s': %s: unexpected byte 0x%02x at byte %zu", name,
		     what_fails, c, at);
}

/*
 * Whether text (len bytes, failing to parse) is a cut-off value: every
 * byte fits JSON and the value is not whole. A whole value that still
 * does not parse (a lone surrogate escape, nesting beyond the parser's
 * limit) is refused like garbage.
 */
static int
is_cut(const char *text, size_t len)
{
	int whole;

	return json_prefix_len(text, len, &whole) == len && !whole;
}

/*
 * Keeps the complete rows of an array that was cut off (llama-bench died
 * mid-way: stdout holds "[\n" and the rows it finished). Only a text that
 * is really such an array is taken: every byte fits JSON so far, the
 * header line "[" is whole, and after the last complete row comes only
 * the start of another row. data[start] is the '['; err is where the
 * parser stopped.
 */
static int
parse_cut_array(const char *data, size_t len, size_t start, size_t err,
		const char *name, struct lb_output *out)
{
	size_t pos, skip, end;
	struct json *o;
	int whole, ret;

	pos = start + json_prefix_len(data + start, len - start, &whole);
	if (pos < len)
		return bad_byte(data, len, pos, name,
				"not llama-bench JSON output");
	if (whole)
		return error("'%s': not valid JSON at byte %zu", name, err);
	pos = start + 1;
	while (pos < len && (data[pos] == ' ' || data[pos] == '\t' ||
			     data[pos] == '\r'))
		pos++;
	if (pos == len || data[pos] != '\n')
		return error("'%s': an unclosed array without llama-bench's "
			     "header line \"[\": no newline at byte %zu",
			     name, pos);
	for (;;) {
		only_space(data + pos, len - pos, &skip);
		pos += skip;
		if (pos < len && data[pos] == ',' && out->n) {
			pos++;
			only_space(data + pos, len - pos, &skip);
			pos += skip;
		}
		if (pos == len)
			break;
		if (data[pos] != '{')
			return error("'%s' row %zu: not a JSON object (byte "
				     "%zu)", name, out->n + 1, pos);
		o = json_parse_prefix(data + pos, len - pos, &end);
		if (!o) {
			/* the row being printed when it stopped */
			if (is_cut(data + pos, len - pos))
				break;
			return error("'%s' row %zu: not valid JSON at byte %zu",
				     name, out->n + 1, pos + end);
		}
		ret = add_row(out, o, name);
		json_free(o);
		if (ret < 0)
			return -1;
		pos += end;
	}
	out->incomplete = 1;
	return 0;
}

/*
 * llama-bench -o json: "[\n", the rows as they finish, "\n]\n". A closed
 * array must be the whole text; an unclosed one is a run that died.
 */
int
lb_read_json_array(const char *data, size_t len, size_t start, const char *name,
	   struct lb_output *out)
{
	const struct json *item;
	struct json *root;
	size_t end, skip;
	int ret = 0;

	out->format = "json";
	root = json_parse_prefix(data + start, len - start, &end);
	if (!root)
		return parse_cut_array(data, len, start, start + end, name,
				       out);
	end += start;
	if (!only_space(data + end, len - end, &skip)) {
		json_free(root);
		return bad_byte(data, len, end + skip, name,
				"text after the JSON array");
	}
	JSON_FOR_EACH(item, root)
		if ((ret = add_row(out, item, name)) < 0)
			break;
	json_free(root);
	return ret;
}

/*
 * llama-bench -o jsonl: one object per line, each written when its test
 * finishes. Only the last line may be cut off (then `incomplete`), and
 * only when what is there is the start of an object.
 */
int
lb_read_jsonl(const char *data, size_t len, size_t start, const char *name,
	    struct lb_output *out)
{
	size_t pos = start, lineno = 0;

	out->format = "jsonl";
	for (size_t k = 0; k < start; k++)
		lineno += data[k] == '\n';
	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - data) : len;
		size_t a = pos, b = end, stop, skip;
		struct json *o;
		int ret;

		lineno++;
		while (a < b && (data[a] == ' ' || data[a] == '\t' ||
				 data[a] == '\r'))
			a++;
		while (b > a && (data[b - 1] == ' ' || data[b - 1] == '\r'))
			b--;
		pos = end + 1;
		if (a == b)
			continue;
		o = json_parse_prefix(data + a, b - a, &stop);
		if (!o) {
			size_t bad = json_prefix_len(data + a, b - a, NULL);

			/* A cut last line is a truncation, not garbage. */
			if (is_cut(data + a, b - a) && data[a] == '{') {
				if (!nl) {
					out->incomplete = 1;
					return 0;
				}
				return error("'%s' row %zu: the JSON object "
					     "ends early at byte %zu", name,
					     out->n + 1, b);
			}
			return error("'%s' row %zu: not valid JSON at byte %zu",
				     name, out->n + 1,
				     a + (bad < b - a ? bad : stop));
		}
		if (!only_space(data + a + stop, b - a - stop, &skip)) {
			json_free(o);
			return error("'%s' row %zu: text after the JSON object "
				     "at byte %zu", name, out->n + 1,
				     a + stop + skip);
		}
		ret = add_row(out, o, name);
		json_free(o);
		if (ret < 0)
			return -1;
		out->rows[out->n - 1].line = lineno;
	}
	return 0;
}

/* ---- JSON rows among other lines ----------------------------------------- */

/* The JSON reader's state among other lines. */
struct jsonin {
	int in_array;           /* between "[" and "]" */
};

/*
 * A JSON object starting on line i (at offset off): one jsonl line or
 * an object of a pretty-printed array, possibly over many lines.
 * Returns the last line used, (size_t)-1 after error(), or s->nlines
 * when the text ends inside it (cut off).
 */
static size_t
json_object(struct lb_scan *s, struct jsonin *js, size_t i, size_t off)
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
		j = lb_line_of(s, i, off + bad);
		error("'%s' line %zu: not valid JSON at column %zu", s->name,
		      j + 1, off + bad - s->lines[j].start + 1);
		return (size_t)-1;
	}
	j = lb_line_of(s, i, off + end - 1);
	if (lb_check_nul(s, i, j) < 0 ||
	    lb_scan_claim(s, i, &lb_format_json) < 0) {
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

		if ((c == ',' && js->in_array) || c == ' ' || c == '\t')
			continue;
		rest = xstrndup(s->text.buf + k,
				s->lines[j].start + s->lines[j].len - k);
		if (lb_is_log_line(rest) || lb_cut_line(s, j)) {
			lb_ignore_line(s, j, rest);
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
	if (!js->in_array && !s->block)
		s->block = 1;
	r.block = (int)s->block - 1;
	if (j > i && !js->in_array)
		s->out->format = "json";
	lb_rows_push(s->out, &r);
	return j;
}

/* The offset of line i's first '{' in the cleaned text. */
static size_t
brace_at(const struct lb_scan *s, size_t i)
{
	const char *p = s->text.buf + s->lines[i].start;

	return s->lines[i].start + (size_t)(strchr(p, '{') - p);
}

/*
 * Inside an array every line is the array's: a row, a ',' or the ']';
 * anything else there is set aside. Outside, "[" opens an array and a
 * line starting with '{' is an object (a jsonl row, or one object
 * pretty-printed over several lines).
 */
static int
json_line(struct lb_scan *s, void *state, size_t *ip, const char *t)
{
	struct jsonin *js = state;
	size_t i = *ip, j;

	if (js->in_array) {
		if (t[0] == ']') {
			js->in_array = 0;
			return 1;
		}
		if (t[0] == ',' && !t[1])
			return 1;
		if (t[0] != '{') {
			lb_ignore_line(s, i, t);
			return 1;
		}
	} else if (!strcmp(t, "[")) {
		if (lb_check_nul(s, i, i) < 0 ||
		    lb_scan_claim(s, i, &lb_format_json) < 0)
			return -1;
		s->out->format = "json";
		js->in_array = 1;
		s->block++;
		return 1;
	} else if (t[0] != '{') {
		return 0;
	}
	j = json_object(s, js, i, brace_at(s, i));
	if (j == (size_t)-1)
		return -1;
	*ip = j;
	return 1;
}

static void
json_end(struct lb_scan *s, void *state)
{
	struct jsonin *js = state;

	if (js->in_array)
		s->incomplete = 1;
	/* rows, one per line, with no array around them */
	if (s->fmt == &lb_format_json && !s->out->format)
		s->out->format = "jsonl";
}

const struct lb_format lb_format_json = {
	"json", sizeof(struct jsonin), json_line, json_end, NULL,
};
