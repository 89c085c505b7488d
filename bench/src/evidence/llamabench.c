#define _POSIX_C_SOURCE 200809L
#include "evidence/llamabench.h"
#include "evidence/lbread.h"
#include "evidence/lbfields.h"
#include "base/json.h"
#include "base/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
lb_test_name(long n_prompt, long n_gen, long n_depth, char *out, size_t size)
{
	if (n_prompt > 0 && n_gen > 0)
		snprintf(out, size, "pp%ld+tg%ld", n_prompt, n_gen);
	else if (n_gen > 0)
		snprintf(out, size, "tg%ld", n_gen);
	else
		snprintf(out, size, "pp%ld", n_prompt);
	if (n_depth > 0) {
		size_t len = strlen(out);
		snprintf(out + len, size - len, " @ d%ld", n_depth);
	}
}

/* Digits at *p into *out (at most INT_MAX); 0, or -1 when none. */
static int
read_count(const char **p, long *out)
{
	const char *s = *p;
	long v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -1;
	}
	*p = s;
	*out = v;
	return 0;
}

int
lb_test_parse(const char *s, long *n_prompt, long *n_gen, long *n_depth)
{
	long pp = 0, tg = 0, d = 0;

	if (!strncmp(s, "pp", 2)) {
		s += 2;
		if (*s == ' ')
			s++;
		if (read_count(&s, &pp) < 0)
			return -1;
		if (*s == '+') {
			if (strncmp(s + 1, "tg", 2))
				return -1;
			s += 3;
			if (*s == ' ')
				s++;
			if (read_count(&s, &tg) < 0)
				return -1;
		}
	} else if (!strncmp(s, "tg", 2)) {
		s += 2;
		if (*s == ' ')
			s++;
		if (read_count(&s, &tg) < 0)
			return -1;
	} else {
		return -1;
	}
	while (*s == ' ')
		s++;
	if (*s == '@') {
		s++;
		while (*s == ' ')
			s++;
		if (*s++ != 'd' || read_count(&s, &d) < 0)
			return -1;
	}
	if (*s || pp + tg == 0)
		return -1;
	*n_prompt = pp;
	*n_gen = tg;
	*n_depth = d;
	return 0;
}

/* A string field; numbers and booleans are rendered; "" when absent. */
static char *
get_str(const struct json *o, const char *key)
{
	const struct json *v = json_get(o, key);
	char num[64];

	if (json_str(v))
		return xstrdup(json_str(v));
	if (json_type(v) == JSON_NUMBER) {
		snprintf(num, sizeof(num), "%.17g", json_num(v));
		return xstrdup(num);
	}
	if (json_is_bool(v))
		return xstrdup(json_bool(v) ? "true" : "false");
	return xstrdup("");
}

/* What a value is, for messages: the number itself, else its type. */
static const char *
what(const struct json *v, char *tmp, size_t size)
{
	if (json_type(v) != JSON_NUMBER)
		return json_type_name(v);
	snprintf(tmp, size, "%.17g", json_num(v));
	return tmp;
}

/*
 * An integer field in [lo, hi]: 1 when present, 0 when absent or null,
 * -1 after error() naming file, row and key when it is anything else.
 * Every llama-bench version prints these fields as bare JSON integers
 * (its printers quote only string fields), so a string ("512", "0x200")
 * or a boolean is not an integer here.
 */
static int
get_int(const struct json *o, const char *key, int64_t lo, int64_t hi,
	int64_t *out, const char *where)
{
	const struct json *v = json_get(o, key);
	char tmp[40];

	if (!v || json_type(v) == JSON_NULL)
		return 0;
	if (json_int64(v, lo, hi, out) < 0)
		return error("%s: %s must be an integer in [%lld, %lld], not %s",
			     where, key, (long long)lo, (long long)hi,
			     what(v, tmp, sizeof(tmp)));
	return 1;
}

