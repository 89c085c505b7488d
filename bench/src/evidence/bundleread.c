/*
 * Reading evidence: a bundle (bundle.json), a raw directory with a mapping
 * file, or raw files with one meaning (import --set), each file once, from
 * inside the directory, checked against SHA256SUMS.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/bundle.h"
#include "evidence/derive.h"
#include "evidence/fingerprint.h"
#include "evidence/state.h"
#include "evidence/runrec.h"
#include "evidence/sums.h"
#include "models/hash.h"
#include "base/json.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A raw file larger than this is not llama-bench output. */
#define MEMBER_MAX (1024ull << 20)

/* ---- reading members -------------------------------------------------------- */

struct reader {
	const char *dir;
	int dirfd;
	unsigned flags;
	int is_bundle;
	struct sums sums;
	unsigned char *read;     /* per sums entry: read and checked */
	struct buf warnings;     /* JSON array text */
	int tampered;
	int unverified;          /* no SHA256SUMS, by request (bundle_read_files) */
};

static void
warn_add(struct reader *rd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
warn_add(struct reader *rd, const char *fmt, ...)
{
	struct buf msg = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	warning("%s", msg.buf);
	if (rd->warnings.len)
		buf_addch(&rd->warnings, ',');
	json_quote(&rd->warnings, msg.buf);
	buf_release(&msg);
}

/*
 * Opens name below dirfd without following a symbolic link anywhere on
 * the way (each directory is opened with O_NOFOLLOW), and without
 * blocking on a FIFO. Returns the descriptor, or -1 after error().
 */
static int
open_inside(const struct reader *rd, const char *name)
{
	char *copy = xstrdup(name), *p = copy, *slash;
	int fd = dup(rd->dirfd), next;
	struct stat st;

	if (fd < 0) {
		free(copy);
		return error("'%s': %s", rd->dir, strerror(errno));
	}
	while ((slash = strchr(p, '/'))) {
		*slash = '\0';
		next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			      O_CLOEXEC);
		close(fd);
		if (next < 0) {
			error("'%s/%s': %s%s", rd->dir, name,
			      errno == ELOOP || errno == ENOTDIR ?
			      "a directory on the way is a symbolic link or not "
			      "a directory" : strerror(errno),
			      errno == ELOOP ? "; refusing to leave the evidence "
			      "directory" : "");
			free(copy);
			return -1;
		}
		fd = next;
		p = slash + 1;
	}
	/* Never open a device or FIFO at all: opening one can act. */
	if (fstatat(fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		close(fd);
		free(copy);
		return error("'%s/%s' is not a regular file (%s); refusing it",
			     rd->dir, name, S_ISFIFO(st.st_mode) ? "a FIFO" :
			     S_ISCHR(st.st_mode) ? "a character device" :
			     S_ISBLK(st.st_mode) ? "a block device" :
			     S_ISDIR(st.st_mode) ? "a directory" :
			     S_ISSOCK(st.st_mode) ? "a socket" : "not a file");
	}
	next = openat(fd, p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		      O_CLOEXEC);
	close(fd);
	if (next < 0) {
		if (errno == ELOOP)
			error("'%s/%s' is a symbolic link; only regular files "
			      "inside the evidence directory are read", rd->dir,
			      name);
		else
			error("cannot open '%s/%s': %s", rd->dir, name,
			      strerror(errno));
	}
	free(copy);
	return next;
}

/*
 * Reads all of a regular file; -1 after error() for anything else. what
 * names the file in messages.
 */
static int
read_fd(const char *what, int fd, struct rec_blob *out)
{
	struct buf b = BUF_INIT;
	struct stat st;
	char chunk[65536];
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return error("'%s': %s", what, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return error("'%s' is not a regular file (a FIFO, device or "
			     "directory); refusing it", what);
	if ((unsigned long long)st.st_size > MEMBER_MAX)
		return error("'%s' is %lld bytes, more than any raw output "
			     "shimbench reads", what, (long long)st.st_size);
	buf_init(&b, (size_t)st.st_size + 1);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			buf_release(&b);
			return error("cannot read '%s': %s", what,
				     strerror(errno));
		}
		buf_add(&b, chunk, (size_t)n);
		if (b.len > MEMBER_MAX) {
			buf_release(&b);
			return error("'%s' grew while it was read", what);
		}
	}
	out->n = b.len;
	out->p = buf_detach(&b, NULL);
	return 0;
}

/*
 * A checksum failure: BUNDLE_TAMPERED after error(), or a warning with
 * --allow-tampered.
 */
static int
tamper(struct reader *rd, const char *msg)
{
	if (!(rd->flags & BUNDLE_ALLOW_TAMPERED)) {
		error("%s; refusing the import", msg);
		return BUNDLE_TAMPERED;
	}
	rd->tampered = 1;
	warn_add(rd, "%s; imported because of --allow-tampered", msg);
	return 0;
}

/*
 * Reads a file the evidence names, once: the bytes are hashed and
 * compared with SHA256SUMS, and the same bytes are what the caller
 * parses. sha gets the file's SHA-256. 0, -1 bad input, BUNDLE_TAMPERED.
 */
