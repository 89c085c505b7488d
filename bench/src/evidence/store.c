#define _POSIX_C_SOURCE 200809L
#include "evidence/store.h"
#include "evidence/llamabench.h"
#include "base/util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The store keeps a sticky error count (nErr, as in SQLite's
 * sqlite3-rsync.c): once a statement fails, later steps of the same
 * operation are skipped and the caller gets -1 once.
 */
struct store {
	sqlite3 *db;
	char *path;
	int nErr;
};

/* Schema migrations, applied in order; user_version = index reached. */
static const char *const migrations[] = {
	/* 1: the initial schema */
	"CREATE TABLE sessions("
	"  id INTEGER PRIMARY KEY,"
	"  kind TEXT NOT NULL CHECK(kind IN ('run','import')),"
	"  started_at TEXT NOT NULL,"
	"  finished_at TEXT,"
	"  status TEXT NOT NULL,"
	"  source TEXT,"
	"  content_hash TEXT UNIQUE,"
	"  tampered INTEGER NOT NULL DEFAULT 0,"
	"  plan_json TEXT,"
	"  warnings_json TEXT,"
	"  label TEXT);"
	"CREATE TABLE environments("
	"  id INTEGER PRIMARY KEY,"
	"  session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	"  target TEXT NOT NULL,"
	"  identity TEXT NOT NULL,"
	"  base_identity TEXT,"
	"  fingerprint_json TEXT NOT NULL,"
	"  os_version TEXT, os_build TEXT, hw_model TEXT, is_vm INTEGER,"
	"  gpu TEXT, llama_build TEXT);"
	"CREATE INDEX environments_identity ON environments(identity);"
	"CREATE INDEX environments_os ON environments(os_build);"
	"CREATE INDEX environments_base ON environments(base_identity);"
	"CREATE TABLE artifacts("
	"  id INTEGER PRIMARY KEY,"
	"  sha256 TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  path TEXT,"
	"  size INTEGER,"
	"  facts_json TEXT,"
	"  UNIQUE(sha256, kind));"
	"CREATE TABLE runs("
	"  id INTEGER PRIMARY KEY,"
	"  session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	"  environment_id INTEGER REFERENCES environments(id),"
	"  artifact_id INTEGER REFERENCES artifacts(id),"
	"  target TEXT NOT NULL, variant TEXT NOT NULL, role TEXT NOT NULL,"
	"  model TEXT, model_label TEXT, runtime TEXT NOT NULL DEFAULT 'llama.cpp',"
	"  seq INTEGER NOT NULL,"
	"  argv_json TEXT, env_json TEXT,"
	"  status TEXT NOT NULL,"
	"  exit_code INTEGER, signal INTEGER, timed_out INTEGER NOT NULL DEFAULT 0,"
	"  wall_s REAL,"
	"  stdout_path TEXT, stderr_path TEXT,"
	"  stdout_sha256 TEXT, stderr_sha256 TEXT,"
	"  stdout_text TEXT, stderr_text TEXT,"
	"  capabilities_json TEXT,"
	"  expect_json TEXT,"
	"  verification TEXT NOT NULL DEFAULT 'not-required',"
	"  verification_detail TEXT,"
	"  error TEXT);"
	"CREATE INDEX runs_session ON runs(session_id);"
	"CREATE TABLE results("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  test TEXT NOT NULL,"
	"  n_prompt INTEGER, n_gen INTEGER, n_depth INTEGER,"
	"  threads INTEGER, ngl INTEGER, flash_attn TEXT,"
	"  backend TEXT, build_commit TEXT, build_number INTEGER,"
	"  model_type TEXT, model_size INTEGER, model_n_params INTEGER,"
	"  avg_ts REAL,"
	"  raw_json TEXT NOT NULL,"
	"  UNIQUE(run_id, idx));"
	"CREATE TABLE samples("
	"  result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  ns INTEGER,"
	"  ts REAL NOT NULL,"
	"  PRIMARY KEY(result_id, idx));"
	"CREATE TABLE hash_cache("
	"  dev INTEGER NOT NULL, ino INTEGER NOT NULL,"
	"  size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,"
	"  path TEXT, sha256 TEXT NOT NULL, checked_at TEXT,"
	"  PRIMARY KEY(dev, ino));",
	/* 2: noise calibrations per fingerprint identity and workload */
	"CREATE TABLE noise("
	"  id INTEGER PRIMARY KEY,"
	"  identity TEXT NOT NULL,"
	"  target TEXT, model TEXT, test TEXT NOT NULL,"
	"  session_id INTEGER REFERENCES sessions(id) ON DELETE CASCADE,"
	"  processes INTEGER, samples INTEGER,"
	"  within_cv REAL, between_cv REAL, mde REAL,"
	"  created_at TEXT,"
	"  details_json TEXT);"
	"CREATE INDEX noise_identity ON noise(identity, test);",
};

