/*
 * What is checked of a run: the markers a variant expects on stderr (the
 * shim's Enabled line, a GPU family), dyld's refusal of the inserted
 * library, and a capability probe's output against the plan's
 * expectation; and the probe's output as a fact of struct caps.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/capsread.h"
#include "base/json.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value seen again replaces the old one, which moves to the end. */
static void
set_value(struct json *o, const char *key, struct json *v)
{
	json_remove(o, key);
	json_set(o, key, v);
}

/* ---- markers and verification -------------------------------------------- */

static int
line_has(const char *text, size_t len, const char *marker)
{
	size_t mlen = strlen(marker), pos = 0;

	if (!mlen)
		return 1;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, i;

		for (i = pos; i + mlen <= end; i++)
			if (!memcmp(text + i, marker, mlen))
				return 1;
		pos = end + 1;
	}
	return 0;
}

int
caps_missing_markers(const char *text, size_t len, const char *const *markers,
		     size_t n, struct buf *missing)
{
	size_t i;
	int count = 0;

	for (i = 0; i < n; i++) {
		if (line_has(text, len, markers[i]))
			continue;
		count++;
		if (missing) {
			if (missing->len)
				buf_adds(missing, "; ");
			buf_addf(missing, "'%s'", markers[i]);
		}
	}
	return count;
}

int
caps_verify(const char *text, size_t len, const char *const *markers,
	    size_t n, struct buf *detail)
{
	struct buf missing = BUF_INIT;
	const char *dyld = NULL;
	size_t pos = 0;
	int nmiss;

	nmiss = caps_missing_markers(text, len, markers, n, &missing);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		char *line = xstrndup(text + pos, end - pos);

		if (!dyld && strstr(line, "terminating because inserted dylib"))
			dyld = text + pos;
		free(line);
		pos = end + 1;
	}
	if (dyld) {
		size_t rest = len - (size_t)(dyld - text);
		const char *nl = memchr(dyld, '\n', rest);
		size_t l = nl ? (size_t)(nl - dyld) : rest;

		buf_adds(detail, "dyld refused the inserted library: ");
		buf_add(detail, dyld, l);
		if (nmiss)
			buf_adds(detail, "; ");
	}
	/* The likely causes depend on the platform and the backend:
	 * evidence/hints.c, which the caller adds. */
	if (nmiss)
		buf_addf(detail, "missing marker%s %s", nmiss > 1 ? "s" : "",
			 missing.buf);
	buf_release(&missing);
	return nmiss == 0 && !dyld;
}

/* ---- the probe ----------------------------------------------------------- */

/*
 * JSON at the start of text (what follows the value is not looked at),
 * or NULL.
 */
static struct json *
parse_start(const char *text, size_t len)
{
	size_t end;

	return json_parse_prefix(text, len, &end);
}

/* A key=value value as JSON: true/false, a number, else the text. */
static struct json *
typed(const char *v)
{
	double d;

	if (!strcmp(v, "true") || !strcmp(v, "false"))
		return json_new_bool(!strcmp(v, "true"));
	if (*v && *v != ' ' && *v != '+' && parse_double(v, &d) == 0 &&
	    strspn(v, "-0123456789.eE") == strlen(v))
		return json_new_num(d);
	return json_new_str(v);
}

/*
 * "key=value" lines (key: a letter or '_', then letters, digits, '_',
 * '.', '-') as an object; other lines are skipped. NULL when none.
 */
static struct json *
parse_kv(const char *text, size_t len)
{
	struct json *o = NULL;
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		char *line = xstrndup(text + pos, end - pos), *k = line, *eq;

		pos = end + 1;
		while (*k == ' ' || *k == '\t')
			k++;
		eq = k + strspn(k, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-");
		if (*eq != '=' || eq == k || (*k >= '0' && *k <= '9') ||
		    *k == '.' || *k == '-') {
			free(line);
			continue;
		}
		*eq = '\0';
		if (!o)
			o = json_new_object();
		{
			char *v = caps_trim(eq + 1);
			set_value(o, k, typed(v));
		}
		free(line);
	}
	return o;
}