static char *
backends_of(const struct json *o)
{
	/* 2024-era builds: one boolean per backend, in get_backend() order. */
	static const struct { const char *key, *name; } flags[] = {
		{ "cuda", "CUDA" }, { "vulkan", "Vulkan" },
		{ "kompute", "Kompute" }, { "metal", "Metal" },
		{ "sycl", "SYCL" }, { "rpc", "RPC" },
		{ "gpu_blas", "GPU BLAS" }, { "blas", "BLAS" },
	};
	struct buf b = BUF_INIT;
	const struct json *v;
	size_t i;

	if (json_get_str(o, "backends"))
		return xstrdup(json_get_str(o, "backends"));
	if (json_get_str(o, "backend"))
		return xstrdup(json_get_str(o, "backend"));
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		v = json_get(o, flags[i].key);
		if (json_bool(v) == 1 ||
		    (json_type(v) == JSON_NUMBER && json_num(v) != 0)) {
			if (b.len)
				buf_addch(&b, ',');
			buf_adds(&b, flags[i].name);
		}
	}
	if (!b.len)
		buf_adds(&b, "CPU");
	return buf_detach(&b, NULL);
}

static char *
flash_attn_of(const struct json *o)
{
	const struct json *v = json_get(o, "flash_attn");
	const char *s = json_str(v);

	if (json_is_bool(v))
		return xstrdup(json_bool(v) ? "on" : "off");
	if (json_type(v) == JSON_NUMBER)
		return xstrdup(json_num(v) < 0 ? "auto" :
			       json_num(v) > 0 ? "on" : "off");
	if (s) {
		if (!strcmp(s, "1") || !strcmp(s, "true") ||
		    !strcmp(s, "enabled"))
			return xstrdup("on");
		if (!strcmp(s, "0") || !strcmp(s, "false") ||
		    !strcmp(s, "disabled"))
			return xstrdup("off");
		if (!strcmp(s, "-1"))
			return xstrdup("auto");
		return xstrdup(s);
	}
	return xstrdup("");
}

void
lb_row_release(struct lb_row *r)
{
	free(r->build_commit);
	free(r->type_k);
	free(r->type_v);
	free(r->backends);
	free(r->cpu_info);
	free(r->gpu_info);
	free(r->model_filename);
	free(r->model_type);
	free(r->flash_attn);
	free(r->test_time);
	free(r->samples_ns);
	free(r->samples_ts);
	free(r->raw_json);
	memset(r, 0, sizeof(*r));
}

/* The value of one sample (i counts from 0), checked; -1 after error(). */
static int
sample_ns(const struct json *v, const char *where, size_t i, int64_t *out)
{
	char tmp[40];

	/* llama-bench prints nanoseconds as unsigned 64-bit integers;
	 * beyond int64 they cannot be stored, so they are refused. */
	if (json_int64(v, 1, INT64_MAX, out) < 0)
		return error("%s: samples_ns[%zu] is %s, not a positive "
			     "integer below 2^63", where, i,
			     what(v, tmp, sizeof(tmp)));
	return 0;
}

static int
sample_ts(const struct json *v, const char *where, size_t i, double *out)
{
	double d = json_num(v);

	if (!isfinite(d) || d <= 0)
		return error("%s: samples_ts[%zu] is not a positive number",
			     where, i);
	*out = d;
	return 0;
}

/*
 * Reads the samples of one row and checks them: equal lengths, finite,
 * positive, and ts consistent with (n_prompt+n_gen)/ns. One pass over
 * both arrays, so a long row costs linear time.
 */