static int
db_error(struct store *s, const char *what)
{
	s->nErr++;
	return error("store '%s': %s: %s", s->path, what,
		     sqlite3_errmsg(s->db));
}

static int
exec_sql(struct store *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		s->nErr++;
		error("store '%s': %s", s->path, msg ? msg : "unknown error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static sqlite3_stmt *
prepare(struct store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (s->nErr)
		return NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_error(s, "prepare");
		return NULL;
	}
	return st;
}

static void
bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void
bind_id(sqlite3_stmt *st, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* Steps a statement that returns no rows, then finalizes it. */
static int
step_done(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		db_error(s, what);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

static int
user_version(struct store *s)
{
	sqlite3_stmt *st = prepare(s, "PRAGMA user_version");
	int v = -1;

	if (st && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int
migrate(struct store *s)
{
	int v = user_version(s);
	int target = (int)ARRAY_SIZE(migrations);
	char pragma[64];

	if (v < 0)
		return -1;
	if (v > target)
		return error("store '%s' has schema version %d; this shimbench "
			     "knows up to %d (upgrade shimbench)", s->path, v,
			     target);
	if (v == target)
		return 0;
	if (exec_sql(s, "BEGIN IMMEDIATE") < 0)
		return -1;
	/* Another process may have migrated while we waited for the lock. */
	v = user_version(s);
	for (; v >= 0 && v < target; v++) {
		if (exec_sql(s, migrations[v]) < 0)
			break;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d",
			 v + 1);
		if (exec_sql(s, pragma) < 0)
			break;
	}
	if (s->nErr) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec_sql(s, "COMMIT");
}

int
store_open(struct store **out, const char *path)
{
	struct store *s = xcalloc(1, sizeof(*s));

	*out = NULL;
	s->path = xstrdup(path);
	if (sqlite3_open_v2(path, &s->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    NULL) != SQLITE_OK) {
		error("cannot open store '%s': %s", path,
		      s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 10000);
	if (exec_sql(s, "PRAGMA foreign_keys=ON") < 0)
		goto fail;
	/* A file that is not a database fails here, not later. */
	if (exec_sql(s, "PRAGMA journal_mode=WAL") < 0)
		goto fail;
	if (exec_sql(s, "PRAGMA synchronous=NORMAL") < 0 || migrate(s) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	store_close(s);
	return -1;
}

void
store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

int
store_schema_version(struct store *s)
{
	return user_version(s);
}

int
store_begin(struct store *s)
{
	s->nErr = 0;
	return exec_sql(s, "BEGIN IMMEDIATE");
}

int
store_commit(struct store *s)
{
	if (s->nErr) {
		store_rollback(s);
		return -1;
	}
	if (exec_sql(s, "COMMIT") < 0) {
		store_rollback(s);
		return -1;
	}
	return 0;
}

void
store_rollback(struct store *s)
{
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->nErr = 0;
}

static int
insert_id(struct store *s, sqlite3_stmt *st, const char *what, int64_t *id)
{
	if (step_done(s, st, what) < 0)
		return -1;
	if (id)
		*id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int
store_session_add(struct store *s, const struct session_rec *r, int64_t *id)
{
	sqlite3_stmt *st = prepare(s,
		"INSERT INTO sessions(kind, started_at, status, source,"
		" content_hash, tampered, plan_json, warnings_json, label)"
		" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)");

	if (!st)
		return -1;
	bind_text(st, 1, r->kind);
	bind_text(st, 2, r->started_at);
	bind_text(st, 3, r->status);
	bind_text(st, 4, r->source);
	bind_text(st, 5, r->content_hash);
	sqlite3_bind_int(st, 6, r->tampered);
	bind_text(st, 7, r->plan_json);
	bind_text(st, 8, r->warnings_json);
	bind_text(st, 9, r->label);
	return insert_id(s, st, "add session", id);
}

int
store_session_find_hash(struct store *s, const char *hash, int64_t *id)
{
	sqlite3_stmt *st = prepare(s,
		"SELECT id FROM sessions WHERE content_hash=?1");
	int rc, found = 0;

	if (!st)
		return -1;
	bind_text(st, 1, hash);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = db_error(s, "find session");
	}
	sqlite3_finalize(st);
	return found;
}

int
store_session_finish(struct store *s, int64_t id, const char *status)
{
	char now[21];
	sqlite3_stmt *st = prepare(s,
		"UPDATE sessions SET status=?1, finished_at=?2 WHERE id=?3");

	if (!st)
		return -1;
	utc_now(now);
	bind_text(st, 1, status);
	bind_text(st, 2, now);
	sqlite3_bind_int64(st, 3, id);
	return step_done(s, st, "finish session");
}

int
store_session_set_warnings(struct store *s, int64_t id,
			   const char *warnings_json)
{
	sqlite3_stmt *st = prepare(s,
		"UPDATE sessions SET warnings_json=?1 WHERE id=?2");

	if (!st)
		return -1;
	bind_text(st, 1, warnings_json);
	sqlite3_bind_int64(st, 2, id);
	return step_done(s, st, "set session warnings");
}

int
store_environment_add(struct store *s, int64_t session_id, const char *target,
		      const char *fingerprint_json, const char *identity,
		      const char *base_identity, int64_t *id)
{
	sqlite3_stmt *st = prepare(s,
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
	bind_text(st, 2, target);
	bind_text(st, 3, identity);
	bind_text(st, 4, fingerprint_json ? fingerprint_json : "{}");
	bind_text(st, 5, base_identity);
	return insert_id(s, st, "add environment", id);
}

int
store_artifact_add(struct store *s, const char *sha256, const char *kind,
		   const char *path, int64_t size, const char *facts_json,
		   int64_t *id)
{
	sqlite3_stmt *st = prepare(s,
		"INSERT INTO artifacts(sha256, kind, path, size, facts_json)"
		" VALUES(?1,?2,?3,?4,?5)"
		" ON CONFLICT(sha256, kind) DO UPDATE SET"
		"  path=coalesce(excluded.path, path),"
		"  size=coalesce(excluded.size, size),"
		"  facts_json=coalesce(excluded.facts_json, facts_json)"
		" RETURNING id");
	int rc;

	if (!st)
		return -1;
	bind_text(st, 1, sha256);
	bind_text(st, 2, kind);
	bind_text(st, 3, path);
	if (size >= 0)
		sqlite3_bind_int64(st, 4, size);
	else
		sqlite3_bind_null(st, 4);
	bind_text(st, 5, facts_json);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		db_error(s, "add artifact");
		sqlite3_finalize(st);
		return -1;
	}
	if (id)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int
store_run_add(struct store *s, const struct run_rec *r, int64_t *id)
{
	sqlite3_stmt *st = prepare(s,
		"INSERT INTO runs(session_id, environment_id, artifact_id,"
		" target, variant, role, model, model_label, runtime, seq,"
		" argv_json, env_json, status, exit_code, signal, timed_out,"
		" wall_s, stdout_path, stderr_path, stdout_sha256,"
		" stderr_sha256, stdout_text, stderr_text, capabilities_json,"
		" verification, verification_detail, error, expect_json)"
		" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,"
		"?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,?27,?28)");

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, r->session_id);
	bind_id(st, 2, r->environment_id);
	bind_id(st, 3, r->artifact_id);
	bind_text(st, 4, r->target ? r->target : "local");
	bind_text(st, 5, r->variant);
	bind_text(st, 6, r->role ? r->role : "other");
	bind_text(st, 7, r->model);
	bind_text(st, 8, r->model_label);
	bind_text(st, 9, r->runtime ? r->runtime : "llama.cpp");
	sqlite3_bind_int(st, 10, r->seq);
	bind_text(st, 11, r->argv_json);
	bind_text(st, 12, r->env_json);
	bind_text(st, 13, r->status);
	if (r->exit_code >= 0)
		sqlite3_bind_int(st, 14, r->exit_code);
	else
		sqlite3_bind_null(st, 14);
	sqlite3_bind_int(st, 15, r->signal);
	sqlite3_bind_int(st, 16, r->timed_out);
	sqlite3_bind_double(st, 17, r->wall_s);
	bind_text(st, 18, r->stdout_path);
	bind_text(st, 19, r->stderr_path);
	bind_text(st, 20, r->stdout_sha256);
	bind_text(st, 21, r->stderr_sha256);
	bind_text(st, 22, r->stdout_text);
	bind_text(st, 23, r->stderr_text);
	bind_text(st, 24, r->capabilities_json);
	bind_text(st, 25, r->verification ? r->verification : "not-required");
	bind_text(st, 26, r->verification_detail);
	bind_text(st, 27, r->error);
	bind_text(st, 28, r->expect_json);
	return insert_id(s, st, "add run", id);
}

int
store_result_add(struct store *s, int64_t run_id, int idx,
		 const struct lb_row *row, int64_t *id)
{
	sqlite3_stmt *st = prepare(s,
		"INSERT INTO results(run_id, idx, test, n_prompt, n_gen,"
		" n_depth, threads, ngl, flash_attn, backend, build_commit,"
		" build_number, model_type, model_size, model_n_params,"
		" avg_ts, raw_json)"
		" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,"
		"?16,?17)");
	int64_t rid;
	size_t i;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, idx);
	bind_text(st, 3, row->test);
	sqlite3_bind_int64(st, 4, row->n_prompt);
	sqlite3_bind_int64(st, 5, row->n_gen);
	sqlite3_bind_int64(st, 6, row->n_depth);
	sqlite3_bind_int64(st, 7, row->n_threads);
	sqlite3_bind_int64(st, 8, row->n_gpu_layers);
	bind_text(st, 9, row->flash_attn);
	bind_text(st, 10, row->backends);
	bind_text(st, 11, row->build_commit);
	sqlite3_bind_int64(st, 12, row->build_number);
	bind_text(st, 13, row->model_type);
	sqlite3_bind_int64(st, 14, row->model_size);
	sqlite3_bind_int64(st, 15, row->model_n_params);
	sqlite3_bind_double(st, 16, row->avg_ts);
	bind_text(st, 17, row->raw_json);
	if (insert_id(s, st, "add result", &rid) < 0)
		return -1;
	st = prepare(s, "INSERT INTO samples(result_id, idx, ns, ts)"
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
			db_error(s, "add sample");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (s->nErr)
		return -1;
	if (id)
		*id = rid;
	return 0;
}

/* Selection keys that map to a column; others go to the fingerprint. */
static const struct {
	const char *key;
	const char *column;
} sel_columns[] = {
	{ "session", "r.session_id" },
	{ "variant", "r.variant" },
	{ "target", "r.target" },
	{ "model", "r.model" },
	{ "role", "r.role" },
	{ "runtime", "r.runtime" },
	{ "status", "r.status" },
	{ "verification", "r.verification" },
	{ "test", "x.test" },
	{ "os_build", "e.os_build" },
	{ "os_version", "e.os_version" },
	{ "identity", "e.identity" },
	{ "base_identity", "e.base_identity" },
	{ "kind", "s.kind" },
	{ "label", "s.label" },
	{ "build", "x.build_commit" },
};

static int
valid_key(const char *k)
{
	if (!*k)
		return 0;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9') || *k == '_' || *k == '.'))
			return 0;
	return 1;
}

int
selection_parse(const char *text, struct selection *out)
{
	char *copy, *item, *save = NULL;

	memset(out, 0, sizeof(*out));
	if (!text || !*text || !strcmp(text, "all"))
		return 0;
	copy = xstrdup(text);
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq || eq == item) {
			error("selection '%s': '%s' is not key=value", text,
			      item);
			goto fail;
		}
		*eq = '\0';
		if (!valid_key(item)) {
			error("selection '%s': bad key '%s'", text, item);
			goto fail;
		}
		out->keys = xrealloc(out->keys, (out->n + 1) * sizeof(char *));
		out->values = xrealloc(out->values,
				       (out->n + 1) * sizeof(char *));
		out->keys[out->n] = xstrdup(item);
		out->values[out->n] = xstrdup(eq + 1);
		out->n++;
	}
	free(copy);
	return 0;
fail:
	free(copy);
	selection_free(out);
	return -1;
}

void
selection_free(struct selection *sel)
{
	size_t i;

	for (i = 0; i < sel->n; i++) {
		free(sel->keys[i]);
		free(sel->values[i]);
	}
	free(sel->keys);
	free(sel->values);
	memset(sel, 0, sizeof(*sel));
}

static char *
col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return xstrdup(t ? (const char *)t : "");
}

int
store_query_results(struct store *s, const struct selection *sel,
		    struct store_result **out, size_t *n)
{
	struct buf sql = BUF_INIT;
	struct store_result *rows = NULL;
	size_t nrows = 0, i, k;
	sqlite3_stmt *st = NULL, *ss = NULL;
	int rc, param = 1, ret = -1;

	*out = NULL;
	*n = 0;
	buf_adds(&sql,
		"SELECT s.id, r.id, x.id, coalesce(r.environment_id,0),"
		" s.started_at, s.status, s.tampered, r.target, r.variant,"
		" r.role, r.model, r.model_label, r.runtime, r.status,"
		" r.verification, x.test, x.n_prompt, x.n_gen, x.n_depth,"
		" x.build_commit, e.os_build, e.os_version, e.identity,"
		" x.model_size, x.model_n_params"
		" FROM results x JOIN runs r ON r.id=x.run_id"
		" JOIN sessions s ON s.id=r.session_id"
		" LEFT JOIN environments e ON e.id=r.environment_id"
		" WHERE 1");
	for (i = 0; sel && i < sel->n; i++) {
		const char *col = NULL;

		for (k = 0; k < ARRAY_SIZE(sel_columns); k++)
			if (!strcmp(sel->keys[i], sel_columns[k].key))
				col = sel_columns[k].column;
		if (col)
			buf_addf(&sql, " AND %s=?%d", col, param++);
		else {
			buf_addf(&sql, " AND json_extract(e.fingerprint_json,"
				 " '$.' || ?%d)=?%d", param, param + 1);
			param += 2;
		}
	}
	buf_adds(&sql, " ORDER BY s.id, r.seq, r.id, x.idx");
	st = prepare(s, sql.buf);
	ss = prepare(s, "SELECT ts FROM samples WHERE result_id=?1"
			" ORDER BY idx");
	if (!st || !ss)
		goto cleanup;
	param = 1;
	for (i = 0; sel && i < sel->n; i++) {
		int mapped = 0;

		for (k = 0; k < ARRAY_SIZE(sel_columns); k++)
			if (!strcmp(sel->keys[i], sel_columns[k].key))
				mapped = 1;
		if (!mapped)
			bind_text(st, param++, sel->keys[i]);
		bind_text(st, param++, sel->values[i]);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_result *r;
		size_t cap = 0;

		rows = xrealloc(rows, (nrows + 1) * sizeof(*rows));
		r = &rows[nrows++];
		memset(r, 0, sizeof(*r));
		r->session_id = sqlite3_column_int64(st, 0);
		r->run_id = sqlite3_column_int64(st, 1);
		r->result_id = sqlite3_column_int64(st, 2);
		r->environment_id = sqlite3_column_int64(st, 3);
		r->session_started = col_text(st, 4);
		r->session_status = col_text(st, 5);
		r->session_tampered = sqlite3_column_int(st, 6);
		r->target = col_text(st, 7);
		r->variant = col_text(st, 8);
		r->role = col_text(st, 9);
		r->model = col_text(st, 10);
		r->model_label = col_text(st, 11);
		r->runtime = col_text(st, 12);
		r->run_status = col_text(st, 13);
		r->verification = col_text(st, 14);
		r->test = col_text(st, 15);
		r->n_prompt = sqlite3_column_int64(st, 16);
		r->n_gen = sqlite3_column_int64(st, 17);
		r->n_depth = sqlite3_column_int64(st, 18);
		r->build_commit = col_text(st, 19);
		r->os_build = col_text(st, 20);
		r->os_version = col_text(st, 21);
		r->identity = col_text(st, 22);
		r->model_size = sqlite3_column_int64(st, 23);
		r->model_n_params = sqlite3_column_int64(st, 24);
		sqlite3_bind_int64(ss, 1, r->result_id);
		while (sqlite3_step(ss) == SQLITE_ROW) {
			if (r->n == cap) {
				cap = cap ? cap * 2 : 16;
				r->ts = xrealloc(r->ts, cap * sizeof(double));
			}
			r->ts[r->n++] = sqlite3_column_double(ss, 0);
		}
		sqlite3_reset(ss);
	}
	if (rc != SQLITE_DONE) {
		db_error(s, "query results");
		goto cleanup;
	}
	*out = rows;
	*n = nrows;
	rows = NULL;
	nrows = 0;
	ret = 0;
cleanup:
	sqlite3_finalize(st);
	sqlite3_finalize(ss);
	store_results_free(rows, nrows);
	buf_release(&sql);
	s->nErr = 0;
	return ret;
}

void
store_results_free(struct store_result *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].session_started);
		free(r[i].session_status);
		free(r[i].target);
		free(r[i].variant);
		free(r[i].role);
		free(r[i].model);
		free(r[i].model_label);
		free(r[i].runtime);
		free(r[i].run_status);
		free(r[i].verification);
		free(r[i].test);
		free(r[i].build_commit);
		free(r[i].os_build);
		free(r[i].os_version);
		free(r[i].identity);
		free(r[i].ts);
	}
	free(r);
}

