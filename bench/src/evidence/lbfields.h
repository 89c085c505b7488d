#ifndef EVIDENCE_LBFIELDS_H
#define EVIDENCE_LBFIELDS_H

/*
 * The fields of a llama-bench row, in one table: every field some
 * llama-bench version prints (2023 to 2026) under its json/jsonl/csv/sql
 * name, the name its markdown tables show it under, what kind of value
 * it holds, and what it is to a measurement. The readers (which names
 * are llama-bench's, how a CSV cell is typed), the store (which fields
 * make a row's configuration, what a selection key may be called) and
 * the SQL export (llama-bench's own columns) all ask this table; a field
 * llama-bench adds is one row here.
 *
 * Roles: a field either changes the measurement (its configuration:
 * backends, n_threads, flash_attn, ...; rows that differ in one are
 * never pooled), or it names the test (n_prompt, "test"), holds a result
 * (avg_ts, samples_ns, "t/s"), names the model (model_type, "size"; the
 * run's model hash is its identity, else the run's model name with the
 * row's file, type, size and parameters: analysis/workload.c) or the
 * hardware (cpu_info; the fingerprint's). gpu_info is configuration of
 * flag LB_PER_HOST. The store's configuration trigger is generated from
 * the fields that are not configuration (store.c): changing a field's
 * role changes how new rows are grouped, so it needs a store migration
 * that re-derives the configurations of stored rows.
 *
 * Names are static text; nothing here allocates.
 */

#include <stddef.h>

enum lb_field_kind {
	LB_TEXT = 's',
	LB_INT = 'i',
	LB_REAL = 'r',
	LB_FLAG = 'b',          /* a boolean (old builds), or 0/1 */
	LB_ARRAY = 'a',         /* samples_ns, samples_ts */
};

enum lb_field_role {
	LB_CONFIG,              /* changes the measurement */
	LB_TEST,                /* names or sizes the test */
	LB_RESULT,              /* what was measured */
	LB_MODEL,               /* names or describes the model */
	LB_HARDWARE,            /* names the hardware */
};

/* flags */
enum {
	LB_SQL = 1,             /* a column of `llama-bench -o sql` of the
				   build this project provisions, in order */
	LB_MD_ONLY = 2,         /* only a markdown column ("test", "t/s") */
	LB_OTHER_RUNTIME = 4,   /* not llama-bench's: a field MLX-LM rows
				   carry beside (their harness JSON) */
	LB_PER_HOST = 8,        /* configuration that differs between hosts
				   by nature (gpu_info: "Apple M2 Max" on the
				   host, "Apple Paravirtual device" in its
				   guest): rows of one target that differ in
				   it are never pooled, rows of different
				   targets are paired without it */
};

struct lb_field {
	const char *name;       /* json name; a '.' is a nested key */
	const char *md;         /* markdown column name, or NULL */
	enum lb_field_kind kind;
	enum lb_field_role role;
	unsigned flags;
};

extern const struct lb_field lb_fields[];
extern const size_t lb_nfields;

/* The field named name (json name or markdown name), or NULL. */
const struct lb_field *lb_field_find(const char *name);
/* 1 when name is a field some llama-bench version prints (json or
 * markdown name); fields of other runtimes are not. */
int lb_field_known(const char *name);
/* The kind of the values of the llama-bench field with json name name;
 * LB_TEXT for any other name (markdown names included: a table's
 * cells are typed by their column, lbformats.c). */
enum lb_field_kind lb_field_kind(const char *name);
/* 1 when name names or measures the test (roles LB_TEST, LB_RESULT). */
int lb_field_of_test(const char *name);
/*
 * 1 when name is part of a row's configuration: the fields of role
 * LB_CONFIG, and every name that is not in the table unless its value is
 * numeric (numeric: a number, or an array) and the name says it is a
 * measurement (lb_field_measurement_name).
 */
int lb_field_in_config(const char *name, int numeric);
/*
 * 1 when a name no llama-bench version prints reads as a measurement:
 * it starts with one of lb_measure_prefixes (avg_, stddev_, p99_,
 * samples_, ...) or ends with one of lb_measure_suffixes (_ms, _ns,
 * _s, _ts, ...). Both lists are NULL-terminated.
 */
int lb_field_measurement_name(const char *name);
extern const char *const lb_measure_prefixes[];
extern const char *const lb_measure_suffixes[];
/* 1 for the fields of flag LB_PER_HOST (gpu_info). */
int lb_field_per_host(const char *name);
/* 1 when a and b name the same field (backend and backends, fa and
 * flash_attn), or are the same name. */
int lb_field_same(const char *a, const char *b);

#endif
