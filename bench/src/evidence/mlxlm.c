#define _POSIX_C_SOURCE 200809L
#include "evidence/mlxlm.h"
#include "evidence/llamabench.h"
#include "base/json.h"
#include "base/util.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
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
parse_json(const struct json *root, const char *name, struct lb_output *out)
{
	const struct json *cfg = json_get(root, "configuration");
	const struct json *samples = json_get(root, "samples"), *s;
	const char *version = json_get_str(json_get(root, "runtime"),
					   "mlx_lm");
	const char *id = json_get_str(json_get(root, "model"), "id");
	int64_t pt, gt;
	size_t n = 0, i = 0;
	double *p, *g;
	char *raw, *ver;
	struct json *meta;

	if (json_type(samples) != JSON_ARRAY ||
	    json_int64(json_get(cfg, "prompt_tokens"), 1, INT_MAX, &pt) < 0 ||
	    json_int64(json_get(cfg, "generation_tokens"), 1, INT_MAX,
		       &gt) < 0)
		return error("'%s': an MLX-LM result needs configuration."
			     "prompt_tokens, generation_tokens and samples",
			     name);
	n = json_size(samples);
	p = xcalloc(n + 1, sizeof(double));
	g = xcalloc(n + 1, sizeof(double));
	JSON_FOR_EACH(s, samples) {
		double a = json_num(json_get(s, "prompt_tps"));
		double b = json_num(json_get(s, "generation_tps"));

		if (!rate_ok(a) || !rate_ok(b)) {
			free(p);
			free(g);
			return error("'%s' sample %zu: prompt_tps and "
				     "generation_tps must be positive numbers",
				     name, i + 1);
		}
		p[i] = a;
		g[i] = b;
		i++;
	}
	/* The raw row keeps everything but the per-sample list. */
	meta = json_dup(root);
	json_remove(meta, "samples");
	raw = json_print(meta, 0);
	ver = version ? xstrfmt("mlx-lm %s", version) : NULL;
	add_row(out, (long)pt, 0, p, n, ver, id, raw);
	add_row(out, 0, (long)gt, g, n, ver, id, raw);
	free(ver);
	free(raw);
	json_free(meta);
	free(p);
	free(g);
	return 0;
}

/*
 * One "Trial N:  key=value, key=value, ..." line of mlx_lm.benchmark:
 * 1 with *p and *g set (prompt_tps and generation_tps; other keys such
 * as peak_memory, total_time of later versions, a fork's
 * generation_tps_wall are read past), 0 when it is no trial line, -1
 * after error() when a rate is missing or not a positive number.
 */
static int
trial_line(const char *line, const char *name, size_t lineno, double *p,
	   double *g)
{
	const char *q;
	int trial, n = 0, have_p = 0, have_g = 0;

	if (sscanf(line, "Trial %d:%n", &trial, &n) != 1 || !n)
		return 0;
	for (q = line + n; *q;) {
		const char *eq, *end;
		char key[64], *stop;
		double v;

		q += strspn(q, " ,");
		eq = strchr(q, '=');
		if (!*q || !eq || (size_t)(eq - q) >= sizeof(key))
			break;
		memcpy(key, q, (size_t)(eq - q));
		key[eq - q] = '\0';
		v = strtod(eq + 1, &stop);
		end = strchr(eq + 1, ',');
		if (!strcmp(key, "prompt_tps") || !strcmp(key, "generation_tps")) {
			if (stop == eq + 1 || !rate_ok(v))
				return error("'%s' line %zu: %s must be a positive "
					     "number", name, lineno, key);
			*(!strcmp(key, "prompt_tps") ? p : g) = v;
			*(!strcmp(key, "prompt_tps") ? &have_p : &have_g) = 1;
		}
		if (!end)
			break;
		q = end + 1;
	}
	if (!have_p || !have_g)
		return error("'%s' line %zu: a trial without %s", name, lineno,
			     have_p ? "generation_tps" : "prompt_tps");
	return 1;
}

/*
 * mlx_lm.benchmark's stdout, every published generation: "Timing with
 * prompt_tokens=P, generation_tokens=G[, batch_size=B]." then "Trial N:
 * prompt_tps=…, generation_tps=…, peak_memory=…[, total_time=…]". The
 * batch size (1 when not printed) is kept in the rows as configuration.
 */
static int
parse_text(const char *data, size_t len, const char *name,
	   struct lb_output *out)
{
	long prompt = 0, gen = 0, batch = 1;
	size_t pos = 0, n = 0, cap = 0, lineno = 0;
	double *p = NULL, *g = NULL;
	char *raw = NULL;
	int ret = -1, timing = 0;

	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - data) : len;
		char *line = xstrndup(data + pos, end - pos);
		const char *b;
		double a, c;
		int rc;

		lineno++;
		pos = end + 1;
		if (sscanf(line, "Timing with prompt_tokens=%ld, "
			   "generation_tokens=%ld", &prompt, &gen) == 2) {
			timing = 1;
			if ((b = strstr(line, "batch_size=")))
				batch = strtol(b + strlen("batch_size="), NULL, 10);
			free(line);
			continue;
		}
		rc = trial_line(line, name, lineno, &a, &c);
		free(line);
		if (rc < 0)
			goto cleanup;
		if (rc == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			p = xrealloc(p, cap * sizeof(double));
			g = xrealloc(g, cap * sizeof(double));
		}
		p[n] = a;
		g[n] = c;
		n++;
	}
	if (!timing || prompt <= 0 || gen <= 0 || batch <= 0) {
		error("'%s': no 'Timing with prompt_tokens=P, "
		      "generation_tokens=G' line with positive counts", name);
		goto cleanup;
	}
	if (!n) {
		error("'%s': no 'Trial N:' line: the benchmark printed no "
		      "trial", name);
		goto cleanup;
	}
	raw = xstrfmt("{\"source\":\"mlx_lm.benchmark\",\"batch_size\":%ld}",
		      batch);
	add_row(out, prompt, 0, p, n, NULL, NULL, raw);
	add_row(out, 0, gen, g, n, NULL, NULL, raw);
	ret = 0;
cleanup:
	free(raw);
	free(p);
	free(g);
	return ret;
}

int
mlx_parse(const char *data, size_t len, const char *name,
	  struct lb_output *out)
{
	struct json *root;
	size_t end;
	int ret;

	memset(out, 0, sizeof(*out));
	out->format = "mlx-lm";
	root = json_parse_prefix(data, len, &end);
	if (json_type(root) == JSON_OBJECT) {
		while (end < len && strchr(" \t\r\n", data[end]) && data[end])
			end++;
		if (end < len)
			ret = error("'%s': text after the JSON object at byte "
				    "%zu", name, end);
		else
			ret = parse_json(root, name, out);
		json_free(root);
		return ret;
	}
	json_free(root);
	return parse_text(data, len, name, out);
}
