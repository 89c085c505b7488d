#define _POSIX_C_SOURCE 200809L
/*
 * The store's records: sessions, environments, artifacts, runs and
 * results written one by one (run) or as a whole session (import), read
 * back for an export, listed and removed; the model hash cache.
 */
#include "evidence/store.h"
#include "evidence/store-internal.h"
#include "evidence/llamabench.h"
#include "models/hash.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static int
session_add_one(struct store *s, const struct session_rec *r, int64_t *id)
{

	sq_op_begin(s);
	return sq_rec_insert(s, sessionrec_fields, r, id);
}

int
store_session_add(struct store *s, const struct session_rec *r, int64_t *id)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, session_add_one(s, r, id));
}

int
store_session_get(struct store *s, int64_t id, struct session_rec *out)
{
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st;
	int rc, found = 0;

	sq_op_begin(s);
	memset(out, 0, sizeof(*out));
	sq_select_sql(&sql, sessionrec_fields, "WHERE id=?1");
	st = sq_prepare_cached(s, sql.buf);
	buf_release(&sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		sq_read_rec(st, sessionrec_fields, out, &out->id);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = sq_error(s, "read session");
	}
	sq_done_cached(s, st);
	return found;
}

int
store_session_find_hash(struct store *s, const char *hash, int64_t *id)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	sq_op_begin(s);
	st = sq_prepare(s,
		"SELECT id FROM sessions WHERE content_hash=?1");

	if (!st)
		return -1;
	sq_bind_text(st, 1, hash);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = sq_error(s, "find session");
	}
	sqlite3_finalize(st);
	return found;
}

static int
session_finish_one(struct store *s, int64_t id, const char *status)
{
	char now[21];
	sqlite3_stmt *st;

	sq_op_begin(s);
	st = sq_prepare(s,
		"UPDATE sessions SET status=?1, finished_at=?2 WHERE id=?3");

	if (!st)
		return -1;
	utc_now(now);
	sq_bind_text(st, 1, status);
	sq_bind_text(st, 2, now);
	sqlite3_bind_int64(st, 3, id);
	return sq_step_done(s, st, "finish session");
}

int
store_session_finish(struct store *s, int64_t id, const char *status)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, session_finish_one(s, id, status));
}

static int
environment_add_one(struct store *s, int64_t session_id, const char *target,
		    const char *fingerprint_json, const char *identity,
		    const char *base_identity, int64_t *id)
{
	sqlite3_stmt *st;

	sq_op_begin(s);
	st = sq_prepare(s,
		"INSERT INTO environments(session_id, target, identity,"
		" fingerprint_json, os_version, os_build, hw_model, is_vm,"
		" gpu, llama_build, base_identity)"
		" VALUES(?1,?2,?3,json(?4),"
		" json_extract(?4,'$.os_version'), json_extract(?4,'$.os_build'),"
		" json_extract(?4,'$.hw_model'), json_extract(?4,'$.is_vm'),"
		" json_extract(?4,'$.gpu'), json_extract(?4,'$.llama_build'),"
		" ?5)");

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, session_id);
	sq_bind_text(st, 2, target);
	sq_bind_text(st, 3, identity);
	sq_bind_text(st, 4, fingerprint_json ? fingerprint_json : "{}");
	sq_bind_text(st, 5, base_identity);
	return sq_insert_id(s, st, "add environment", id);
}

int
store_environment_add(struct store *s, int64_t session_id, const char *target,
		      const char *fingerprint_json, const char *identity,
		      const char *base_identity, int64_t *id)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, environment_add_one(s, session_id, target,
							fingerprint_json,
							identity, base_identity,
							id));
}

static int
artifact_add_one(struct store *s, const char *sha256, const char *kind,
		 const char *path, int64_t size, const char *facts_json,
		 int64_t *id)
{
	sqlite3_stmt *st;
	int rc;

	sq_op_begin(s);
	st = sq_prepare(s,
		"INSERT INTO artifacts(sha256, kind, path, size, facts_json)"
		" VALUES(?1,?2,?3,?4,?5)"
		" ON CONFLICT(sha256, kind) DO UPDATE SET"
		"  path=coalesce(excluded.path, path),"
		"  size=coalesce(excluded.size, size),"
		"  facts_json=coalesce(excluded.facts_json, facts_json)"
		" RETURNING id");

	if (!st)
		return -1;
	sq_bind_text(st, 1, sha256);
	sq_bind_text(st, 2, kind);
	sq_bind_text(st, 3, path);
	if (size >= 0)
		sqlite3_bind_int64(st, 4, size);
	else
		sqlite3_bind_null(st, 4);
	sq_bind_text(st, 5, facts_json);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sq_error(s, "add artifact");
		sqlite3_finalize(st);
		return -1;
	}
	if (id)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int
