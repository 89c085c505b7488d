#ifndef EVIDENCE_LBREAD_H
#define EVIDENCE_LBREAD_H

/*
 * Inside the llama-bench readers; nothing outside them includes this.
 * llamabench.c owns lb_parse() and the rows (a row from a JSON object,
 * configurations, generations); lbjson.c reads output that is JSON
 * (-o json, -o jsonl); lbscan.c scans any other text line by line and
 * hands each line to the format readers of lbscan.h (md, csv, sql, JSON
 * rows among log lines); lbfields.c knows the fields.
 */

#include "evidence/lbfields.h"

#include <stddef.h>

struct json;
struct lb_row;
struct lb_output;

/* ---- rows (llamabench.c) ------------------------------------------------- */

enum lb_row_kind {
	LB_ROW_SAMPLES,    /* a JSON row: must have its samples */
	LB_ROW_TABLE,      /* a CSV or SQL row: avg_ts and stddev_ts only */
};

/*
 * Fills r (zeroed first) from one JSON object of llama-bench fields;
 * `where` names the row in errors ("'f.json' row 3"). -1 after error();
 * release r with lb_row_release() in both cases.
 */
int lb_row_from_json(const struct json *o, struct lb_row *r,
		     const char *where, enum lb_row_kind kind);
void lb_row_release(struct lb_row *r);
/* Appends r (taken over) to out->rows. */
void lb_rows_push(struct lb_output *out, struct lb_row *r);

/* ---- whole texts --------------------------------------------------------- */

/*
 * data[start] is the first byte that is not white space: '[' for
 * lb_read_json_array() (llama-bench -o json), '{' for lb_read_jsonl()
 * (-o jsonl). 0, or -1 after error() naming the file and the byte.
 */
int lb_read_json_array(const char *data, size_t len, size_t start,
		       const char *name, struct lb_output *out);
int lb_read_jsonl(const char *data, size_t len, size_t start,
		  const char *name, struct lb_output *out);
/* Scans any other text, line by line (lbscan.c). */
int lb_parse_text(const char *data, size_t len, const char *name,
		  struct lb_output *out);

/* ---- field values (lbfields.c) ------------------------------------------------- */

/* What each field is: evidence/lbfields.h. */

/* A whole decimal integer, strictly (no "0x200", no spaces); 0 or -1. */
int lb_strict_int(const char *v, long long *out);
/* A finite decimal number (digits, '.', sign, exponent only); 0 or -1. */
int lb_strict_num(const char *v, double *out);

/*
 * Sets o[key] to v (a csv or sql cell) as the JSON llama-bench would
 * print: typed by the declared SQL type when there is one (type may be
 * NULL), else by the field. -1 after error() naming `where` and the key
 * when the cell is not of that type.
 */
int lb_typed_value(struct json *o, const char *key, const char *v,
		   const char *type, const char *where);

/*
 * The row o under one spelling, whatever the format (caller frees): a
 * markdown column under its json name when its cell is a value of the
 * field ("threads" 8 becomes "n_threads": 8; "size" "4.3 GiB" stays),
 * numbers of csv, sql and md cells as numbers, flags (booleans of json,
 * "0"/"1" of csv and sql, "true"/"false") as the integers 0 and 1.
 * Fields of other runtimes and of no llama-bench version are kept as
 * they are. inspect counts configurations so; the store keeps the raw
 * row as printed (evidence) and derives its configuration under the
 * same spelling from the same table (store.c config_of), so a jsonl
 * stock run and a csv shim run of one sweep have one configuration.
 */
struct json *lb_normalised(const struct json *o);

#endif
