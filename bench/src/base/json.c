#define _POSIX_C_SOURCE 200809L
#include "base/json.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * struct json is cJSON's node; the cast lives here only, so no other file
 * depends on the parser underneath.
 */
#define C(v) ((const cJSON *)(const void *)(v))
#define M(v) ((cJSON *)(void *)(v))
#define J(v) ((struct json *)(void *)(v))

static void
where_in(const char *text, size_t off, int *line, int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int
only_space(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			return 0;
	return 1;
}

struct json *
json_parse_prefix(const char *text, size_t len, size_t *end)
{
	const char *stop = NULL;
	cJSON *root;

	*end = 0;
	if (!len)
		return NULL;
	root = cJSON_ParseWithLengthOpts(text, len, &stop, 0);
	if (stop && stop >= text && stop <= text + len)
		*end = (size_t)(stop - text);
	return J(root);
}

struct json *
json_parse(const char *text, size_t len, const char *name)
{
	struct json *root;
	size_t end = 0;
	int line, col;

	if (!name)
		name = "JSON";
	root = json_parse_prefix(text, len, &end);
	if (root && !only_space(text + end, text + len)) {
		json_free(root);
		root = NULL;
		where_in(text, end, &line, &col);
		error("'%s': not valid JSON: text after the value at line %d, "
		      "column %d (byte %zu)", name, line, col, end);
		return NULL;
	}
	if (!root) {
		if (!len || only_space(text, text + len)) {
			error("'%s': empty, not JSON", name);
			return NULL;
		}
		where_in(text, end, &line, &col);
		error("'%s': not valid JSON at line %d, column %d (byte %zu)",
		      name, line, col, end);
	}
	return root;
}

/* States of json_prefix_len(): what may come next. */
enum prefix_state {
	PS_VALUE,         /* a value */
	PS_ARRAY_FIRST,   /* after '[': a value or ']' */
	PS_OBJECT_FIRST,  /* after '{': a key or '}' */
	PS_KEY,           /* after ',' in an object: a key */
	PS_COLON,         /* after a key */
	PS_AFTER,         /* after a value: ',' or a closer, or the end */
	PS_STRING,
	PS_ESCAPE,        /* after '\' in a string */
	PS_HEX,           /* inside \uXXXX */
	PS_LITERAL,       /* inside true, false or null */
	PS_MINUS,         /* number: after '-' */
	PS_ZERO,          /* number: a leading 0 */
	PS_INT,           /* number: integer digits */
	PS_DOT,           /* number: after '.' */
	PS_FRAC,          /* number: fraction digits */
	PS_E,             /* number: after 'e' */
	PS_ESIGN,         /* number: after the exponent's sign */
	PS_EXP,           /* number: exponent digits */
};

static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* The state after the first byte c of a value, or -1. */
static int
value_start(int c, char **stack, size_t *depth, size_t *cap,
	    const char **lit)
{
	if (c == '{' || c == '[') {
		if (*depth == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*stack = xrealloc(*stack, *cap);
		}
		(*stack)[(*depth)++] = (char)c;
		return c == '{' ? PS_OBJECT_FIRST : PS_ARRAY_FIRST;
	}
	if (c == '"')
		return PS_STRING;
	if (c == '-')
		return PS_MINUS;
	if (c == '0')
		return PS_ZERO;
	if (is_digit(c))
		return PS_INT;
	*lit = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" :
		NULL;
	return *lit ? PS_LITERAL : -1;
}

size_t
json_prefix_len(const char *text, size_t len, int *whole)
{
	const unsigned char *s = (const unsigned char *)text;
	const char *lit = NULL;
	char *stack = NULL;
	size_t depth = 0, cap = 0, i, litpos = 0;
	int st = PS_VALUE, key = 0, hex = 0;

	for (i = 0; i < len; i++) {
		int c = s[i];
again:
		switch (st) {
		case PS_VALUE:
		case PS_ARRAY_FIRST:
			if (is_space(c))
				continue;
			if (c == ']' && st == PS_ARRAY_FIRST) {
				depth--;
				st = PS_AFTER;
				continue;
			}
			st = value_start(c, &stack, &depth, &cap, &lit);
			key = 0;
			litpos = 1;
			break;
		case PS_OBJECT_FIRST:
		case PS_KEY:
			if (is_space(c))
				continue;
			if (c == '}' && st == PS_OBJECT_FIRST) {
				depth--;
				st = PS_AFTER;
			} else if (c == '"') {
				st = PS_STRING;
				key = 1;
			} else {
				st = -1;
			}
			break;
		case PS_COLON:
			if (!is_space(c))
				st = c == ':' ? PS_VALUE : -1;
			break;
		case PS_AFTER:
			if (is_space(c))
				continue;
			if (!depth)
				st = -1;
			else if (c == ',')
				st = stack[depth - 1] == '{' ? PS_KEY : PS_VALUE;
			else if (c == (stack[depth - 1] == '{' ? '}' : ']'))
				depth--;
			else
				st = -1;
			break;
		case PS_STRING:
			/* Raw control bytes are let through, as cJSON does. */
			if (c == '"')
				st = key ? PS_COLON : PS_AFTER;
			else if (c == '\\')
				st = PS_ESCAPE;
			break;
		case PS_ESCAPE:
			if (c == 'u') {
				st = PS_HEX;
				hex = 0;
			} else {
				st = strchr("\"\\/bfnrt", c) && c ? PS_STRING : -1;
			}
			break;
		case PS_HEX:
			if (!isxdigit(c))
				st = -1;
			else if (++hex == 4)
				st = PS_STRING;
			break;
		case PS_LITERAL:
			if (c != lit[litpos])
				st = -1;
			else if (!lit[++litpos])
				st = PS_AFTER;
			break;
		case PS_MINUS:
			st = c == '0' ? PS_ZERO : is_digit(c) ? PS_INT : -1;
			break;
		case PS_DOT:
			st = is_digit(c) ? PS_FRAC : -1;
			break;
		case PS_E:
			st = c == '+' || c == '-' ? PS_ESIGN :
				is_digit(c) ? PS_EXP : -1;
			break;
		case PS_ESIGN:
			st = is_digit(c) ? PS_EXP : -1;
			break;
		case PS_ZERO:
		case PS_INT:
		case PS_FRAC:
		case PS_EXP:
			if (is_digit(c) && st != PS_ZERO)
				break;
			if (c == '.' && (st == PS_ZERO || st == PS_INT)) {
				st = PS_DOT;
			} else if ((c == 'e' || c == 'E') && st != PS_EXP) {
				st = PS_E;
			} else {
				/* the number ended: c comes after it */
				st = PS_AFTER;
				goto again;
			}
			break;
		}
		if (st < 0)
			break;
	}
	free(stack);
	if (whole)
		*whole = i == len && !depth &&
			 (st == PS_AFTER || st == PS_ZERO || st == PS_INT ||
			  st == PS_FRAC || st == PS_EXP);
	return i;
}

void
json_free(struct json *root)
{
	cJSON_Delete(M(root));
}

enum json_type
json_type(const struct json *v)
{
	const cJSON *c = C(v);

	if (!c)
		return JSON_INVALID;
	switch (c->type & 0xff) {
	case cJSON_NULL: return JSON_NULL;
	case cJSON_False: return JSON_FALSE;
	case cJSON_True: return JSON_TRUE;
	case cJSON_Number: return JSON_NUMBER;
	case cJSON_String: return JSON_STRING;
	case cJSON_Array: return JSON_ARRAY;
	case cJSON_Object: return JSON_OBJECT;
	default: return JSON_INVALID;
	}
}

const char *
json_type_name(const struct json *v)
{
	switch (json_type(v)) {
	case JSON_NULL: return "null";
	case JSON_FALSE:
	case JSON_TRUE: return "a boolean";
	case JSON_NUMBER: return "a number";
	case JSON_STRING: return "a string";
	case JSON_ARRAY: return "an array";
	case JSON_OBJECT: return "an object";
	default: return "nothing";
	}
}

int
json_is_bool(const struct json *v)
{
	return json_type(v) == JSON_TRUE || json_type(v) == JSON_FALSE;
}

const struct json *
json_get(const struct json *obj, const char *key)
{
	if (json_type(obj) != JSON_OBJECT || !key)
		return NULL;
	return J(cJSON_GetObjectItemCaseSensitive(C(obj), key));
}

struct json *
json_get_mut(struct json *obj, const char *key)
{
	return (struct json *)json_get(obj, key);
}

const char *
json_key(const struct json *member)
{
	return member ? C(member)->string : NULL;
}

const struct json *
json_first(const struct json *container)
{
	enum json_type t = json_type(container);

	if (t != JSON_ARRAY && t != JSON_OBJECT)
		return NULL;
	return J(C(container)->child);
}

const struct json *
json_next(const struct json *v)
{
	return v ? J(C(v)->next) : NULL;
}

size_t
json_size(const struct json *container)
{
	const struct json *it;
	size_t n = 0;

	JSON_FOR_EACH(it, container)
		n++;
	return n;
}

const struct json *
json_at(const struct json *arr, size_t i)
{
	const struct json *it;

	if (json_type(arr) != JSON_ARRAY)
		return NULL;
	JSON_FOR_EACH(it, arr)
		if (i-- == 0)
			return it;
	return NULL;
}

const char *
json_str(const struct json *v)
{
	return json_type(v) == JSON_STRING ? C(v)->valuestring : NULL;
}

const char *
json_get_str(const struct json *obj, const char *key)
{
	return json_str(json_get(obj, key));
}

double
json_num(const struct json *v)
{
	return json_type(v) == JSON_NUMBER ? C(v)->valuedouble : NAN;
}

int
json_bool(const struct json *v)
{
	switch (json_type(v)) {
	case JSON_TRUE: return 1;
	case JSON_FALSE: return 0;
	default: return -1;
	}
}

int
json_int64(const struct json *v, int64_t lo, int64_t hi, int64_t *out)
{
	double d = json_num(v);

	/* 2^63 is the first double outside int64_t. */
	if (!isfinite(d) || d != floor(d) || d < -9223372036854775808.0 ||
	    d >= 9223372036854775808.0)
		return -1;
	if ((int64_t)d < lo || (int64_t)d > hi)
		return -1;
	*out = (int64_t)d;
	return 0;
}

char *
json_print(const struct json *v, int pretty)
{
	struct buf b = BUF_INIT;
	struct jw w;

	jw_init(&w, &b, pretty);
	jw_value(&w, v);
	return buf_detach(&b, NULL);
}

int
json_equal(const struct json *a, const struct json *b)
{
	return cJSON_Compare(C(a), C(b), 1) ? 1 : 0;
}

static cJSON *
checked(cJSON *c)
{
	if (!c)
		die("out of memory building JSON");
	return c;
}

struct json *
json_dup(const struct json *v)
{
	return v ? J(checked(cJSON_Duplicate(C(v), 1))) : NULL;
}

struct json *
json_new_object(void)
{
	return J(checked(cJSON_CreateObject()));
}

struct json *
json_new_array(void)
{
	return J(checked(cJSON_CreateArray()));
}

struct json *
json_new_str(const char *s)
{
	return J(checked(s ? cJSON_CreateString(s) : cJSON_CreateNull()));
}

struct json *
json_new_num(double v)
{
	return J(checked(isfinite(v) ? cJSON_CreateNumber(v) :
			 cJSON_CreateNull()));
}

struct json *
json_new_bool(int v)
{
	return J(checked(cJSON_CreateBool(v != 0)));
}

void
json_set(struct json *obj, const char *key, struct json *val)
{
	if (json_type(obj) != JSON_OBJECT) {
		json_free(val);
		return;
	}
	if (cJSON_GetObjectItemCaseSensitive(C(obj), key))
		cJSON_ReplaceItemInObjectCaseSensitive(M(obj), key, M(val));
	else if (!cJSON_AddItemToObject(M(obj), key, M(val)))
		die("out of memory building JSON");
}

void
json_set_str(struct json *obj, const char *key, const char *s)
{
	json_set(obj, key, json_new_str(s));
}

void
json_set_num(struct json *obj, const char *key, double v)
{
	json_set(obj, key, json_new_num(v));
}

void
json_set_bool(struct json *obj, const char *key, int v)
{
	json_set(obj, key, json_new_bool(v));
}

void
json_remove(struct json *obj, const char *key)
{
	if (json_type(obj) == JSON_OBJECT)
		cJSON_DeleteItemFromObjectCaseSensitive(M(obj), key);
}

void
json_append(struct json *arr, struct json *val)
{
	if (json_type(arr) != JSON_ARRAY) {
		json_free(val);
		return;
	}
	if (!cJSON_AddItemToArray(M(arr), M(val)))
		die("out of memory building JSON");
}

/* ---- the strict reader --------------------------------------------------- */

static int
cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
json_check_unique(const struct json *obj, const char *path)
{
	const struct json *it;
	const char **keys;
	size_t n = 0, i;
	int ret = 0;

	if (json_type(obj) != JSON_OBJECT)
		return 0;
	keys = xcalloc(json_size(obj) + 1, sizeof(char *));
	JSON_FOR_EACH(it, obj)
		keys[n++] = json_key(it);
	xqsort(keys, n, sizeof(char *), cmp_key);
	for (i = 1; i < n; i++)
		if (!strcmp(keys[i - 1], keys[i])) {
			ret = error("%s: key '%s' appears twice", path, keys[i]);
			break;
		}
	free(keys);
	return ret;
}

static int
blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return 0;
	return 1;
}