store_artifact_add(struct store *s, const char *sha256, const char *kind,
		   const char *path, int64_t size, const char *facts_json,
		   int64_t *id)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, artifact_add_one(s, sha256, kind, path,
						     size, facts_json, id));
}

static int
run_add_one(struct store *s, const struct run_rec *r, int64_t *id)
{

	sq_op_begin(s);
	return sq_rec_insert(s, runrec_fields, r, id);
}

int
store_run_add(struct store *s, const struct run_rec *r, int64_t *id)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, run_add_one(s, r, id));
}

int
store_runs_get(struct store *s, int64_t sid, struct run_rec **out, size_t *n)
{
	struct buf sql = BUF_INIT;
	struct run_rec *v = NULL;
	sqlite3_stmt *st;
	size_t k = 0;
	int rc;

	sq_op_begin(s);
	*out = NULL;
	*n = 0;
	sq_select_sql(&sql, runrec_fields, "WHERE session_id=?1 ORDER BY seq, id");
	st = sq_prepare(s, sql.buf);
	buf_release(&sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (k + 1) * sizeof(*v));
		memset(&v[k], 0, sizeof(*v));
		sq_read_rec(st, runrec_fields, &v[k], &v[k].id);
		k++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_runs_free(v, k);
		return sq_error(s, "read runs");
	}
	*out = v;
	*n = k;
	return 0;
}

void
store_runs_free(struct run_rec *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		rec_release(runrec_fields, runrec_nfields, &r[i]);
	free(r);
}

static int
result_add_one(struct store *s, int64_t run_id, int idx,
	       const struct lb_row *row, int64_t *id)
{
	sqlite3_stmt *st;
	int64_t rid;
	size_t i;

	sq_op_begin(s);
	st = sq_prepare(s,
		"INSERT INTO results(run_id, idx, test, n_prompt, n_gen,"
		" n_depth, threads, ngl, flash_attn, backend, build_commit,"
		" build_number, model_type, model_size, model_n_params,"
		" avg_ts, stddev_ts, spread_source)"
		" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,"
		"?16,?17,?18)");

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, idx);
	sq_bind_text(st, 3, row->test);
	sqlite3_bind_int64(st, 4, row->n_prompt);
	sqlite3_bind_int64(st, 5, row->n_gen);
	sqlite3_bind_int64(st, 6, row->n_depth);
	sqlite3_bind_int64(st, 7, row->n_threads);
	sqlite3_bind_int64(st, 8, row->n_gpu_layers);
	sq_bind_text(st, 9, row->flash_attn);
	sq_bind_text(st, 10, row->backends);
	sq_bind_text(st, 11, row->build_commit);
	sqlite3_bind_int64(st, 12, row->build_number);
	sq_bind_text(st, 13, row->model_type);
	sqlite3_bind_int64(st, 14, row->model_size);
	sqlite3_bind_int64(st, 15, row->model_n_params);
	sqlite3_bind_double(st, 16, row->avg_ts);
	/* rows not made by lb_parse (MLX-LM) have no printed deviation */
	if (row->spread_source && isfinite(row->stddev_ts))
		sqlite3_bind_double(st, 17, row->stddev_ts);
	else
		sqlite3_bind_null(st, 17);
	sq_bind_text(st, 18, row->spread_source ? row->spread_source :
		  row->n_samples ? "samples" : "table");
	if (sq_insert_id(s, st, "add result", &rid) < 0)
		return -1;
	/* the raw row apart (its trigger derives the configuration) */
	st = sq_prepare(s, "INSERT INTO result_raw(result_id, raw_json)"
			" VALUES(?1,?2)");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, rid);
	sq_bind_text(st, 2, row->raw_json);
	if (sq_step_done(s, st, "add result") < 0)
		return -1;
	st = sq_prepare(s, "INSERT INTO samples(result_id, idx, ns, ts)"
			" VALUES(?1,?2,?3,?4)");
	if (!st)
		return -1;
	for (i = 0; i < row->n_samples && !s->nErr; i++) {
		sqlite3_bind_int64(st, 1, rid);
		sqlite3_bind_int(st, 2, (int)i);
		if (row->samples_ns)
			sqlite3_bind_int64(st, 3, row->samples_ns[i]);
		else
			sqlite3_bind_null(st, 3);
		sqlite3_bind_double(st, 4, row->samples_ts[i]);
		if (sqlite3_step(st) != SQLITE_DONE)
			sq_error(s, "add sample");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (s->nErr)
		return -1;
	if (id)
		*id = rid;
	return 0;
}

