#define _POSIX_C_SOURCE 200809L
#include "evidence/llamabench.h"
#include "base/util.h"

#include <cjson/cJSON.h>
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

/* A string field; numbers and booleans are rendered; "" when absent. */
static char *
get_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	char num[64];

	if (cJSON_IsString(v) && v->valuestring)
		return xstrdup(v->valuestring);
	if (cJSON_IsNumber(v)) {
		snprintf(num, sizeof(num), "%.17g", v->valuedouble);
		return xstrdup(num);
	}
	if (cJSON_IsBool(v))
		return xstrdup(cJSON_IsTrue(v) ? "true" : "false");
	return xstrdup("");
}

/*
 * An integer field, accepting numbers, numeric strings and booleans
 * (fields changed type across llama-bench versions). Returns 1 when
 * present, 0 when absent, -1 when present but not an integer.
 */
static int
get_int(const cJSON *o, const char *key, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	double d;

	if (!v || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsBool(v)) {
		*out = cJSON_IsTrue(v);
		return 1;
	}
	if (cJSON_IsString(v)) {
		if (parse_double(v->valuestring, &d) < 0)
			return -1;
	} else if (cJSON_IsNumber(v)) {
		d = v->valuedouble;
	} else {
		return -1;
	}
	if (!isfinite(d) || d != floor(d) || fabs(d) > 9.0e18)
		return -1;
	*out = (int64_t)d;
	return 1;
}