long
store_count(struct store *s, const char *table)
{
	static const char *const tables[] = {
		"sessions", "environments", "artifacts", "runs", "results",
		"samples", "hash_cache", "noise",
	};
	char sql[64];
	sqlite3_stmt *st;
	long n = -1;
	size_t i;

	/* Table names cannot be bound: only known names are accepted. */
	for (i = 0; i < ARRAY_SIZE(tables); i++)
		if (!strcmp(tables[i], table))
			break;
	if (i == ARRAY_SIZE(tables))
		return -1;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", tables[i]);
	st = prepare(s, sql);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int
store_dump_query(struct store *s, const char *sql)
{
	sqlite3_stmt *st = prepare(s, sql);
	int rc, i, ncol;

	if (!st)
		return -1;
	if (!sqlite3_stmt_readonly(st)) {
		sqlite3_finalize(st);
		return error("query is not read-only");
	}
	ncol = sqlite3_column_count(st);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; i < ncol; i++) {
			const unsigned char *t = sqlite3_column_text(st, i);
			printf("%s%s", i ? "\t" : "", t ? (const char *)t : "");
		}
		putchar('\n');
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(s, "query");
	return 0;
}

int
store_environment_update(struct store *s, int64_t id,
			 const char *fingerprint_json, const char *identity,
			 const char *base_identity)
{
	sqlite3_stmt *st = prepare(s,
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
	bind_text(st, 1, fingerprint_json);
	bind_text(st, 2, identity);
	bind_text(st, 3, base_identity);
	sqlite3_bind_int64(st, 4, id);
	return step_done(s, st, "update environment");
}

/*
 * The bundle.json of a session, built by SQLite's JSON functions from
 * the stored rows: session, environments keyed by target, models keyed
 * by name, runs in order.
 */
int
store_session_bundle_json(struct store *s, int64_t sid, struct buf *out)
{
	sqlite3_stmt *st = prepare(s,
		"SELECT json_object("
		" 'shimbench_bundle', 1,"
		" 'label', ss.label,"
		" 'session', json_object('kind', ss.kind, 'id', ss.id,"
		"   'started_at', ss.started_at, 'finished_at', ss.finished_at,"
		"   'status', ss.status, 'label', ss.label,"
		"   'plan', json(ss.plan_json),"
		"   'warnings', json(coalesce(ss.warnings_json, '[]'))),"
		" 'environments', (SELECT json_group_object(target,"
		"   json(fingerprint_json)) FROM environments"
		"   WHERE session_id=ss.id),"
		" 'models', (SELECT json_group_object(m.model, json_object("
		"   'label', m.model_label, 'sha256', a.sha256, 'file', a.path,"
		"   'size', a.size, 'facts', json(a.facts_json)))"
		"   FROM (SELECT DISTINCT model, model_label, artifact_id"
		"         FROM runs WHERE session_id=ss.id AND model IS NOT NULL"
		"         AND artifact_id IS NOT NULL) m"
		"   JOIN artifacts a ON a.id=m.artifact_id),"
		" 'runs', (SELECT json_group_array(json_object("
		"   'seq', seq, 'target', target, 'variant', variant,"
		"   'role', role, 'model', model, 'runtime', runtime,"
		"   'argv', json(argv_json), 'env', json(env_json),"
		"   'stdout', stdout_path, 'stderr', stderr_path,"
		"   'expect', json(expect_json), 'status', status,"
		"   'exit_code', exit_code, 'signal', signal,"
		"   'timed_out', json(CASE timed_out WHEN 0 THEN 'false'"
		"     ELSE 'true' END), 'wall_s', wall_s,"
		"   'verification', verification,"
		"   'verification_detail', verification_detail,"
		"   'error', error))"
		"   FROM (SELECT * FROM runs WHERE session_id=ss.id"
		"         ORDER BY seq, id)))"
		" FROM sessions ss WHERE ss.id=?1");
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		buf_adds(out, (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		return 0;
	}
	if (rc == SQLITE_DONE) {
		sqlite3_finalize(st);
		return error("store '%s' has no session %lld", s->path,
			     (long long)sid);
	}
	db_error(s, "bundle json");
	sqlite3_finalize(st);
	s->nErr = 0;
	return -1;
}

int
store_session_files(struct store *s, int64_t sid,
		    int (*fn)(void *ctx, const char *name, const char *sha256,
			      const char *text, size_t len),
		    void *ctx)
{
	sqlite3_stmt *st = prepare(s,
		"SELECT stdout_path, stdout_sha256, stdout_text FROM runs"
		" WHERE session_id=?1 AND stdout_path IS NOT NULL"
		" UNION ALL"
		" SELECT stderr_path, stderr_sha256, stderr_text FROM runs"
		" WHERE session_id=?1 AND stderr_path IS NOT NULL");
	int rc, ret = 0;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *sha = (const char *)sqlite3_column_text(st, 1);
		const char *text = (const char *)sqlite3_column_text(st, 2);
		size_t len = (size_t)sqlite3_column_bytes(st, 2);

		ret = fn(ctx, name, sha ? sha : "", text ? text : "", len);
	}
	sqlite3_finalize(st);
	return ret;
}

int
store_sessions_list(struct store *s, struct store_session **out, size_t *n)
{
	sqlite3_stmt *st = prepare(s,
		"SELECT ss.id, ss.kind, ss.started_at, ss.status,"
		" coalesce(ss.label, ss.source, ''), ss.tampered,"
		" (SELECT count(*) FROM runs r WHERE r.session_id=ss.id),"
		" (SELECT count(*) FROM runs r WHERE r.session_id=ss.id"
		"  AND r.verification='unverified'),"
		" coalesce((SELECT group_concat(DISTINCT e.os_build) FROM"
		"  environments e WHERE e.session_id=ss.id), '')"
		" FROM sessions ss ORDER BY ss.id");
	struct store_session *v = NULL;
	size_t k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_session *e;

		v = xrealloc(v, (k + 1) * sizeof(*v));
		e = &v[k++];
		e->id = sqlite3_column_int64(st, 0);
		e->kind = col_text(st, 1);
		e->started_at = col_text(st, 2);
		e->status = col_text(st, 3);
		e->label = col_text(st, 4);
		e->tampered = sqlite3_column_int(st, 5);
		e->runs = (long)sqlite3_column_int64(st, 6);
		e->unverified = (long)sqlite3_column_int64(st, 7);
		e->os_builds = col_text(st, 8);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_sessions_free(v, k);
		return db_error(s, "list sessions");
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
	}
	free(ss);
}

