#define _POSIX_C_SOURCE 200809L
#include "run/plan.h"
#include "run/ablate.h"
#include "run/transport-ops.h"
#include "run/transports.h"
#include "models/hash.h"
#include "models/manifest.h"
#include "base/files.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default llama-bench arguments: the published convention. */
static const char *const default_args[] = {
	"-p", "512", "-n", "128", "-r", "10", NULL,
};

/* An object with only the given keys, none of them twice. */
static int
only_keys(const struct json *o, const char *path, const char *const *keys)
{
	const struct json *v;
	char *where;
	size_t i;
	int ret;

	if (json_type(o) != JSON_OBJECT)
		return error("plan: '%s' must be an object", path);
	JSON_FOR_EACH(v, o) {
		for (i = 0; keys[i]; i++)
			if (!strcmp(json_key(v), keys[i]))
				break;
		if (!keys[i])
			return error("plan: unknown key '%s.%s'", path,
				     json_key(v));
	}
	where = xstrfmt("plan: '%s'", path);
	ret = json_check_unique(o, where);
	free(where);
	return ret;
}

/* Optional string member; -1 on a wrong type. */
static int
opt_str(const struct json *o, const char *key, const char *path, char **out)
{
	const struct json *v = json_get(o, key);

	*out = NULL;
	if (!v)
		return 0;
	if (!json_str(v) || !*json_str(v))
		return error("plan: '%s.%s' must be a non-empty string", path,
			     key);
	*out = xstrdup(json_str(v));
	return 0;
}

/* Optional "runtime": llama.cpp or mlx-lm. */
static int
opt_runtime(const struct json *o, const char *path, char **out)
{
	if (opt_str(o, "runtime", path, out) < 0)
		return -1;
	if (*out && strcmp(*out, PLAN_LLAMA) && strcmp(*out, PLAN_MLX))
		return error("plan: '%s.runtime' is '%s'; expected \"%s\" or "
			     "\"%s\"", path, *out, PLAN_LLAMA, PLAN_MLX);
	return 0;
}

static int
str_array(const struct json *a, const char *path, char ***out, size_t *n)
{
	const struct json *v;
	size_t i = 0;

	*out = xcalloc(1, sizeof(char *));
	*n = 0;
	if (!a)
		return 0;
	if (json_type(a) != JSON_ARRAY)
		return error("plan: '%s' must be an array of strings", path);
	JSON_FOR_EACH(v, a) {
		if (!json_str(v))
			return error("plan: '%s[%zu]' must be a string", path, i);
		*out = strv_push(*out, n, xstrdup(json_str(v)));
		i++;
	}
	return 0;
}

static int
env_object(const struct json *o, const char *path, char ***set, size_t *nset)
{
	const struct json *v;
	char *where;
	int ret;

	if (!o)
		return 0;
	if (json_type(o) != JSON_OBJECT)
		return error("plan: '%s' must be an object of strings", path);
	where = xstrfmt("plan: '%s'", path);
	ret = json_check_unique(o, where);
	free(where);
	if (ret < 0)
		return -1;
	JSON_FOR_EACH(v, o) {
		const char *name = json_key(v);

		if (!json_str(v))
			return error("plan: '%s.%s' must be a string", path,
				     name);
		if (!*name || strchr(name, '='))
			return error("plan: '%s' has a bad variable name '%s'",
				     path, name);
		*set = strv_push(*set, nset, xstrfmt("%s=%s", name,
						     json_str(v)));
	}
	return 0;
}