int
store_result_add(struct store *s, int64_t run_id, int idx,
		 const struct lb_row *row, int64_t *id)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, result_add_one(s, run_id, idx, row, id));
}

static int
environment_update_one(struct store *s, int64_t id,
		       const char *fingerprint_json, const char *identity,
		       const char *base_identity)
{
	sqlite3_stmt *st;

	sq_op_begin(s);
	st = sq_prepare(s,
		"UPDATE environments SET fingerprint_json=json(?1),"
		" identity=?2, base_identity=?3,"
		" os_version=json_extract(?1,'$.os_version'),"
		" os_build=json_extract(?1,'$.os_build'),"
		" hw_model=json_extract(?1,'$.hw_model'),"
		" is_vm=json_extract(?1,'$.is_vm'),"
		" gpu=json_extract(?1,'$.gpu'),"
		" llama_build=json_extract(?1,'$.llama_build') WHERE id=?4");

	if (!st)
		return -1;
	sq_bind_text(st, 1, fingerprint_json);
	sq_bind_text(st, 2, identity);
	sq_bind_text(st, 3, base_identity);
	sqlite3_bind_int64(st, 4, id);
	return sq_step_done(s, st, "update environment");
}

int
store_environment_update(struct store *s, int64_t id,
			 const char *fingerprint_json, const char *identity,
			 const char *base_identity)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, environment_update_one(s, id,
							   fingerprint_json,
							   identity,
							   base_identity));
}

static int
session_set_hash_one(struct store *s, int64_t id, const char *hash)
{
	sqlite3_stmt *st;

	sq_op_begin(s);
	st = sq_prepare(s, "UPDATE sessions SET content_hash=?1 WHERE id=?2");
	if (!st)
		return -1;
	sq_bind_text(st, 1, hash);
	sqlite3_bind_int64(st, 2, id);
	return sq_step_done(s, st, "set session content hash");
}

int
store_session_set_hash(struct store *s, int64_t id, const char *hash)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, session_set_hash_one(s, id, hash));
}

int
store_envs_get(struct store *s, int64_t sid, struct env_rec **out, size_t *n)
{
	sqlite3_stmt *st;
	struct env_rec *v = NULL;
	size_t k = 0;
	int rc;

	sq_op_begin(s);
	*out = NULL;
	*n = 0;
	st = sq_prepare_cached(s, "SELECT id, target, fingerprint_json, identity,"
			    " base_identity FROM environments WHERE session_id=?1"
			    " ORDER BY id");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (k + 1) * sizeof(*v));
		v[k].id = sqlite3_column_int64(st, 0);
		v[k].target = sq_col_text(st, 1);
		v[k].fingerprint_json = sq_col_text(st, 2);
		v[k].identity = sq_col_text(st, 3);
		v[k].base_identity = sq_col_text(st, 4);
		k++;
	}
	sq_done_cached(s, st);
	if (rc != SQLITE_DONE) {
		while (k)
			env_rec_release(&v[--k]);
		free(v);
		return sq_error(s, "read environments");
	}
	*out = v;
	*n = k;
	return 0;
}

/*
 * The models a session's runs name: one per name, with the artifact's
 * hash and facts when the run has one, else the run's own label and hash.
 */
