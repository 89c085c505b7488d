#ifndef EVIDENCE_LBSCAN_H
#define EVIDENCE_LBSCAN_H

/*
 * The line scanner of llama-bench output as people save and paste it
 * (lbscan.c), and the format readers it hands lines to: one row each in
 * lbscan.c's table of formats, one file each (lbmd.c, lbjson.c, lbcsv.c,
 * lbsqlin.c). Inside the llama-bench readers only.
 *
 * The text is cleaned line by line first (CR, ANSI escapes and a "> "
 * quote prefix removed; line numbers kept), then scanned once: every
 * line goes to the reader of the format the output is in (once one has
 * claimed it), then to each reader in table order; a line none takes is
 * set aside, by reason (llama.cpp log line, shell prompt, …).
 */

#include "base/util.h"

#include <stddef.h>

struct lb_output;

/* A row of a table has at most this many cells; more is not a table. */
#define LB_MAX_CELLS 256

struct lb_line {
	size_t start, len;      /* in the cleaned text (no '\n') */
	size_t orig;            /* where it starts in the text given */
	unsigned nul : 1;       /* the original line had a NUL byte */
	unsigned ended : 1;     /* the original line ended with '\n' */
};

struct lb_format;

struct lb_scan {
	const char *name;       /* the file, for messages */
	struct lb_output *out;
	struct buf text;        /* cleaned lines, each followed by '\n' */
	struct lb_line *lines;
	size_t nlines;
	const struct lb_format *fmt;   /* the format of the output so far */
	size_t fmt_line;               /* where it began (1-based) */
	size_t block;           /* tables, arrays or runs begun so far */
	int cut;                /* the last line was cut off: stop */
	int incomplete;         /* a header without rows, an open array */
};

/*
 * One of llama-bench's text formats. A new format is one reader file and
 * one row in lbscan.c's table.
 */
struct lb_format {
	const char *name;       /* "md", "json", "csv", "sql" */
	size_t state_size;      /* its own state, zeroed before the scan */
	/*
	 * Line i (t: trimmed, non-empty): 1 when it is this format's (rows
	 * read; *ip moves to the last line used when it spans several), 0
	 * when not, -1 after error() naming the line.
	 */
	int (*line)(struct lb_scan *s, void *state, size_t *ip,
		    const char *t);
	/* At the end of the text, for every format (may be NULL). */
	void (*end)(struct lb_scan *s, void *state);
	/* Frees what state holds, not state itself (may be NULL). */
	void (*release)(void *state);
};

extern const struct lb_format lb_format_md;
extern const struct lb_format lb_format_json;
extern const struct lb_format lb_format_csv;
extern const struct lb_format lb_format_sql;

/* Line i, trimmed, as a new string (caller frees). */
char *lb_line_dup(const struct lb_scan *s, size_t i);
/* The last line with any text. */
size_t lb_last_text_line(const struct lb_scan *s);
/* Line i is the last one and has no newline: the text was cut there. */
int lb_cut_line(const struct lb_scan *s, size_t i);
/* The line holding byte offset off of the cleaned text (from line i on). */
size_t lb_line_of(const struct lb_scan *s, size_t i, size_t off);

/*
 * The output at line i is in format f. Output in two formats (-o md and
 * -oe json captured together) would be counted twice, so a second one
 * is refused: -1 after error() naming both lines.
 */
int lb_scan_claim(struct lb_scan *s, size_t i, const struct lb_format *f);
/* -1 after error() when a line in [from, to] had a NUL byte. */
int lb_check_nul(const struct lb_scan *s, size_t from, size_t to);

/* Sets line i (text t) aside as `why` (static text). */
void lb_ignore(struct lb_scan *s, size_t i, const char *t, const char *why);
/* Sets line i aside by what it is: log line, prompt, crash, other. */
void lb_ignore_line(struct lb_scan *s, size_t i, const char *t);
/* 1 when t is a line llama.cpp or ggml prints on stderr. */
int lb_is_log_line(const char *t);

/* 1 when s is a field name of csv and sql: [a-z0-9_]+. */
int lb_is_ident(const char *s);
/*
 * Adds the row of named values (CSV, SQL) at line i; types are the
 * declared SQL types (NULL: none; an entry may be NULL). -1 after
 * error() naming the line.
 */
int lb_named_row(struct lb_scan *s, size_t i, char *const *keys,
		 char *const *types, char *const *vals, size_t n);

#endif