static int
load_models(struct plan *p, const struct json *arr, const char *models_dir)
{
	static const char *const keys[] = { "name", "path", "sha256", "label",
					    "runtime", NULL };
	struct manifest man = { 0 };
	int have_manifest = 0, ret = -1;
	const struct json *m;
	size_t i = 0;

	if (json_type(arr) != JSON_ARRAY || !json_first(arr))
		return error("plan: 'models' must be a non-empty array");
	JSON_FOR_EACH(m, arr) {
		struct plan_model *pm;
		const struct manifest_model *mm = NULL;
		char path[64];

		snprintf(path, sizeof(path), "models[%zu]", i++);
		if (only_keys(m, path, keys) < 0)
			goto cleanup;
		p->models = xrealloc(p->models, (p->nmodels + 1) * sizeof(*pm));
		pm = &p->models[p->nmodels++];
		memset(pm, 0, sizeof(*pm));
		pm->model_size = pm->n_params = -1;
		if (opt_str(m, "name", path, &pm->name) < 0 ||
		    opt_str(m, "path", path, &pm->path) < 0 ||
		    opt_str(m, "sha256", path, &pm->sha256) < 0 ||
		    opt_str(m, "label", path, &pm->label) < 0 ||
		    opt_runtime(m, path, &pm->runtime) < 0)
			goto cleanup;
		if (!pm->name) {
			error("plan: '%s.name' is required", path);
			goto cleanup;
		}
		if (!pm->runtime)
			pm->runtime = xstrdup(PLAN_LLAMA);
		if (!strcmp(pm->runtime, PLAN_MLX)) {
			/* MLX-LM loads a directory or a repository id */
			if (pm->sha256) {
				error("plan: '%s' runs on mlx-lm: its model is a "
				      "directory or repository id, without a "
				      "sha256", path);
				goto cleanup;
			}
			if (!pm->path)
				pm->path = xstrdup(pm->name);
			if (!pm->label)
				pm->label = xstrdup(pm->name);
			continue;
		}
		if (pm->sha256 && !hash_is_sha256_hex(pm->sha256)) {
			error("plan: '%s.sha256' is not a SHA-256", path);
			goto cleanup;
		}
		if (!have_manifest && file_exists(manifest_default_path())) {
			if (manifest_load(NULL, &man) < 0)
				goto cleanup;
			have_manifest = 1;
		}
		if (have_manifest)
			mm = manifest_find(&man, pm->name);
		if (mm) {
			if (!pm->path)
				pm->path = manifest_model_path(mm, models_dir);
			if (!pm->sha256 && mm->sha256)
				pm->sha256 = xstrdup(mm->sha256);
			if (!pm->label && mm->label)
				pm->label = xstrdup(mm->label);
			pm->model_size = mm->model_size;
			pm->n_params = mm->n_params;
		}
		if (!pm->path) {
			error("plan: '%s' (%s) has no path and is not in the "
			      "manifest", path, pm->name);
			goto cleanup;
		}
		if (!pm->label)
			pm->label = xstrdup(pm->name);
	}
	ret = 0;
cleanup:
	if (have_manifest)
		manifest_free(&man);
	return ret;
}

