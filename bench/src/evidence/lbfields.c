#include "evidence/lbfields.h"
#include "evidence/lbread.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * First the fields of the llama-bench this project provisions, in the
 * order it prints them (json) and declares them (sql), then the fields
 * of earlier builds, the columns only its markdown tables have, and
 * the fields MLX-LM rows carry beside them.
 */
const struct lb_field lb_fields[] = {
	{ "build_commit", NULL, LB_TEXT, LB_CONFIG, LB_SQL },
	{ "build_number", NULL, LB_INT, LB_CONFIG, LB_SQL },
	{ "cpu_info", NULL, LB_TEXT, LB_HARDWARE, LB_SQL },
	{ "gpu_info", NULL, LB_TEXT, LB_CONFIG, LB_SQL | LB_PER_HOST },
	{ "backends", "backend", LB_TEXT, LB_CONFIG, LB_SQL },
	{ "model_filename", NULL, LB_TEXT, LB_MODEL, LB_SQL },
	{ "model_type", "model", LB_TEXT, LB_MODEL, LB_SQL },
	{ "model_size", "size", LB_INT, LB_MODEL, LB_SQL },
	{ "model_n_params", "params", LB_INT, LB_MODEL, LB_SQL },
	{ "n_batch", NULL, LB_INT, LB_CONFIG, LB_SQL },
	{ "n_ubatch", NULL, LB_INT, LB_CONFIG, LB_SQL },
	{ "n_threads", "threads", LB_INT, LB_CONFIG, LB_SQL },
	{ "cpu_mask", NULL, LB_TEXT, LB_CONFIG, LB_SQL },
	{ "cpu_strict", NULL, LB_FLAG, LB_CONFIG, LB_SQL },
	{ "poll", NULL, LB_INT, LB_CONFIG, LB_SQL },
	{ "type_k", NULL, LB_TEXT, LB_CONFIG, LB_SQL },
	{ "type_v", NULL, LB_TEXT, LB_CONFIG, LB_SQL },
	{ "n_gpu_layers", "ngl", LB_INT, LB_CONFIG, LB_SQL },
	{ "n_cpu_moe", NULL, LB_INT, LB_CONFIG, LB_SQL },
	{ "split_mode", "sm", LB_TEXT, LB_CONFIG, LB_SQL },
	{ "main_gpu", "mg", LB_INT, LB_CONFIG, LB_SQL },
	{ "no_kv_offload", "nkvo", LB_FLAG, LB_CONFIG, LB_SQL },
	{ "flash_attn", "fa", LB_FLAG, LB_CONFIG, LB_SQL },
	{ "devices", "dev", LB_TEXT, LB_CONFIG, LB_SQL },
	{ "tensor_split", "ts", LB_TEXT, LB_CONFIG, LB_SQL },
	{ "tensor_buft_overrides", "ot", LB_TEXT, LB_CONFIG, LB_SQL },
	{ "load_mode", "lm", LB_TEXT, LB_CONFIG, LB_SQL },
	{ "lazy_mode", "lzm", LB_TEXT, LB_CONFIG, LB_SQL },
	{ "embeddings", "embd", LB_FLAG, LB_CONFIG, LB_SQL },
	{ "no_op_offload", "nopo", LB_INT, LB_CONFIG, LB_SQL },
	{ "no_host", "noh", LB_FLAG, LB_CONFIG, LB_SQL },
	{ "repack", NULL, LB_FLAG, LB_CONFIG, LB_SQL },
	{ "fit_target", NULL, LB_INT, LB_CONFIG, LB_SQL },
	{ "fit_min_ctx", NULL, LB_INT, LB_CONFIG, LB_SQL },
	{ "n_prompt", NULL, LB_INT, LB_TEST, LB_SQL },
	{ "n_gen", NULL, LB_INT, LB_TEST, LB_SQL },
	{ "n_depth", NULL, LB_INT, LB_TEST, LB_SQL },
	{ "test_time", NULL, LB_TEXT, LB_RESULT, LB_SQL },
	{ "avg_ns", NULL, LB_INT, LB_RESULT, LB_SQL },
	{ "stddev_ns", NULL, LB_INT, LB_RESULT, LB_SQL },
	{ "avg_ts", NULL, LB_REAL, LB_RESULT, LB_SQL },
	{ "stddev_ts", NULL, LB_REAL, LB_RESULT, LB_SQL },
	{ "samples_ns", NULL, LB_ARRAY, LB_RESULT, 0 },
	{ "samples_ts", NULL, LB_ARRAY, LB_RESULT, 0 },
	/* earlier builds */
	{ "cuda", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "opencl", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "vulkan", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "kompute", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "metal", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "sycl", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "rpc", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "gpu_blas", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "blas", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "use_mmap", "mmap", LB_FLAG, LB_CONFIG, 0 },
	{ "use_direct_io", "dio", LB_FLAG, LB_CONFIG, 0 },
	{ "defrag_thold", NULL, LB_REAL, LB_CONFIG, 0 },
	{ "f16_kv", NULL, LB_FLAG, LB_CONFIG, 0 },
	{ "mul_mat_q", "mmq", LB_FLAG, LB_CONFIG, 0 },
	/* markdown tables only */
	{ "test", NULL, LB_TEXT, LB_TEST, LB_MD_ONLY },
	{ "t/s", NULL, LB_TEXT, LB_RESULT, LB_MD_ONLY },
	/* MLX-LM rows (their harness JSON) */
	{ "warmup", NULL, LB_INT, LB_RESULT, LB_OTHER_RUNTIME },
	{ "median", NULL, LB_REAL, LB_RESULT, LB_OTHER_RUNTIME },
	{ "samples", NULL, LB_ARRAY, LB_RESULT, LB_OTHER_RUNTIME },
	{ "runtime.platform", NULL, LB_TEXT, LB_HARDWARE, LB_OTHER_RUNTIME },
};
const size_t lb_nfields = ARRAY_SIZE(lb_fields);

