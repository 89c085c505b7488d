#define _POSIX_C_SOURCE 200809L
#include "evidence/bundle.h"
#include "evidence/caps.h"
#include "evidence/fingerprint.h"
#include "models/hash.h"
#include "evidence/llamabench.h"
#include "evidence/mlxlm.h"
#include "analysis/report.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct in_model {
	char *name, *label, *sha256, *file, *facts_json;
	int64_t size;
};

struct in_env {
	char *target;
	char *fingerprint_json;
};

struct in_run {
	int seq;
	char *target, *variant, *role, *model, *runtime;
	char *argv_json, *env_json, *expect_json;
	char *stdout_name, *stderr_name;
	char stdout_sha[65], stderr_sha[65];
	struct buf out, err;
	struct lb_output lb;
	char *caps_json;
	char *status, *verification, *error;
	struct buf vdetail;
	int exit_code, signal, timed_out;
	double wall_s;
};

struct sum_entry {
	char *name;
	char expected[65];
	char actual[65];
};

struct ingest {
	char *dir;
	char *label;
	char *started_at;
	char *status;
	char *plan_json;
	struct buf warnings;   /* JSON array text */
	int tampered;
	char content_hash[65];
	struct in_model *models;
	size_t nmodels;
	struct in_env *envs;
	size_t nenvs;
	struct in_run *runs;
	size_t nruns;
	struct sum_entry *sums;
	size_t nsums;
};