static char *
backends_of(const cJSON *o)
{
	/* 2024-era builds: one boolean per backend, in get_backend() order. */
	static const struct { const char *key, *name; } flags[] = {
		{ "cuda", "CUDA" }, { "vulkan", "Vulkan" },
		{ "kompute", "Kompute" }, { "metal", "Metal" },
		{ "sycl", "SYCL" }, { "rpc", "RPC" },
		{ "gpu_blas", "GPU BLAS" }, { "blas", "BLAS" },
	};
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "backends");
	struct buf b = BUF_INIT;
	size_t i;

	if (cJSON_IsString(v) && v->valuestring)
		return xstrdup(v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "backend");
	if (cJSON_IsString(v) && v->valuestring)
		return xstrdup(v->valuestring);
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		v = cJSON_GetObjectItemCaseSensitive(o, flags[i].key);
		if (cJSON_IsTrue(v) ||
		    (cJSON_IsNumber(v) && v->valuedouble != 0)) {
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
flash_attn_of(const cJSON *o)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "flash_attn");

	if (cJSON_IsBool(v))
		return xstrdup(cJSON_IsTrue(v) ? "on" : "off");
	if (cJSON_IsNumber(v))
		return xstrdup(v->valuedouble < 0 ? "auto" :
			       v->valuedouble > 0 ? "on" : "off");
	if (cJSON_IsString(v) && v->valuestring) {
		const char *s = v->valuestring;
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

static void
row_release(struct lb_row *r)
{
	free(r->build_commit);
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

/*
 * Reads the samples of one row and checks them: equal lengths, finite,
 * positive, and ts consistent with (n_prompt+n_gen)/ns.
 */
static int
parse_samples(const cJSON *o, struct lb_row *r, const char *name, size_t rowno)
{
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(o, "samples_ns");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(o, "samples_ts");
	long tokens = r->n_prompt + r->n_gen;
	int nns = -1, nts = -1, i, n;

	if (ns && !cJSON_IsArray(ns))
		return error("'%s' row %zu: samples_ns is not an array", name,
			     rowno);
	if (ts && !cJSON_IsArray(ts))
		return error("'%s' row %zu: samples_ts is not an array", name,
			     rowno);
	if (ns)
		nns = cJSON_GetArraySize(ns);
	if (ts)
		nts = cJSON_GetArraySize(ts);
	if (nns >= 0 && nts >= 0 && nns != nts)
		return error("'%s' row %zu: samples_ns has %d values but "
			     "samples_ts has %d", name, rowno, nns, nts);
	n = nns >= 0 ? nns : nts;
	if (n <= 0)
		return 0;
	if (tokens <= 0)
		return error("'%s' row %zu: samples but n_prompt+n_gen is %ld",
			     name, rowno, tokens);
	r->n_samples = (size_t)n;
	r->samples_ts = xcalloc((size_t)n, sizeof(double));
	if (nns >= 0)
		r->samples_ns = xcalloc((size_t)n, sizeof(int64_t));
	for (i = 0; i < n; i++) {
		const cJSON *a = nns >= 0 ? cJSON_GetArrayItem(ns, i) : NULL;
		const cJSON *b = nts >= 0 ? cJSON_GetArrayItem(ts, i) : NULL;
		double expect;

		if (a) {
			if (!cJSON_IsNumber(a) || !isfinite(a->valuedouble) ||
			    a->valuedouble <= 0)
				return error("'%s' row %zu: samples_ns[%d] is "
					     "not a positive number", name,
					     rowno, i);
			r->samples_ns[i] = (int64_t)a->valuedouble;
		}
		if (b) {
			if (!cJSON_IsNumber(b) || !isfinite(b->valuedouble) ||
			    b->valuedouble <= 0)
				return error("'%s' row %zu: samples_ts[%d] is "
					     "not a positive number", name,
					     rowno, i);
			r->samples_ts[i] = b->valuedouble;
		}
		if (!a)
			continue;
		expect = 1e9 * (double)tokens / a->valuedouble;
		if (!b) {
			r->samples_ts[i] = expect;
			continue;
		}
		/* samples_ts is printed with 6 significant digits. */
		if (fabs(b->valuedouble - expect) > 1e-3 * expect)
			return error("'%s' row %zu: samples_ts[%d] = %g does "
				     "not match %ld tokens in %" "lld ns (%g)",
				     name, rowno, i, b->valuedouble, tokens,
				     (long long)r->samples_ns[i], expect);
	}
	return 0;
}

/* Fills r from one JSON object; -1 with error() naming file and row. */
static int
parse_row(const cJSON *o, struct lb_row *r, const char *name, size_t rowno)
{
	static const char *const counts[] = { "n_prompt", "n_gen", "n_depth" };
	int64_t v, c[3] = { 0, 0, 0 };
	const cJSON *avg;
	char *raw;
	size_t i;

	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(o))
		return error("'%s' row %zu: not a JSON object", name, rowno);
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		int rc = get_int(o, counts[i], &c[i]);
		if (rc < 0 || c[i] < 0)
			return error("'%s' row %zu: %s is not a non-negative "
				     "integer", name, rowno, counts[i]);
	}
	r->n_prompt = (long)c[0];
	r->n_gen = (long)c[1];
	r->n_depth = (long)c[2];
	lb_test_name(r->n_prompt, r->n_gen, r->n_depth, r->test,
		     sizeof(r->test));
	r->build_commit = get_str(o, "build_commit");
	r->build_number = get_int(o, "build_number", &v) == 1 ? (long)v : -1;
	r->backends = backends_of(o);
	r->cpu_info = get_str(o, "cpu_info");
	r->gpu_info = get_str(o, "gpu_info");
	r->model_filename = get_str(o, "model_filename");
	r->model_type = get_str(o, "model_type");
	r->model_size = get_int(o, "model_size", &v) == 1 ? v : -1;
	r->model_n_params = get_int(o, "model_n_params", &v) == 1 ? v : -1;
	if (r->model_size < -1 || r->model_n_params < -1)
		return error("'%s' row %zu: negative model size or parameter "
			     "count", name, rowno);
	r->n_batch = get_int(o, "n_batch", &v) == 1 ? (long)v : -1;
	r->n_ubatch = get_int(o, "n_ubatch", &v) == 1 ? (long)v : -1;
	r->n_threads = get_int(o, "n_threads", &v) == 1 ? (long)v : -1;
	r->n_gpu_layers = get_int(o, "n_gpu_layers", &v) == 1 ? (long)v : -1;
	r->flash_attn = flash_attn_of(o);
	r->test_time = get_str(o, "test_time");
	avg = cJSON_GetObjectItemCaseSensitive(o, "avg_ts");
	if (avg) {
		if (!cJSON_IsNumber(avg) || !isfinite(avg->valuedouble) ||
		    avg->valuedouble < 0)
			return error("'%s' row %zu: avg_ts is not a finite "
				     "non-negative number", name, rowno);
		r->avg_ts = avg->valuedouble;
	}
	if (parse_samples(o, r, name, rowno) < 0)
		return -1;
	raw = cJSON_PrintUnformatted(o);
	if (!raw)
		die("out of memory printing a row");
	r->raw_json = xstrdup(raw);
	cJSON_free(raw);
	return 0;
}

