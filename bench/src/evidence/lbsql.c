/*
 * llama-bench -o sql, written from stored results (see lbsql.h). The
 * columns are those of the llama-bench this project provisions
 * (.llama/bin/llama-bench); t2102 compares them with its real output.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/lbsql.h"
#include "evidence/lbfields.h"
#include "evidence/llamabench.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char lb_sql_table[] = "llama_bench";

/* The SQL type llama-bench declares for a field of this kind. */
static const char *
sql_type(const struct lb_field *f)
{
	return f->kind == LB_REAL ? "REAL" :
	       f->kind == LB_INT || f->kind == LB_FLAG ? "INTEGER" : "TEXT";
}

void
lb_sql_create(struct buf *out)
{
	const char *sep = "";
	size_t i;

	buf_addf(out, "CREATE TABLE IF NOT EXISTS %s (", lb_sql_table);
	for (i = 0; i < lb_nfields; i++)
		if (lb_fields[i].flags & LB_SQL) {
			buf_addf(out, "%s\n  %s %s", sep, lb_fields[i].name,
				 sql_type(&lb_fields[i]));
			sep = ",";
		}
	buf_adds(out, "\n);\n\n");
}

static void
quoted(struct buf *out, const char *s)
{
	buf_addch(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			buf_addch(out, '\'');
		buf_addch(out, *s);
	}
	buf_addch(out, '\'');
}

static void
quoted_int(struct buf *out, long long v)
{
	buf_addf(out, "'%lld'", v);
}

/* A double as std::to_string prints it ("%f"), quoted. */
static void
quoted_real(struct buf *out, double v)
{
	if (!isfinite(v)) {
		buf_adds(out, "NULL");
		return;
	}
	buf_addf(out, "'%f'", v);
}

/* A raw field as llama-bench prints it: booleans 1/0, integers whole. */
static void
raw_value(struct buf *out, const struct json *v)
{
	double d;

	switch (json_type(v)) {
	case JSON_TRUE:
		quoted(out, "1");
		break;
	case JSON_FALSE:
		quoted(out, "0");
		break;
	case JSON_NUMBER:
		d = json_num(v);
		if (d == floor(d) && fabs(d) < 9.2e18)
			quoted_int(out, (long long)d);
		else
			quoted_real(out, d);
		break;
	case JSON_STRING:
		quoted(out, json_str(v));
		break;
	default:
		buf_adds(out, "NULL");
	}
}