static void
warn_add(struct ingest *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
warn_add(struct ingest *in, const char *fmt, ...)
{
	struct buf msg = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	warning("%s", msg.buf);
	buf_setlen(&in->warnings, in->warnings.len - 1);   /* drop ']' */
	if (in->warnings.len > 1)
		buf_addch(&in->warnings, ',');
	buf_add_json_str(&in->warnings, msg.buf);
	buf_addch(&in->warnings, ']');
	buf_release(&msg);
}

/* A bundle-relative name must stay inside the bundle. */
static int
safe_name(const char *name)
{
	const char *p;

	if (!*name || name[0] == '/' || strlen(name) > 4096)
		return 0;
	for (p = name; *p; p++)
		if ((unsigned char)*p < 0x20)
			return 0;
	for (p = name; p; p = strchr(p, '/')) {
		if (*p == '/')
			p++;
		if (!strncmp(p, "..", 2) && (p[2] == '/' || p[2] == '\0'))
			return 0;
	}
	return 1;
}

static char *
path_in(const struct ingest *in, const char *name)
{
	return xstrfmt("%s/%s", in->dir, name);
}

static struct sum_entry *
find_sum(struct ingest *in, const char *name)
{
	size_t i;

	for (i = 0; i < in->nsums; i++)
		if (!strcmp(in->sums[i].name, name))
			return &in->sums[i];
	return NULL;
}

/*
 * Reads DIR/SHA256SUMS ("HEX  NAME" or "HEX *NAME" lines) and hashes
 * every file it names. Returns 0, -1 for bad input, -2 for a mismatch
 * (reported; with allow_tampered a warning and in->tampered instead).
 */
static int
verify_sums(struct ingest *in, int allow_tampered)
{
	struct buf text = BUF_INIT;
	char *path = path_in(in, "SHA256SUMS"), *line, *save = NULL;
	int ret = 0, lineno = 0;
	size_t i;

	if (!file_exists(path)) {
		ret = error("'%s' has no SHA256SUMS; refusing to import "
			    "unverifiable evidence", in->dir);
		goto cleanup;
	}
	if (buf_read_file(&text, path) < 0) {
		ret = -1;
		goto cleanup;
	}
	for (line = strtok_r(text.buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *name;
		struct sum_entry *e;

		lineno++;
		if (strlen(line) > 0 && line[strlen(line) - 1] == '\r')
			line[strlen(line) - 1] = '\0';
		if (!*line)
			continue;
		if (strlen(line) < 67 || line[64] != ' ' ||
		    (line[65] != ' ' && line[65] != '*')) {
			ret = error("'%s' line %d: not 'SHA256  NAME'", path,
				    lineno);
			goto cleanup;
		}
		line[64] = '\0';
		name = line + 66;
		if (!hash_is_sha256_hex(line) || !safe_name(name)) {
			ret = error("'%s' line %d: bad checksum or file name",
				    path, lineno);
			goto cleanup;
		}
		if (find_sum(in, name)) {
			ret = error("'%s' line %d: '%s' listed twice", path,
				    lineno, name);
			goto cleanup;
		}
		in->sums = xrealloc(in->sums, (in->nsums + 1) * sizeof(*e));
		e = &in->sums[in->nsums++];
		memset(e, 0, sizeof(*e));
		e->name = xstrdup(name);
		for (i = 0; i < 64; i++)
			e->expected[i] = (char)(line[i] | 0x20);
	}
	for (i = 0; i < in->nsums; i++) {
		struct sum_entry *e = &in->sums[i];
		char *f = path_in(in, e->name);
		int rc = hash_file_sha256(f, e->actual);

		free(f);
		if (rc < 0) {
			if (!allow_tampered) {
				ret = error("'%s/%s' is listed in SHA256SUMS "
					    "but cannot be read", in->dir,
					    e->name);
				goto cleanup;
			}
			memcpy(e->actual, "missing", 8);
		}
		if (strcmp(e->actual, e->expected)) {
			if (!allow_tampered) {
				ret = error("'%s/%s': SHA-256 mismatch "
					    "(SHA256SUMS says %s, file has %s); "
					    "refusing the import", in->dir,
					    e->name, e->expected, e->actual);
				ret = -2;
				goto cleanup;
			}
			in->tampered = 1;
			warn_add(in, "'%s/%s': SHA-256 mismatch, imported "
				 "because of --allow-tampered", in->dir,
				 e->name);
		}
	}
cleanup:
	free(path);
	buf_release(&text);
	return ret;
}

/*
 * Reads a file the bundle refers to; it must be covered by SHA256SUMS
 * (else -2, or a warning with allow_tampered).
 */
static int
read_member(struct ingest *in, const char *name, struct buf *out,
	    char sha[65], int allow_tampered)
{
	struct sum_entry *e;
	char *path;
	int ret;

	if (!safe_name(name))
		return error("'%s': bad file name '%s'", in->dir, name);
	e = find_sum(in, name);
	if (!e) {
		if (!allow_tampered) {
			error("'%s/%s' is not covered by SHA256SUMS; refusing "
			      "the import", in->dir, name);
			return -2;
		}
		in->tampered = 1;
		warn_add(in, "'%s/%s' is not covered by SHA256SUMS", in->dir,
			 name);
	}
	path = path_in(in, name);
	ret = buf_read_file(out, path);
	free(path);
	if (ret == 0)
		hash_buf_sha256(out->buf, out->len, sha);
	return ret;
}

static const char *
jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static char *
jdup(const cJSON *o, const char *key, const char *dflt)
{
	const char *v = jstr(o, key);

	return v ? xstrdup(v) : dflt ? xstrdup(dflt) : NULL;
}

static char *
jprint(const cJSON *v)
{
	char *t, *r;

	if (!v)
		return NULL;
	t = cJSON_PrintUnformatted(v);
	if (!t)
		die("out of memory printing JSON");
	r = xstrdup(t);
	cJSON_free(t);
	return r;
}

static int
check_type(const cJSON *o, const char *key, int (*is)(const cJSON *const),
	   const char *what, const char *where)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (v && !cJSON_IsNull(v) && !is(v))
		return error("%s: '%s' must be %s", where, key, what);
	return 0;
}

static int
load_models(struct ingest *in, const cJSON *models, const char *where)
{
	const cJSON *m;

	if (!models)
		return 0;
	if (!cJSON_IsObject(models))
		return error("%s: 'models' must be an object", where);
	cJSON_ArrayForEach(m, models) {
		struct in_model *im;
		const cJSON *size;

		if (!cJSON_IsObject(m))
			return error("%s: models.%s must be an object", where,
				     m->string);
		in->models = xrealloc(in->models,
				      (in->nmodels + 1) * sizeof(*im));
		im = &in->models[in->nmodels++];
		memset(im, 0, sizeof(*im));
		im->name = xstrdup(m->string);
		im->label = jdup(m, "label", m->string);
		im->sha256 = jdup(m, "sha256", NULL);
		im->file = jdup(m, "file", NULL);
		im->facts_json = jprint(cJSON_GetObjectItemCaseSensitive(m,
								     "facts"));
		size = cJSON_GetObjectItemCaseSensitive(m, "size");
		im->size = cJSON_IsNumber(size) ? (int64_t)size->valuedouble : -1;
		if (im->sha256 && !hash_is_sha256_hex(im->sha256))
			return error("%s: models.%s.sha256 is not a SHA-256",
				     where, m->string);
	}
	return 0;
}

static int
load_envs(struct ingest *in, const cJSON *envs, const char *where)
{
	const cJSON *e;

	if (!envs)
		return 0;
	if (!cJSON_IsObject(envs))
		return error("%s: 'environments' must be an object keyed by "
			     "target", where);
	cJSON_ArrayForEach(e, envs) {
		struct in_env *ie;

		if (!cJSON_IsObject(e))
			return error("%s: environments.%s must be an object",
				     where, e->string);
		in->envs = xrealloc(in->envs, (in->nenvs + 1) * sizeof(*ie));
		ie = &in->envs[in->nenvs++];
		ie->target = xstrdup(e->string);
		ie->fingerprint_json = jprint(e);
	}
	return 0;
}

static const struct in_model *
find_model(const struct ingest *in, const char *name)
{
	size_t i;

	for (i = 0; name && i < in->nmodels; i++)
		if (!strcmp(in->models[i].name, name))
			return &in->models[i];
	return NULL;
}

/* Expected markers of a run: strings of its "expect" array. */
static int
load_expect(const cJSON *r, const char ***out, size_t *n, const char *where)
{
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(r, "expect"), *m;

	*out = NULL;
	*n = 0;
	if (!ex || cJSON_IsNull(ex))
		return 0;
	if (!cJSON_IsArray(ex))
		return error("%s: 'expect' must be an array of strings", where);
	cJSON_ArrayForEach(m, ex) {
		if (!cJSON_IsString(m)) {
			free(*out);
			*out = NULL;
			return error("%s: 'expect' must be an array of "
				     "strings", where);
		}
		*out = xrealloc(*out, (*n + 1) * sizeof(char *));
		(*out)[(*n)++] = m->valuestring;
	}
	return 0;
}

static const char *const run_keys[] = {
	"seq", "target", "variant", "role", "model", "runtime", "argv", "env",
	"stdout", "stderr", "expect", "status", "exit_code", "signal",
	"timed_out", "wall_s", "verification", "verification_detail",
	"error", "model_label", "model_sha256",
};

static int
load_run(struct ingest *in, const cJSON *r, size_t idx, int allow_tampered)
{
	struct in_run *ir;
	const char **expect = NULL;
	const cJSON *v;
	char where[64];
	size_t nexpect, k;
	int rc;

	snprintf(where, sizeof(where), "runs[%zu]", idx);
	if (!cJSON_IsObject(r))
		return error("%s: not an object", where);
	cJSON_ArrayForEach(v, r) {
		for (k = 0; k < ARRAY_SIZE(run_keys); k++)
			if (!strcmp(v->string, run_keys[k]))
				break;
		if (k == ARRAY_SIZE(run_keys))
			return error("%s: unknown key '%s'", where, v->string);
	}
	if (!jstr(r, "stdout") || !jstr(r, "variant"))
		return error("%s: 'stdout' and 'variant' are required strings",
			     where);
	if (check_type(r, "argv", cJSON_IsArray, "an array", where) < 0 ||
	    check_type(r, "env", cJSON_IsObject, "an object", where) < 0 ||
	    check_type(r, "stderr", cJSON_IsString, "a string", where) < 0 ||
	    check_type(r, "model", cJSON_IsString, "a string", where) < 0 ||
	    check_type(r, "role", cJSON_IsString, "a string", where) < 0)
		return -1;
	if (load_expect(r, &expect, &nexpect, where) < 0)
		return -1;
	in->runs = xrealloc(in->runs, (in->nruns + 1) * sizeof(*ir));
	ir = &in->runs[in->nruns++];
	memset(ir, 0, sizeof(*ir));
	buf_init(&ir->out, 0);
	buf_init(&ir->err, 0);
	buf_init(&ir->vdetail, 0);
	v = cJSON_GetObjectItemCaseSensitive(r, "seq");
	ir->seq = cJSON_IsNumber(v) ? v->valueint : (int)idx + 1;
	ir->target = jdup(r, "target", "local");
	ir->variant = jdup(r, "variant", NULL);
	ir->role = jdup(r, "role", "other");
	ir->model = jdup(r, "model", NULL);
	ir->runtime = jdup(r, "runtime", "llama.cpp");
	ir->argv_json = jprint(cJSON_GetObjectItemCaseSensitive(r, "argv"));
	ir->env_json = jprint(cJSON_GetObjectItemCaseSensitive(r, "env"));
	if (nexpect)
		ir->expect_json = jprint(cJSON_GetObjectItemCaseSensitive(r,
								  "expect"));
	ir->stdout_name = jdup(r, "stdout", NULL);
	ir->stderr_name = jdup(r, "stderr", NULL);
	ir->error = jdup(r, "error", NULL);
	v = cJSON_GetObjectItemCaseSensitive(r, "exit_code");
	ir->exit_code = cJSON_IsNumber(v) ? v->valueint : -1;
	v = cJSON_GetObjectItemCaseSensitive(r, "signal");
	ir->signal = cJSON_IsNumber(v) ? v->valueint : 0;
	ir->timed_out = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r,
							      "timed_out"));
	v = cJSON_GetObjectItemCaseSensitive(r, "wall_s");
	ir->wall_s = cJSON_IsNumber(v) ? v->valuedouble : 0;
	if (ir->model && in->nmodels && !find_model(in, ir->model)) {
		free(expect);
		return error("%s: model '%s' is not in 'models'", where,
			     ir->model);
	}

	rc = read_member(in, ir->stdout_name, &ir->out, ir->stdout_sha,
			 allow_tampered);
	if (rc == 0 && ir->stderr_name)
		rc = read_member(in, ir->stderr_name, &ir->err, ir->stderr_sha,
				 allow_tampered);
	if (rc < 0) {
		free(expect);
		return rc;
	}
	if ((!strcmp(ir->runtime, "mlx-lm") ?
	     mlx_parse(ir->out.buf, ir->out.len, ir->stdout_name, &ir->lb) :
	     lb_parse(ir->out.buf, ir->out.len, ir->stdout_name, &ir->lb)) < 0) {
		free(expect);
		return -1;
	}
	ir->caps_json = caps_parse(ir->err.buf, ir->err.len);

	/* A recorded failure stays; a truncated output is incomplete. */
	ir->status = jdup(r, "status", "ok");
	if (!strcmp(ir->status, "ok") && ir->lb.incomplete) {
		free(ir->status);
		ir->status = xstrdup("incomplete");
	}
	if (nexpect) {
		int ok = caps_verify(ir->err.buf, ir->err.len, expect, nexpect,
				     &ir->vdetail);
		const char *was = jstr(r, "verification");

		ir->verification = xstrdup(ok ? "verified" : "unverified");
		if (ok) {
			buf_adds(&ir->vdetail, "found");
			for (k = 0; k < nexpect; k++)
				buf_addf(&ir->vdetail, "%s'%s'", k ? ", " : " ",
					 expect[k]);
		}
		/*
		 * A run recorded as unverified for a reason the raw files do
		 * not hold (a failed capability probe) is never upgraded.
		 */
		if (ok && was && !strcmp(was, "unverified")) {
			free(ir->verification);
			ir->verification = xstrdup("unverified");
			buf_addf(&ir->vdetail, "; recorded as unverified: %s",
				 jstr(r, "verification_detail") ?
				 jstr(r, "verification_detail") : "no reason");
		}
	} else {
		ir->verification = jdup(r, "verification", "not-required");
		if (jstr(r, "verification_detail"))
			buf_adds(&ir->vdetail, jstr(r, "verification_detail"));
	}
	free(expect);
	return 0;
}

