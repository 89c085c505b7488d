#ifndef BASE_JSON_H
#define BASE_JSON_H

/*
 * JSON, the only module that knows the parser underneath (cJSON).
 *
 * Reading: json_parse() gives a tree of `struct json` values owned by its
 * root (json_free() the root only). Accessors never fail on a NULL or a
 * value of the wrong type: they answer NULL / NAN / 0 so a caller checks
 * once. Iterate with JSON_FOR_EACH (linear); json_at() is O(index).
 *
 * The strict reader: json_read_object() fills a struct from a table of
 * fields (key, kind, offset, flags, range) and refuses unknown keys,
 * duplicate keys, wrong types and numbers out of range, naming the key
 * path ("runs[3].exit_code") in the error.
 *
 * Writing: one streaming writer, struct jw, into a struct buf. Strings
 * are escaped, invalid UTF-8 becomes U+FFFD (so output is always valid
 * JSON), non-finite numbers become null. A parsed value is written with
 * jw_value(); json_print() is jw over a whole tree.
 *
 * Small edits of parsed documents (a fingerprint gaining a key) use the
 * json_set_*() functions, which replace an existing key in place.
 */

#include <stddef.h>
#include <stdint.h>

struct buf;
struct json;

enum json_type {
	JSON_INVALID = 0,   /* NULL or not a value */
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

/*
 * Parses len bytes of text (which need not be NUL-terminated). The whole
 * text must be one value with only whitespace around it. Returns the
 * root, or NULL after error("'NAME': not valid JSON at line L, column C
 * (byte B)"). name may be NULL ("JSON" is used then).
 */
struct json *json_parse(const char *text, size_t len, const char *name);
/*
 * Like json_parse(), but accepts trailing text: *end gets the offset
 * just past the value (for a stream of values, e.g. jsonl or a cut-off
 * array). NULL, with *end where the parser stopped, when no value
 * parses; nothing is printed. json_prefix_len() tells a cut-off text
 * from garbage.
 */
struct json *json_parse_prefix(const char *text, size_t len, size_t *end);
/*
 * The offset of the first byte at which text stops being the beginning
 * of one JSON value (whitespace around it allowed); len when every byte
 * fits: the text is a whole value or one cut off anywhere. *whole (may
 * be NULL) tells which: 1 for a whole value, 0 otherwise. Tells a
 * truncated document from garbage without parsing it.
 */
size_t json_prefix_len(const char *text, size_t len, int *whole);
/* Frees a tree returned by json_parse*() or json_new_*(); NULL is fine. */
void json_free(struct json *root);

enum json_type json_type(const struct json *v);
/* "null", "boolean", "number", "string", "array", "object", "nothing". */
const char *json_type_name(const struct json *v);
int json_is_bool(const struct json *v);

/* Object member by exact key, or NULL. */
const struct json *json_get(const struct json *obj, const char *key);
/* The key of an object member (JSON_FOR_EACH over an object), or NULL. */
const char *json_key(const struct json *member);
/* First child / next sibling, for JSON_FOR_EACH. */
const struct json *json_first(const struct json *container);
const struct json *json_next(const struct json *v);
#define JSON_FOR_EACH(it, container) \
	for ((it) = json_first(container); (it); (it) = json_next(it))
/* Members of an object or elements of an array (O(n)); 0 otherwise. */
size_t json_size(const struct json *container);
/* Element i of an array (O(i)), or NULL. */
const struct json *json_at(const struct json *arr, size_t i);

/* The string of a string value, else NULL. */
const char *json_str(const struct json *v);
/* json_str(json_get(obj, key)). */
const char *json_get_str(const struct json *obj, const char *key);
/* The number of a number value, else NAN. */
double json_num(const struct json *v);
/* 1 true, 0 false, -1 not a boolean. */
int json_bool(const struct json *v);
/*
 * Checked integers: a number that is integral and within [lo, hi].
 * 0, or -1 (nothing printed) when v is not such a number.
 */
int json_int64(const struct json *v, int64_t lo, int64_t hi, int64_t *out);

/* Compact (pretty = 0) or indented text of v; the caller frees it. */
char *json_print(const struct json *v, int pretty);
/* 1 when a and b are the same JSON value (object key order ignored). */
int json_equal(const struct json *a, const struct json *b);
/* A deep copy (a new root). */
struct json *json_dup(const struct json *v);

/* Building and editing. New values are roots until attached. */
struct json *json_new_object(void);
struct json *json_new_array(void);
struct json *json_new_str(const char *s);   /* NULL gives null */
struct json *json_new_num(double v);        /* non-finite gives null */
struct json *json_new_bool(int v);
/* Sets obj[key] to val (taken over), replacing an existing member. */
void json_set(struct json *obj, const char *key, struct json *val);
void json_set_str(struct json *obj, const char *key, const char *s);
void json_set_num(struct json *obj, const char *key, double v);
void json_set_bool(struct json *obj, const char *key, int v);
/* Removes obj[key] if present. */
void json_remove(struct json *obj, const char *key);
/* Appends val (taken over) to arr. */
void json_append(struct json *arr, struct json *val);
/* Mutable access to a member, for editing in place. */
struct json *json_get_mut(struct json *obj, const char *key);

/* ---- the strict table-driven reader ------------------------------------ */

enum json_kind {
	JK_STR,       /* char *: a copy (xstrdup) */
	JK_INT,       /* int: an integer in [min, max] (both 0: int range) */
	JK_I64,       /* int64_t: an integer in [min, max] (both 0: any) */
	JK_DOUBLE,    /* double: a finite number in [min, max] (both 0: any) */
	JK_BOOL,      /* int: 0 or 1 */
	JK_RAW,       /* char *: the value as compact JSON text */
	JK_STRV,      /* char **: a NULL-terminated copy of an array of strings */
	JK_OBJECT,    /* char *: compact text of an object */
	JK_ARRAY,     /* char *: compact text of an array */
	JK_IGNORE,    /* accepted, not read */
};

enum {
	JF_REQUIRED = 1 << 0,   /* absent is an error */
	JF_NULLABLE = 1 << 1,   /* null reads as absent */
	JF_NONEMPTY = 1 << 2,   /* strings: not empty or only whitespace;
				   string vectors: no such element */
};

struct json_field {
	const char *key;
	enum json_kind kind;
	size_t offset;          /* offsetof(struct, member) */
	unsigned flags;
	double min, max;        /* numeric range, inclusive */
};

/*
 * Reads obj into dst by the table. Keys not in the table are an error
 * unless allow_unknown; a duplicate key is always an error. Fields absent
 * from obj leave dst untouched (set defaults first). path names obj in
 * messages ("bundle.json: runs[3]"). Returns 0, or -1 after
 * error("PATH.KEY: must be …"). Strings already in dst for a field that is
 * read are not freed: start from zeroed or default-constant members.
 */
int json_read_object(const struct json *obj, const struct json_field *fields,
		     size_t nfields, void *dst, const char *path,
		     int allow_unknown);
/* Frees the JK_STR/JK_RAW/JK_OBJECT/JK_ARRAY/JK_STRV members of dst. */
void json_fields_release(const struct json_field *fields, size_t nfields,
			 void *dst);
/* Checks that no key of obj repeats; 0, or -1 after error(). */
int json_check_unique(const struct json *obj, const char *path);

/* ---- the writer ------------------------------------------------------- */

#define JW_MAX_DEPTH 64

struct jw {
	struct buf *out;
	int pretty;
	int depth;
	int count[JW_MAX_DEPTH];  /* values written at each depth */
	char close[JW_MAX_DEPTH]; /* '}' or ']' */
	int after_key;
};

void jw_init(struct jw *w, struct buf *out, int pretty);
void jw_object(struct jw *w);      /* { */
void jw_array(struct jw *w);       /* [ */
void jw_end(struct jw *w);         /* } or ] */
void jw_key(struct jw *w, const char *key);
void jw_str(struct jw *w, const char *s);        /* NULL writes null */
void jw_strn(struct jw *w, const char *s, size_t len);
void jw_int(struct jw *w, int64_t v);
void jw_uint(struct jw *w, uint64_t v);          /* every uint64_t exact */
void jw_num(struct jw *w, double v);             /* shortest round trip */
/*
 * text as written, when it is a JSON number (RFC 8259: "-0.50", "1e5";
 * not ".5", "+1", "0x10", "inf"), so a number shown as text keeps its
 * digits; returns -1 and writes nothing otherwise.
 */
int jw_num_text(struct jw *w, const char *text);
void jw_bool(struct jw *w, int v);
void jw_null(struct jw *w);
/* A parsed value, re-written (so always valid). */
void jw_value(struct jw *w, const struct json *v);
/* JSON text: parsed and re-written; -1 (nothing written) if invalid. */
int jw_raw(struct jw *w, const char *text);
/* key + value in one call. */
void jw_kstr(struct jw *w, const char *key, const char *s);
void jw_kint(struct jw *w, const char *key, int64_t v);
void jw_knum(struct jw *w, const char *key, double v);
void jw_kbool(struct jw *w, const char *key, int v);
void jw_knull(struct jw *w, const char *key);
/* Appends s as a JSON string literal to b (the writer's escaping). */
void json_quote(struct buf *b, const char *s);

/* The version of the parser underneath ("1.7.15"); static text. */
const char *json_backend_version(void);

/*
 * The length of the valid UTF-8 sequence at s (at most n bytes), or 0
 * when the bytes there are not one (overlong forms, surrogates and code
 * points above U+10FFFF included): what json_quote() replaces by U+FFFD.
 */
size_t json_utf8_len(const char *s, size_t n);

#endif