static int
read_number(const struct json *v, const struct json_field *f, void *p,
	    const char *path)
{
	double lo = f->min, hi = f->max, d = json_num(v);
	int64_t i;

	if (f->kind == JK_DOUBLE) {
		if (!isfinite(d))
			return error("%s.%s: must be a number, not %s", path,
				     f->key, json_type_name(v));
		if ((lo || hi) && (d < lo || d > hi))
			return error("%s.%s: %g is out of range [%g, %g]", path,
				     f->key, d, lo, hi);
		*(double *)p = d;
		return 0;
	}
	if (!lo && !hi) {
		lo = f->kind == JK_INT ? -2147483648.0 : -9.2e18;
		hi = f->kind == JK_INT ? 2147483647.0 : 9.2e18;
	}
	if (json_int64(v, (int64_t)lo, (int64_t)hi, &i) < 0) {
		if (json_type(v) == JSON_NUMBER)
			return error("%s.%s: must be an integer in [%.0f, %.0f]",
				     path, f->key, lo, hi);
		return error("%s.%s: must be an integer, not %s", path, f->key,
			     json_type_name(v));
	}
	if (f->kind == JK_INT)
		*(int *)p = (int)i;
	else
		*(int64_t *)p = i;
	return 0;
}

static int
read_strv(const struct json *v, const struct json_field *f, void *p,
	  const char *path)
{
	const struct json *it;
	char **sv;
	size_t n = 0;

	if (json_type(v) != JSON_ARRAY)
		return error("%s.%s: must be an array of strings, not %s", path,
			     f->key, json_type_name(v));
	sv = xcalloc(json_size(v) + 1, sizeof(char *));
	JSON_FOR_EACH(it, v) {
		const char *s = json_str(it);

		if (!s || ((f->flags & JF_NONEMPTY) && blank(s))) {
			error("%s.%s[%zu]: must be a%s string", path, f->key, n,
			      (f->flags & JF_NONEMPTY) ? " non-empty" : "");
			strv_free(sv);
			return -1;
		}
		sv[n++] = xstrdup(s);
	}
	*(char ***)p = sv;
	return 0;
}