static const char *const top_keys[] = {
	"shimbench_mapping", "shimbench_bundle", "label", "session",
	"environments", "models", "runs",
};

static int
load_json(struct ingest *in, const struct buf *text, const char *name,
	  int is_bundle, int allow_tampered)
{
	cJSON *root = cJSON_ParseWithLength(text->buf, text->len);
	const cJSON *runs, *session, *v, *r;
	size_t idx = 0, k;
	int ret = -1;

	if (!root) {
		error("'%s': not valid JSON (near byte %ld)", name,
		      (long)(cJSON_GetErrorPtr() ?
			     cJSON_GetErrorPtr() - text->buf : 0));
		goto cleanup;
	}
	if (!cJSON_IsObject(root)) {
		error("'%s': must be a JSON object", name);
		goto cleanup;
	}
	cJSON_ArrayForEach(v, root) {
		for (k = 0; k < ARRAY_SIZE(top_keys); k++)
			if (!strcmp(v->string, top_keys[k]))
				break;
		if (k == ARRAY_SIZE(top_keys)) {
			error("'%s': unknown key '%s'", name, v->string);
			goto cleanup;
		}
	}
	v = cJSON_GetObjectItemCaseSensitive(root, is_bundle ?
					     "shimbench_bundle" :
					     "shimbench_mapping");
	if (!cJSON_IsNumber(v) || v->valueint != 1) {
		error("'%s': expected \"%s\": 1", name, is_bundle ?
		      "shimbench_bundle" : "shimbench_mapping");
		goto cleanup;
	}
	if (jstr(root, "label"))
		in->label = xstrdup(jstr(root, "label"));
	session = cJSON_GetObjectItemCaseSensitive(root, "session");
	if (session) {
		if (!cJSON_IsObject(session)) {
			error("'%s': 'session' must be an object", name);
			goto cleanup;
		}
		in->started_at = jdup(session, "started_at", NULL);
		in->status = jdup(session, "status", NULL);
		in->plan_json = jprint(cJSON_GetObjectItemCaseSensitive(session,
									"plan"));
		if (!in->label)
			in->label = jdup(session, "label", NULL);
		v = cJSON_GetObjectItemCaseSensitive(session, "warnings");
		if (cJSON_IsArray(v)) {
			const cJSON *w;
			cJSON_ArrayForEach(w, v)
				if (cJSON_IsString(w))
					warn_add(in, "%s", w->valuestring);
		}
	}
	if (load_envs(in, cJSON_GetObjectItemCaseSensitive(root,
							  "environments"),
		      name) < 0 ||
	    load_models(in, cJSON_GetObjectItemCaseSensitive(root, "models"),
			name) < 0)
		goto cleanup;
	runs = cJSON_GetObjectItemCaseSensitive(root, "runs");
	if (!cJSON_IsArray(runs) || cJSON_GetArraySize(runs) == 0) {
		error("'%s': 'runs' must be a non-empty array", name);
		goto cleanup;
	}
	cJSON_ArrayForEach(r, runs) {
		int rc = load_run(in, r, idx++, allow_tampered);
		if (rc < 0) {
			ret = rc;
			goto cleanup;
		}
	}
	ret = 0;
cleanup:
	cJSON_Delete(root);
	return ret;
}

