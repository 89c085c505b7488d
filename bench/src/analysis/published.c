#define _POSIX_C_SOURCE 200809L
#include "analysis/published.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *field;
	enum pub_kind kind;
} fields[] = {
	{ "bare_metal", PUB_MEDIAN },
	{ "stock", PUB_MEDIAN },
	{ "shim", PUB_MEDIAN },
	{ "guest_ratio", PUB_RATIO },
	{ "shim_to_host_percent", PUB_PERCENT },
};

static double
tol(const struct json *tols, const char *kind, const char *how, double dflt)
{
	double v = json_num(json_get(json_get(tols, kind), how));

	return isfinite(v) ? v : dflt;
}

/*
 * Published values are written with the precision they were published
 * with; find it in the raw text after "key": for --exact comparisons.
 */
static int
precision_in(const char *raw, const char *key, double value)
{
	char pat[64], num[64];
	const char *p, *dot, *end;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	for (p = strstr(raw, pat); p; p = strstr(p + 1, pat)) {
		double v;
		char *e;
		p += strlen(pat);
		v = strtod(p, &e);
		if (fabs(v - value) > 1e-12 * fabs(value) + 1e-15)
			continue;
		end = e;
		snprintf(num, sizeof(num), "%.*s", (int)(end - p), p);
		dot = strchr(num, '.');
		return dot ? (int)strlen(dot + 1) : 0;
	}
	return 2;
}

int
published_load(const char *path, struct published *out)
{
	struct buf text = BUF_INIT;
	struct json *root = NULL;
	const struct json *studies, *st, *tols;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (buf_read_file(&text, path) < 0)
		return -1;
	root = json_parse(text.buf, text.len, path);
	if (!root)
		goto cleanup;
	if (json_type(root) != JSON_OBJECT) {
		error("'%s': not a JSON object", path);
		goto cleanup;
	}
	tols = json_get(root, "tolerances");
	out->tol_median_rel = tol(tols, "median", "relative", 0.10);
	out->tol_ratio_rel = tol(tols, "guest_ratio", "relative", 0.15);
	out->tol_percent_abs = tol(tols, "percent", "absolute", 5.0);
	studies = json_get(root, "studies");
	if (json_type(studies) != JSON_ARRAY) {
		error("'%s': 'studies' must be an array", path);
		goto cleanup;
	}
	JSON_FOR_EACH(st, studies) {
		const char *name = json_get_str(st, "name");
		const char *model = json_get_str(st, "model");
		const char *runtime = json_get_str(st, "runtime");
		const struct json *figs = json_get(st, "figures"), *f;

		if (!name || !model || !runtime ||
		    json_type(figs) != JSON_ARRAY) {
			error("'%s': a study needs name, model, runtime and "
			      "figures", path);
			goto cleanup;
		}
		JSON_FOR_EACH(f, figs) {
			const char *test = json_get_str(f, "test");
			size_t k;

			if (!test) {
				error("'%s': study '%s': a figure needs "
				      "'test'", path, name);
				goto cleanup;
			}
			for (k = 0; k < ARRAY_SIZE(fields); k++) {
				const struct json *v = json_get(f,
							fields[k].field);
				struct pub_figure *p;

				if (!v)
					continue;
				if (!isfinite(json_num(v))) {
					error("'%s': %s %s: '%s' is not a "
					      "number", path, name, test,
					      fields[k].field);
					goto cleanup;
				}
				out->f = xrealloc(out->f,
						  (out->n + 1) * sizeof(*p));
				p = &out->f[out->n++];
				p->study = xstrdup(name);
				p->model = xstrdup(model);
				p->runtime = xstrdup(runtime);
				p->test = xstrdup(test);
				p->field = xstrdup(fields[k].field);
				p->kind = fields[k].kind;
				p->value = json_num(v);
				p->decimals = precision_in(text.buf,
							   fields[k].field,
							   p->value);
			}
		}
	}
	ret = 0;
cleanup:
	json_free(root);
	buf_release(&text);
	if (ret < 0)
		published_release(out);
	return ret;
}

void
published_release(struct published *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->f[i].study);
		free(p->f[i].model);
		free(p->f[i].runtime);
		free(p->f[i].test);
		free(p->f[i].field);
	}
	free(p->f);
	memset(p, 0, sizeof(*p));
}