static int
read_field(const struct json *v, const struct json_field *f, void *dst,
	   const char *path)
{
	void *p = (char *)dst + f->offset;
	enum json_type t = json_type(v);
	int b;

	switch (f->kind) {
	case JK_STR:
		if (t != JSON_STRING)
			return error("%s.%s: must be a string, not %s", path,
				     f->key, json_type_name(v));
		if ((f->flags & JF_NONEMPTY) && blank(json_str(v)))
			return error("%s.%s: must not be empty", path, f->key);
		*(char **)p = xstrdup(json_str(v));
		return 0;
	case JK_INT:
	case JK_I64:
	case JK_DOUBLE:
		return read_number(v, f, p, path);
	case JK_BOOL:
		b = json_bool(v);
		if (b < 0)
			return error("%s.%s: must be true or false, not %s",
				     path, f->key, json_type_name(v));
		*(int *)p = b;
		return 0;
	case JK_OBJECT:
		if (t != JSON_OBJECT)
			return error("%s.%s: must be an object, not %s", path,
				     f->key, json_type_name(v));
		*(char **)p = json_print(v, 0);
		return 0;
	case JK_ARRAY:
		if (t != JSON_ARRAY)
			return error("%s.%s: must be an array, not %s", path,
				     f->key, json_type_name(v));
		*(char **)p = json_print(v, 0);
		return 0;
	case JK_RAW:
		*(char **)p = json_print(v, 0);
		return 0;
	case JK_STRV:
		return read_strv(v, f, p, path);
	case JK_IGNORE:
		return 0;
	}
	return error("%s.%s: unknown field kind", path, f->key);
}