const struct lb_field *
lb_field_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < lb_nfields; i++)
		if (!strcmp(lb_fields[i].name, name) ||
		    (lb_fields[i].md && !strcmp(lb_fields[i].md, name)))
			return &lb_fields[i];
	return NULL;
}

int
lb_field_known(const char *name)
{
	const struct lb_field *f = lb_field_find(name);

	return f && !(f->flags & LB_OTHER_RUNTIME);
}

enum lb_field_kind
lb_field_kind(const char *name)
{
	size_t i;

	for (i = 0; name && i < lb_nfields; i++)
		if (!strcmp(lb_fields[i].name, name))
			return lb_fields[i].flags & LB_OTHER_RUNTIME ? LB_TEXT :
			       lb_fields[i].kind;
	return LB_TEXT;
}

int
lb_field_of_test(const char *name)
{
	const struct lb_field *f = lb_field_find(name);

	return f && !(f->flags & LB_OTHER_RUNTIME) &&
	       (f->role == LB_TEST || f->role == LB_RESULT);
}

/*
 * The rule for fields no llama-bench version prints (forks, wrappers):
 * a number (or an array) whose name says it is a statistic
 * or a duration (avg_ttft_ms, stddev_e2e_ms, p99_itl_ms, ttft_s,
 * samples_ttft_ms) is a measurement; anything else is configuration.
 * store.c generates the same rule in SQL from these two lists.
 */
const char *const lb_measure_prefixes[] = {
	"avg_", "mean_", "median_", "stddev_", "std_",
	"p50_", "p90_", "p95_", "p99_", "samples_", NULL,
};
const char *const lb_measure_suffixes[] = {
	"_ms", "_ns", "_us", "_s", "_ts", "_tps", "_per_s", "_per_second",
	NULL,
};

int
lb_field_measurement_name(const char *name)
{
	size_t i, n = strlen(name), k;

	for (i = 0; lb_measure_prefixes[i]; i++)
		if (!strncmp(name, lb_measure_prefixes[i],
			     strlen(lb_measure_prefixes[i])))
			return 1;
	for (i = 0; lb_measure_suffixes[i]; i++) {
		k = strlen(lb_measure_suffixes[i]);
		if (n > k && !strcmp(name + n - k, lb_measure_suffixes[i]))
			return 1;
	}
	return 0;
}

int
lb_field_in_config(const char *name, int numeric)
{
	const struct lb_field *f = lb_field_find(name);

	if (!f)
		return !(numeric && lb_field_measurement_name(name));
	return f->role == LB_CONFIG;
}

int
lb_field_per_host(const char *name)
{
	const struct lb_field *f = lb_field_find(name);

	return f && (f->flags & LB_PER_HOST);
}

int
lb_field_same(const char *a, const char *b)
{
	const struct lb_field *f;

	if (!strcmp(a, b))
		return 1;
	f = lb_field_find(a);
	return f && f == lb_field_find(b);
}

/* ---- values of csv and sql cells (lbread.h) ---- */

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
	enum lb_field_kind kind = lb_field_kind(key);
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

/* ---- one spelling of every row (lbread.h) ---- */

/* v as a value of kind k, or NULL when it is not one (v is kept). */
static struct json *
typed_as(const struct json *v, enum lb_field_kind k)
{
	const char *t = json_str(v);
	long long x;
	double d;

	if (k == LB_FLAG && json_is_bool(v))
		return json_new_num(json_bool(v) ? 1 : 0);
	if (!t)
		return k == LB_TEXT || json_type(v) == JSON_NUMBER ||
		       k == LB_ARRAY ? json_dup(v) : NULL;
	if (k == LB_FLAG) {
		if (!strcmp(t, "true") || !strcmp(t, "false"))
			return json_new_num(!strcmp(t, "true"));
		return lb_strict_int(t, &x) == 0 ? json_new_num((double)x) :
		       json_dup(v);
	}
	if (k == LB_INT)
		return lb_strict_int(t, &x) == 0 ? json_new_num((double)x) :
		       NULL;
	if (k == LB_REAL)
		return lb_strict_num(t, &d) == 0 ? json_new_num(d) : NULL;
	return json_dup(v);
}

struct json *
lb_normalised(const struct json *o)
{
	struct json *n = json_new_object();
	const struct json *it;

	JSON_FOR_EACH(it, o) {
		const char *key = json_key(it);
		const struct lb_field *f = lb_field_find(key);
		struct json *v = NULL;

		if (!key)
			continue;
		if (f && !(f->flags & (LB_OTHER_RUNTIME | LB_MD_ONLY)))
			v = typed_as(it, f->kind);
		/* a markdown name becomes the json name when its cell is a
		 * value of the field ("threads" 8; not "size" "4.3 GiB") */
		if (v && strcmp(key, f->name) && !json_get(o, f->name)) {
			json_set(n, f->name, v);
			continue;
		}
		if (v && !strcmp(key, f->name)) {
			json_set(n, key, v);
			continue;
		}
		if (v)
			json_free(v);
		json_set(n, key, json_dup(it));
	}
	return n;
}