static int
parse_samples(const struct json *o, struct lb_row *r, const char *where)
{
	const struct json *ns = json_get(o, "samples_ns");
	const struct json *ts = json_get(o, "samples_ts");
	const struct json *a, *b;
	long tokens = r->n_prompt + r->n_gen;
	size_t nns = 0, nts = 0, n, i;

	if (ns && json_type(ns) != JSON_ARRAY)
		return error("%s: samples_ns is not an array", where);
	if (ts && json_type(ts) != JSON_ARRAY)
		return error("%s: samples_ts is not an array", where);
	nns = json_size(ns);
	nts = json_size(ts);
	if (ns && ts && nns != nts)
		return error("%s: samples_ns has %zu values but samples_ts "
			     "has %zu", where, nns, nts);
	n = ns ? nns : nts;
	if (n == 0)
		return 0;
	if (tokens <= 0)
		return error("%s: samples but n_prompt+n_gen is %ld", where,
			     tokens);
	r->n_samples = n;
	r->samples_ts = xcalloc(n, sizeof(double));
	if (ns)
		r->samples_ns = xcalloc(n, sizeof(int64_t));
	a = json_first(ns);
	b = json_first(ts);
	for (i = 0; i < n; i++, a = json_next(a), b = json_next(b)) {
		double expect;

		if (a && sample_ns(a, where, i, &r->samples_ns[i]) < 0)
			return -1;
		if (b && sample_ts(b, where, i, &r->samples_ts[i]) < 0)
			return -1;
		if (!a)
			continue;
		expect = 1e9 * (double)tokens / (double)r->samples_ns[i];
		if (!b) {
			r->samples_ts[i] = expect;
			continue;
		}
		/* samples_ts is printed with 6 significant digits. */
		if (fabs(r->samples_ts[i] - expect) > 1e-3 * expect)
			return error("%s: samples_ts[%zu] = %g does not match "
				     "%ld tokens in %lld ns (%g)", where, i,
				     r->samples_ts[i], tokens,
				     (long long)r->samples_ns[i], expect);
	}
	return 0;
}

/* A printed mean or deviation: absent (NAN), or finite and >= 0. */
static int
get_ts(const struct json *o, const char *key, double *out, const char *where)
{
	const struct json *v = json_get(o, key);

	*out = NAN;
	if (!v || json_type(v) == JSON_NULL)
		return 0;
	if (!isfinite(json_num(v)) || json_num(v) < 0)
		return error("%s: %s is not a finite non-negative number",
			     where, key);
	*out = json_num(v);
	return 1;
}

/*
 * Fills r from one JSON object; -1 with error() naming file and row. A
 * row is what every llama-bench version prints for a finished test: the
 * token counts (not both 0) and its samples (JSON) or its mean and
 * deviation (CSV, SQL); any other object is not taken for an empty run.
 */
int
lb_row_from_json(const struct json *o, struct lb_row *r, const char *where,
		 enum lb_row_kind kind)
{
	static const char *const counts[] = { "n_prompt", "n_gen", "n_depth" };
	static const char *const ints[] = { "build_number", "n_batch",
					    "n_ubatch", "n_threads",
					    "n_gpu_layers" };
	long *const int_dst[] = { &r->build_number, &r->n_batch, &r->n_ubatch,
				  &r->n_threads, &r->n_gpu_layers };
	int64_t v, c[3] = { 0, 0, 0 };
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	r->stddev_ts = NAN;
	if (json_type(o) != JSON_OBJECT)
		return error("%s: not a JSON object", where);
	if (json_check_unique(o, where) < 0)
		return -1;
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		rc = get_int(o, counts[i], 0, INT_MAX, &c[i], where);
		if (rc < 0)
			return -1;
		if (rc == 0 && i < 2)
			return error("%s: not a llama-bench row: no %s", where,
				     counts[i]);
	}
	if (c[0] + c[1] == 0)
		return error("%s: n_prompt and n_gen are both 0", where);
	if (kind == LB_ROW_SAMPLES && !json_get(o, "samples_ns") &&
	    !json_get(o, "samples_ts"))
		return error("%s: not a llama-bench row: no samples_ns or "
			     "samples_ts", where);
	r->n_prompt = (long)c[0];
	r->n_gen = (long)c[1];
	r->n_depth = (long)c[2];
	lb_test_name(r->n_prompt, r->n_gen, r->n_depth, r->test,
		     sizeof(r->test));
	memcpy(r->test_label, r->test, sizeof(r->test));
	for (i = 0; i < ARRAY_SIZE(ints); i++) {
		rc = get_int(o, ints[i], INT_MIN, INT_MAX, &v, where);
		if (rc < 0)
			return -1;
		*int_dst[i] = rc ? (long)v : -1;
	}
	rc = get_int(o, "model_size", 0, INT64_MAX, &r->model_size, where);
	if (rc < 0)
		return -1;
	if (rc == 0)
		r->model_size = -1;
	rc = get_int(o, "model_n_params", 0, INT64_MAX, &r->model_n_params,
		     where);
	if (rc < 0)
		return -1;
	if (rc == 0)
		r->model_n_params = -1;
	r->build_commit = get_str(o, "build_commit");
	r->backends = backends_of(o);
	r->cpu_info = get_str(o, "cpu_info");
	r->gpu_info = get_str(o, "gpu_info");
	r->model_filename = get_str(o, "model_filename");
	r->model_type = get_str(o, "model_type");
	r->type_k = get_str(o, "type_k");
	r->type_v = get_str(o, "type_v");
	r->flash_attn = flash_attn_of(o);
	r->test_time = get_str(o, "test_time");
	rc = get_ts(o, "avg_ts", &r->avg_ts, where);
	if (rc < 0 || get_ts(o, "stddev_ts", &r->stddev_ts, where) < 0)
		return -1;
	if (rc == 0)
		r->avg_ts = 0;
	if (kind == LB_ROW_TABLE) {
		/* no samples: what is known is the printed mean */
		if (rc == 0)
			return error("%s: not a llama-bench row: no avg_ts",
				     where);
		r->spread_source = "table";
	} else {
		r->spread_source = "samples";
		if (parse_samples(o, r, where) < 0)
			return -1;
	}
	r->raw_json = json_print(o, 0);
	return 0;
}