int
store_hash_cache_get(struct store *s, uint64_t dev, uint64_t ino,
		     int64_t size, int64_t mtime_ns, char sha256[65])
{
	sqlite3_stmt *st = prepare(s,
		"SELECT sha256 FROM hash_cache WHERE dev=?1 AND ino=?2"
		" AND size=?3 AND mtime_ns=?4");
	int rc, hit = 0;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, (int64_t)dev);
	sqlite3_bind_int64(st, 2, (int64_t)ino);
	sqlite3_bind_int64(st, 3, size);
	sqlite3_bind_int64(st, 4, mtime_ns);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		if (t && strlen((const char *)t) == 64) {
			memcpy(sha256, t, 65);
			hit = 1;
		}
	} else if (rc != SQLITE_DONE) {
		hit = db_error(s, "hash cache lookup");
	}
	sqlite3_finalize(st);
	s->nErr = 0;
	return hit;
}

int
store_hash_cache_put(struct store *s, uint64_t dev, uint64_t ino,
		     int64_t size, int64_t mtime_ns, const char *path,
		     const char *sha256)
{
	char now[21];
	sqlite3_stmt *st = prepare(s,
		"INSERT OR REPLACE INTO hash_cache(dev, ino, size, mtime_ns,"
		" path, sha256, checked_at) VALUES(?1,?2,?3,?4,?5,?6,?7)");
	int ret;

	if (!st)
		return -1;
	utc_now(now);
	sqlite3_bind_int64(st, 1, (int64_t)dev);
	sqlite3_bind_int64(st, 2, (int64_t)ino);
	sqlite3_bind_int64(st, 3, size);
	sqlite3_bind_int64(st, 4, mtime_ns);
	bind_text(st, 5, path);
	bind_text(st, 6, sha256);
	bind_text(st, 7, now);
	ret = step_done(s, st, "hash cache store");
	s->nErr = 0;
	return ret;
}