static int
read_member(struct reader *rd, const char *name, struct rec_blob *out,
	    char sha[65])
{
	const struct sums_entry *e;
	struct buf msg = BUF_INIT;
	struct stat st;
	char *what;
	int fd, rc;

	out->p = NULL;
	out->n = 0;
	if (!bundle_safe_name(name))
		return error("'%s': file name '%s' leaves the directory or is "
			     "not a plain relative name", rd->dir, name);
	/* Incomplete evidence is a failed check, as a mismatch is, and
	 * --allow-tampered cannot import what is not there. */
	if (fstatat(rd->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno == ENOENT) {
		error("'%s/%s' is missing%s; refusing the import", rd->dir, name,
		      sums_find(&rd->sums, name) ? " (SHA256SUMS lists it)" : "");
		return BUNDLE_TAMPERED;
	}
	fd = open_inside(rd, name);
	if (fd < 0)
		return -1;
	what = xstrfmt("%s/%s", rd->dir, name);
	rc = read_fd(what, fd, out);
	free(what);
	close(fd);
	if (rc < 0)
		return -1;
	hash_buf_sha256(out->p, out->n, sha);
	if (rd->unverified)
		return 0;   /* read once, inside, hashed; nothing to compare */
	e = sums_find(&rd->sums, name);
	if (!e) {
		buf_addf(&msg, "'%s/%s' is not covered by SHA256SUMS", rd->dir,
			 name);
		rc = tamper(rd, msg.buf);
	} else {
		rd->read[e - rd->sums.e] = 1;
		if (strcmp(e->hex, sha)) {
			buf_addf(&msg, "'%s/%s': SHA-256 mismatch (SHA256SUMS "
				 "line %d says %s, the file has %s)", rd->dir,
				 name, e->line, e->hex, sha);
			rc = tamper(rd, msg.buf);
		}
	}
	buf_release(&msg);
	if (rc < 0) {
		free(out->p);
		out->p = NULL;
		out->n = 0;
	}
	return rc;
}

static int
load_sums(struct reader *rd)
{
	struct rec_blob text = { 0 };
	int fd, rc;
	struct stat st;

	if (fstatat(rd->dirfd, "SHA256SUMS", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno == ENOENT)
		return error("'%s' has no SHA256SUMS; refusing to import "
			     "unverifiable evidence", rd->dir);
	fd = open_inside(rd, "SHA256SUMS");
	if (fd < 0)
		return -1;
	{
		char *name = xstrfmt("%s/SHA256SUMS", rd->dir);
		rc = read_fd(name, fd, &text);
		if (rc == 0)
			rc = sums_parse(text.p, text.n, name, &rd->sums);
		free(name);
	}
	close(fd);
	free(text.p);
	if (rc == 0)
		rd->read = xcalloc(rd->sums.n + 1, 1);
	return rc;
}

/*
 * After the runs: a bundle's every listed file must be present and match;
 * a raw directory's listed files that are absent are named in a warning.
 */
static int
check_listed(struct reader *rd)
{
	struct rec_blob b;
	char sha[65];
	size_t i;
	int rc, nmissing = 0;
	struct buf missing = BUF_INIT;

	for (i = 0; i < rd->sums.n; i++) {
		const char *name = rd->sums.e[i].name;
		struct stat st;

		if (rd->read[i])
			continue;
		if (fstatat(rd->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT) {
			if (rd->is_bundle) {
				struct buf msg = BUF_INIT;
				buf_addf(&msg, "'%s/%s' is listed in SHA256SUMS but "
					 "absent", rd->dir, name);
				rc = tamper(rd, msg.buf);
				buf_release(&msg);
				if (rc < 0)
					return rc;
				continue;
			}
			buf_addf(&missing, "%s'%s'", nmissing++ ? ", " : "",
				 name);
			continue;
		}
		if (!rd->is_bundle) {
			/* Unused by the mapping, but still never a link
			 * out, a FIFO or a device. */
			int fd = open_inside(rd, name);
			if (fd < 0)
				return -1;
			close(fd);
			continue;
		}
		rc = read_member(rd, name, &b, sha);
		free(b.p);
		if (rc < 0)
			return rc;
	}
	if (nmissing)
		warn_add(rd, "'%s': %d file%s listed in SHA256SUMS %s absent "
			 "(not needed by the mapping): %s", rd->dir, nmissing,
			 nmissing > 1 ? "s" : "", nmissing > 1 ? "are" : "is",
			 missing.buf);
	buf_release(&missing);
	return 0;
}

/* ---- bundle.json and mappings ------------------------------------------------ */

static int
read_env(struct session_data *d, const struct json *e, const char *name)
{
	struct env_rec *er;
	struct fingerprint fp;
	char id[65], base[65];

	if (json_type(e) != JSON_OBJECT)
		return error("'%s': environments.%s must be an object", name,
			     json_key(e));
	if (json_check_unique(e, name) < 0)
		return -1;
	d->envs = xrealloc(d->envs, (d->nenvs + 1) * sizeof(*er));
	er = &d->envs[d->nenvs++];
	memset(er, 0, sizeof(*er));
	er->target = xstrdup(json_key(e));
	if (fingerprint_from_json(&fp, e, name) < 0)
		return -1;
	er->fingerprint_json = fingerprint_json(&fp);
	fingerprint_identity(&fp, id, base);
	fingerprint_release(&fp);
	er->identity = xstrdup(id);
	er->base_identity = xstrdup(base);
	return 0;
}

#define MO struct model_rec
static const struct json_field model_fields[] = {
	{ "label", JK_STR, offsetof(MO, label), JF_NONEMPTY, 0, 0 },
	{ "sha256", JK_STR, offsetof(MO, sha256), JF_NULLABLE, 0, 0 },
	{ "file", JK_STR, offsetof(MO, file), JF_NULLABLE, 0, 0 },
	{ "size", JK_I64, offsetof(MO, size), JF_NULLABLE, 0, 1e15 },
	{ "facts", JK_OBJECT, offsetof(MO, facts_json), JF_NULLABLE, 0, 0 },
};
#undef MO

static int
read_model(struct session_data *d, const struct json *m, const char *name)
{
	struct model_rec *mr;
	char *where = xstrfmt("'%s': models.%s", name, json_key(m));
	int rc;

	d->models = xrealloc(d->models, (d->nmodels + 1) * sizeof(*mr));
	mr = &d->models[d->nmodels++];
	memset(mr, 0, sizeof(*mr));
	mr->name = xstrdup(json_key(m));
	mr->size = -1;
	rc = json_read_object(m, model_fields, ARRAY_SIZE(model_fields), mr,
			      where, 0);
	if (rc == 0 && mr->sha256) {
		if (!hash_is_sha256_hex(mr->sha256))
			rc = error("%s.sha256 is not a SHA-256", where);
		else
			for (char *p = mr->sha256; *p; p++)
				*p = (char)(*p | 0x20);
	}
	free(where);
	return rc;
}

/* One field of a record from its JSON value, by the field's type. */
static int
read_rec_field(const struct rec_field *f, const struct json *v, void *rec,
	       const char *where)
{
	void *p = (char *)rec + f->offset;
	int64_t i;
	double x;

	if (json_type(v) == JSON_NULL)
		return 0;
	switch (f->type) {
	case REC_TEXT:
		if (!json_str(v))
			return error("%s.%s must be a string, not %s", where,
				     f->key, json_type_name(v));
		free(*(char **)p);
		*(char **)p = xstrdup(json_str(v));
		return 0;
	case REC_INT:
		if (json_int64(v, -2147483648LL, 2147483647LL, &i) < 0)
			return error("%s.%s must be a whole number, not %s",
				     where, f->key, json_type(v) == JSON_NUMBER ?
				     "a fraction or out of range" :
				     json_type_name(v));
		*(int64_t *)p = i;
		return 0;
	case REC_REAL:
		x = json_num(v);
		if (!isfinite(x) || x < 0 || x > 1e9)
			return error("%s.%s must be a number of seconds", where,
				     f->key);
		*(double *)p = x;
		return 0;
	case REC_BOOL:
		if (json_bool(v) < 0)
			return error("%s.%s must be true or false, not %s",
				     where, f->key, json_type_name(v));
		*(int64_t *)p = json_bool(v);
		return 0;
	case REC_JSON:
		free(*(char **)p);
		*(char **)p = json_print(v, 0);
		return 0;
	case REC_BLOB:
		break;
	}
	return error("%s.%s cannot be read from JSON", where, f->key);
}

/*
 * Reads a JSON object into a record by its field table: unknown keys,
 * duplicate keys and store-only fields are refused. `extra` names keys
 * accepted and ignored (NULL-terminated), e.g. a session's "id".
 */
static int
read_rec(const struct json *obj, const struct rec_field *fields, size_t n,
	 void *rec, const char *where, const char *const *extra)
{
	const struct json *it;
	size_t k;

	if (json_type(obj) != JSON_OBJECT)
		return error("%s must be an object, not %s", where,
			     json_type_name(obj));
	if (json_check_unique(obj, where) < 0)
		return -1;
	JSON_FOR_EACH(it, obj) {
		const char *key = json_key(it);
		const struct rec_field *f = rec_field_by_key(fields, n, key);

		for (k = 0; extra && extra[k] && strcmp(extra[k], key); k++)
			;
		if (extra && extra[k])
			continue;
		if (!f || (f->flags & REC_STORE_ONLY))
			return error("%s: unknown key '%s'", where, key);
		if (read_rec_field(f, it, rec, where) < 0)
			return -1;
	}
	for (k = 0; k < n; k++)
		if ((fields[k].flags & REC_REQUIRED) &&
		    json_type(json_get(obj, fields[k].key)) != JSON_STRING)
			return error("%s: '%s' is required", where,
				     fields[k].key);
	return 0;
}

/* Checks the JSON-typed run fields: argv, env, expect, probe_expect. */
static int
check_run_json(const struct run_rec *r, const char *where)
{
	struct {
		const char *key, *text;
		enum json_type type;
	} want[] = {
		{ "argv", r->argv_json, JSON_ARRAY },
		{ "env", r->env_json, JSON_OBJECT },
		{ "expect", r->expect_json, JSON_ARRAY },
		{ "probe_expect", r->probe_expect_json, JSON_OBJECT },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		struct json *v;
		const struct json *it;
		int bad = 0;

		if (!want[i].text)
			continue;
		v = json_parse(want[i].text, strlen(want[i].text), where);
		if (json_type(v) != want[i].type)
			bad = 1;
		JSON_FOR_EACH(it, v)
			if (i < 2 ? (json_type(it) != JSON_STRING &&
				     (i == 0 || json_type(it) != JSON_NULL)) :
			    (i == 2 && json_type(it) != JSON_STRING))
				bad = 1;
		json_free(v);
		if (bad)
			return error("%s.%s must be %s", where, want[i].key,
				     i == 0 ? "an array of strings" :
				     i == 1 ? "an object of strings (or null "
				     "for an unset variable)" :
				     i == 2 ? "an array of marker strings" :
				     "an object of expected probe values");
	}
	return 0;
}

/*
 * A run's target must be one the evidence declares (a key of
 * "environments", when it has any: "gust" for "guest" is a typo, not a
 * new machine), and its role one of the roles (evidence/state.h) or a
 * free name unlike them ("Bare-Metal" is a misspelt role that would
 * silently leave the headline table). -1 after error() naming the key
 * and the valid values.
 */
static int
check_target_role(const struct session_data *d, const struct run_rec *r,
		  const char *where)
{
	struct buf names = BUF_INIT;
	size_t i;
	int found = 0;

	for (i = 0; r->target && i < d->nenvs; i++)
		found |= !strcmp(d->envs[i].target, r->target);
	if (r->target && d->nenvs && !found) {
		for (i = 0; i < d->nenvs; i++)
			buf_addf(&names, "%s'%s'", i ? ", " : "",
				 d->envs[i].target);
		error("%s.target '%s' is not a declared target (the keys of "
		      "'environments': %s)", where, r->target, names.buf);
		buf_release(&names);
		return -1;
	}
	if (r->role && role_misspelt(r->role))
		return error("%s.role '%s' is not a role: %s, or a free name "
			     "unlike them", where, r->role, role_names());
	return 0;
}

static int
read_run(struct reader *rd, struct session_data *d, const struct json *o,
	 size_t idx, const char *name)
{
	struct run_data *rdata;
	struct run_rec *r;
	const struct model_rec *m;
	char where[96], sha[65];
	int rc;

	snprintf(where, sizeof(where), "'%s': runs[%zu]", name, idx);
	d->runs = xrealloc(d->runs, (d->nruns + 1) * sizeof(*rdata));
	rdata = &d->runs[d->nruns++];
	memset(rdata, 0, sizeof(*rdata));
	r = &rdata->r;
	r->seq = (int64_t)idx + 1;
	r->exit_code = -1;
	r->wall_s = NAN;
	if (read_rec(o, runrec_fields, runrec_nfields, r, where, NULL) < 0 ||
	    check_run_json(r, where) < 0)
		return -1;
	/* states by the one name table (evidence/state.h) */
	if (r->status && (run_state_of(r->status) < 0 ||
			  run_state_of(r->status) == RUN_STATE_EXITED))
		return error("%s.status '%s' is not %s", where, r->status,
			     run_state_names());
	if (r->verification && verify_state_of(r->verification) < 0)
		return error("%s.verification '%s' is not not-required, "
			     "verified or unverified", where, r->verification);
	if (r->stdout_path && r->stderr_path &&
	    !strcmp(r->stdout_path, r->stderr_path))
		return error("%s: stdout and stderr name the same file '%s'",
			     where, r->stdout_path);
	if (check_target_role(d, r, where) < 0)
		return -1;
	m = session_model(d, r->model);
	if (r->model && d->nmodels && !m)
		return error("%s: model '%s' is not in 'models'", where,
			     r->model);
	/* Only a label the evidence gives: an absent one stays absent, so
	 * a session exports and imports into the same facts. */
	if (m && !r->model_label && m->label)
		r->model_label = xstrdup(m->label);
	if (m && m->sha256 && !r->model_sha256)
		r->model_sha256 = xstrdup(m->sha256);
	rc = read_member(rd, r->stdout_path, &r->stdout_text, sha);
	if (rc < 0)
		return rc;
	free(r->stdout_sha256);
	r->stdout_sha256 = xstrdup(sha);
	if (r->stderr_path) {
		rc = read_member(rd, r->stderr_path, &r->stderr_text, sha);
		if (rc < 0)
			return rc;
		free(r->stderr_sha256);
		r->stderr_sha256 = xstrdup(sha);
	}
	if (r->probe_path) {
		rc = read_member(rd, r->probe_path, &r->probe_text, sha);
		if (rc < 0)
			return rc;
		free(r->probe_sha256);
		r->probe_sha256 = xstrdup(sha);
	}
	return 0;
}

/*
 * What the files say, and what the record claimed: a recorded
 * "unverified" is never upgraded (its reason may be a probe run before
 * shimbench kept probe outputs), and an "ok" that the output contradicts
 * is downgraded. Output that does not parse refuses the import, except
 * in a bundle whose record already says the run failed (a crash, a
 * timeout, garbage that `run` stored as failed): that run comes back as
 * the failure it was, with no results.
 */
static int
derive_run(struct run_data *rdata, int is_bundle, const char *name, size_t idx)
{
	struct run_rec *r = &rdata->r;
	char *was = r->verification ? xstrdup(r->verification) : NULL;
	char *was_detail = r->verification_detail ?
		xstrdup(r->verification_detail) : NULL;
	int ret = -1;

	if (derive_results(rdata) < 0) {
		if (!is_bundle || !r->status ||
		    run_state_of(r->status) == RUN_STATE_OK ||
		    run_state_of(r->status) == RUN_STATE_INCOMPLETE)
			goto cleanup;
		lb_output_release(&rdata->lb);
	} else if (!rdata->lb.n && (!r->status ||
				    run_state_of(r->status) == RUN_STATE_OK ||
				    run_state_of(r->status) ==
				    RUN_STATE_INCOMPLETE)) {
		/* `[]` or a header alone: nothing measured, yet not recorded
		 * as a failure; stored, it would be a failed run in an ok
		 * session (issue 21 §3). */
		error("'%s': runs[%zu]: '%s' holds no result (an empty "
		      "output, `[]` or a table header alone); remove the run "
		      "or record it with \"status\": \"failed\"", name, idx,
		      r->stdout_path ? r->stdout_path : "stdout");
		goto cleanup;
	}
	if (derive_verification(rdata) < 0)
		goto cleanup;
	if (verify_state_of(was) == VERIFY_UNVERIFIED &&
	    verify_state_of(r->verification) != VERIFY_UNVERIFIED) {
		char *det = xstrfmt("%s; recorded as unverified: %s",
				    r->verification_detail ?
				    r->verification_detail : "",
				    was_detail ? was_detail : "no reason given");
		free(r->verification);
		free(r->verification_detail);
		r->verification = xstrdup(verify_state_name(VERIFY_UNVERIFIED));
		r->verification_detail = det;
	}
	derive_status(rdata);
	ret = 0;
cleanup:
	free(was);
	free(was_detail);
	return ret;
}

static const char *const session_extra[] = { "id", NULL };

static void warn_measurements(struct reader *rd, const struct run_data *r);

/* derive_run() of every run and its measurement warnings, its progress
 * noted. */
static int
derive_runs(struct reader *rd, struct session_data *d, const char *dir,
	    int is_bundle, const char *where)
{
	char *what = xstrfmt("parsing '%s'", dir);
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < d->nruns; i++) {
		progress_note(what, i, d->nruns, "runs");
		rc = derive_run(&d->runs[i], is_bundle, where, i);
		if (rc == 0)
			warn_measurements(rd, &d->runs[i]);
	}
	progress_note(what, d->nruns, d->nruns, "runs");
	free(what);
	return rc;
}

static int
read_session(struct session_data *d, const struct json *o, const char *name)
{
	char *where = xstrfmt("'%s': session", name);
	int rc = read_rec(o, sessionrec_fields, sessionrec_nfields, &d->s,
			  where, session_extra);

	/* "running": exported from a run killed before it finished; such a
	 * session never counts, here as in the store it came from. */
	if (rc == 0 && d->s.status &&
	    (session_state_of(d->s.status) < 0 ||
	     session_state_of(d->s.status) == SESSION_STATE_IMPORTING ||
	     session_state_of(d->s.status) == SESSION_STATE_ABANDONED))
		rc = error("%s.status '%s' is not ok, failed, interrupted or "
			   "running", where, d->s.status);
	if (rc == 0 && d->s.warnings_json &&
	    d->s.warnings_json[0] != '[')
		rc = error("%s.warnings must be an array", where);
	free(where);
	return rc;
}

static const char *const top_keys[] = {
	"shimbench_mapping", "shimbench_bundle", "label", "session",
	"environments", "models", "runs",
};

static int
check_top(const struct json *root, const char *name, int is_bundle)
{
	const struct json *it;
	const char *want = is_bundle ? "shimbench_bundle" : "shimbench_mapping";
	int64_t v;
	size_t k;

	if (json_type(root) != JSON_OBJECT)
		return error("'%s': must be a JSON object", name);
	if (json_check_unique(root, name) < 0)
		return -1;
	JSON_FOR_EACH(it, root) {
		for (k = 0; k < ARRAY_SIZE(top_keys); k++)
			if (!strcmp(json_key(it), top_keys[k]))
				break;
		if (k == ARRAY_SIZE(top_keys))
			return error("'%s': unknown key '%s'", name,
				     json_key(it));
	}
	if (json_int64(json_get(root, want), 1, 1, &v) < 0)
		return error("'%s': expected \"%s\": 1", name, want);
	if (!is_bundle && json_get(root, "session"))
		return error("'%s': a mapping has no 'session' (that is a "
			     "bundle.json)", name);
	if (json_get(root, "label") && !json_get_str(root, "label"))
		return error("'%s': 'label' must be a string", name);
	return 0;
}

static int
read_json(struct reader *rd, struct session_data *d, const char *text,
	  size_t len, const char *name)
{
	struct json *root = json_parse(text, len, name);
	const struct json *it, *runs;
	size_t idx = 0;
	int ret = -1, rc;

	if (!root || check_top(root, name, rd->is_bundle) < 0)
		goto cleanup;
	if (json_get(root, "session") &&
	    read_session(d, json_get(root, "session"), name) < 0)
		goto cleanup;
	if (json_get_str(root, "label")) {
		free(d->s.label);
		d->s.label = xstrdup(json_get_str(root, "label"));
	}
	it = json_get(root, "environments");
	if (it && json_type(it) != JSON_OBJECT) {
		error("'%s': 'environments' must be an object keyed by target",
		      name);
		goto cleanup;
	}
	if (json_check_unique(it, name) < 0)
		goto cleanup;
	JSON_FOR_EACH(it, json_get(root, "environments"))
		if (read_env(d, it, name) < 0)
			goto cleanup;
	it = json_get(root, "models");
	if (it && json_type(it) != JSON_OBJECT) {
		error("'%s': 'models' must be an object", name);
		goto cleanup;
	}
	if (json_check_unique(it, name) < 0)
		goto cleanup;
	JSON_FOR_EACH(it, json_get(root, "models"))
		if (read_model(d, it, name) < 0)
			goto cleanup;
	/* A bundle may hold no run (a session whose every model failed its
	 * hash check); a mapping maps at least one file. */
	runs = json_get(root, "runs");
	if (json_type(runs) != JSON_ARRAY ||
	    (!rd->is_bundle && !json_first(runs))) {
		error("'%s': 'runs' must be a%s array", name,
		      rd->is_bundle ? "n" : " non-empty");
		goto cleanup;
	}
	{
		size_t n = 0;
		char *what = xstrfmt("checking '%s'", rd->dir);

		JSON_FOR_EACH(it, runs)
			n++;
		JSON_FOR_EACH(it, runs) {
			progress_note(what, idx, n, "files");
			rc = read_run(rd, d, it, idx++, name);
			if (rc < 0) {
				progress_note(what, n, n, "files");
				free(what);
				ret = rc;
				goto cleanup;
			}
		}
		progress_note(what, n, n, "files");
		free(what);
	}
	ret = 0;
cleanup:
	json_free(root);
	return ret;
}

/* Says which fields of a run's rows were taken as measurements (a
 * fork's avg_ttft_ms: lbfields.h), not configuration. */
static void
warn_measurements(struct reader *rd, const struct run_data *r)
{
	struct buf b = BUF_INIT;
	size_t k;

	for (k = 0; r->lb.measurements && r->lb.measurements[k]; k++)
		buf_addf(&b, "%s%s", k ? ", " : "", r->lb.measurements[k]);
	if (b.len)
		warn_add(rd, "'%s': fields no llama-bench version has, taken "
			 "as measurements (kept, not configuration): %s",
			 r->r.stdout_path, b.buf);
	buf_release(&b);
}

/* The session's warnings: the bundle's own, then those of this import. */
static void
merge_warnings(struct session_data *d, const struct reader *rd)
{
	struct json *w = NULL;
	struct buf b = BUF_INIT;
	const struct json *it;

	if (d->s.warnings_json)
		w = json_parse(d->s.warnings_json, strlen(d->s.warnings_json),
			       NULL);
	buf_addch(&b, '[');
	JSON_FOR_EACH(it, w) {
		if (b.len > 1)
			buf_addch(&b, ',');
		json_quote(&b, json_str(it) ? json_str(it) : "");
	}
	if (rd->warnings.len) {
		if (b.len > 1)
			buf_addch(&b, ',');
		buf_add(&b, rd->warnings.buf, rd->warnings.len);
	}
	buf_addch(&b, ']');
	json_free(w);
	free(d->s.warnings_json);
	d->s.warnings_json = b.len > 2 ? buf_detach(&b, NULL) : NULL;
	buf_release(&b);
}

int
bundle_read(const char *dir, const char *mapping, unsigned flags,
	    struct session_data *d)
{
	struct reader rd = { .dirfd = -1 };
	struct rec_blob text = { 0 };
	char sha[65], hex[65], now[21];
	int rc = -1, fd;

	memset(d, 0, sizeof(*d));
	rd.dir = dir;
	rd.flags = flags;
	rd.is_bundle = mapping == NULL;
	rd.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rd.dirfd < 0) {
		error("'%s' is not a directory: %s", dir, strerror(errno));
		goto out;
	}
	if ((rc = load_sums(&rd)) < 0)
		goto out;
	if (mapping) {
		fd = open(mapping, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			rc = error("cannot open mapping '%s': %s", mapping,
				   strerror(errno));
			goto out;
		}
		rc = read_fd(mapping, fd, &text);
		close(fd);
		if (rc == 0)
			rc = read_json(&rd, d, text.p, text.n, mapping);
	} else {
		struct stat st;
		if (fstatat(rd.dirfd, "bundle.json", &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = error("'%s' has no bundle.json; for raw llama-bench "
				   "files give --mapping FILE", dir);
			goto out;
		}
		rc = read_member(&rd, "bundle.json", &text, sha);
		if (rc == 0)
			rc = read_json(&rd, d, text.p, text.n, "bundle.json");
	}
	rc = rc == 0 ? derive_runs(&rd, d, dir, rd.is_bundle,
				   mapping ? mapping : "bundle.json") : rc;
	if (rc == 0)
		rc = check_listed(&rd);
	if (rc < 0)
		goto out;
	free(d->s.kind);
	d->s.kind = xstrdup("import");
	if (!d->s.status)
		d->s.status = xstrdup(session_state_name(SESSION_STATE_OK));
	if (!d->s.started_at) {
		utc_now(now);
		d->s.started_at = xstrdup(now);
	}
	free(d->s.source);
	d->s.source = xstrdup(dir);
	d->s.tampered = rd.tampered;
	merge_warnings(d, &rd);
	free(d->s.content_hash);
	d->s.content_hash = bundle_content_hash(d, hex) ? xstrdup(hex) : NULL;
	rc = 0;
out:
	if (rc < 0)
		session_data_release(d);
	if (rd.dirfd >= 0)
		close(rd.dirfd);
	free(text.p);
	free(rd.read);
	sums_release(&rd.sums);
	buf_release(&rd.warnings);
	return rc;
}

/* ---- raw files with one meaning (import --set) ------------------------------ */

/* The name without its last extension ("x.json" -> "x"); caller frees. */
static char *
stem_of(const char *name, const char **ext)
{
	const char *dot = strrchr(name, '.');

	if (!dot || dot == name) {
		*ext = "";
		return xstrdup(name);
	}
	*ext = dot + 1;
	return xstrndup(name, (size_t)(dot - name));
}

static int
stderr_ext(const char *ext)
{
	return !strcmp(ext, "stderr") || !strcmp(ext, "err") ||
	       !strcmp(ext, "log");
}

/* 1 when dir/name is a regular file (not followed if a link), else 0. */
static int
regular_at(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode);
}

struct pair {
	char *stem, *out, *err;
};

/*
 * Pairs the named files by stem: X.json (or .jsonl, .md, .csv, .sql,
 * .txt) is a run's output and X.stderr, X.err or X.log its stderr, given
 * or found beside it; a lone X.log is an output captured with 2>&1.
 */
static int
pair_files(int dirfd, const char *dir, char **names, size_t n,
	   struct pair **out, size_t *npairs)
{
	struct pair *p = NULL;
	size_t np = 0, i, k;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		const char *ext;
		char *stem = stem_of(names[i], &ext);

		for (k = 0; k < np && strcmp(p[k].stem, stem); k++)
			;
		if (k == np) {
			p = xrealloc(p, (np + 1) * sizeof(*p));
			memset(&p[np], 0, sizeof(*p));
			p[np++].stem = xstrdup(stem);
		}
		if ((p[k].out && !strcmp(p[k].out, names[i])) ||
		    (p[k].err && !strcmp(p[k].err, names[i])))
			rc = error("'%s/%s' is named twice", dir, names[i]);
		else if (stderr_ext(ext) && !p[k].err)
			p[k].err = xstrdup(names[i]);
		else if (!stderr_ext(ext) && !p[k].out)
			p[k].out = xstrdup(names[i]);
		else
			rc = error("'%s/%s' and '%s/%s' would both be the %s of "
				   "run '%s'; give one", dir, names[i], dir,
				   stderr_ext(ext) ? p[k].err : p[k].out,
				   stderr_ext(ext) ? "stderr" : "output", stem);
		free(stem);
	}
	for (k = 0; k < np && rc == 0; k++) {
		static const char *const exts[] = { "stderr", "err", "log" };
		char *found = NULL;

		if (!p[k].out) {   /* only X.log: stdout and stderr together */
			p[k].out = p[k].err;
			p[k].err = NULL;
			continue;
		}
		if (p[k].err)
			continue;
		for (i = 0; i < ARRAY_SIZE(exts) && rc == 0; i++) {
			char *cand = xstrfmt("%s.%s", p[k].stem, exts[i]);

			if (strcmp(cand, p[k].out) && regular_at(dirfd, cand)) {
				if (found)
					rc = error("'%s': both '%s' and '%s' could "
						   "be the stderr of '%s'; name "
						   "the one to import", dir,
						   found, cand, p[k].out);
				else
					found = xstrdup(cand);
			}
			free(cand);
		}
		p[k].err = found;
		if (rc < 0)
			free(found), p[k].err = NULL;
	}
	*out = p;
	*npairs = np;
	return rc;
}