static double
mean(const double *x, size_t n)
{
	double s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

/* The sample standard deviation, 0 for one value (as llama-bench). */
static double
stdev(const double *x, size_t n)
{
	double m = mean(x, n), s = 0;
	size_t i;

	if (n < 2)
		return 0;
	for (i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return sqrt(s / (double)(n - 1));
}

/* avg_ns, stddev_ns, avg_ts, stddev_ts of a row. */
static int
measure(struct buf *out, const struct lb_row *row, const struct json *raw,
	const char *col)
{
	double *ns;
	size_t i;

	if (row->samples_ns && row->n_samples &&
	    (!strcmp(col, "avg_ns") || !strcmp(col, "stddev_ns"))) {
		ns = xcalloc(row->n_samples, sizeof(double));
		for (i = 0; i < row->n_samples; i++)
			ns[i] = (double)row->samples_ns[i];
		quoted_int(out, (long long)(!strcmp(col, "avg_ns") ?
			   mean(ns, row->n_samples) :
			   stdev(ns, row->n_samples)));
		free(ns);
		return 1;
	}
	if (!strcmp(col, "avg_ts") || !strcmp(col, "stddev_ts")) {
		const struct json *v = json_get(raw, col);

		if (json_type(v) == JSON_NUMBER)
			quoted_real(out, json_num(v));
		else if (!strcmp(col, "avg_ts"))
			quoted_real(out, row->n_samples ?
				    mean(row->samples_ts, row->n_samples) :
				    row->avg_ts);
		else
			quoted_real(out, row->n_samples ?
				    stdev(row->samples_ts, row->n_samples) :
				    row->stddev_ts);
		return 1;
	}
	return 0;
}

/* A column the parsed row knows (from any format); 0 when it does not. */
static int
known(struct buf *out, const struct lb_row *r, const char *col)
{
	static const struct { const char *col; size_t off; } longs[] = {
		{ "build_number", offsetof(struct lb_row, build_number) },
		{ "n_batch", offsetof(struct lb_row, n_batch) },
		{ "n_ubatch", offsetof(struct lb_row, n_ubatch) },
		{ "n_threads", offsetof(struct lb_row, n_threads) },
		{ "n_prompt", offsetof(struct lb_row, n_prompt) },
		{ "n_gen", offsetof(struct lb_row, n_gen) },
		{ "n_depth", offsetof(struct lb_row, n_depth) },
	};
	static const struct { const char *col; size_t off; } strs[] = {
		{ "backends", offsetof(struct lb_row, backends) },
		{ "model_type", offsetof(struct lb_row, model_type) },
		{ "type_k", offsetof(struct lb_row, type_k) },
		{ "type_v", offsetof(struct lb_row, type_v) },
		{ "cpu_info", offsetof(struct lb_row, cpu_info) },
		{ "gpu_info", offsetof(struct lb_row, gpu_info) },
		{ "model_filename", offsetof(struct lb_row, model_filename) },
		{ "test_time", offsetof(struct lb_row, test_time) },
	};
	size_t k;

	for (k = 0; k < ARRAY_SIZE(longs); k++)
		if (!strcmp(col, longs[k].col)) {
			long v = *(const long *)(const void *)
				((const char *)r + longs[k].off);
			if (v < 0)
				return 0;
			quoted_int(out, v);
			return 1;
		}
	for (k = 0; k < ARRAY_SIZE(strs); k++)
		if (!strcmp(col, strs[k].col)) {
			const char *v = *(char *const *)(const void *)
				((const char *)r + strs[k].off);
			if (!v || !*v)
				return 0;
			quoted(out, v);
			return 1;
		}
	/* -1 (all layers) is a real value: the raw field gives it */
	if (!strcmp(col, "n_gpu_layers") && r->n_gpu_layers >= 0) {
		quoted_int(out, r->n_gpu_layers);
		return 1;
	}
	if (!strcmp(col, "model_size") && r->model_size >= 0) {
		quoted_int(out, r->model_size);
		return 1;
	}
	if (!strcmp(col, "model_n_params") && r->model_n_params >= 0) {
		quoted_int(out, r->model_n_params);
		return 1;
	}
	if (!strcmp(col, "flash_attn") && *r->flash_attn) {
		quoted(out, !strcmp(r->flash_attn, "on") ? "1" :
		       !strcmp(r->flash_attn, "off") ? "0" :
		       !strcmp(r->flash_attn, "auto") ? "-1" : r->flash_attn);
		return 1;
	}
	return 0;
}

void
lb_sql_insert(struct buf *out, const struct lb_row *row,
	      const char *build_commit)
{
	size_t i, end;
	struct json *raw = json_parse_prefix(row->raw_json ? row->raw_json :
					     "", row->raw_json ?
					     strlen(row->raw_json) : 0, &end);
	const char *sep = "";

	buf_addf(out, "INSERT INTO %s (", lb_sql_table);
	for (i = 0; i < lb_nfields; i++)
		if (lb_fields[i].flags & LB_SQL) {
			buf_addf(out, "%s%s", sep, lb_fields[i].name);
			sep = ", ";
		}
	buf_adds(out, ") VALUES (");
	sep = "";
	for (i = 0; i < lb_nfields; i++) {
		const char *col = lb_fields[i].name;

		if (!(lb_fields[i].flags & LB_SQL))
			continue;
		buf_adds(out, sep);
		sep = ", ";
		if (!strcmp(col, "build_commit"))
			quoted(out, build_commit);
		else if (measure(out, row, raw, col) || known(out, row, col))
			;
		else
			raw_value(out, json_get(raw, col));
	}
	buf_adds(out, ");\n");
	json_free(raw);
}