static int
load_targets(struct plan *p, const struct json *obj)
{
	static const char *const keys[] = { "transport", "host", "user", "vm",
					    "llama_bench", "mlx_lm", "timeout",
					    "port", "ssh_options", NULL };
	const struct json *t, *v;
	int64_t port;

	if (json_type(obj) != JSON_OBJECT || !json_first(obj))
		return error("plan: 'targets' must be a non-empty object");
	if (json_check_unique(obj, "plan: 'targets'") < 0)
		return -1;
	JSON_FOR_EACH(t, obj) {
		struct plan_target *pt;
		char path[128];

		snprintf(path, sizeof(path), "targets.%.100s", json_key(t));
		if (only_keys(t, path, keys) < 0)
			return -1;
		p->targets = xrealloc(p->targets,
				      (p->ntargets + 1) * sizeof(*pt));
		pt = &p->targets[p->ntargets++];
		memset(pt, 0, sizeof(*pt));
		pt->name = xstrdup(json_key(t));
		if (opt_str(t, "transport", path, &pt->transport) < 0 ||
		    opt_str(t, "host", path, &pt->host) < 0 ||
		    opt_str(t, "user", path, &pt->user) < 0 ||
		    opt_str(t, "vm", path, &pt->vm) < 0 ||
		    opt_str(t, "llama_bench", path, &pt->llama_bench) < 0 ||
		    opt_str(t, "mlx_lm", path, &pt->mlx_lm) < 0)
			return -1;
		if (!pt->transport)
			pt->transport = xstrdup("local");
		v = json_get(t, "timeout");
		if (v && !(isfinite(json_num(v)) && json_num(v) > 0))
			return error("plan: '%s.timeout' must be a positive "
				     "number of seconds", path);
		pt->timeout = v ? json_num(v) : 0;
		v = json_get(t, "port");
		if (v && json_int64(v, 1, 65535, &port) < 0)
			return error("plan: '%s.port' must be a port number",
				     path);
		pt->port = v ? (int)port : 0;
		{
			char opath[160];
			size_t nopt = 0;
			snprintf(opath, sizeof(opath), "%s.ssh_options", path);
			if (str_array(json_get(t, "ssh_options"), opath,
				      &pt->ssh_options, &nopt) < 0)
				return -1;
		}
		pt->tp = transport_find(pt->transport);
		if (!pt->tp) {
			struct buf names = BUF_INIT;

			transport_names(&names);
			error("plan: '%s.transport' is '%s'; expected %s", path,
			      pt->transport, names.buf);
			buf_release(&names);
			return -1;
		}
		if (pt->tp->check(pt, path) < 0)
			return -1;
	}
	return 0;
}

/*
 * "expect": an array of markers for every run of the variant, or an
 * object with one array per runtime ({"llama.cpp": [...], "mlx-lm":
 * [...]}): ggml's markers never appear in an MLX-LM process.
 */
static int
load_expect(struct plan_variant *pv, const struct json *ex, const char *path)
{
	static const char *const rkeys[] = { PLAN_LLAMA, PLAN_MLX, NULL };
	char ipath[96];

	snprintf(ipath, sizeof(ipath), "%s.expect", path);
	if (json_type(ex) != JSON_OBJECT) {
		if (str_array(ex, ipath, &pv->expect, &pv->nexpect) < 0)
			return -1;
		pv->expect_mlx = strv_dup((const char *const *)pv->expect);
		pv->nexpect_mlx = pv->nexpect;
		return 0;
	}
	if (only_keys(ex, ipath, rkeys) < 0)
		return -1;
	snprintf(ipath, sizeof(ipath), "%s.expect.%s", path, PLAN_LLAMA);
	if (str_array(json_get(ex, PLAN_LLAMA), ipath, &pv->expect,
		      &pv->nexpect) < 0)
		return -1;
	snprintf(ipath, sizeof(ipath), "%s.expect.%s", path, PLAN_MLX);
	if (str_array(json_get(ex, PLAN_MLX), ipath, &pv->expect_mlx,
		      &pv->nexpect_mlx) < 0)
		return -1;
	return 0;
}