int
json_read_object(const struct json *obj, const struct json_field *fields,
		 size_t nfields, void *dst, const char *path,
		 int allow_unknown)
{
	const struct json *it;
	size_t i;

	if (json_type(obj) != JSON_OBJECT)
		return error("%s: must be an object, not %s", path,
			     json_type_name(obj));
	if (json_check_unique(obj, path) < 0)
		return -1;
	JSON_FOR_EACH(it, obj) {
		const char *k = json_key(it);

		for (i = 0; i < nfields; i++)
			if (!strcmp(fields[i].key, k))
				break;
		if (i == nfields) {
			if (allow_unknown)
				continue;
			return error("%s: unknown key '%s'", path, k);
		}
		if (json_type(it) == JSON_NULL &&
		    (fields[i].flags & JF_NULLABLE))
			continue;
		if (read_field(it, &fields[i], dst, path) < 0)
			return -1;
	}
	for (i = 0; i < nfields; i++) {
		const struct json *v = json_get(obj, fields[i].key);

		if ((fields[i].flags & JF_REQUIRED) &&
		    (!v || json_type(v) == JSON_NULL))
			return error("%s: '%s' is required", path,
				     fields[i].key);
	}
	return 0;
}

void
json_fields_release(const struct json_field *fields, size_t nfields,
		    void *dst)
{
	size_t i;

	for (i = 0; i < nfields; i++) {
		void *p = (char *)dst + fields[i].offset;

		switch (fields[i].kind) {
		case JK_STR:
		case JK_RAW:
		case JK_OBJECT:
		case JK_ARRAY:
			free(*(char **)p);
			*(char **)p = NULL;
			break;
		case JK_STRV:
			strv_free(*(char ***)p);
			*(char ***)p = NULL;
			break;
		default:
			break;
		}
	}
}