/* noise calibration and gate queries (compare/gate) */

int
store_noise_add(struct store *s, const struct noise_rec *r)
{
	char now[21];
	sqlite3_stmt *st = prepare(s,
		"INSERT INTO noise(identity, target, model, test, session_id,"
		" processes, samples, within_cv, between_cv, mde, created_at,"
		" details_json) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)");

	if (!st)
		return -1;
	utc_now(now);
	bind_text(st, 1, r->identity);
	bind_text(st, 2, r->target);
	bind_text(st, 3, r->model);
	bind_text(st, 4, r->test);
	bind_id(st, 5, r->session_id);
	sqlite3_bind_int(st, 6, r->processes);
	sqlite3_bind_int(st, 7, r->samples);
	sqlite3_bind_double(st, 8, r->within_cv);
	sqlite3_bind_double(st, 9, r->between_cv);
	sqlite3_bind_double(st, 10, r->mde);
	bind_text(st, 11, now);
	bind_text(st, 12, r->details_json);
	return insert_id(s, st, "add noise calibration", NULL);
}

int
store_noise_get(struct store *s, const char *identity, const char *model,
		const char *test, double *between, double *within,
		int64_t *session)
{
	sqlite3_stmt *st = prepare(s,
		"SELECT between_cv, within_cv, coalesce(session_id,0)"
		" FROM noise WHERE identity=?1 AND test=?2"
		" ORDER BY (model IS ?3) DESC, id DESC LIMIT 1");
	int rc, found = 0;

	if (!st)
		return -1;
	bind_text(st, 1, identity);
	bind_text(st, 2, test);
	bind_text(st, 3, model);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*between = sqlite3_column_double(st, 0);
		*within = sqlite3_column_double(st, 1);
		if (session)
			*session = sqlite3_column_int64(st, 2);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = db_error(s, "noise lookup");
	}
	sqlite3_finalize(st);
	s->nErr = 0;
	return found;
}

