/*
 * Writing a session as an evidence bundle: raw files from the stored
 * copies, bundle.json, results.csv, README.md and SHA256SUMS last.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/bundle.h"
#include "evidence/runrec.h"
#include "models/hash.h"
#include "base/json.h"
#include "base/files.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- writing ---------------------------------------------------------------- */

struct written {
	char *name;
	char sha[65];
};

struct writer {
	const char *dir;
	unsigned flags;
	struct written *w;
	size_t n;
};

static const struct written *
find_written(const struct writer *wr, const char *name)
{
	size_t i;

	for (i = 0; i < wr->n; i++)
		if (!strcmp(wr->w[i].name, name))
			return &wr->w[i];
	return NULL;
}

/*
 * Writes one member (through a temporary file and rename), unless the
 * same bytes are already there. want_sha, when set, is the SHA-256 the
 * data must have: a stored copy that does not match is never written.
 */
static int
write_member(struct writer *wr, const char *name, const char *data,
	     size_t len, const char *want_sha)
{
	const struct written *prev = find_written(wr, name);
	char sha[65], have[65], *path, *slash;
	struct stat st;
	int ret = -1;

	if (!bundle_safe_name(name))
		return error("file name '%s' is not safe to write into a bundle",
			     name);
	hash_buf_sha256(data, len, sha);
	if (want_sha && strcasecmp(want_sha, sha))
		return error("the stored copy of '%s' (%zu bytes) does not match "
			     "its recorded SHA-256 %s; refusing to write a "
			     "truncated or altered file", name, len, want_sha);
	if (prev) {
		if (strcmp(prev->sha, sha))
			return error("two different files would be '%s'", name);
		return 0;
	}
	path = xstrfmt("%s/%s", wr->dir, name);
	slash = strrchr(path, '/');
	*slash = '\0';
	if (mkdir_p(path) < 0)
		goto cleanup;
	*slash = '/';
	/* A bundle holds regular files only: never write through a link
	 * (out of the directory) or into a FIFO or device (--force). */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		error("'%s' is %s; a bundle holds regular files only", path,
		      S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
		goto cleanup;
	}
	if (!(file_exists(path) && hash_file_sha256(path, have) == 0 &&
	      !strcmp(have, sha)) &&
	    write_file_atomic(path, data, len) < 0)
		goto cleanup;
	wr->w = xrealloc(wr->w, (wr->n + 1) * sizeof(*wr->w));
	wr->w[wr->n].name = xstrdup(name);
	memcpy(wr->w[wr->n].sha, sha, 65);
	wr->n++;
	ret = 0;
cleanup:
	free(path);
	return ret;
}

static int
write_raw(struct writer *wr, const char *name, const struct rec_blob *b,
	  const char *sha)
{
	if (!name)
		return 0;
	if (!b->p)
		return error("the store has no copy of '%s'; cannot write it",
			     name);
	return write_member(wr, name, b->p, b->n, sha);
}

/* 1 when name is one of the session's raw files. */
static int
is_run_file(const struct session_data *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nruns; i++) {
		const struct run_rec *r = &d->runs[i].r;
		if ((r->stdout_path && !strcmp(r->stdout_path, name)) ||
		    (r->stderr_path && !strcmp(r->stderr_path, name)) ||
		    (r->probe_path && !strcmp(r->probe_path, name)))
			return 1;
	}
	return 0;
}

/*
 * A bundle goes into a new or empty directory, or (KEEP_RUN_FILES) one
 * that holds only this session's raw files under runs/.
 */
static int
check_target(const char *dir, const struct session_data *d, unsigned flags)
{
	DIR *dh = opendir(dir), *rh;
	struct dirent *e;
	char *runs, *name;
	int ret = 0;

	if (!dh)
		return errno == ENOENT ? 0 :
			error("cannot open '%s': %s", dir, strerror(errno));
	while (ret == 0 && (e = readdir(dh))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (flags & BUNDLE_FORCE)
			break;
		if (!(flags & BUNDLE_KEEP_RUN_FILES) ||
		    strcmp(e->d_name, "runs")) {
			ret = error("'%s' is not empty ('%s'); refusing to mix "
				    "files of another bundle in (give a new "
				    "directory)", dir, e->d_name);
			break;
		}
		runs = xstrfmt("%s/runs", dir);
		rh = opendir(runs);
		while (ret == 0 && rh && (e = readdir(rh))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			name = xstrfmt("runs/%s", e->d_name);
			if (!is_run_file(d, name))
				ret = error("'%s/%s' is not a file of this "
					    "session; refusing to mix it into "
					    "the bundle", dir, name);
			free(name);
		}
		if (rh)
			closedir(rh);
		free(runs);
		break;
	}
	closedir(dh);
	return ret;
}

/* The keys of a record that bundles carry, by its field table. */
static void
write_rec(struct jw *w, const struct rec_field *fields, size_t n,
	  const void *rec)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct rec_field *f = &fields[i];
		const void *p = (const char *)rec + f->offset;
		int64_t v;

		if (!f->key || (f->flags & REC_STORE_ONLY))
			continue;
		switch (f->type) {
		case REC_TEXT:
			if (*(char *const *)p)
				jw_kstr(w, f->key, *(char *const *)p);
			break;
		case REC_JSON:
			if (*(char *const *)p) {
				jw_key(w, f->key);
				if (jw_raw(w, *(char *const *)p) < 0)
					jw_null(w);
			}
			break;
		case REC_INT:
			v = *(const int64_t *)p;
			if (!((f->flags & REC_NEG_NULL) && v < 0) &&
			    !((f->flags & REC_ZERO_NULL) && v == 0))
				jw_kint(w, f->key, v);
			break;
		case REC_BOOL:
			jw_kbool(w, f->key, *(const int64_t *)p != 0);
			break;
		case REC_REAL:
			if (isfinite(*(const double *)p))
				jw_knum(w, f->key, *(const double *)p);
			break;
		case REC_BLOB:
			break;
		}
	}
}