static int
cmp_sum(const void *a, const void *b)
{
	return strcmp(((const struct sum_entry *)a)->name,
		      ((const struct sum_entry *)b)->name);
}

int
bundle_load(const char *dir, const char *mapping, int allow_tampered,
	    struct ingest **out)
{
	struct ingest *in = xcalloc(1, sizeof(*in));
	struct buf text = BUF_INIT, content = BUF_INIT;
	char sha[65];
	size_t i;
	int rc;

	*out = NULL;
	in->dir = xstrdup(dir);
	buf_init(&in->warnings, 0);
	buf_adds(&in->warnings, "[]");
	if (!dir_exists(dir)) {
		rc = error("'%s' is not a directory", dir);
		goto fail;
	}
	rc = verify_sums(in, allow_tampered);
	if (rc < 0)
		goto fail;
	if (mapping) {
		rc = buf_read_file(&text, mapping);
		if (rc == 0)
			rc = load_json(in, &text, mapping, 0, allow_tampered);
		buf_adds(&content, "mapping\n");
		buf_add(&content, text.buf, text.len);
	} else {
		char *bj = path_in(in, "bundle.json");
		if (!file_exists(bj)) {
			free(bj);
			rc = error("'%s' has no bundle.json; for raw "
				   "llama-bench files give --mapping FILE",
				   dir);
			goto fail;
		}
		free(bj);
		rc = read_member(in, "bundle.json", &text, sha, allow_tampered);
		if (rc == 0)
			rc = load_json(in, &text, "bundle.json", 1,
				       allow_tampered);
	}
	if (rc < 0)
		goto fail;
	/* Identity of the content: what the files really hold. */
	qsort(in->sums, in->nsums, sizeof(*in->sums), cmp_sum);
	for (i = 0; i < in->nsums; i++)
		buf_addf(&content, "%s  %s\n", in->sums[i].actual,
			 in->sums[i].name);
	for (i = 0; i < in->nruns; i++)
		buf_addf(&content, "run %s %s\n", in->runs[i].stdout_sha,
			 in->runs[i].stderr_name ? in->runs[i].stderr_sha : "");
	hash_buf_sha256(content.buf, content.len, in->content_hash);
	buf_release(&text);
	buf_release(&content);
	*out = in;
	return 0;
fail:
	buf_release(&text);
	buf_release(&content);
	bundle_free(in);
	return rc;
}