static int
add_row(struct lb_output *out, const cJSON *o, const char *name)
{
	struct lb_row r;

	if (parse_row(o, &r, name, out->n + 1) < 0) {
		row_release(&r);
		return -1;
	}
	out->rows = xrealloc(out->rows, (out->n + 1) * sizeof(r));
	out->rows[out->n++] = r;
	return 0;
}

static int
add_text_row(struct lb_output *out, const char *p, size_t len,
	     const char *name)
{
	cJSON *o = cJSON_ParseWithLength(p, len);
	int ret;

	if (!o)
		return error("'%s' row %zu: not valid JSON", name, out->n + 1);
	ret = add_row(out, o, name);
	cJSON_Delete(o);
	return ret;
}

/*
 * Recovers the complete top-level objects of a JSON array whose end is
 * missing (llama-bench died mid-way: stdout holds "[" and some rows).
 */
static int
parse_partial_array(const char *data, size_t len, const char *name,
		    struct lb_output *out)
{
	size_t i, start = 0;
	int depth = 0, in_str = 0, esc = 0;

	for (i = 0; i < len; i++) {
		char c = data[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == '{') {
			if (depth++ == 0)
				start = i;
		} else if (c == '}') {
			if (depth == 0)
				return error("'%s': unbalanced '}' at byte %zu",
					     name, i);
			if (--depth == 0 &&
			    add_text_row(out, data + start, i - start + 1,
					 name) < 0)
				return -1;
		}
	}
	out->incomplete = 1;
	return 0;
}

static int
parse_json(const char *data, size_t len, const char *name,
	   struct lb_output *out)
{
	cJSON *root = cJSON_ParseWithLength(data, len), *item;

	out->format = "json";
	if (!root)
		return parse_partial_array(data, len, name, out);
	if (!cJSON_IsArray(root)) {
		cJSON_Delete(root);
		return error("'%s': not a llama-bench JSON array", name);
	}
	cJSON_ArrayForEach(item, root) {
		if (add_row(out, item, name) < 0) {
			cJSON_Delete(root);
			return -1;
		}
	}
	cJSON_Delete(root);
	return 0;
}

static int
parse_jsonl(const char *data, size_t len, const char *name,
	    struct lb_output *out)
{
	size_t pos = 0;

	out->format = "jsonl";
	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - data) : len;
		size_t a = pos, b = end;
		cJSON *o;

		while (a < b && (data[a] == ' ' || data[a] == '\t' ||
				 data[a] == '\r'))
			a++;
		while (b > a && (data[b - 1] == ' ' || data[b - 1] == '\r'))
			b--;
		pos = end + 1;
		if (a == b)
			continue;
		o = cJSON_ParseWithLength(data + a, b - a);
		if (!o) {
			/* A cut last line is a truncation, not garbage. */
			if (!nl && data[a] == '{') {
				out->incomplete = 1;
				return 0;
			}
			return error("'%s' row %zu: not valid JSON", name,
				     out->n + 1);
		}
		if (add_row(out, o, name) < 0) {
			cJSON_Delete(o);
			return -1;
		}
		cJSON_Delete(o);
	}
	return 0;
}

int
lb_parse(const char *data, size_t len, const char *name,
	 struct lb_output *out)
{
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	while (i < len && (data[i] == ' ' || data[i] == '\n' ||
			   data[i] == '\r' || data[i] == '\t'))
		i++;
	if (i == len) {
		out->format = "empty";
		out->incomplete = 1;
		return 0;
	}
	if (data[i] == '[')
		return parse_json(data + i, len - i, name, out);
	if (data[i] == '{')
		return parse_jsonl(data + i, len - i, name, out);
	return error("'%s': not llama-bench JSON or JSONL output "
		     "(starts with '%c')", name, data[i]);
}

void
lb_output_release(struct lb_output *out)
{
	size_t i;

	for (i = 0; i < out->n; i++)
		row_release(&out->rows[i]);
	free(out->rows);
	memset(out, 0, sizeof(*out));
}