static void
bundle_json(const struct session_data *d, struct buf *out)
{
	struct jw w;
	size_t i;

	jw_init(&w, out, 1);
	jw_object(&w);
	jw_kint(&w, "shimbench_bundle", 1);
	if (d->s.label)
		jw_kstr(&w, "label", d->s.label);
	jw_key(&w, "session");
	jw_object(&w);
	jw_kint(&w, "id", d->s.id);
	write_rec(&w, sessionrec_fields, sessionrec_nfields, &d->s);
	jw_end(&w);
	jw_key(&w, "environments");
	jw_object(&w);
	for (i = 0; i < d->nenvs; i++) {
		jw_key(&w, d->envs[i].target);
		if (jw_raw(&w, d->envs[i].fingerprint_json) < 0) {
			jw_object(&w);
			jw_end(&w);
		}
	}
	jw_end(&w);
	jw_key(&w, "models");
	jw_object(&w);
	for (i = 0; i < d->nmodels; i++) {
		const struct model_rec *m = &d->models[i];

		jw_key(&w, m->name);
		jw_object(&w);
		if (m->label)
			jw_kstr(&w, "label", m->label);
		if (m->sha256)
			jw_kstr(&w, "sha256", m->sha256);
		if (m->file)
			jw_kstr(&w, "file", m->file);
		if (m->size >= 0)
			jw_kint(&w, "size", m->size);
		if (m->facts_json) {
			jw_key(&w, "facts");
			if (jw_raw(&w, m->facts_json) < 0)
				jw_null(&w);
		}
		jw_end(&w);
	}
	jw_end(&w);
	jw_key(&w, "runs");
	jw_array(&w);
	for (i = 0; i < d->nruns; i++) {
		jw_object(&w);
		write_rec(&w, runrec_fields, runrec_nfields, &d->runs[i].r);
		jw_end(&w);
	}
	jw_end(&w);
	jw_end(&w);
	buf_addch(out, '\n');
}

static int
cmp_written(const void *a, const void *b)
{
	return strcmp(((const struct written *)a)->name,
		      ((const struct written *)b)->name);
}

int
bundle_write(const char *dir, const struct session_data *d,
	     const struct bundle_tables *t, unsigned flags)
{
	struct writer wr = { dir, flags, NULL, 0 };
	struct buf text = BUF_INIT;
	char *sums = xstrfmt("%s/SHA256SUMS", dir);
	size_t i;
	int ret = -1;

	if (check_target(dir, d, flags) < 0 || mkdir_p(dir) < 0)
		goto cleanup;
	/* What a killed writer left (".bundle.json.Ab12Cd"): --force means
	 * this directory is ours, and those files would otherwise stay in
	 * the bundle unlisted. */
	if ((flags & BUNDLE_FORCE) && remove_write_temps(dir) < 0)
		goto cleanup;
	/* A stale SHA256SUMS would vouch for a half-written directory. */
	if (unlink(sums) < 0 && errno != ENOENT) {
		error("cannot remove '%s': %s", sums, strerror(errno));
		goto cleanup;
	}
	for (i = 0; i < d->nruns; i++) {
		const struct run_rec *r = &d->runs[i].r;

		if (write_raw(&wr, r->stdout_path, &r->stdout_text,
			      r->stdout_sha256) < 0 ||
		    write_raw(&wr, r->stderr_path, &r->stderr_text,
			      r->stderr_sha256) < 0 ||
		    write_raw(&wr, r->probe_path, &r->probe_text,
			      r->probe_sha256) < 0)
			goto cleanup;
	}
	bundle_json(d, &text);
	if (write_member(&wr, "bundle.json", text.buf, text.len, NULL) < 0)
		goto cleanup;
	buf_reset(&text);
	buf_adds(&text, t && t->results_csv ? t->results_csv : "");
	if (write_member(&wr, "results.csv", text.buf, text.len, NULL) < 0)
		goto cleanup;
	for (i = 0; t && i < t->nfiles; i++)
		if (write_member(&wr, t->files[i].name, t->files[i].data,
				 t->files[i].len, NULL) < 0)
			goto cleanup;
	buf_reset(&text);
	buf_addf(&text, "# shimbench evidence bundle: session %lld\n\n"
		 "Raw llama-bench output (jsonl) and stderr per process, "
		 "bundle.json (plan, fingerprints, artifacts, runs), "
		 "results.csv; SHA256SUMS covers every other file. Import "
		 "with `shimbench import DIR`.\n\n", (long long)d->s.id);
	buf_adds(&text, t && t->readme_md ? t->readme_md : "");
	if (write_member(&wr, "README.md", text.buf, text.len, NULL) < 0)
		goto cleanup;
	xqsort(wr.w, wr.n, sizeof(*wr.w), cmp_written);
	buf_reset(&text);
	for (i = 0; i < wr.n; i++)
		buf_addf(&text, "%s  %s\n", wr.w[i].sha, wr.w[i].name);
	if (write_file_atomic(sums, text.buf, text.len) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	for (i = 0; i < wr.n; i++)
		free(wr.w[i].name);
	free(wr.w);
	free(sums);
	buf_release(&text);
	return ret;
}