void
bundle_free(struct ingest *in)
{
	size_t i;

	if (!in)
		return;
	for (i = 0; i < in->nruns; i++) {
		struct in_run *r = &in->runs[i];
		free(r->target);
		free(r->variant);
		free(r->role);
		free(r->model);
		free(r->runtime);
		free(r->argv_json);
		free(r->env_json);
		free(r->expect_json);
		free(r->stdout_name);
		free(r->stderr_name);
		buf_release(&r->out);
		buf_release(&r->err);
		lb_output_release(&r->lb);
		free(r->caps_json);
		free(r->status);
		free(r->verification);
		free(r->error);
		buf_release(&r->vdetail);
	}
	for (i = 0; i < in->nmodels; i++) {
		free(in->models[i].name);
		free(in->models[i].label);
		free(in->models[i].sha256);
		free(in->models[i].file);
		free(in->models[i].facts_json);
	}
	for (i = 0; i < in->nenvs; i++) {
		free(in->envs[i].target);
		free(in->envs[i].fingerprint_json);
	}
	for (i = 0; i < in->nsums; i++)
		free(in->sums[i].name);
	free(in->sums);
	free(in->runs);
	free(in->models);
	free(in->envs);
	free(in->dir);
	free(in->label);
	free(in->started_at);
	free(in->status);
	free(in->plan_json);
	buf_release(&in->warnings);
	free(in);
}