void
lb_rows_push(struct lb_output *out, struct lb_row *r)
{
	r->config = -1;
	/* capacity doubles (at 8, 16, 32, …): n rows cost n, not n² */
	if (out->n == 0 || (out->n >= 8 && !(out->n & (out->n - 1))))
		out->rows = xrealloc(out->rows, (out->n ? 2 * out->n : 8) *
				     sizeof(*r));
	out->rows[out->n++] = *r;
	memset(r, 0, sizeof(*r));
}

/* A number or an array (a fork's samples_ttft_ms): what the store's
 * configuration rule takes as a possible measurement (store.c). */
static int
is_numeric(const struct json *v)
{
	return json_type(v) == JSON_NUMBER || json_type(v) == JSON_ARRAY;
}

/* Unknown numeric fields named as measurements (lbfields.h), once each;
 * the rows keep them, no configuration holds them. */
static void
find_measurements(struct lb_output *out)
{
	size_t i, k, n = 0, end;
	const struct json *it;

	for (i = 0; i < out->n && i <= 1000; i++) {
		struct json *o = json_parse_prefix(out->rows[i].raw_json,
						   strlen(out->rows[i].raw_json),
						   &end);

		JSON_FOR_EACH(it, o) {
			const char *key = json_key(it);

			if (!key || lb_field_find(key) ||
			    lb_field_in_config(key, is_numeric(it)))
				continue;
			for (k = 0; k < n && strcmp(out->measurements[k], key);
			     k++)
				;
			if (k == n && n < 64)
				out->measurements = strv_push(out->measurements,
							      &n, xstrdup(key));
		}
		json_free(o);
	}
}

char *
lb_config_key(const struct lb_row *row)
{
	const char *raw = row->raw_json ? row->raw_json : "";
	size_t end;
	struct json *p = json_parse_prefix(raw, strlen(raw), &end);
	struct json *o = p ? lb_normalised(p) : NULL;
	struct json *key = json_new_object();
	const struct json *it;
	char *text;

	json_free(p);
	JSON_FOR_EACH(it, o)
		if (json_key(it) && !lb_field_of_test(json_key(it)) &&
		    (lb_field_find(json_key(it)) ||
		     lb_field_in_config(json_key(it), is_numeric(it))))
			json_set(key, json_key(it), json_dup(it));
	text = json_print(key, 0);
	json_free(key);
	json_free(o);
	return text;
}

struct keyed {
	char *key;
	size_t row;
};

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->row < y->row ? -1 : x->row > y->row;
}

/*
 * Numbers the configurations in order of first appearance: sorted keys,
 * so a file of many rows costs n log n, never n².
 */