static int
store_models_get(struct store *s, int64_t sid, struct model_rec **out,
		 size_t *n)
{
	sqlite3_stmt *st;
	struct model_rec *v = NULL;
	size_t k = 0;
	int rc;

	sq_op_begin(s);
	*out = NULL;
	*n = 0;
	st = sq_prepare(s,
		"SELECT coalesce(a.id, 0), r.model,"
		" max(r.model_label),"
		" coalesce(a.sha256, max(r.model_sha256)), a.path,"
		" coalesce(a.size, -1), a.facts_json"
		" FROM runs r LEFT JOIN artifacts a ON a.id=r.artifact_id"
		" WHERE r.session_id=?1 AND r.model IS NOT NULL"
		" GROUP BY r.model ORDER BY min(r.seq)");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct model_rec *m;

		v = xrealloc(v, (k + 1) * sizeof(*v));
		m = &v[k++];
		memset(m, 0, sizeof(*m));
		m->id = sqlite3_column_int64(st, 0);
		m->name = sq_col_text(st, 1);
		m->label = sq_col_text_null(st, 2);
		m->sha256 = sq_col_text_null(st, 3);
		m->file = sq_col_text_null(st, 4);
		m->size = sqlite3_column_int64(st, 5);
		m->facts_json = sq_col_text_null(st, 6);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		while (k)
			model_rec_release(&v[--k]);
		free(v);
		return sq_error(s, "read models");
	}
	*out = v;
	*n = k;
	return 0;
}

/*
 * A run holding results whose raw stdout has this SHA-256, in any
 * session: 1 found (*session, *run set), 0 none, -1 error.
 */
static int
store_run_find_stdout(struct store *s, const char *sha256, int64_t *session,
		      int64_t *run)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	sq_op_begin(s);
	st = sq_prepare(s, "SELECT r.session_id, r.id FROM runs r"
		     " WHERE r.stdout_sha256=?1 AND EXISTS(SELECT 1 FROM"
		     " results x WHERE x.run_id=r.id) ORDER BY r.id LIMIT 1");
	if (!st)
		return -1;
	sq_bind_text(st, 1, sha256);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*session = sqlite3_column_int64(st, 0);
		*run = sqlite3_column_int64(st, 1);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = sq_error(s, "find run by output");
	}
	sqlite3_finalize(st);
	return found;
}

/*
 * What a run measured, as a SHA-256 (hex; 0 when it has no rows): per
 * row its test, test time, model, hardware, backend and build, samples
 * (ns, else t/s) and printed mean and deviation, in order. Not the bytes: a copy of an output
 * re-saved with other white space, line ends or quoting, or converted
 * to another -o format with the same samples, is the same measurement.
 */
static int
measure_digest(const struct lb_output *lb, char hex[65])
{
	struct buf b = BUF_INIT;
	size_t i, k;

	if (!lb->n)
		return 0;
	buf_adds(&b, "shimbench measurement 1\n");
	for (i = 0; i < lb->n; i++) {
		const struct lb_row *r = &lb->rows[i];

		buf_addf(&b, "row %s %ld %ld %ld", r->test, r->n_prompt,
			 r->n_gen, r->n_depth);
		json_quote(&b, r->test_time ? r->test_time : "");
		json_quote(&b, r->model_type ? r->model_type : "");
		json_quote(&b, r->cpu_info ? r->cpu_info : "");
		json_quote(&b, r->gpu_info ? r->gpu_info : "");
		json_quote(&b, r->backends ? r->backends : "");
		json_quote(&b, r->build_commit ? r->build_commit : "");
		buf_addf(&b, " %lld %lld %.17g %.17g", (long long)r->model_size,
			 (long long)r->model_n_params, r->avg_ts, r->stddev_ts);
		for (k = 0; k < r->n_samples; k++)
			if (r->samples_ns)
				buf_addf(&b, " %lld", (long long)r->samples_ns[k]);
			else
				buf_addf(&b, " %.17g", r->samples_ts[k]);
		buf_addch(&b, '\n');
	}
	hash_buf_sha256(b.buf, b.len, hex);
	buf_release(&b);
	return 1;
}

/* A run with results that measured this (measure_digest): 1 found,
 * 0 none, -1 error. */
static int
store_run_find_measure(struct store *s, const char *sha256, int64_t *session,
		       int64_t *run)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	sq_op_begin(s);
	st = sq_prepare(s, "SELECT r.session_id, r.id FROM runs r"
		     " WHERE r.measure_sha256=?1 AND EXISTS(SELECT 1 FROM"
		     " results x WHERE x.run_id=r.id) ORDER BY r.id LIMIT 1");
	if (!st)
		return -1;
	sq_bind_text(st, 1, sha256);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*session = sqlite3_column_int64(st, 0);
		*run = sqlite3_column_int64(st, 1);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = sq_error(s, "find run by measurement");
	}
	sqlite3_finalize(st);
	return found;
}