int
store_environment_base(struct store *s, int64_t env_id, char **base,
		       char **os_build)
{
	sqlite3_stmt *st = prepare(s,
		"SELECT coalesce(base_identity,''), coalesce(os_build,'')"
		" FROM environments WHERE id=?1");
	int rc, found = 0;

	*base = *os_build = NULL;
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, env_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*base = col_text(st, 0);
		*os_build = col_text(st, 1);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = db_error(s, "environment lookup");
	}
	sqlite3_finalize(st);
	s->nErr = 0;
	return found;
}

int
store_latest_session_base(struct store *s, const char *base,
			  const char *os_build, int64_t exclude,
			  int64_t *session)
{
	sqlite3_stmt *st = prepare(s,
		"SELECT e.session_id FROM environments e"
		" JOIN sessions x ON x.id=e.session_id"
		" WHERE e.base_identity=?1 AND coalesce(e.os_build,'') IS NOT ?2"
		" AND e.session_id<>?3"
		" ORDER BY x.started_at DESC, x.id DESC LIMIT 1");
	int rc, found = 0;

	if (!st)
		return -1;
	bind_text(st, 1, base);
	bind_text(st, 2, os_build);
	sqlite3_bind_int64(st, 3, exclude);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*session = sqlite3_column_int64(st, 0);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = db_error(s, "baseline lookup");
	}
	sqlite3_finalize(st);
	s->nErr = 0;
	return found;
}

/* doctor */
const char *
store_sqlite_version(void)
{
	return sqlite3_libversion();
}