void
bundle_counts(const struct ingest *in, int *runs, int *results, int *samples,
	      int *unverified)
{
	size_t i, j;

	*runs = (int)in->nruns;
	*results = *samples = *unverified = 0;
	for (i = 0; i < in->nruns; i++) {
		*results += (int)in->runs[i].lb.n;
		for (j = 0; j < in->runs[i].lb.n; j++)
			*samples += (int)in->runs[i].lb.rows[j].n_samples;
		*unverified += !strcmp(in->runs[i].verification, "unverified");
	}
}

int
bundle_tampered(const struct ingest *in)
{
	return in->tampered;
}

/* Stored texts are capped; the bundle files keep everything. */
#define TEXT_CAP (8u << 20)

static char *
capped(const struct buf *b)
{
	return xstrndup(b->buf, b->len < TEXT_CAP ? b->len : TEXT_CAP);
}

int
bundle_store(const struct ingest *in, struct store *s, const char *label,
	     int64_t *session_id, int *already)
{
	struct session_rec sr = { 0 };
	int64_t sid, *env_ids = NULL, *model_ids = NULL;
	char now[21];
	size_t i, j;
	int rc, ret = -1;

	*already = 0;
	rc = store_session_find_hash(s, in->content_hash, session_id);
	if (rc != 0) {
		*already = rc == 1;
		return rc == 1 ? 0 : -1;
	}
	utc_now(now);
	sr.kind = "import";
	sr.started_at = in->started_at ? in->started_at : now;
	sr.status = "importing";
	sr.source = in->dir;
	sr.content_hash = in->content_hash;
	sr.tampered = in->tampered;
	sr.plan_json = in->plan_json;
	sr.warnings_json = in->warnings.len > 2 ? in->warnings.buf : NULL;
	sr.label = label ? label : in->label;

	/* Session, environments and artifacts: one transaction. */
	if (store_begin(s) < 0)
		return -1;
	env_ids = xcalloc(in->nenvs + 1, sizeof(int64_t));
	model_ids = xcalloc(in->nmodels + 1, sizeof(int64_t));
	if (store_session_add(s, &sr, &sid) < 0)
		goto fail;
	for (i = 0; i < in->nenvs; i++) {
		char id[65], base[65];
		if (fingerprint_identity(in->envs[i].fingerprint_json, id,
					 base) < 0 ||
		    store_environment_add(s, sid, in->envs[i].target,
					  in->envs[i].fingerprint_json, id,
					  base, &env_ids[i]) < 0)
			goto fail;
	}
	for (i = 0; i < in->nmodels; i++) {
		const struct in_model *m = &in->models[i];
		if (m->sha256 &&
		    store_artifact_add(s, m->sha256, "model", m->file, m->size,
				       m->facts_json, &model_ids[i]) < 0)
			goto fail;
	}
	if (store_commit(s) < 0)
		goto out;

	/* One transaction per run. */
	for (i = 0; i < in->nruns; i++) {
		const struct in_run *r = &in->runs[i];
		const struct in_model *m = find_model(in, r->model);
		struct run_rec rr = { 0 };
		char *out_text = capped(&r->out), *err_text = capped(&r->err);
		int64_t run_id;

		rr.session_id = sid;
		for (j = 0; j < in->nenvs; j++)
			if (!strcmp(in->envs[j].target, r->target))
				rr.environment_id = env_ids[j];
		if (m)
			rr.artifact_id = model_ids[m - in->models];
		rr.target = r->target;
		rr.variant = r->variant;
		rr.role = r->role;
		rr.model = r->model;
		rr.model_label = m ? m->label : r->model;
		rr.runtime = r->runtime;
		rr.seq = r->seq;
		rr.argv_json = r->argv_json;
		rr.env_json = r->env_json;
		rr.status = r->status;
		rr.exit_code = r->exit_code;
		rr.signal = r->signal;
		rr.timed_out = r->timed_out;
		rr.wall_s = r->wall_s;
		rr.stdout_path = r->stdout_name;
		rr.stderr_path = r->stderr_name;
		rr.stdout_sha256 = r->stdout_sha;
		rr.stderr_sha256 = r->stderr_name ? r->stderr_sha : NULL;
		rr.stdout_text = out_text;
		rr.stderr_text = r->stderr_name ? err_text : NULL;
		rr.capabilities_json = r->caps_json;
		rr.expect_json = r->expect_json;
		rr.verification = r->verification;
		rr.verification_detail = r->vdetail.len ? r->vdetail.buf : NULL;
		rr.error = r->error;
		rc = store_begin(s);
		if (rc == 0)
			rc = store_run_add(s, &rr, &run_id);
		for (j = 0; rc == 0 && j < r->lb.n; j++)
			rc = store_result_add(s, run_id, (int)j, &r->lb.rows[j],
					      NULL);
		free(out_text);
		free(err_text);
		if (rc < 0 || store_commit(s) < 0) {
			store_rollback(s);
			store_session_finish(s, sid, "failed");
			goto out;
		}
	}
	if (store_session_finish(s, sid, "ok") < 0)
		goto out;
	*session_id = sid;
	ret = 0;
	goto out;
fail:
	store_rollback(s);
out:
	free(env_ids);
	free(model_ids);
	return ret;
}