static int
load_variants(struct plan *p, const struct json *arr)
{
	static const char *const keys[] = { "name", "target", "role", "env",
					    "unset", "inject", "expect", "probe",
					    "runtime", NULL };
	static const char *const pkeys[] = { "argv", "expect", NULL };
	static const char *const ikeys[] = { "library", "sha256", "env",
					     "append", NULL };
	const struct json *v;
	size_t i = 0, j;

	if (json_type(arr) != JSON_ARRAY || !json_first(arr))
		return error("plan: 'variants' must be a non-empty array");
	JSON_FOR_EACH(v, arr) {
		struct plan_variant *pv;
		const struct json *inj;
		char path[64], ipath[80];
		size_t nset = 0, nunset = 0;

		snprintf(path, sizeof(path), "variants[%zu]", i++);
		if (only_keys(v, path, keys) < 0)
			return -1;
		p->variants = xrealloc(p->variants,
				       (p->nvariants + 1) * sizeof(*pv));
		pv = &p->variants[p->nvariants++];
		memset(pv, 0, sizeof(*pv));
		pv->env_set = xcalloc(1, sizeof(char *));
		if (opt_str(v, "name", path, &pv->name) < 0 ||
		    opt_str(v, "target", path, &pv->target) < 0 ||
		    opt_str(v, "role", path, &pv->role) < 0 ||
		    opt_runtime(v, path, &pv->runtime) < 0)
			return -1;
		if (!pv->name || !pv->target)
			return error("plan: '%s' needs 'name' and 'target'",
				     path);
		for (j = 0; pv->name[j]; j++)
			if (!strchr("abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.",
				    pv->name[j]))
				return error("plan: '%s.name' '%s' may only "
					     "hold letters, digits, '-', '_' "
					     "and '.'", path, pv->name);
		for (j = 0; j + 1 < p->nvariants; j++)
			if (!strcmp(p->variants[j].name, pv->name))
				return error("plan: variant '%s' appears twice",
					     pv->name);
		if (!plan_target(p, pv->target))
			return error("plan: '%s.target' names unknown target "
				     "'%s'", path, pv->target);
		if (!pv->role)
			pv->role = xstrdup("other");
		snprintf(ipath, sizeof(ipath), "%s.env", path);
		if (env_object(json_get(v, "env"), ipath, &pv->env_set,
			       &nset) < 0)
			return -1;
		snprintf(ipath, sizeof(ipath), "%s.unset", path);
		if (str_array(json_get(v, "unset"), ipath, &pv->env_unset,
			      &nunset) < 0)
			return -1;
		if (load_expect(pv, json_get(v, "expect"), path) < 0)
			return -1;
		inj = json_get(v, "probe");
		if (inj) {
			const struct json *ex = json_get(inj, "expect");
			size_t nargv = 0;

			snprintf(ipath, sizeof(ipath), "%s.probe", path);
			if (only_keys(inj, ipath, pkeys) < 0)
				return -1;
			snprintf(ipath, sizeof(ipath), "%s.probe.argv", path);
			if (str_array(json_get(inj, "argv"), ipath,
				      &pv->probe_argv, &nargv) < 0)
				return -1;
			if (nargv == 0)
				return error("plan: '%s' must name the probe "
					     "program", ipath);
			if (json_type(ex) != JSON_OBJECT || !json_first(ex))
				return error("plan: '%s.probe.expect' must be a "
					     "non-empty object of JSON paths and "
					     "values", path);
			pv->probe_expect = json_print(ex, 0);
		}
		inj = json_get(v, "inject");
		if (inj) {
			const struct json *ap;

			snprintf(ipath, sizeof(ipath), "%s.inject", path);
			if (only_keys(inj, ipath, ikeys) < 0 ||
			    opt_str(inj, "library", ipath, &pv->inject_lib) < 0 ||
			    opt_str(inj, "sha256", ipath,
				    &pv->inject_sha256) < 0)
				return -1;
			if (!pv->inject_lib || !pv->inject_sha256)
				return error("plan: '%s' needs 'library' and "
					     "'sha256'", ipath);
			if (!hash_is_sha256_hex(pv->inject_sha256))
				return error("plan: '%s.sha256' is not a "
					     "SHA-256", ipath);
			ap = json_get(inj, "append");
			if (ap && !json_is_bool(ap))
				return error("plan: '%s.append' must be true "
					     "or false", ipath);
			pv->inject_append = json_bool(ap) == 1;
			snprintf(ipath, sizeof(ipath), "%s.inject.env", path);
			if (env_object(json_get(inj, "env"), ipath,
				       &pv->env_set, &nset) < 0)
				return -1;
		}
	}
	return 0;
}

