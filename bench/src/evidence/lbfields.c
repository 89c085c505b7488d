/*
 * The fields llama-bench prints, in one table: every name some version
 * (2023 to 2026) uses in json, jsonl, csv and sql, and the column names of
 * its md tables; what kind of value each holds, and whether it belongs to
 * the configuration, names the test or measures it. The readers ask this
 * table what a field is; nothing else keeps a list of fields.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/lbread.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct lb_field {
	const char *name;
	enum lb_kind kind;
	enum lb_role role;
};

#define C LB_CONFIG
#define T LB_TEST
#define M LB_MEASURE
static const struct lb_field fields[] = {
	/* the machine formats: json, jsonl, csv, sql */
	{ "build_commit", LB_TEXT, C },     { "build_number", LB_INT, C },
	{ "cpu_info", LB_TEXT, C },         { "gpu_info", LB_TEXT, C },
	{ "backends", LB_TEXT, C },
	/* 2023-24: one boolean per backend */
	{ "cuda", LB_FLAG, C },             { "opencl", LB_FLAG, C },
	{ "vulkan", LB_FLAG, C },           { "kompute", LB_FLAG, C },
	{ "metal", LB_FLAG, C },            { "sycl", LB_FLAG, C },
	{ "rpc", LB_FLAG, C },              { "gpu_blas", LB_FLAG, C },
	{ "blas", LB_FLAG, C },
	{ "model_filename", LB_TEXT, C },   { "model_type", LB_TEXT, C },
	{ "model_size", LB_INT, C },        { "model_n_params", LB_INT, C },
	{ "n_batch", LB_INT, C },           { "n_ubatch", LB_INT, C },
	{ "n_threads", LB_INT, C },         { "cpu_mask", LB_TEXT, C },
	{ "cpu_strict", LB_FLAG, C },       { "poll", LB_INT, C },
	{ "type_k", LB_TEXT, C },           { "type_v", LB_TEXT, C },
	{ "n_gpu_layers", LB_INT, C },      { "n_cpu_moe", LB_INT, C },
	{ "split_mode", LB_TEXT, C },       { "main_gpu", LB_INT, C },
	{ "no_kv_offload", LB_FLAG, C },    { "flash_attn", LB_FLAG, C },
	{ "devices", LB_TEXT, C },          { "tensor_split", LB_TEXT, C },
	{ "tensor_buft_overrides", LB_TEXT, C },
	{ "use_mmap", LB_FLAG, C },         { "use_direct_io", LB_FLAG, C },
	{ "load_mode", LB_TEXT, C },        { "lazy_mode", LB_TEXT, C },
	{ "embeddings", LB_FLAG, C },       { "no_op_offload", LB_INT, C },
	{ "no_host", LB_FLAG, C },          { "repack", LB_FLAG, C },
	{ "fit_target", LB_INT, C },        { "fit_min_ctx", LB_INT, C },
	{ "defrag_thold", LB_REAL, C },     { "f16_kv", LB_FLAG, C },
	{ "mul_mat_q", LB_FLAG, C },
	{ "n_prompt", LB_INT, T },          { "n_gen", LB_INT, T },
	{ "n_depth", LB_INT, T },
	{ "test_time", LB_TEXT, M },        { "avg_ns", LB_INT, M },
	{ "stddev_ns", LB_INT, M },         { "avg_ts", LB_REAL, M },
	{ "stddev_ts", LB_REAL, M },        { "samples_ns", LB_TEXT, M },
	{ "samples_ts", LB_TEXT, M },
	/* the columns of md tables, by their display names (text cells) */
	{ "model", LB_TEXT, C },            { "size", LB_TEXT, C },
	{ "params", LB_TEXT, C },           { "backend", LB_TEXT, C },
	{ "ngl", LB_TEXT, C },              { "threads", LB_TEXT, C },
	{ "fa", LB_TEXT, C },               { "sm", LB_TEXT, C },
	{ "mg", LB_TEXT, C },               { "nkvo", LB_TEXT, C },
	{ "mmap", LB_TEXT, C },             { "embd", LB_TEXT, C },
	{ "ts", LB_TEXT, C },               { "ot", LB_TEXT, C },
	{ "mmq", LB_TEXT, C },              { "dev", LB_TEXT, C },
	{ "nopo", LB_TEXT, C },             { "lm", LB_TEXT, C },
	{ "lzm", LB_TEXT, C },              { "noh", LB_TEXT, C },
	{ "dio", LB_TEXT, C },
	{ "test", LB_TEXT, T },             { "t/s", LB_TEXT, M },
};
#undef C
#undef T
#undef M

static const struct lb_field *
field(const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fields); i++)
		if (!strcmp(fields[i].name, key))
			return &fields[i];
	return NULL;
}

int
lb_known_field(const char *key)
{
	return field(key) != NULL;
}

int
lb_test_field(const char *key)
{
	const struct lb_field *f = field(key);

	return f && f->role != LB_CONFIG;
}

enum lb_kind
lb_field_kind(const char *key)
{
	const struct lb_field *f = field(key);

	return f ? f->kind : LB_TEXT;
}

int
lb_strict_int(const char *v, long long *out)
{
	const char *p = v;
	char *end;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	*out = strtoll(v, &end, 10);
	return *end ? -1 : 0;
}

int
lb_strict_num(const char *v, double *out)
{
	const char *p;

	for (p = v; *p; p++)
		if (!strchr("0123456789.-+eE", *p))
			return -1;
	if (parse_double(v, out) < 0 || !isfinite(*out))
		return -1;
	return 0;
}

int
lb_typed_value(struct json *o, const char *key, const char *v,
	       const char *type, const char *where)
{
	enum lb_kind kind = lb_field_kind(key);
	long long x;
	double d;

	if (type && !strcmp(type, "TEXT"))
		kind = kind == LB_FLAG ? LB_FLAG : LB_TEXT;
	if (type && !strcmp(type, "REAL"))
		kind = LB_REAL;
	if (kind == LB_INT ||
	    (type && !strcmp(type, "INTEGER") && kind != LB_FLAG)) {
		if (lb_strict_int(v, &x) < 0)
			return error("%s: %s is '%s', not an integer", where,
				     key, v);
		json_set_num(o, key, (double)x);
	} else if (kind == LB_REAL) {
		if (parse_double(v, &d) < 0 || !isfinite(d))
			return error("%s: %s is '%s', not a number", where, key,
				     v);
		json_set_num(o, key, d);
	} else if (kind == LB_FLAG) {
		if (lb_strict_int(v, &x) == 0)
			json_set_num(o, key, (double)x);
		else if (!strcmp(v, "true") || !strcmp(v, "false"))
			json_set_bool(o, key, !strcmp(v, "true"));
		else
			json_set_str(o, key, v);
	} else {
		json_set_str(o, key, v);
	}
	return 0;
}