/* ---- the writer ------------------------------------------------------------ */

void
jw_init(struct jw *w, struct buf *out, int pretty)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->pretty = pretty;
}

static void
newline(struct jw *w)
{
	int i;

	buf_addch(w->out, '\n');
	for (i = 0; i < w->depth; i++)
		buf_adds(w->out, "  ");
}

/* Separator and indentation before a value (or a key). */
static void
before_value(struct jw *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (w->depth > 0) {
		if (w->count[w->depth - 1]++)
			buf_addch(w->out, ',');
		if (w->pretty)
			newline(w);
	}
}

static void
open_container(struct jw *w, char c)
{
	before_value(w);
	buf_addch(w->out, c);
	if (w->depth >= JW_MAX_DEPTH)
		die("JSON writer: nesting deeper than %d", JW_MAX_DEPTH);
	w->close[w->depth] = c == '{' ? '}' : ']';
	w->count[w->depth++] = 0;
}

void
jw_object(struct jw *w)
{
	open_container(w, '{');
}

void
jw_array(struct jw *w)
{
	open_container(w, '[');
}

void
jw_end(struct jw *w)
{
	if (w->depth <= 0)
		die("JSON writer: end without a container");
	w->depth--;
	if (w->pretty && w->count[w->depth])
		newline(w);
	buf_addch(w->out, w->close[w->depth]);
}

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when
 * the bytes there are not one (overlong forms, surrogates and code points
 * above U+10FFFF included).
 */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	unsigned long cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

size_t
json_utf8_len(const char *s, size_t n)
{
	return n ? utf8_len((const unsigned char *)s, n) : 0;
}

