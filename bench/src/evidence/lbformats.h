#ifndef EVIDENCE_LBFORMATS_H
#define EVIDENCE_LBFORMATS_H

/*
 * Inside the llama-bench parser (llamabench.c, lbformats.c); nothing
 * else includes this. llamabench.c reads JSON rows and owns lb_parse();
 * lbformats.c scans text that is not plain JSON: tables, CSV, SQL, JSON
 * rows among log lines.
 */

#include <stddef.h>

struct json;
struct lb_row;
struct lb_output;

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

/* Scans text that does not start with '[' or '{' (see llamabench.h). */
int lb_parse_text(const char *data, size_t len, const char *name,
		  struct lb_output *out);

#endif