struct export_ctx {
	const char *dir;
	struct buf sums;
	int failed;
};

/*
 * Writes one raw file of the session. A file already in the directory
 * with the recorded SHA-256 (the run engine streamed it there) is kept;
 * otherwise the stored text is written when it is complete.
 */
static int
export_file(void *vctx, const char *name, const char *sha, const char *text,
	    size_t len)
{
	struct export_ctx *ctx = vctx;
	char have[65], *path, *slash;
	int ret = 0;

	if (!safe_name(name))
		return error("stored file name '%s' is not safe to export",
			     name);
	path = xstrfmt("%s/%s", ctx->dir, name);
	slash = strrchr(path, '/');
	*slash = '\0';
	if (mkdir_p(path) < 0) {
		free(path);
		return -1;
	}
	*slash = '/';
	if (file_exists(path) && hash_file_sha256(path, have) == 0 &&
	    !strcmp(have, sha))
		goto done;
	hash_buf_sha256(text, len, have);
	if (*sha && strcmp(have, sha)) {
		warning("'%s': the stored copy is truncated; the bundle holds "
			"what the store has", name);
	}
	ret = write_file_atomic(path, text, len);
done:
	free(path);
	return ret;
}

static int
add_sum(struct export_ctx *ctx, const char *name)
{
	char sha[65], *path = xstrfmt("%s/%s", ctx->dir, name);
	int ret = hash_file_sha256(path, sha);

	free(path);
	if (ret == 0)
		buf_addf(&ctx->sums, "%s  %s\n", sha, name);
	return ret;
}