static void
quote(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	buf_addch(b, '"');
	while (i < len) {
		unsigned c = p[i];

		switch (c) {
		case '"': buf_adds(b, "\\\""); i++; continue;
		case '\\': buf_adds(b, "\\\\"); i++; continue;
		case '\n': buf_adds(b, "\\n"); i++; continue;
		case '\r': buf_adds(b, "\\r"); i++; continue;
		case '\t': buf_adds(b, "\\t"); i++; continue;
		case '\b': buf_adds(b, "\\b"); i++; continue;
		case '\f': buf_adds(b, "\\f"); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			buf_addf(b, "\\u%04x", c);
			i++;
			continue;
		}
		n = utf8_len(p + i, len - i);
		if (!n) {
			buf_adds(b, "\\ufffd");
			i++;
			continue;
		}
		buf_add(b, p + i, n);
		i += n;
	}
	buf_addch(b, '"');
}

void
json_quote(struct buf *b, const char *s)
{
	quote(b, s ? s : "", s ? strlen(s) : 0);
}

void
jw_key(struct jw *w, const char *key)
{
	before_value(w);
	quote(w->out, key, strlen(key));
	buf_adds(w->out, w->pretty ? ": " : ":");
	w->after_key = 1;
}

void
jw_strn(struct jw *w, const char *s, size_t len)
{
	before_value(w);
	quote(w->out, s, len);
}

void
jw_str(struct jw *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_strn(w, s, strlen(s));
}

void
jw_int(struct jw *w, int64_t v)
{
	before_value(w);
	buf_addf(w->out, "%lld", (long long)v);
}

void
jw_uint(struct jw *w, uint64_t v)
{
	before_value(w);
	buf_addf(w->out, "%llu", (unsigned long long)v);
}

/* The shortest %.Ng that reads back as v. */
static void
add_double(struct buf *b, double v)
{
	char tmp[40];
	int prec;

	if (v == floor(v) && fabs(v) < 1e15) {
		buf_addf(b, "%.0f", v == 0 ? 0.0 : v);
		return;
	}
	for (prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	buf_adds(b, tmp);
}

void
jw_num(struct jw *w, double v)
{
	if (!isfinite(v)) {
		jw_null(w);
		return;
	}
	before_value(w);
	add_double(w->out, v);
}

/* 1 when s is exactly one JSON number (RFC 8259 section 6). */
static int
is_json_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return 0;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

int
jw_num_text(struct jw *w, const char *text)
{
	if (!text || !is_json_number(text))
		return -1;
	before_value(w);
	buf_adds(w->out, text);
	return 0;
}

void
jw_bool(struct jw *w, int v)
{
	before_value(w);
	buf_adds(w->out, v ? "true" : "false");
}

void
jw_null(struct jw *w)
{
	before_value(w);
	buf_adds(w->out, "null");
}

void
jw_value(struct jw *w, const struct json *v)
{
	const struct json *it;

	switch (json_type(v)) {
	case JSON_NULL:
	case JSON_INVALID:
		jw_null(w);
		break;
	case JSON_FALSE:
		jw_bool(w, 0);
		break;
	case JSON_TRUE:
		jw_bool(w, 1);
		break;
	case JSON_NUMBER:
		jw_num(w, json_num(v));
		break;
	case JSON_STRING:
		jw_str(w, json_str(v));
		break;
	case JSON_ARRAY:
		jw_array(w);
		JSON_FOR_EACH(it, v)
			jw_value(w, it);
		jw_end(w);
		break;
	case JSON_OBJECT:
		jw_object(w);
		JSON_FOR_EACH(it, v) {
			jw_key(w, json_key(it));
			jw_value(w, it);
		}
		jw_end(w);
		break;
	}
}

int
jw_raw(struct jw *w, const char *text)
{
	struct json *v;

	if (!text)
		return -1;
	error_silent++;
	v = json_parse(text, strlen(text), NULL);
	error_silent--;
	if (!v)
		return -1;
	jw_value(w, v);
	json_free(v);
	return 0;
}

void
jw_kstr(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	jw_str(w, s);
}

void
jw_kint(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	jw_int(w, v);
}

void
jw_knum(struct jw *w, const char *key, double v)
{
	jw_key(w, key);
	jw_num(w, v);
}

void
jw_kbool(struct jw *w, const char *key, int v)
{
	jw_key(w, key);
	jw_bool(w, v);
}

void
jw_knull(struct jw *w, const char *key)
{
	jw_key(w, key);
	jw_null(w);
}

const char *
json_backend_version(void)
{
	return cJSON_Version();
}
