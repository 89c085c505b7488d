#define _POSIX_C_SOURCE 200809L
#include "evidence/modelverify.h"
#include "evidence/hashcache.h"
#include "evidence/store.h"
#include "models/gguf.h"
#include "models/manifest.h"
#include "base/util.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * The GGUF header of path against the manifest's llama-bench figures
 * (model_size, n_params); 0, or -1 after error() naming the file.
 */
static int
check_facts(const struct manifest_model *mm, const char *path)
{
	struct gguf_file g;
	int ret = 0;

	if (gguf_read(path, &g) < 0)
		return -1;
	if (mm->model_size >= 0 && g.model_size != (uint64_t)mm->model_size)
		ret = error("'%s' has model_size %" PRIu64 "; the manifest's "
			    "'%s' has %" PRId64, path, g.model_size, mm->name,
			    mm->model_size);
	else if (mm->n_params >= 0 && g.n_params != (uint64_t)mm->n_params)
		ret = error("'%s' has %" PRIu64 " parameters; the manifest's "
			    "'%s' has %" PRId64, path, g.n_params, mm->name,
			    mm->n_params);
	gguf_free(&g);
	return ret;
}

/*
 * Everything that needs no hashing: is the file there, its size, its
 * facts. Leaves c->state MODEL_OK when the SHA-256 is still to be
 * checked. named: the caller asked for this model by name.
 */
static void
check_unhashed(struct model_check *c, const char *dir, int named)
{
	const struct manifest_model *mm = c->model;
	struct stat st;

	c->path = manifest_model_path(mm, dir);
	c->state = MODEL_OK;
	if (stat(c->path, &st) < 0 || !S_ISREG(st.st_mode)) {
		c->state = named ? MODEL_MISSING : MODEL_ABSENT;
		if (named)
			error("model '%s': '%s' not found", mm->name, c->path);
		return;
	}
	if (mm->size >= 0 && (int64_t)st.st_size != mm->size) {
		error("'%s' is %jd bytes; the manifest's '%s' is %" PRId64,
		      c->path, (intmax_t)st.st_size, mm->name, mm->size);
		c->state = MODEL_MISMATCH;
		return;
	}
	if ((mm->model_size >= 0 || mm->n_params >= 0) &&
	    check_facts(mm, c->path) < 0) {
		c->state = MODEL_MISMATCH;
		return;
	}
	if (!mm->sha256)
		c->state = MODEL_FACTS_OK;
}

/* The selection: every model of m, or the named ones in their order. */
static int
select_models(const struct manifest *m, const char *const *names,
	      size_t nnames, struct model_checks *out)
{
	size_t i, n = nnames ? nnames : m->n;

	out->v = xcalloc(n ? n : 1, sizeof(*out->v));
	for (i = 0; i < n; i++) {
		const struct manifest_model *mm = nnames ?
			manifest_find(m, names[i]) : &m->models[i];

		if (!mm)
			return error("no model named '%s' in '%s'", names[i],
				     m->path);
		out->v[out->n++].model = mm;
	}
	return 0;
}

/*
 * Hashes the files of the checks still MODEL_OK (through the cache of
 * o->db_path) and compares each with its manifest entry. Returns the
 * number of failures.
 */
static size_t
check_hashes(struct model_checks *out, const struct model_verify_opts *o)
{
	struct hash_job *jobs = xcalloc(out->n ? out->n : 1, sizeof(*jobs));
	size_t *of = xcalloc(out->n ? out->n : 1, sizeof(*of));
	struct store *s = NULL;
	size_t nj = 0, i, bad = 0;

	for (i = 0; i < out->n; i++)
		if (out->v[i].state == MODEL_OK) {
			jobs[nj].path = out->v[i].path;
			of[nj++] = i;
		}
	if (nj && o->db_path && store_open(&s, o->db_path) < 0) {
		warning("hash cache unavailable; hashing without it");
		s = NULL;
	}
	if (nj && hash_files_cached(s, jobs, nj, o->rehash, 0,
				    o->progress) < 0)
		bad++;
	for (i = 0; i < nj; i++) {
		struct model_check *c = &out->v[of[i]];

		c->job = jobs[i];
		c->hashed = 1;
		if (!c->job.ok) {
			c->state = MODEL_UNREADABLE;   /* counted above */
		} else if (strcmp(c->job.hex, c->model->sha256)) {
			error("'%s' has SHA-256 %s; the manifest's '%s' has %s",
			      c->path, c->job.hex, c->model->name,
			      c->model->sha256);
			c->state = MODEL_MISMATCH;
			bad++;
		}
	}
	if (s)
		store_close(s);
	free(jobs);
	free(of);
	return bad;
}

int
model_verify(const struct manifest *m, const char *const *names,
	     size_t nnames, const struct model_verify_opts *o,
	     struct model_checks *out)
{
	size_t i, bad = 0;

	memset(out, 0, sizeof(*out));
	if (select_models(m, names, nnames, out) < 0)
		return MODEL_VERIFY_UNKNOWN;
	for (i = 0; i < out->n; i++) {
		check_unhashed(&out->v[i], o->dir, nnames > 0);
		if (out->v[i].state == MODEL_MISSING ||
		    out->v[i].state == MODEL_MISMATCH)
			bad++;
	}
	bad += check_hashes(out, o);
	return bad ? MODEL_VERIFY_FAILED : 0;
}

void
model_checks_release(struct model_checks *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (c->v[i].hashed)
			hash_jobs_release(&c->v[i].job, 1);
		free(c->v[i].path);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}
