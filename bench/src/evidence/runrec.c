#define _POSIX_C_SOURCE 200809L
#include "evidence/runrec.h"
#include "base/util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define RUN(col, key, type, member, flags, since, decl) \
	{ col, key, type, offsetof(struct run_rec, member), flags, since, \
	  decl, NULL }
#define RUND(col, key, member, flags, since, decl, dflt) \
	{ col, key, REC_TEXT, offsetof(struct run_rec, member), flags, since, \
	  decl, dflt }

/*
 * The run record. Column, bundle key, type, member, flags, the schema
 * version that added the column, and its SQL declaration. The store
 * creates (version 1) or adds (later versions) the columns from this
 * table; bundle.json writes and reads the keys from it.
 */
const struct rec_field runrec_fields[] = {
	RUN("session_id", NULL, REC_INT, session_id,
	    REC_STORE_ONLY | REC_NOT_NULL, 1,
	    "INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE"),
	RUN("environment_id", NULL, REC_INT, environment_id,
	    REC_STORE_ONLY | REC_ZERO_NULL, 1,
	    "INTEGER REFERENCES environments(id)"),
	RUN("artifact_id", NULL, REC_INT, artifact_id,
	    REC_STORE_ONLY | REC_ZERO_NULL, 1,
	    "INTEGER REFERENCES artifacts(id)"),
	RUND("target", "target", target, REC_NOT_NULL, 1, "TEXT NOT NULL",
	     "local"),
	RUN("variant", "variant", REC_TEXT, variant,
	    REC_NOT_NULL | REC_REQUIRED, 1, "TEXT NOT NULL"),
	RUND("role", "role", role, REC_NOT_NULL, 1, "TEXT NOT NULL", "other"),
	RUN("model", "model", REC_TEXT, model, 0, 1, "TEXT"),
	RUN("model_label", "model_label", REC_TEXT, model_label, 0, 1, "TEXT"),
	RUND("runtime", "runtime", runtime, REC_NOT_NULL, 1,
	     "TEXT NOT NULL DEFAULT 'llama.cpp'", "llama.cpp"),
	RUN("seq", "seq", REC_INT, seq, REC_NOT_NULL, 1, "INTEGER NOT NULL"),
	RUN("argv_json", "argv", REC_JSON, argv_json, 0, 1, "TEXT"),
	RUN("env_json", "env", REC_JSON, env_json, 0, 1, "TEXT"),
	RUND("status", "status", status, REC_NOT_NULL, 1, "TEXT NOT NULL",
	     "ok"),
	RUN("exit_code", "exit_code", REC_INT, exit_code, REC_NEG_NULL, 1,
	    "INTEGER"),
	RUN("signal", "signal", REC_INT, signal, 0, 1, "INTEGER"),
	RUN("timed_out", "timed_out", REC_BOOL, timed_out, REC_NOT_NULL, 1,
	    "INTEGER NOT NULL DEFAULT 0"),
	RUN("wall_s", "wall_s", REC_REAL, wall_s, 0, 1, "REAL"),
	RUN("stdout_path", "stdout", REC_TEXT, stdout_path, REC_REQUIRED, 1,
	    "TEXT"),
	RUN("stderr_path", "stderr", REC_TEXT, stderr_path, 0, 1, "TEXT"),
	RUN("stdout_sha256", "stdout_sha256", REC_TEXT, stdout_sha256, 0, 1,
	    "TEXT"),
	RUN("stderr_sha256", "stderr_sha256", REC_TEXT, stderr_sha256, 0, 1,
	    "TEXT"),
	RUN("stdout_text", NULL, REC_BLOB, stdout_text, REC_STORE_ONLY, 1,
	    "TEXT"),
	RUN("stderr_text", NULL, REC_BLOB, stderr_text, REC_STORE_ONLY, 1,
	    "TEXT"),
	RUN("capabilities_json", NULL, REC_JSON, capabilities_json,
	    REC_STORE_ONLY, 1, "TEXT"),
	RUN("expect_json", "expect", REC_JSON, expect_json, 0, 1, "TEXT"),
	RUND("verification", "verification", verification, REC_NOT_NULL, 1,
	     "TEXT NOT NULL DEFAULT 'not-required'", "not-required"),
	RUN("verification_detail", "verification_detail", REC_TEXT,
	    verification_detail, 0, 1, "TEXT"),
	RUN("error", "error", REC_TEXT, error, 0, 1, "TEXT"),
	/* version 3 */
	RUN("model_sha256", "model_sha256", REC_TEXT, model_sha256, 0, 3,
	    "TEXT"),
	RUN("probe_path", "probe", REC_TEXT, probe_path, 0, 3, "TEXT"),
	RUN("probe_sha256", "probe_sha256", REC_TEXT, probe_sha256, 0, 3,
	    "TEXT"),
	RUN("probe_text", NULL, REC_BLOB, probe_text, REC_STORE_ONLY, 3,
	    "TEXT"),
	RUN("probe_expect_json", "probe_expect", REC_JSON, probe_expect_json,
	    0, 3, "TEXT"),
	RUN("started_at", "started_at", REC_TEXT, started_at, 0, 3, "TEXT"),
	/* version 8 (issue 20): what the run measured (store-records.c) */
	RUN("measure_sha256", NULL, REC_TEXT, measure_sha256, REC_STORE_ONLY,
	    8, "TEXT"),
};
const size_t runrec_nfields = ARRAY_SIZE(runrec_fields);