/* The mapping the meaning and the pairs make, as bundle_read() reads it. */
static char *
set_mapping(const struct bundle_set *set, const struct pair *p, size_t n)
{
	struct buf b = BUF_INIT;
	struct jw w;
	size_t i;

	jw_init(&w, &b, 1);
	jw_object(&w);
	jw_kint(&w, "shimbench_mapping", 1);
	jw_key(&w, "runs");
	jw_array(&w);
	for (i = 0; i < n; i++) {
		jw_object(&w);
		jw_kstr(&w, "stdout", p[i].out);
		if (p[i].err)
			jw_kstr(&w, "stderr", p[i].err);
		jw_kstr(&w, "target", set->target);
		jw_kstr(&w, "variant", set->variant);
		jw_kstr(&w, "role", set->role);
		if (set->model)
			jw_kstr(&w, "model", set->model);
		if (set->runtime)
			jw_kstr(&w, "runtime", set->runtime);
		jw_end(&w);
	}
	jw_end(&w);
	jw_end(&w);
	return buf_detach(&b, NULL);
}

int
bundle_read_files(const char *const *files, size_t n,
		  const struct bundle_set *set, unsigned flags,
		  struct session_data *d)
{
	struct reader rd = { .dirfd = -1 };
	struct pair *pairs = NULL;
	char **names = NULL, *dir = NULL, *text = NULL;
	char hex[65], now[21];
	size_t npairs = 0, nnames = 0, i;
	struct stat st, st0;
	int rc = -1, no_sums;

