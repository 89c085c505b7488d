#ifndef EVIDENCE_LBSQL_H
#define EVIDENCE_LBSQL_H

/*
 * Results as llama-bench -o sql writes them, for llama.cpp's own tools
 * (scripts/compare-llama-bench.py reads the table from sqlite3): the same
 * CREATE TABLE, column for column, then one INSERT per result with every
 * value quoted as llama-bench quotes it ('' doubled, which llama-bench
 * itself does not do). A value a result does not know is NULL.
 */

#include <stddef.h>

struct buf;
struct lb_row;

/* The table's name; its columns are the LB_SQL fields of lbfields.h,
 * in their order. */
extern const char lb_sql_table[];

/* "CREATE TABLE IF NOT EXISTS llama_bench (\n  …\n);\n\n" */
void lb_sql_create(struct buf *out);

/*
 * One INSERT for row, with build_commit given (the caller's tag, which
 * says the variant, so stock and shim never fold into one build). The
 * mean and deviation are llama-bench's own when the row has them;
 * stddev_ns is computed from samples_ns (llama-bench's own overflows for
 * multi-second samples).
 */
void lb_sql_insert(struct buf *out, const struct lb_row *row,
		   const char *build_commit);

#endif
