#define _POSIX_C_SOURCE 200809L
#include "evidence/mlxlm.h"
#include "evidence/llamabench.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds one row (test from the token counts) with the given rates. */
static void
add_row(struct lb_output *out, long n_prompt, long n_gen, const double *ts,
	size_t n, const char *version, const char *model, const char *raw)
{
	struct lb_row *r;

	out->rows = xrealloc(out->rows, (out->n + 1) * sizeof(*r));
	r = &out->rows[out->n++];
	memset(r, 0, sizeof(*r));
	r->n_prompt = n_prompt;
	r->n_gen = n_gen;
	lb_test_name(n_prompt, n_gen, 0, r->test, sizeof(r->test));
	r->build_commit = xstrdup(version ? version : "");
	r->build_number = -1;
	r->backends = xstrdup("MLX");
	r->cpu_info = xstrdup("");
	r->gpu_info = xstrdup("");
	r->model_filename = xstrdup(model ? model : "");
	r->model_type = xstrdup(model ? model : "");
	r->model_size = r->model_n_params = -1;
	r->n_batch = r->n_ubatch = r->n_threads = r->n_gpu_layers = -1;
	r->flash_attn = xstrdup("");
	r->test_time = xstrdup("");
	r->n_samples = n;
	r->samples_ts = xcalloc(n ? n : 1, sizeof(double));
	memcpy(r->samples_ts, ts, n * sizeof(double));
	r->raw_json = xstrdup(raw);
}

static int
rate_ok(double v)
{
	return isfinite(v) && v > 0;
}

/* The published harness's JSON. */
static int
parse_json(cJSON *root, const char *name, struct lb_output *out)
{
	const cJSON *cfg = cJSON_GetObjectItem(root, "configuration");
	const cJSON *samples = cJSON_GetObjectItem(root, "samples"), *s;
	const cJSON *rt = cJSON_GetObjectItem(root, "runtime");
	const cJSON *model = cJSON_GetObjectItem(root, "model");
	const cJSON *pt = cJSON_GetObjectItem(cfg, "prompt_tokens");
	const cJSON *gt = cJSON_GetObjectItem(cfg, "generation_tokens");
	const char *version = cJSON_GetStringValue(cJSON_GetObjectItem(rt,
								     "mlx_lm"));
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(model, "id"));
	size_t n = 0, i = 0;
	double *p, *g;
	char *raw, *ver;
	cJSON *meta;

	if (!cJSON_IsArray(samples) || !cJSON_IsNumber(pt) ||
	    !cJSON_IsNumber(gt) || pt->valuedouble <= 0 ||
	    gt->valuedouble <= 0)
		return error("'%s': an MLX-LM result needs configuration."
			     "prompt_tokens, generation_tokens and samples",
			     name);
	n = (size_t)cJSON_GetArraySize(samples);
	p = xcalloc(n + 1, sizeof(double));
	g = xcalloc(n + 1, sizeof(double));
	cJSON_ArrayForEach(s, samples) {
		const cJSON *a = cJSON_GetObjectItem(s, "prompt_tps");
		const cJSON *b = cJSON_GetObjectItem(s, "generation_tps");

		if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b) ||
		    !rate_ok(a->valuedouble) || !rate_ok(b->valuedouble)) {
			free(p);
			free(g);
			return error("'%s' sample %zu: prompt_tps and "
				     "generation_tps must be positive numbers",
				     name, i + 1);
		}
		p[i] = a->valuedouble;
		g[i] = b->valuedouble;
		i++;
	}
	/* The raw row keeps everything but the per-sample list. */
	meta = cJSON_Duplicate(root, 1);
	cJSON_DeleteItemFromObject(meta, "samples");
	raw = cJSON_PrintUnformatted(meta);
	ver = version ? xstrfmt("mlx-lm %s", version) : NULL;
	add_row(out, (long)pt->valuedouble, 0, p, n, ver, id, raw);
	add_row(out, 0, (long)gt->valuedouble, g, n, ver, id, raw);
	free(ver);
	cJSON_free(raw);
	cJSON_Delete(meta);
	free(p);
	free(g);
	return 0;
}

/* mlx_lm.benchmark's stdout. */
static int
parse_text(const char *data, size_t len, const char *name,
	   struct lb_output *out)
{
	long prompt = 0, gen = 0;
	size_t pos = 0, n = 0, cap = 0, lineno = 0;
	double *p = NULL, *g = NULL;
	int ret = -1;

	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - data) : len;
		char *line = xstrndup(data + pos, end - pos);
		double a, b, mem, t;
		int trial;

		lineno++;
		pos = end + 1;
		if (sscanf(line, "Timing with prompt_tokens=%ld, "
			   "generation_tokens=%ld", &prompt, &gen) == 2) {
			free(line);
			continue;
		}
		if (sscanf(line, "Trial %d:  prompt_tps=%lf, generation_tps=%lf,"
			   " peak_memory=%lf, total_time=%lf", &trial, &a, &b,
			   &mem, &t) == 5) {
			if (!rate_ok(a) || !rate_ok(b)) {
				free(line);
				error("'%s' line %zu: rates must be positive",
				      name, lineno);
				goto cleanup;
			}
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				p = xrealloc(p, cap * sizeof(double));
				g = xrealloc(g, cap * sizeof(double));
			}
			p[n] = a;
			g[n] = b;
			n++;
		}
		free(line);
	}
	if (!n || prompt <= 0 || gen <= 0) {
		error("'%s': no 'Timing with prompt_tokens=…' line or no "
		      "'Trial N:' lines", name);
		goto cleanup;
	}
	add_row(out, prompt, 0, p, n, NULL, NULL,
		"{\"source\":\"mlx_lm.benchmark\"}");
	add_row(out, 0, gen, g, n, NULL, NULL,
		"{\"source\":\"mlx_lm.benchmark\"}");
	ret = 0;
cleanup:
	free(p);
	free(g);
	return ret;
}

int
mlx_parse(const char *data, size_t len, const char *name,
	  struct lb_output *out)
{
	cJSON *root;
	int ret;

	memset(out, 0, sizeof(*out));
	out->format = "mlx-lm";
	root = cJSON_ParseWithLength(data, len);
	if (cJSON_IsObject(root)) {
		ret = parse_json(root, name, out);
		cJSON_Delete(root);
		return ret;
	}
	cJSON_Delete(root);
	return parse_text(data, len, name, out);
}
