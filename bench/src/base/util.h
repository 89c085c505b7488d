#ifndef UTIL_H
#define UTIL_H

/*
 * Small shared helpers: a growable string buffer, error reporting that
 * returns -1, allocation wrappers that never return NULL. Files and
 * directories are in base/files.h.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define SHIMBENCH_VERSION "0.1.0"

/* Exit codes, documented in README.md. Only cmd-*.c decide them. */
enum {
	EXIT_OK = 0,            /* success */
	EXIT_CHECK = 1,         /* a check failed: regression, hash, injection */
	EXIT_USAGE = 2,         /* bad command line or bad input file */
	EXIT_ENV = 3,           /* environment or tool failure */
	EXIT_INCONCLUSIVE = 4,  /* not enough data to decide */
	EXIT_INTERRUPTED = 130, /* run stopped by SIGINT/SIGTERM (128 + 2) */
};

/*
 * Return codes of library functions. 0 and -1 (after error()) are the
 * rule; a function that needs to tell more failures apart uses these
 * names, and its header says which it returns. Never a bare -2 or -3.
 */
enum {
	RC_OK = 0,
	RC_ERROR = -1,    /* after error(): the store, a file, a tool failed */
	RC_USAGE = -2,    /* after error(): bad input (a selection, a file) */
	RC_NOTHING = -3,  /* after error(): nothing matched, nothing counts */
};

/*
 * A growable, always NUL-terminated buffer. After BUF_INIT, .buf is never
 * NULL; buf_release() frees and re-initialises; buf_detach() hands the
 * memory to the caller (free() it).
 */
struct buf {
	size_t alloc;
	size_t len;
	char *buf;
};
extern char buf_empty[];
#define BUF_INIT { 0, 0, buf_empty }

void buf_init(struct buf *b, size_t hint);
void buf_add(struct buf *b, const void *data, size_t len);
void buf_adds(struct buf *b, const char *s);
void buf_addch(struct buf *b, int c);
void buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_vaddf(struct buf *b, const char *fmt, va_list ap);
void buf_setlen(struct buf *b, size_t len);
void buf_reset(struct buf *b);
void buf_release(struct buf *b);
char *buf_detach(struct buf *b, size_t *len);
/* Appends s quoted for one POSIX shell ('…', with ' as '\''). */
void buf_add_sh_quoted(struct buf *b, const char *s);
/*
 * Appends s (n bytes) for a terminal: control characters other than
 * newline and tab, DEL and UTF-8-encoded C1 controls become visible
 * escapes (\x1b, \u009b), so text from evidence files cannot move the
 * cursor, retitle the window or hide what precedes it.
 */
void buf_add_term_safe(struct buf *b, const char *s, size_t n);
/* Reads a whole file into b (appending); -1 with error() on failure. */
int buf_read_file(struct buf *b, const char *path);

/* Prints "error: …" to stderr and returns -1. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "warning: …" to stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "fatal: …" and exits with EXIT_ENV; for impossible situations. */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* While > 0, error() and warning() print nothing (used by unit tests). */
extern int error_silent;
/* The last message error() formatted, for callers that re-report it. */
const char *error_last(void);

/* Allocation wrappers: never return NULL (die on exhaustion). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * qsort() that accepts an empty array whose pointer is NULL (passing
 * NULL to qsort() is undefined even for 0 elements; UBSan reports it):
 * every sort in bench/src goes through it.
 */
void xqsort(void *base, size_t n, size_t size,
	    int (*cmp)(const void *, const void *));

/* Parses a whole decimal integer / double; 0 on success, -1 otherwise. */
int parse_long(const char *s, long *out);
int parse_double(const char *s, double *out);

/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ" into out[21]. */
void utc_now(char out[21]);
/* Monotonic clock in seconds. */
double mono_now(void);

/*
 * Formats v with at most `decimals` decimals, trailing zeros removed;
 * "" when v is not finite.
 */
void fmt_num(char *out, size_t size, double v, int decimals);

/* Lowercase hex of len bytes into out (2*len+1 bytes). */
void hex_encode(const unsigned char *in, size_t len, char *out);

/*
 * NULL-terminated string vectors (argv, environments): strv_push appends
 * s (taken over) and keeps the vector terminated; strv_dup copies;
 * strv_free frees the strings and the vector.
 */
char **strv_push(char **v, size_t *n, char *s);
char **strv_dup(const char *const *v);
void strv_free(char **v);

/*
 * The candidate a mistyped word most likely meant: the one of cand[0..n)
 * (NULL entries skipped) nearest by edit distance (insert, delete,
 * substitute, swap two neighbours), when near enough to be a typo (1 edit
 * for words of up to 4 characters, 2 up to 8, 3 beyond) or when word is
 * the start of exactly one candidate; else NULL. Points into cand.
 */
const char *closest_word(const char *word, const char *const *cand, size_t n);

/*
 * How far a long step has got (reading a directory of evidence, storing
 * it): libraries call progress_note() with what they do ("checking
 * 'DIR'"), how many items of how many are done, and the unit ("runs");
 * done == total ends the step. It does nothing unless a command set
 * progress_hook (cmd/progress.c draws a line on a terminal).
 */
typedef void (*progress_fn)(const char *what, size_t done, size_t total,
			    const char *unit);
extern progress_fn progress_hook;
void progress_note(const char *what, size_t done, size_t total,
		   const char *unit);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