/*
 * Runs of an import whose measurement (same rows, test times and
 * samples, other bytes) another run of this import or the store
 * already holds. A run session's processes ran just now (a test double
 * may print one canned output twice); they are not checked.
 */
static int
refuse_same_measurement(struct store *s, const struct session_data *d)
{
	char (*hex)[65] = xcalloc(d->nruns + 1, sizeof(*hex));
	int64_t sid = 0, rid = 0;
	size_t i, j, nruns_checked;
	int rc, ret = -1;

	/* a copy is imported; the processes of a run session are new */
	if (!d->s.kind || strcmp(d->s.kind, "import"))
		nruns_checked = 0;
	else
		nruns_checked = d->nruns;
	for (i = 0; i < nruns_checked; i++) {
		const struct run_rec *r = &d->runs[i].r;

		if (!measure_digest(&d->runs[i].lb, hex[i]))
			continue;
		for (j = 0; j < i; j++)
			if (!strcmp(hex[j], hex[i])) {
				error("'%s' and '%s' hold the same measurement "
				      "(the same %zu rows, test times and "
				      "samples in other bytes: a copy or "
				      "re-save of one output); refusing to "
				      "count it twice", d->runs[j].r.stdout_path,
				      r->stdout_path, d->runs[i].lb.n);
				goto cleanup;
			}
		rc = store_run_find_measure(s, hex[i], &sid, &rid);
		if (rc < 0)
			goto cleanup;
		if (rc == 1) {
			error("'%s' measures what run %lld of session %lld "
			      "already holds (the same %zu rows, test times "
			      "and samples in other bytes: a copy or re-save "
			      "of that output); refusing to count it twice",
			      r->stdout_path, (long long)rid, (long long)sid,
			      d->runs[i].lb.n);
			goto cleanup;
		}
	}
	ret = 0;
cleanup:
	free(hex);
	return ret;
}

/* 1 when two rows show different models (facts both show differ). */
static int
other_model(const struct lb_row *a, const struct lb_row *b)
{
	return (*a->model_type && *b->model_type &&
		strcmp(a->model_type, b->model_type)) ||
	       (*a->model_filename && *b->model_filename &&
		strcmp(a->model_filename, b->model_filename)) ||
	       (a->model_size >= 0 && b->model_size >= 0 &&
		a->model_size != b->model_size) ||
	       (a->model_n_params >= 0 && b->model_n_params >= 0 &&
		a->model_n_params != b->model_n_params);
}

/*
 * A run that names its model (or pins its hash) holds one model: rows
 * of several (llama-bench -m a.gguf -m b.gguf) under one name would be
 * pooled as one workload. Without a name each row's own model counts.
 */
static int
refuse_mixed_models(const struct session_data *d)
{
	size_t i, j;

	for (i = 0; i < d->nruns; i++) {
		const struct run_rec *r = &d->runs[i].r;
		const struct lb_output *lb = &d->runs[i].lb;

		if ((!r->model || !*r->model) &&
		    (!r->model_sha256 || !*r->model_sha256))
			continue;
		for (j = 1; j < lb->n; j++)
			if (other_model(&lb->rows[0], &lb->rows[j]))
				return error("'%s' holds rows of more than one "
					     "model ('%s' %s, line %zu; '%s' %s, "
					     "line %zu) but names one model, "
					     "'%s'; name none (each row's own "
					     "model then counts) or split the "
					     "file", r->stdout_path,
					     lb->rows[0].model_type,
					     lb->rows[0].model_filename,
					     lb->rows[0].line,
					     lb->rows[j].model_type,
					     lb->rows[j].model_filename,
					     lb->rows[j].line,
					     r->model && *r->model ? r->model :
					     r->model_sha256);
	}
	return 0;
}