static int
load_llama_bench(struct plan *p, const struct json *lb)
{
	static const char *const keys[] = { "path", "args", NULL };
	size_t n = 0, i;

	if (!lb) {
		p->args = xcalloc(ARRAY_SIZE(default_args), sizeof(char *));
		for (i = 0; default_args[i]; i++)
			p->args[i] = xstrdup(default_args[i]);
		return 0;
	}
	if (only_keys(lb, "llama_bench", keys) < 0 ||
	    opt_str(lb, "path", "llama_bench", &p->llama_bench) < 0 ||
	    str_array(json_get(lb, "args"), "llama_bench.args", &p->args,
		      &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const char *a = p->args[i];
		if (!strcmp(a, "-m") || !strcmp(a, "--model"))
			return error("plan: 'llama_bench.args' must not hold "
				     "'%s': models come from 'models'", a);
		if (!strcmp(a, "-o") || !strcmp(a, "--output") ||
		    !strcmp(a, "-oe") || !strcmp(a, "--output-err"))
			return error("plan: 'llama_bench.args' must not hold "
				     "'%s': shimbench reads -o jsonl", a);
	}
	if (n == 0) {
		free(p->args);
		return load_llama_bench(p, NULL);
	}
	return 0;
}

/* The single whole number after llama-bench's option opt (or long_opt). */
static int
lb_count(const struct plan *p, const char *opt, const char *long_opt,
	 long dflt, long *out)
{
	size_t i;

	*out = dflt;
	for (i = 0; p->args[i]; i++) {
		if (strcmp(p->args[i], opt) && strcmp(p->args[i], long_opt))
			continue;
		if (!p->args[i + 1] || parse_long(p->args[i + 1], out) < 0 ||
		    *out < 1)
			return error("plan: mlx-lm runs take one count from "
				     "llama-bench's '%s'; '%s' is not one "
				     "(give mlx_lm.args instead)", opt,
				     p->args[i + 1] ? p->args[i + 1] : "");
		i++;
	}
	return 0;
}

/*
 * "mlx_lm": {"command": [...], "args": [...]}, and the counts MLX-LM's
 * benchmark gets: llama-bench's -p, -n and -r, with llama-bench's own
 * defaults, so both runtimes measure the same workload.
 */
static int
load_mlx(struct plan *p, const struct json *o)
{
	static const char *const keys[] = { "command", "args", NULL };
	int any = 0;
	size_t i, n = 0, nargs = 0;

	for (i = 0; i < p->nmodels; i++)
		any |= plan_model_mlx(p, i);
	if (o && (only_keys(o, "mlx_lm", keys) < 0 ||
		  str_array(json_get(o, "command"), "mlx_lm.command",
			    &p->mlx_command, &n) < 0 ||
		  str_array(json_get(o, "args"), "mlx_lm.args", &p->mlx_args,
			    &nargs) < 0))
		return -1;
	if (!p->mlx_args)
		p->mlx_args = xcalloc(1, sizeof(char *));
	if (!n) {
		free(p->mlx_command);
		p->mlx_command = xcalloc(2, sizeof(char *));
		p->mlx_command[0] = xstrdup("mlx_lm.benchmark");
	}
	p->mlx_prompt = 512;
	p->mlx_gen = 128;
	p->mlx_trials = 5;
	if (!any)
		return 0;
	if (lb_count(p, "-p", "--n-prompt", 512, &p->mlx_prompt) < 0 ||
	    lb_count(p, "-n", "--n-gen", 128, &p->mlx_gen) < 0 ||
	    lb_count(p, "-r", "--repetitions", 5, &p->mlx_trials) < 0)
		return -1;
	return 0;
}

/* Every runtime-bound variant has a model, every model a variant. */
static int
check_runtimes(const struct plan *p)
{
	size_t m, v;

	for (v = 0; v < p->nvariants; v++) {
		int found = 0;

		for (m = 0; m < p->nmodels; m++)
			found |= plan_runs(p, m, v);
		if (!found)
			return error("plan: variant '%s' runs only %s models and "
				     "the plan has none", p->variants[v].name,
				     p->variants[v].runtime);
	}
	for (m = 0; m < p->nmodels; m++) {
		int found = 0;

		for (v = 0; v < p->nvariants; v++)
			found |= plan_runs(p, m, v);
		if (!found)
			return error("plan: no variant runs model '%s' (%s)",
				     p->models[m].name, p->models[m].runtime);
	}
	return 0;
}

int
plan_model_mlx(const struct plan *p, size_t m)
{
	return !strcmp(p->models[m].runtime, PLAN_MLX);
}

int
plan_runs(const struct plan *p, size_t m, size_t v)
{
	const char *rt = p->variants[v].runtime;

	return !rt || !strcmp(rt, p->models[m].runtime);
}

static int
int_member(const struct json *root, const char *key, long lo, long hi,
	   long dflt, long *out)
{
	const struct json *v = json_get(root, key);
	double d = json_num(v);
	int64_t i;

	*out = dflt;
	if (!v)
		return 0;
	if (json_int64(v, lo, hi, &i) == 0) {
		*out = (long)i;
		return 0;
	}
	if (!isfinite(d) || d != floor(d))
		return error("plan: '%s' must be an integer", key);
	return error("plan: '%s' must be between %ld and %ld", key, lo, hi);
}

int
plan_parse(const char *text, size_t len, const char *name,
	   const char *models_dir, struct plan *p)
{
	static const char *const keys[] = {
		"name", "models", "targets", "variants", "llama_bench",
		"mlx_lm", "processes", "order", "seed", "timeout", "ablate",
		NULL,
	};
	struct json *root;
	const struct json *v;
	int64_t seed;
	long n;
	int ret = -1;

	memset(p, 0, sizeof(*p));
	root = json_parse(text, len, name);
	if (!root)
		return -1;
	if (only_keys(root, "plan", keys) < 0)
		goto cleanup;
	if (opt_str(root, "name", "plan", &p->name) < 0)
		goto cleanup;
	/* the generated variants are checked like the plan's own */
	if (ablate_expand(root) < 0)
		goto cleanup;
	if (load_models(p, json_get(root, "models"), models_dir) < 0 ||
	    load_targets(p, json_get(root, "targets")) < 0 ||
	    load_variants(p, json_get(root, "variants")) < 0 ||
	    load_llama_bench(p, json_get(root, "llama_bench")) < 0 ||
	    load_mlx(p, json_get(root, "mlx_lm")) < 0 ||
	    check_runtimes(p) < 0)
		goto cleanup;
	if (int_member(root, "processes", 1, 1000, 1, &n) < 0)
		goto cleanup;
	p->processes = (int)n;
	v = json_get(root, "order");
	p->interleaved = 1;
	if (v) {
		const char *order = json_str(v);

		if (!order || (strcmp(order, "interleaved") &&
			       strcmp(order, "grouped"))) {
			error("plan: 'order' must be \"interleaved\" or "
			      "\"grouped\"");
			goto cleanup;
		}
		p->interleaved = !strcmp(order, "interleaved");
	}
	v = json_get(root, "seed");
	if (v) {
		/* whole numbers a double holds exactly */
		if (json_int64(v, 0, 9007199254740992LL, &seed) < 0) {
			error("plan: 'seed' must be a non-negative integer");
			goto cleanup;
		}
		p->seed = (unsigned long long)seed;
		p->seed_given = 1;
	}
	v = json_get(root, "timeout");
	p->timeout = 1800;
	if (v) {
		if (!(isfinite(json_num(v)) && json_num(v) > 0)) {
			error("plan: 'timeout' must be a positive number of "
			      "seconds");
			goto cleanup;
		}
		p->timeout = json_num(v);
	}
	if (!p->name)
		p->name = xstrdup(name);
	p->json = json_print(root, 0);
	ret = 0;
cleanup:
	json_free(root);
	if (ret < 0)
		plan_free(p);
	return ret;
}

int
plan_load(const char *path, const char *models_dir, struct plan *p)
{
	struct buf b = BUF_INIT;
	int ret;

	memset(p, 0, sizeof(*p));
	if (buf_read_file(&b, path) < 0)
		return -1;
	ret = plan_parse(b.buf, b.len, path, models_dir, p);
	buf_release(&b);
	return ret;
}

void
plan_free(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->nmodels; i++) {
		free(p->models[i].name);
		free(p->models[i].label);
		free(p->models[i].path);
		free(p->models[i].sha256);
		free(p->models[i].runtime);
	}
	for (i = 0; i < p->ntargets; i++) {
		free(p->targets[i].name);
		free(p->targets[i].transport);
		free(p->targets[i].host);
		free(p->targets[i].user);
		free(p->targets[i].vm);
		free(p->targets[i].llama_bench);
		free(p->targets[i].mlx_lm);
		strv_free(p->targets[i].ssh_options);
	}
	for (i = 0; i < p->nvariants; i++) {
		struct plan_variant *v = &p->variants[i];
		free(v->name);
		free(v->target);
		free(v->role);
		strv_free(v->env_set);
		strv_free(v->env_unset);
		free(v->inject_lib);
		free(v->inject_sha256);
		free(v->runtime);
		strv_free(v->expect);
		strv_free(v->expect_mlx);
		strv_free(v->probe_argv);
		free(v->probe_expect);
	}
	free(p->models);
	free(p->targets);
	free(p->variants);
	strv_free(p->args);
	strv_free(p->mlx_command);
	strv_free(p->mlx_args);
	free(p->llama_bench);
	free(p->name);
	free(p->json);
	memset(p, 0, sizeof(*p));
}