	memset(d, 0, sizeof(*d));
	if (!n) {
		error("no files to import");
		goto out;
	}
	/* one evidence directory: the files' own (the same inode) */
	for (i = 0; i < n; i++) {
		const char *slash = strrchr(files[i], '/');
		char *d_i = slash ? (slash == files[i] ? xstrdup("/") :
				     xstrndup(files[i],
					      (size_t)(slash - files[i]))) :
			xstrdup(".");
		const char *base = slash ? slash + 1 : files[i];

		if (!*base || stat(d_i, &st) < 0 || !S_ISDIR(st.st_mode)) {
			error("'%s' is not a file in a directory", files[i]);
			free(d_i);
			goto out;
		}
		if (!dir) {
			dir = d_i;
			st0 = st;
		} else {
			free(d_i);
			if (st.st_dev != st0.st_dev || st.st_ino != st0.st_ino) {
				error("'%s' and '%s' are in different "
				      "directories; give the files of one "
				      "evidence directory", files[0], files[i]);
				goto out;
			}
		}
		names = strv_push(names, &nnames, xstrdup(base));
	}
	rd.dir = dir;
	rd.flags = flags & BUNDLE_ALLOW_TAMPERED;
	rd.is_bundle = 0;
	rd.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rd.dirfd < 0) {
		error("'%s' is not a directory: %s", dir, strerror(errno));
		goto out;
	}
	if (pair_files(rd.dirfd, dir, names, nnames, &pairs, &npairs) < 0)
		goto out;
	no_sums = fstatat(rd.dirfd, "SHA256SUMS", &st, AT_SYMLINK_NOFOLLOW) < 0
		&& errno == ENOENT;
	if (no_sums && !(flags & BUNDLE_NO_CHECKSUMS)) {
		error("'%s' has no SHA256SUMS; refusing to import unverifiable "
		      "evidence (--no-checksums imports it, marked as of "
		      "unverified provenance)", dir);
		goto out;
	}
	if (no_sums) {
		rd.unverified = 1;
		rd.read = xcalloc(1, 1);
		warn_add(&rd, "imported without checksums: provenance "
			 "unverified ('%s' has no SHA256SUMS)", dir);
	} else if ((rc = load_sums(&rd)) < 0) {
		goto out;
	}
	text = set_mapping(set, pairs, npairs);
	rc = read_json(&rd, d, text, strlen(text), "--set");
	rc = rc == 0 ? derive_runs(&rd, d, dir, 0, "--set") : rc;
	if (rc == 0)
		rc = check_listed(&rd);
	if (rc < 0)
		goto out;
	free(d->s.kind);
	d->s.kind = xstrdup("import");
	d->s.status = xstrdup(session_state_name(SESSION_STATE_OK));
	utc_now(now);
	d->s.started_at = xstrdup(now);
	d->s.source = xstrdup(dir);
	d->s.tampered = rd.tampered;
	merge_warnings(d, &rd);
	d->s.content_hash = bundle_content_hash(d, hex) ? xstrdup(hex) : NULL;
	rc = 0;
out:
	if (rc < 0)
		session_data_release(d);
	if (rd.dirfd >= 0)
		close(rd.dirfd);
	for (i = 0; i < npairs; i++) {
		free(pairs[i].stem);
		free(pairs[i].out);
		free(pairs[i].err);
	}
	free(pairs);
	strv_free(names);
	free(dir);
	free(text);
	free(rd.read);
	sums_release(&rd.sums);
	buf_release(&rd.warnings);
	return rc;
}