/* Runs whose stdout another session (or this one) already holds. */
static int
refuse_duplicates(struct store *s, const struct session_data *d)
{
	size_t i, j;
	int64_t sid = 0, rid = 0;
	int rc;

	for (i = 0; i < d->nruns; i++) {
		const struct run_rec *r = &d->runs[i].r;

		if (!r->stdout_sha256 || !d->runs[i].lb.n)
			continue;
		for (j = 0; j < i; j++)
			if (d->runs[j].lb.n && d->runs[j].r.stdout_sha256 &&
			    !strcmp(d->runs[j].r.stdout_sha256,
				    r->stdout_sha256))
				return error("runs %zu and %zu hold the same "
					     "output ('%s' and '%s'); refusing "
					     "to count it twice", j + 1, i + 1,
					     d->runs[j].r.stdout_path,
					     r->stdout_path);
		rc = store_run_find_stdout(s, r->stdout_sha256, &sid, &rid);
		if (rc < 0)
			return -1;
		if (rc == 1)
			return error("'%s' is already stored as run %lld of "
				     "session %lld; refusing to count it twice",
				     r->stdout_path, (long long)rid,
				     (long long)sid);
	}
	if (refuse_mixed_models(d) < 0)
		return -1;
	return refuse_same_measurement(s, d);
}

static int64_t
env_id_of(const struct session_data *d, const int64_t *ids,
	  const char *target)
{
	size_t i;

	for (i = 0; target && i < d->nenvs; i++)
		if (!strcmp(d->envs[i].target, target))
			return ids[i];
	return 0;
}

/* The session's rows, inside the caller's transaction. */
static int
save_rows(struct store *s, const struct session_data *d, int64_t *id)
{
	int64_t *env_ids = xcalloc(d->nenvs + 1, sizeof(int64_t));
	int64_t *model_ids = xcalloc(d->nmodels + 1, sizeof(int64_t));
	size_t i, j;
	int ret = -1;

	if (sq_rec_insert(s, sessionrec_fields, &d->s, id) < 0)
		goto cleanup;
	for (i = 0; i < d->nenvs; i++)
		if (store_environment_add(s, *id, d->envs[i].target,
					  d->envs[i].fingerprint_json,
					  d->envs[i].identity,
					  d->envs[i].base_identity,
					  &env_ids[i]) < 0)
			goto cleanup;
	for (i = 0; i < d->nmodels; i++) {
		const struct model_rec *m = &d->models[i];
		if (m->sha256 &&
		    store_artifact_add(s, m->sha256, "model", m->file, m->size,
				       m->facts_json, &model_ids[i]) < 0)
			goto cleanup;
	}
	for (i = 0; i < d->nruns && !s->nErr; i++) {
		struct run_rec r = d->runs[i].r;
		const struct model_rec *m = session_model(d, r.model);
		int64_t run_id;
		char hex[65];

		progress_note("storing", i, d->nruns, "runs");

		r.session_id = *id;
		r.environment_id = env_id_of(d, env_ids, r.target);
		r.artifact_id = m ? model_ids[m - d->models] : 0;
		r.measure_sha256 = measure_digest(&d->runs[i].lb, hex) ? hex :
				   NULL;
		if (sq_rec_insert(s, runrec_fields, &r, &run_id) < 0)
			goto cleanup;
		for (j = 0; j < d->runs[i].lb.n; j++)
			if (store_result_add(s, run_id, (int)j,
					     &d->runs[i].lb.rows[j], NULL) < 0)
				goto cleanup;
	}
	ret = s->nErr ? -1 : 0;
cleanup:
	progress_note("storing", d->nruns, d->nruns, "runs");
	free(env_ids);
	free(model_ids);
	return ret;
}

int
store_session_save(struct store *s, const struct session_data *d,
		   int64_t *id, int *already)
{
	int own = !s->in_tx, rc;

	*already = 0;
	if (own && store_begin(s) < 0)
		return -1;
	if (d->s.content_hash) {
		rc = store_session_find_hash(s, d->s.content_hash, id);
		if (rc != 0) {
			*already = rc == 1;
			if (own)
				store_rollback(s);
			return rc == 1 ? 0 : -1;
		}
	}
	if (refuse_duplicates(s, d) < 0) {
		rc = s->nErr ? RC_ERROR : STORE_DUPLICATE;
		if (own)
			store_rollback(s);
		else if (rc == STORE_DUPLICATE)
			s->nErr++;
		return rc;
	}
	if (save_rows(s, d, id) < 0) {
		if (own)
			store_rollback(s);
		return -1;
	}
	if (own && store_commit(s) < 0)
		return -1;
	return 0;
}