/*
 * The probe's output as an object: JSON (from the first line that
 * starts with '{'), else key=value lines (*kv set). NULL when neither.
 */
static struct json *
probe_parse(const char *text, size_t len, int *kv)
{
	size_t pos = 0;

	*kv = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, i = pos;

		while (i < end && (text[i] == ' ' || text[i] == '\t' ||
				   text[i] == '\r'))
			i++;
		if (i < end && text[i] == '{') {
			struct json *o = parse_start(text + i, len - i);
			if (json_type(o) == JSON_OBJECT)
				return o;
			json_free(o);
			break;
		}
		pos = end + 1;
	}
	*kv = 1;
	return parse_kv(text, len);
}

/* Follows a dotted path ("shim.status") through nested objects. */
static const struct json *
json_path(const struct json *root, const char *path)
{
	char *copy = xstrdup(path), *part, *save = NULL;
	const struct json *cur = root;

	for (part = strtok_r(copy, ".", &save); part && cur;
	     part = strtok_r(NULL, ".", &save))
		cur = json_get(cur, part);
	free(copy);
	return cur;
}

/* got matches want: the same value, or (key=value output) want's text. */
static int
probe_match(const struct json *got, const struct json *want, int kv)
{
	char *text;
	int same;

	if (!got)
		return 0;
	if (json_equal(got, want))
		return 1;
	if (!kv || json_type(want) != JSON_STRING)
		return 0;
	text = json_type(got) == JSON_STRING ? xstrdup(json_str(got)) :
		json_print(got, 0);
	same = !strcmp(text, json_str(want));
	free(text);
	return same;
}

int
caps_check_probe(const char *probe_out, size_t len, const char *expect_json,
		 struct buf *detail)
{
	const char *expect = expect_json ? expect_json : "{}";
	struct json *out, *want = parse_start(expect, strlen(expect));
	const struct json *w;
	int ok = 1, n = 0, kv;

	out = probe_parse(probe_out, len, &kv);
	if (json_type(out) != JSON_OBJECT) {
		buf_adds(detail, "probe output is neither a JSON object nor "
			 "key=value lines");
		json_free(out);
		json_free(want);
		return -1;
	}
	JSON_FOR_EACH(w, want) {
		const struct json *got = json_get(out, json_key(w));
		char *ws = json_print(w, 0), *gs;

		if (!got)
			got = json_path(out, json_key(w));
		gs = got ? json_print(got, 0) : NULL;
		buf_adds(detail, n++ ? ", " : "probe: ");
		if (probe_match(got, w, kv)) {
			buf_addf(detail, "%s = %s", json_key(w), gs);
		} else {
			ok = 0;
			buf_addf(detail, "%s is %s, expected %s", json_key(w),
				 gs ? gs : "missing", ws);
		}
		free(ws);
		free(gs);
	}
	json_free(out);
	json_free(want);
	return ok;
}

void
caps_add_probe(struct caps *c, const char *probe_out, size_t len)
{
	struct caps_probe *p = &c->probe;
	struct json *out;
	struct buf why = BUF_INIT;
	int kv;

	json_free(p->output);
	p->present = 1;
	out = probe_parse(probe_out, len, &kv);
	p->understood = out != NULL;
	p->output = out ? out :
		json_new_str("(neither JSON nor key=value lines)");
	caps_probe_facts(p);
	if (!p->understood)
		return;
	if (c->sum.suspect_profile)
		buf_adds(&why, c->sum.suspect_profile);
	caps_probe_suspect(p, &why);
	if (why.len) {
		free(c->sum.suspect_profile);
		c->sum.suspect_profile = buf_detach(&why, NULL);
	}
	buf_release(&why);
}