#define SES(col, key, type, member, flags, since, decl) \
	{ col, key, type, offsetof(struct session_rec, member), flags, since, \
	  decl, NULL }

const struct rec_field sessionrec_fields[] = {
	SES("kind", "kind", REC_TEXT, kind, REC_NOT_NULL, 1,
	    "TEXT NOT NULL CHECK(kind IN ('run','import'))"),
	SES("started_at", "started_at", REC_TEXT, started_at, REC_NOT_NULL, 1,
	    "TEXT NOT NULL"),
	SES("finished_at", "finished_at", REC_TEXT, finished_at, 0, 1, "TEXT"),
	SES("status", "status", REC_TEXT, status, REC_NOT_NULL, 1,
	    "TEXT NOT NULL"),
	SES("source", NULL, REC_TEXT, source, REC_STORE_ONLY, 1, "TEXT"),
	SES("content_hash", NULL, REC_TEXT, content_hash, REC_STORE_ONLY, 1,
	    "TEXT UNIQUE"),
	SES("tampered", NULL, REC_BOOL, tampered,
	    REC_STORE_ONLY | REC_NOT_NULL, 1, "INTEGER NOT NULL DEFAULT 0"),
	SES("plan_json", "plan", REC_JSON, plan_json, 0, 1, "TEXT"),
	SES("warnings_json", "warnings", REC_JSON, warnings_json, 0, 1, "TEXT"),
	SES("label", "label", REC_TEXT, label, 0, 1, "TEXT"),
};
const size_t sessionrec_nfields = ARRAY_SIZE(sessionrec_fields);

void
rec_release(const struct rec_field *fields, size_t n, void *rec)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct rec_field *f = &fields[i];

		if (f->type == REC_TEXT || f->type == REC_JSON) {
			char **p = REC_MEMBER(rec, f, char *);
			free(*p);
			*p = NULL;
		} else if (f->type == REC_BLOB) {
			struct rec_blob *b = REC_MEMBER(rec, f, struct rec_blob);
			free(b->p);
			b->p = NULL;
			b->n = 0;
		}
	}
}

void
env_rec_release(struct env_rec *e)
{
	free(e->target);
	free(e->fingerprint_json);
	free(e->identity);
	free(e->base_identity);
	memset(e, 0, sizeof(*e));
}

void
model_rec_release(struct model_rec *m)
{
	free(m->name);
	free(m->label);
	free(m->sha256);
	free(m->file);
	free(m->facts_json);
	memset(m, 0, sizeof(*m));
}

struct rec_blob
rec_blob_dup(const void *p, size_t n)
{
	struct rec_blob b;

	b.p = xmalloc(n + 1);
	if (n)
		memcpy(b.p, p, n);
	b.p[n] = '\0';
	b.n = n;
	return b;
}

const struct rec_field *
rec_field_by_key(const struct rec_field *fields, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fields[i].key && !strcmp(fields[i].key, key))
			return &fields[i];
	return NULL;
}

void
session_data_release(struct session_data *d)
{
	size_t i;

	rec_release(sessionrec_fields, sessionrec_nfields, &d->s);
	for (i = 0; i < d->nenvs; i++)
		env_rec_release(&d->envs[i]);
	for (i = 0; i < d->nmodels; i++)
		model_rec_release(&d->models[i]);
	for (i = 0; i < d->nruns; i++) {
		rec_release(runrec_fields, runrec_nfields, &d->runs[i].r);
		lb_output_release(&d->runs[i].lb);
	}
	free(d->envs);
	free(d->models);
	free(d->runs);
	memset(d, 0, sizeof(*d));
}

const struct model_rec *
session_model(const struct session_data *d, const char *name)
{
	size_t i;

	for (i = 0; name && i < d->nmodels; i++)
		if (!strcmp(d->models[i].name, name))
			return &d->models[i];
	return NULL;
}