int
store_session_load(struct store *s, int64_t sid, struct session_data *d)
{
	struct run_rec *runs = NULL;
	size_t nruns = 0, i;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = store_session_get(s, sid, &d->s);
	if (rc <= 0)
		return rc < 0 ? -1 : error("the store has no session %lld",
					   (long long)sid);
	if (store_envs_get(s, sid, &d->envs, &d->nenvs) < 0 ||
	    store_models_get(s, sid, &d->models, &d->nmodels) < 0 ||
	    store_runs_get(s, sid, &runs, &nruns) < 0) {
		session_data_release(d);
		return -1;
	}
	d->runs = xcalloc(nruns + 1, sizeof(*d->runs));
	for (i = 0; i < nruns; i++)
		d->runs[i].r = runs[i];
	d->nruns = nruns;
	free(runs);
	return 0;
}

int
store_sessions_list(struct store *s, struct store_session **out, size_t *n)
{
	sqlite3_stmt *st;
	struct store_session *v = NULL;
	size_t k = 0, i;
	int rc;

	sq_op_begin(s);
	st = sq_prepare(s,
		"SELECT ss.id, ss.kind, ss.started_at, ss.status,"
		" coalesce(ss.label, ss.source, ''), ss.tampered,"
		" (SELECT count(*) FROM runs r WHERE r.session_id=ss.id),"
		" (SELECT count(*) FROM runs r WHERE r.session_id=ss.id"
		"  AND r.verification='unverified'),"
		" coalesce((SELECT group_concat(DISTINCT e.os_build) FROM"
		"  environments e WHERE e.session_id=ss.id), ''),"
		" coalesce((SELECT min(substr(r.started_at, 1, 10)) FROM runs r"
		"  WHERE r.session_id=ss.id), ''),"
		" coalesce((SELECT max(substr(r.started_at, 1, 10)) FROM runs r"
		"  WHERE r.session_id=ss.id), '')"
		" FROM sessions ss ORDER BY ss.id");

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_session *e;

		v = xrealloc(v, (k + 1) * sizeof(*v));
		e = &v[k++];
		e->id = sqlite3_column_int64(st, 0);
		e->kind = sq_col_text(st, 1);
		e->started_at = sq_col_text(st, 2);
		e->status = sq_col_text(st, 3);
		e->label = sq_col_text(st, 4);
		e->tampered = sqlite3_column_int(st, 5);
		e->runs = (long)sqlite3_column_int64(st, 6);
		e->unverified = (long)sqlite3_column_int64(st, 7);
		e->os_builds = sq_col_text(st, 8);
		e->measured_from = sq_col_text(st, 9);
		e->measured_to = sq_col_text(st, 10);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_sessions_free(v, k);
		return sq_error(s, "list sessions");
	}
	/* a running session whose process is gone shows as abandoned */
	for (i = 0; i < k; i++) {
		const char *shown = store_session_shown_status(s, v[i].id,
							       v[i].status);

		if (shown != v[i].status) {
			free(v[i].status);
			v[i].status = xstrdup(shown);
		}
	}
	*out = v;
	*n = k;
	return 0;
}

void
store_sessions_free(struct store_session *ss, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(ss[i].kind);
		free(ss[i].started_at);
		free(ss[i].status);
		free(ss[i].label);
		free(ss[i].os_builds);
		free(ss[i].measured_from);
		free(ss[i].measured_to);
	}
	free(ss);
}

int
store_session_latest(struct store *s, long back, int64_t *id)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	sq_op_begin(s);
	st = sq_prepare(s, "SELECT id FROM sessions ORDER BY id DESC LIMIT 1"
		     " OFFSET ?1");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, back);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = sq_error(s, "latest session");
	}
	sqlite3_finalize(st);
	return found;
}