const struct plan_target *
plan_target(const struct plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->ntargets; i++)
		if (!strcmp(p->targets[i].name, name))
			return &p->targets[i];
	return NULL;
}

int
plan_pin_inject(const char *path, const char *variant, const char *library,
		const char *sha256, const char *models_dir, char **old)
{
	struct buf text = BUF_INIT;
	struct json *root = NULL, *v = NULL, *inj;
	const struct json *it;
	struct plan check;
	char *out = NULL;
	int ret = -1;

	*old = NULL;
	if (!hash_is_sha256_hex(sha256))
		return error("'%s' is not a SHA-256", sha256);
	if (buf_read_file(&text, path) < 0)
		return -1;
	root = json_parse(text.buf, text.len, path);
	if (!root)
		goto cleanup;
	/* The tree is ours: its members may be edited in place. */
	JSON_FOR_EACH(it, json_get(root, "variants"))
		if (json_get_str(it, "name") &&
		    !strcmp(json_get_str(it, "name"), variant))
			v = (struct json *)it;
	if (!v) {
		error("plan '%s' has no variant '%s'", path, variant);
		goto cleanup;
	}
	inj = json_get_mut(v, "inject");
	if (!inj) {
		if (!library) {
			error("variant '%s' injects no library; give the path "
			      "the library has on the target", variant);
			goto cleanup;
		}
		json_set(v, "inject", json_new_object());
		inj = json_get_mut(v, "inject");
	}
	if (json_type(inj) != JSON_OBJECT) {
		error("plan '%s': variant '%s': 'inject' is not an object", path,
		      variant);
		goto cleanup;
	}
	if (json_get_str(inj, "sha256"))
		*old = xstrdup(json_get_str(inj, "sha256"));
	if (library)
		json_set_str(inj, "library", library);
	json_set_str(inj, "sha256", sha256);
	out = json_print(root, 1);
	buf_reset(&text);
	buf_adds(&text, out);
	buf_addch(&text, '\n');
	if (plan_parse(text.buf, text.len, path, models_dir, &check) < 0)
		goto cleanup;
	plan_free(&check);
	ret = write_file_atomic(path, text.buf, text.len);
cleanup:
	if (ret < 0) {
		free(*old);
		*old = NULL;
	}
	free(out);
	json_free(root);
	buf_release(&text);
	return ret;
}