static void
number_configs(struct lb_output *out)
{
	struct keyed *k = xcalloc(out->n + 1, sizeof(*k));
	size_t *first = xcalloc(out->n + 1, sizeof(size_t));
	size_t *group = xcalloc(out->n + 1, sizeof(size_t));
	size_t i, j, ngroups = 0;
	int next = 0;

	for (i = 0; i < out->n; i++) {
		k[i].key = lb_config_key(&out->rows[i]);
		k[i].row = i;
	}
	xqsort(k, out->n, sizeof(*k), cmp_keyed);
	for (i = 0; i < out->n; i = j) {
		for (j = i; j < out->n && !strcmp(k[j].key, k[i].key); j++)
			group[k[j].row] = ngroups;
		first[ngroups++] = k[i].row;   /* sorted by row within a key */
	}
	/* a group's number is given when its first row comes */
	for (i = 0; i < out->n; i++) {
		size_t g = group[i];

		if (first[g] == i)
			out->rows[i].config = next++;
		else
			out->rows[i].config = out->rows[first[g]].config;
	}
	out->configs = (size_t)next;
	for (i = 0; i < out->n; i++)
		free(k[i].key);
	free(k);
	free(first);
	free(group);
}

/* What the fields of the first row say of the llama-bench version. */
static void
find_generation(struct lb_output *out)
{
	struct buf b = BUF_INIT, feat = BUF_INIT;
	const struct lb_row *r = out->n ? &out->rows[0] : NULL;
	struct json *o;
	const struct json *fa;
	size_t end;
	int space = 0, depth = 0;
	size_t i;

	free(out->generation);
	out->generation = NULL;
	if (!r) {
		out->generation = xstrdup("");
		return;
	}
	if (!strcmp(out->format, "md")) {
		for (i = 0; i < out->n; i++) {
			space |= strchr(out->rows[i].test_label, ' ') &&
				 !strchr(out->rows[i].test_label, '@');
			depth |= out->rows[i].n_depth > 0;
		}
		out->generation = xstrdup(space ?
			"2023-24 table (test names with a space: \"pp 512\")" :
			depth ? "2025 or later table (tests at a depth)" :
			"2024 or later table");
		return;
	}
	o = json_parse_prefix(r->raw_json, strlen(r->raw_json), &end);
	fa = json_get(o, "flash_attn");
#define HAS(k) (json_get(o, k) != NULL)
#define FEAT(k) do { if (HAS(k)) buf_addf(&feat, ", %s", k); } while (0)
	if (HAS("f16_kv") || HAS("mul_mat_q"))
		buf_adds(&b, "2023 schema: per-backend flags, f16_kv");
	else if (!HAS("backends"))
		buf_adds(&b, "2024 schema: per-backend flags");
	else if (!strcmp(out->format, "csv") || !strcmp(out->format, "sql"))
		/* every value is text there: flash_attn's type is not seen */
		buf_addf(&b, "%s schema: backends",
			 HAS("load_mode") || HAS("fit_target") ? "2026" :
			 HAS("n_cpu_moe") || HAS("devices") ? "2025-26" :
			 "2024-25");
	else if (json_type(fa) == JSON_NUMBER &&
		 (HAS("n_cpu_moe") || HAS("load_mode") || HAS("fit_target")))
		buf_adds(&b, "2026 schema: backends, integer flash_attn");
	else if (json_type(fa) == JSON_NUMBER)
		buf_adds(&b, "2025 schema: backends, integer flash_attn");
	else
		buf_addf(&b, "2024-25 schema: backends%s",
			 json_is_bool(fa) ? ", boolean flash_attn" : "");
	FEAT("use_mmap");
	FEAT("load_mode");
	FEAT("n_depth");
	FEAT("n_cpu_moe");
	FEAT("devices");
	FEAT("tensor_buft_overrides");
#undef HAS
#undef FEAT
	buf_add(&b, feat.buf, feat.len);
	json_free(o);
	buf_release(&feat);
	out->generation = buf_detach(&b, NULL);
}