/* Rows of one session in a table reached through its runs. */
static long
count_of(struct store *s, const char *sql, int64_t id)
{
	sqlite3_stmt *st = sq_prepare(s, sql);
	long n = -1;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int
store_run_remove(struct store *s, int64_t sid, int64_t seq)
{
	sqlite3_stmt *st;
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	sq_op_begin(s);
	st = sq_prepare(s, "DELETE FROM runs WHERE session_id=?1 AND seq=?2");
	if (st) {
		sqlite3_bind_int64(st, 1, sid);
		sqlite3_bind_int64(st, 2, seq);
	}
	return sq_write_end(s, own, st ? sq_step_done(s, st, "remove run") :
			    -1);
}

int
store_session_remove(struct store *s, int64_t id, struct store_removed *rm)
{
	sqlite3_stmt *st;
	int own = !s->in_tx;

	memset(rm, 0, sizeof(*rm));
	sq_op_begin(s);
	if (own && store_begin(s) < 0)
		return -1;
	rm->runs = count_of(s, "SELECT count(*) FROM runs WHERE session_id=?1",
			    id);
	rm->results = count_of(s, "SELECT count(*) FROM results x JOIN runs r"
			       " ON r.id=x.run_id WHERE r.session_id=?1", id);
	rm->samples = count_of(s, "SELECT count(*) FROM samples m JOIN results"
			       " x ON x.id=m.result_id JOIN runs r ON"
			       " r.id=x.run_id WHERE r.session_id=?1", id);
	rm->environments = count_of(s, "SELECT count(*) FROM environments"
				    " WHERE session_id=?1", id);
	rm->calibrations = count_of(s, "SELECT count(*) FROM noise WHERE"
				    " session_id=?1", id);
	st = sq_prepare(s, "DELETE FROM sessions WHERE id=?1");
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		sq_step_done(s, st, "remove session");
		rm->found = sqlite3_changes(s->db) > 0;
	}
	if (own)
		return store_commit(s);
	return s->nErr ? -1 : 0;
}

int
store_hash_cache_get(struct store *s, uint64_t dev, uint64_t ino,
		     int64_t size, int64_t mtime_ns, int64_t ctime_ns,
		     char sha256[65])
{
	sqlite3_stmt *st;
	int rc, hit = 0;

	sq_op_begin(s);
	st = sq_prepare(s, "SELECT sha256 FROM hash_cache WHERE dev=?1 AND ino=?2"
		     " AND size=?3 AND mtime_ns=?4 AND ctime_ns=?5");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, (int64_t)dev);
	sqlite3_bind_int64(st, 2, (int64_t)ino);
	sqlite3_bind_int64(st, 3, size);
	sqlite3_bind_int64(st, 4, mtime_ns);
	sqlite3_bind_int64(st, 5, ctime_ns);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		if (t && strlen((const char *)t) == 64) {
			memcpy(sha256, t, 65);
			hit = 1;
		}
	} else if (rc != SQLITE_DONE) {
		hit = sq_error(s, "hash cache lookup");
	}
	sqlite3_finalize(st);
	return hit;
}

static int
hash_cache_put_one(struct store *s, uint64_t dev, uint64_t ino,
		   int64_t size, int64_t mtime_ns, int64_t ctime_ns,
		   const char *path, const char *sha256)
{
	char now[21];
	sqlite3_stmt *st;

	sq_op_begin(s);
	st = sq_prepare(s, "INSERT OR REPLACE INTO hash_cache(dev, ino, size,"
		     " mtime_ns, ctime_ns, path, sha256, checked_at)"
		     " VALUES(?1,?2,?3,?4,?5,?6,?7,?8)");
	if (!st)
		return -1;
	utc_now(now);
	sqlite3_bind_int64(st, 1, (int64_t)dev);
	sqlite3_bind_int64(st, 2, (int64_t)ino);
	sqlite3_bind_int64(st, 3, size);
	sqlite3_bind_int64(st, 4, mtime_ns);
	sqlite3_bind_int64(st, 5, ctime_ns);
	sq_bind_text(st, 6, path);
	sq_bind_text(st, 7, sha256);
	sq_bind_text(st, 8, now);
	return sq_step_done(s, st, "hash cache store");
}

int
store_hash_cache_put(struct store *s, uint64_t dev, uint64_t ino,
		     int64_t size, int64_t mtime_ns, int64_t ctime_ns,
		     const char *path, const char *sha256)
{
	int own;

	if (sq_write_begin(s, &own) < 0)
		return -1;
	return sq_write_end(s, own, hash_cache_put_one(s, dev, ino, size,
						       mtime_ns, ctime_ns, path,
						       sha256));
}
