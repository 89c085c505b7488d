#define _POSIX_C_SOURCE 200809L
#include "analysis/published.h"
#include "base/util.h"

#include <cjson/cJSON.h>
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
tol(const cJSON *tols, const char *kind, const char *how, double dflt)
{
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(tols, kind);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(k, how);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
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
	cJSON *root = NULL, *studies, *st;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (buf_read_file(&text, path) < 0)
		return -1;
	root = cJSON_ParseWithLength(text.buf, text.len);
	if (!cJSON_IsObject(root)) {
		error("'%s': not a JSON object", path);
		goto cleanup;
	}
	out->tol_median_rel = tol(cJSON_GetObjectItem(root, "tolerances"),
				  "median", "relative", 0.10);
	out->tol_ratio_rel = tol(cJSON_GetObjectItem(root, "tolerances"),
				 "guest_ratio", "relative", 0.15);
	out->tol_percent_abs = tol(cJSON_GetObjectItem(root, "tolerances"),
				   "percent", "absolute", 5.0);
	studies = cJSON_GetObjectItemCaseSensitive(root, "studies");
	if (!cJSON_IsArray(studies)) {
		error("'%s': 'studies' must be an array", path);
		goto cleanup;
	}
	cJSON_ArrayForEach(st, studies) {
		const cJSON *name = cJSON_GetObjectItem(st, "name");
		const cJSON *model = cJSON_GetObjectItem(st, "model");
		const cJSON *runtime = cJSON_GetObjectItem(st, "runtime");
		const cJSON *figs = cJSON_GetObjectItem(st, "figures"), *f;

		if (!cJSON_IsString(name) || !cJSON_IsString(model) ||
		    !cJSON_IsString(runtime) || !cJSON_IsArray(figs)) {
			error("'%s': a study needs name, model, runtime and "
			      "figures", path);
			goto cleanup;
		}
		cJSON_ArrayForEach(f, figs) {
			const cJSON *test = cJSON_GetObjectItem(f, "test");
			size_t k;

			if (!cJSON_IsString(test)) {
				error("'%s': study '%s': a figure needs "
				      "'test'", path, name->valuestring);
				goto cleanup;
			}
			for (k = 0; k < ARRAY_SIZE(fields); k++) {
				const cJSON *v = cJSON_GetObjectItem(f,
							fields[k].field);
				struct pub_figure *p;

				if (!v)
					continue;
				if (!cJSON_IsNumber(v)) {
					error("'%s': %s %s: '%s' is not a "
					      "number", path, name->valuestring,
					      test->valuestring,
					      fields[k].field);
					goto cleanup;
				}
				out->f = xrealloc(out->f,
						  (out->n + 1) * sizeof(*p));
				p = &out->f[out->n++];
				p->study = xstrdup(name->valuestring);
				p->model = xstrdup(model->valuestring);
				p->runtime = xstrdup(runtime->valuestring);
				p->test = xstrdup(test->valuestring);
				p->field = xstrdup(fields[k].field);
				p->kind = fields[k].kind;
				p->value = v->valuedouble;
				p->decimals = precision_in(text.buf,
							   fields[k].field,
							   v->valuedouble);
			}
		}
	}
	ret = 0;
cleanup:
	cJSON_Delete(root);
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