/* Fields of the rows that no llama-bench version has, once each. */
static void
find_unknown(struct lb_output *out)
{
	size_t i, n = 0, k;
	struct json *o;
	const struct json *it;
	size_t end;

	for (i = 0; i < out->n; i++) {
		o = json_parse_prefix(out->rows[i].raw_json,
				      strlen(out->rows[i].raw_json), &end);
		JSON_FOR_EACH(it, o) {
			const char *key = json_key(it);

			if (!key || lb_field_known(key))
				continue;
			for (k = 0; k < n && strcmp(out->unknown_fields[k], key);
			     k++)
				;
			if (k == n && n < 64)
				out->unknown_fields = strv_push(
					out->unknown_fields, &n, xstrdup(key));
		}
		json_free(o);
		if (i > 1000)
			break;   /* the first rows tell it */
	}
}

static void
finish(struct lb_output *out, int block)
{
	size_t i;

	for (i = 0; block && i < out->n; i++)
		out->rows[i].block = 0;
	if (block)
		out->blocks = 1;
	find_generation(out);
	number_configs(out);
	find_unknown(out);
	find_measurements(out);
}

/*
 * Text that starts with '[' is a JSON array, parsed strictly (and
 * refused naming the byte when it is not one), unless its first line
 * starts with a bracketed tag, as log lines do: "[LumeMetalCapabilities]
 * Enabled for …", "[SYCL] call ggml_init_sycl". Those are read with the
 * other text formats.
 */
static int
is_json_array(const char *p, size_t len)
{
	size_t i = 1;

	if (p[0] != '[')
		return 0;
	while (i < len && ((p[i] >= 'A' && p[i] <= 'Z') ||
			   (p[i] >= 'a' && p[i] <= 'z') ||
			   (p[i] >= '0' && p[i] <= '9') || p[i] == '_' ||
			   p[i] == '-'))
		i++;
	return !(i > 1 && i < len && p[i] == ']' &&
		 ((p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z')));
}

static int
is_json_object(const char *p, size_t len)
{
	(void)len;
	return p[0] == '{';
}

static int
is_any_text(const char *p, size_t len)
{
	(void)p;
	(void)len;
	return 1;
}

static int
read_text(const char *data, size_t len, size_t start, const char *name,
	  struct lb_output *out)
{
	(void)start;   /* the scanner reads every line, blank ones too */
	return lb_parse_text(data, len, name, out);
}

/*
 * How a whole text is read, by its first byte that is not white space,
 * first match wins: what llama-bench itself writes with -o json and -o
 * jsonl strictly, as one document (strict: its rows are one block);
 * anything else (md, csv, sql, and any output among log lines, as 2>&1
 * captures have it) by the line scanner of lbscan.c.
 */
static const struct {
	int (*claims)(const char *p, size_t len);
	int (*read)(const char *data, size_t len, size_t start,
		    const char *name, struct lb_output *out);
	int strict;
} readers[] = {
	{ is_json_array, lb_read_json_array, 1 },
	{ is_json_object, lb_read_jsonl, 1 },
	{ is_any_text, read_text, 0 },
};

int
lb_parse(const char *data, size_t len, const char *name,
	 struct lb_output *out)
{
	size_t i = 0, k;
	int rc;

	memset(out, 0, sizeof(*out));
	while (i < len && (data[i] == ' ' || data[i] == '\t' ||
			   data[i] == '\n' || data[i] == '\r'))
		i++;
	if (i == len) {
		out->format = "empty";
		out->incomplete = 1;
		out->generation = xstrdup("");
		return 0;
	}
	for (k = 0; !readers[k].claims(data + i, len - i); k++)
		;
	rc = readers[k].read(data, len, i, name, out);
	if (rc == 0)
		finish(out, readers[k].strict);
	return rc;
}

void
lb_output_release(struct lb_output *out)
{
	size_t i;

	for (i = 0; i < out->n; i++)
		lb_row_release(&out->rows[i]);
	free(out->rows);
	for (i = 0; i < out->n_ignored; i++)
		free(out->ignored[i].example);
	free(out->ignored);
	strv_free(out->unknown_fields);
	strv_free(out->measurements);
	free(out->generation);
	memset(out, 0, sizeof(*out));
}