static int
sum_file(void *vctx, const char *name, const char *sha, const char *text,
	 size_t len)
{
	(void)sha;
	(void)text;
	(void)len;
	return add_sum(vctx, name);
}

int
bundle_export(struct store *s, int64_t session_id, const char *dir)
{
	struct export_ctx ctx = { dir, BUF_INIT, 0 };
	struct buf json = BUF_INIT, text = BUF_INIT, readme = BUF_INIT;
	struct selection sel = { 0 };
	struct report rep = { 0 };
	cJSON *root = NULL;
	char *pretty = NULL, *path = NULL, sid[32];
	int ret = -1;

	if (mkdir_p(dir) < 0)
		return -1;
	if (store_session_bundle_json(s, session_id, &json) < 0)
		goto cleanup;
	root = cJSON_Parse(json.buf);
	pretty = root ? cJSON_Print(root) : NULL;
	if (!pretty) {
		error("cannot format bundle.json for session %lld",
		      (long long)session_id);
		goto cleanup;
	}
	if (store_session_files(s, session_id, export_file, &ctx) != 0)
		goto cleanup;
	buf_adds(&text, pretty);
	buf_addch(&text, '\n');
	path = xstrfmt("%s/bundle.json", dir);
	if (write_file_atomic(path, text.buf, text.len) < 0)
		goto cleanup;

	snprintf(sid, sizeof(sid), "session=%lld", (long long)session_id);
	if (selection_parse(sid, &sel) < 0 || report_build(s, &sel, &rep) < 0)
		goto cleanup;
	buf_reset(&text);
	report_render(&rep, "csv", &text);
	free(path);
	path = xstrfmt("%s/results.csv", dir);
	if (write_file_atomic(path, text.buf, text.len) < 0)
		goto cleanup;
	buf_addf(&readme, "# shimbench evidence bundle: session %lld\n\n",
		 (long long)session_id);
	buf_adds(&readme, "Raw llama-bench output (jsonl) and stderr per "
		 "process, bundle.json (plan, fingerprints, artifacts, runs), "
		 "results.csv; SHA256SUMS covers every other file. Import "
		 "with `shimbench import DIR`.\n\n");
	report_render(&rep, "md", &readme);
	free(path);
	path = xstrfmt("%s/README.md", dir);
	if (write_file_atomic(path, readme.buf, readme.len) < 0)
		goto cleanup;

	if (add_sum(&ctx, "README.md") < 0 || add_sum(&ctx, "bundle.json") < 0 ||
	    add_sum(&ctx, "results.csv") < 0 ||
	    store_session_files(s, session_id, sum_file, &ctx) != 0)
		goto cleanup;
	free(path);
	path = xstrfmt("%s/SHA256SUMS", dir);
	if (write_file_atomic(path, ctx.sums.buf, ctx.sums.len) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	free(path);
	cJSON_free(pretty);
	cJSON_Delete(root);
	buf_release(&json);
	buf_release(&text);
	buf_release(&readme);
	buf_release(&ctx.sums);
	report_release(&rep);
	selection_free(&sel);
	return ret;
}
