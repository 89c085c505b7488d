#define _POSIX_C_SOURCE 200809L
#include "evidence/store.h"
#include "evidence/llamabench.h"
#include "evidence/lbfields.h"
#include "evidence/selection.h"
#include "models/hash.h"
#include "base/files.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/*
 * The store keeps a sticky error count (nErr, as in SQLite's
 * sqlite3-rsync.c): once a statement fails, later steps of the same
 * operation are skipped and the caller gets -1 once.
 */
struct store {
	sqlite3 *db;
	char *path;
	int nErr;
	int in_tx;              /* inside store_begin() .. commit/rollback */
	struct store_config *configs;   /* the configs table, by id (cache) */
	size_t nconfigs;
	struct store_config none;       /* id 0: unknown */
	char **pool;                    /* interned result strings (hash set) */
	size_t npool, cap_pool;
	struct {                        /* statements asked for once per
					   session (provenance of 10,000) */
		char *sql;
		sqlite3_stmt *st;
	} cached[4];
};

static void configs_drop(struct store *s);

/*
 * Schema migrations, applied in order; user_version = index reached.
 * The sessions and runs tables are not spelled here: migrate() creates
 * them from their field tables (runrec.c) at version 1 and adds the
 * columns of later versions. A NULL entry is written by a function
 * (migration_sql()).
 */
static const char *const migrations[] = {
	/* 1: the initial schema (with sessions and runs from runrec.c) */
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
	/* 3: run columns of version 3 (runrec.c); lookups by session and by
	 * raw output */
	"CREATE INDEX environments_session ON environments(session_id);"
	"CREATE INDEX runs_stdout ON runs(stdout_sha256);"
	/* the hash cache keys on ctime too (NULL: never a hit) */
	"ALTER TABLE hash_cache ADD COLUMN ctime_ns INTEGER;",
	/* 4: where a result's spread comes from: its samples, or only the
	 * avg ± stddev a table (md, csv, sql) printed, kept as stddev_ts */
	"ALTER TABLE results ADD COLUMN stddev_ts REAL;"
	"ALTER TABLE results ADD COLUMN spread_source TEXT NOT NULL"
	"  DEFAULT 'samples';",
	/* 5: config_migration() */
	NULL,
};

/*
 * json_remove(col, '$.a', ...): a raw row without the fields that do
 * not change the measurement (lbfields.h: every name, json or markdown,
 * of a field that names the test, holds a result, or names the model or
 * the hardware; the model's identity is the run's SHA-256, else its
 * name, and the hardware's the fingerprint's).
 */
static void
config_of(struct buf *sql, const char *col)
{
	size_t i, k;

	buf_addf(sql, "json_remove(%s", col);
	for (i = 0; i < lb_nfields; i++) {
		const char *names[2] = { lb_fields[i].name, lb_fields[i].md };

		if (lb_fields[i].role == LB_CONFIG)
			continue;
		for (k = 0; k < 2 && names[k]; k++)
			buf_addf(sql, strchr(names[k], '/') ? ",'$.\"%s\"'" :
				 ",'$.%s'", names[k]);
	}
	buf_adds(sql, ")");
}

/*
 * 5: the configuration of each result (what changes the measurement:
 * config_of() its raw row), interned; a trigger keeps it, so writers
 * need not know. Rows that differ in it are never pooled. A table of its
 * own: a column of results would sit behind raw_json, and reading it
 * would read every raw row.
 */
static void
config_migration(struct buf *sql)
{
	buf_adds(sql, "CREATE TABLE configs(id INTEGER PRIMARY KEY,"
		 " json TEXT NOT NULL UNIQUE);"
		 "CREATE TABLE result_configs("
		 "  result_id INTEGER PRIMARY KEY REFERENCES results(id)"
		 " ON DELETE CASCADE,"
		 "  config_id INTEGER NOT NULL REFERENCES configs(id));"
		 "CREATE TRIGGER results_config AFTER INSERT ON results"
		 "  WHEN json_valid(NEW.raw_json) AND"
		 " json_type(NEW.raw_json)='object' BEGIN"
		 "  INSERT OR IGNORE INTO configs(json) VALUES(");
	config_of(sql, "NEW.raw_json");
	buf_adds(sql, ");"
		 "  INSERT OR REPLACE INTO result_configs(result_id, config_id)"
		 "    SELECT NEW.id, id FROM configs WHERE json=");
	config_of(sql, "NEW.raw_json");
	buf_adds(sql, ";END;INSERT OR IGNORE INTO configs(json) SELECT ");
	config_of(sql, "raw_json");
	buf_adds(sql, "  FROM results WHERE json_valid(raw_json) AND"
		 " json_type(raw_json)='object' ORDER BY id;"
		 "INSERT INTO result_configs(result_id, config_id)"
		 "  SELECT x.id, c.id FROM results x JOIN configs c ON c.json=");
	config_of(sql, "x.raw_json");
	buf_adds(sql, "  WHERE json_valid(x.raw_json) AND"
		 " json_type(x.raw_json)='object';");
}

/* The SQL of migration v (0-based), appended to sql. */
static void
migration_sql(struct buf *sql, int v)
{
	if (migrations[v])
		buf_adds(sql, migrations[v]);
	else if (v == 4)
		config_migration(sql);
}

/* The tables walked from field tables. */
static const struct {
	const char *table;
	const struct rec_field *fields;
	const size_t *n;
} rec_tables[] = {
	{ "sessions", sessionrec_fields, &sessionrec_nfields },
	{ "runs", runrec_fields, &runrec_nfields },
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

/*
 * exec_sql() for statements that can meet SQLITE_BUSY without the busy
 * handler being asked: switching a new store to WAL while other
 * processes open it too (SQLite gives up at once where waiting could
 * deadlock). Retried for as long as the busy timeout would wait.
 */
static int
exec_sql_retry(struct store *s, const char *sql)
{
	double give_up = mono_now() + 10;
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	int rc;

	while ((rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL)) == SQLITE_BUSY ||
	       rc == SQLITE_LOCKED) {
		if (mono_now() > give_up)
			break;
		nanosleep(&pause, NULL);
	}
	return rc == SQLITE_OK ? 0 : exec_sql(s, sql);
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

/*
 * A statement kept between calls (reset, its bindings cleared): for the
 * few lookups asked for once per session. Never finalize it; done_cached()
 * resets it. NULL after error().
 */
static sqlite3_stmt *
prepare_cached(struct store *s, const char *sql)
{
	size_t i;

	if (s->nErr)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(s->cached) && s->cached[i].sql; i++)
		if (!strcmp(s->cached[i].sql, sql)) {
			sqlite3_reset(s->cached[i].st);
			sqlite3_clear_bindings(s->cached[i].st);
			return s->cached[i].st;
		}
	if (i == ARRAY_SIZE(s->cached))
		return prepare(s, sql);         /* full: an ordinary one */
	s->cached[i].st = prepare(s, sql);
	if (s->cached[i].st)
		s->cached[i].sql = xstrdup(sql);
	return s->cached[i].st;
}

/* Ends the use of a statement from prepare_cached(). */
static void
done_cached(struct store *s, sqlite3_stmt *st)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(s->cached); i++)
		if (s->cached[i].st == st) {
			sqlite3_reset(st);
			return;
		}
	sqlite3_finalize(st);
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
schema_target(void)
{
	int target = (int)ARRAY_SIZE(migrations);
	size_t k, i;

	for (k = 0; k < ARRAY_SIZE(rec_tables); k++)
		for (i = 0; i < *rec_tables[k].n; i++)
			if (rec_tables[k].fields[i].since > target)
				target = rec_tables[k].fields[i].since;
	return target;
}

/* CREATE TABLE of a walked table at version 1. */
static void
create_sql(struct buf *sql, size_t k)
{
	size_t i;

	buf_addf(sql, "CREATE TABLE %s(id INTEGER PRIMARY KEY",
		 rec_tables[k].table);
	for (i = 0; i < *rec_tables[k].n; i++) {
		const struct rec_field *f = &rec_tables[k].fields[i];
		if (f->since == 1 && !(f->flags & REC_BUNDLE_ONLY))
			buf_addf(sql, ", %s %s", f->column, f->decl);
	}
	buf_adds(sql, ");");
}

/* The SQL that takes the schema from version v to v + 1. */
static void
step_sql(struct buf *sql, int v)
{
	size_t k, i;

	if (v == 0)
		for (k = 0; k < ARRAY_SIZE(rec_tables); k++)
			create_sql(sql, k);
	for (k = 0; v > 0 && k < ARRAY_SIZE(rec_tables); k++)
		for (i = 0; i < *rec_tables[k].n; i++) {
			const struct rec_field *f = &rec_tables[k].fields[i];
			if (f->since == v + 1 && !(f->flags & REC_BUNDLE_ONLY))
				buf_addf(sql, "ALTER TABLE %s ADD COLUMN %s %s;",
					 rec_tables[k].table, f->column,
					 f->decl);
		}
	if (v < (int)ARRAY_SIZE(migrations))
		migration_sql(sql, v);
	buf_addf(sql, "PRAGMA user_version=%d;", v + 1);
}

static int
migrate(struct store *s)
{
	int v = user_version(s), target = schema_target();
	struct buf sql = BUF_INIT;

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
	for (; v >= 0 && v < target && !s->nErr; v++) {
		buf_reset(&sql);
		step_sql(&sql, v);
		exec_sql(s, sql.buf);
	}
	buf_release(&sql);
	if (s->nErr || v < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec_sql(s, "COMMIT");
}

/*
 * path as a "file:" URI with params: SQLite then takes every path as a
 * file name (never "file::memory:" or "?mode=memory" from the user).
 */
static char *
path_uri(const char *path, const char *params)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
		"WXYZ0123456789-._~/";
	struct buf b = BUF_INIT;
	const char *p;

	/* "./" keeps a file named ":memory:" a file */
	buf_adds(&b, path[0] == '/' ? "file://" : "file:./");
	for (p = path; *p; p++)
		if (strchr(ok, *p))
			buf_addch(&b, *p);
		else
			buf_addf(&b, "%%%02X", (unsigned char)*p);
	buf_addf(&b, "?%s", params);
	return buf_detach(&b, NULL);
}

/* 1 when the store's write-ahead log exists (a writer may be active). */
static int
wal_exists(const char *path)
{
	char *wal = xstrfmt("%s-wal", path);
	int ret = access(wal, F_OK) == 0;

	free(wal);
	return ret;
}

int
store_open(struct store **out, const char *path)
{
	struct store *s;
	char *uri;
	int rc;

	*out = NULL;
	if (!*path || !strcmp(path, ":memory:"))
		return error("'%s' is not a file: a store that is written to "
			     "must be a file, or what is stored is lost at "
			     "exit (give --db PATH)", path);
	s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(path);
	uri = path_uri(path, "mode=rwc");
	rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		error("cannot open store '%s': %s", path,
		      s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	files_protect(path, "the store");
	sqlite3_busy_timeout(s->db, 10000);
	if (exec_sql(s, "PRAGMA foreign_keys=ON") < 0)
		goto fail;
	/* A file that is not a database fails here, not later. */
	if (exec_sql_retry(s, "PRAGMA journal_mode=WAL") < 0)
		goto fail;
	if (exec_sql(s, "PRAGMA synchronous=NORMAL") < 0 || migrate(s) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	store_close(s);
	return -1;
}

/* Opens path read-only through uri params; the first read happens here. */
static int
open_ro(struct store *s, const char *params, int *readonly_fs)
{
	char *uri = path_uri(s->path, params);
	int rc;

	*readonly_fs = 0;
	rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
			     SQLITE_OPEN_NOMUTEX,
			     NULL);
	free(uri);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(s->db, 10000);
		rc = sqlite3_exec(s->db, "SELECT count(*) FROM sqlite_master",
				  NULL, NULL, NULL);
	}
	if (rc == SQLITE_OK)
		return 0;
	rc = sqlite3_extended_errcode(s->db) & 0xff;
	*readonly_fs = rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN;
	if (!*readonly_fs)
		error("cannot read store '%s': %s", s->path,
		      s->db ? sqlite3_errmsg(s->db) : "out of memory");
	sqlite3_close(s->db);
	s->db = NULL;
	return -1;
}

int
store_open_readonly(struct store **out, const char *path)
{
	struct store *s = xcalloc(1, sizeof(*s));
	int v, target = schema_target(), rofs;

	*out = NULL;
	s->path = xstrdup(path);
	if (open_ro(s, "mode=ro", &rofs) < 0) {
		/*
		 * A WAL store needs its -shm file, which cannot be made on a
		 * read-only mount or in another user's directory. Without a
		 * -wal file the database file holds every commit, so it is
		 * read as immutable.
		 */
		if (!rofs)
			goto fail;
		if (wal_exists(path)) {
			error("cannot read store '%s': its write-ahead log exists "
			      "(a writer may be at work) and its shared-memory "
			      "file cannot be made here", path);
			goto fail;
		}
		if (open_ro(s, "mode=ro&immutable=1", &rofs) < 0) {
			if (rofs)
				error("cannot read store '%s': %s", path,
				      access(path, R_OK) < 0 ? strerror(errno) :
				      "not a database that can be opened");
			goto fail;
		}
	}
	files_protect(path, "the store");
	v = user_version(s);
	if (v < 0)
		goto fail;
	if (v != target) {
		error("store '%s' has schema version %d; this shimbench %s %d "
		      "(%s)", path, v, v > target ? "knows up to" : "reads",
		      target, v > target ? "upgrade shimbench" :
		      "a writing command such as import upgrades it");
		goto fail;
	}
	if (exec_sql(s, "PRAGMA query_only=ON") < 0)
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
	size_t i;

	if (!s)
		return;
	for (i = 0; i < ARRAY_SIZE(s->cached); i++) {
		sqlite3_finalize(s->cached[i].st);
		free(s->cached[i].sql);
	}
	sqlite3_close(s->db);
	configs_drop(s);
	for (i = 0; i < s->cap_pool; i++)
		free(s->pool[i]);
	free(s->pool);
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
	if (exec_sql(s, "BEGIN IMMEDIATE") < 0)
		return -1;
	s->in_tx = 1;
	return 0;
}

int
store_read_begin(struct store *s)
{
	if (s->in_tx)
		return 0;
	s->nErr = 0;
	if (exec_sql(s, "BEGIN") < 0)
		return -1;
	s->in_tx = 2;
	return 0;
}

void
store_read_end(struct store *s)
{
	if (s->in_tx != 2)
		return;
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	s->in_tx = 0;
	s->nErr = 0;
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
	s->in_tx = 0;
	return 0;
}

void
store_rollback(struct store *s)
{
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->nErr = 0;
	s->in_tx = 0;
}

/*
 * Every public function starts with this: outside a transaction a past
 * error is forgotten; inside one it stays until commit or rollback.
 */
static void
op_begin(struct store *s)
{
	if (!s->in_tx)
		s->nErr = 0;
}

/*
 * The raw files stored with each run against their recorded SHA-256: a
 * zeroed overflow page holds no b-tree structure for quick_check to miss
 * or catch, only content, and run records keep their later columns
 * (verification, start time) behind the raw text.
 */
static int
check_raw_copies(struct store *s, struct buf *msg)
{
	static const char *const cols[][2] = {
		{ "stdout_text", "stdout_sha256" },
		{ "stderr_text", "stderr_sha256" },
		{ "probe_text", "probe_sha256" },
	};
	sqlite3_stmt *st = prepare(s, "SELECT id, seq, session_id,"
				   " stdout_text, stdout_sha256, stderr_text,"
				   " stderr_sha256, probe_text, probe_sha256"
				   " FROM runs");
	int rc, bad = 0;
	size_t k;

	if (!st)
		return 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (k = 0; k < ARRAY_SIZE(cols); k++) {
			const void *p = sqlite3_column_blob(st, 3 + 2 * (int)k);
			size_t n = (size_t)sqlite3_column_bytes(st, 3 + 2 * (int)k);
			const unsigned char *want =
				sqlite3_column_text(st, 4 + 2 * (int)k);
			char have[65];

			if (sqlite3_column_type(st, 3 + 2 * (int)k) == SQLITE_NULL ||
			    !want)
				continue;
			hash_buf_sha256(p ? p : "", n, have);
			if (strcasecmp(have, (const char *)want)) {
				if (bad++ < 3)
					buf_addf(msg, "%srun %lld of session %lld: "
						 "its stored %s does not match its "
						 "SHA-256", msg->len ? "; " : "",
						 (long long)sqlite3_column_int64(st, 1),
						 (long long)sqlite3_column_int64(st, 2),
						 cols[k][0]);
			}
		}
	}
	if (rc != SQLITE_DONE) {
		buf_addf(msg, "%s%s", msg->len ? "; " : "",
			 sqlite3_errmsg(s->db));
		bad++;
	}
	sqlite3_finalize(st);
	return bad;
}

int
store_check(struct store *s)
{
	sqlite3_stmt *st;
	struct buf msg = BUF_INIT;
	int rc, n = 0, ret = 0;

	op_begin(s);
	st = prepare(s, "PRAGMA quick_check");
	if (!st)
		return error("store '%s' is damaged; restore it from a backup "
			     "or import the evidence again", s->path);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		if (t && !strcmp(t, "ok") && n == 0)
			continue;
		if (n++ < 3)
			buf_addf(&msg, "%s%s", msg.len ? "; " : "", t ? t : "");
	}
	if (rc != SQLITE_DONE) {
		buf_addf(&msg, "%s%s", msg.len ? "; " : "",
			 sqlite3_errmsg(s->db));
		n++;
	}
	sqlite3_finalize(st);
	if (!n)
		n = check_raw_copies(s, &msg);
	if (n)
		ret = error("store '%s' is damaged (%s); restore it from a "
			    "backup or import the evidence again", s->path,
			    msg.buf);
	buf_release(&msg);
	return ret;
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

/* ---- records walked from their field tables --------------------------- */

static size_t
table_of(const struct rec_field *fields)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(rec_tables); k++)
		if (rec_tables[k].fields == fields)
			return k;
	die("store: unknown record table");
}

static int
stored(const struct rec_field *f)
{
	return !(f->flags & REC_BUNDLE_ONLY);
}

static void
bind_field(sqlite3_stmt *st, int i, const struct rec_field *f,
	   const void *rec)
{
	const void *p = (const char *)rec + f->offset;
	int64_t v;
	double d;

	switch (f->type) {
	case REC_TEXT:
	case REC_JSON: {
		const char *str = *(char *const *)p;
		bind_text(st, i, str ? str : f->dflt);
		break;
	}
	case REC_INT:
	case REC_BOOL:
		v = *(const int64_t *)p;
		if (((f->flags & REC_ZERO_NULL) && v == 0) ||
		    ((f->flags & REC_NEG_NULL) && v < 0))
			sqlite3_bind_null(st, i);
		else
			sqlite3_bind_int64(st, i, f->type == REC_BOOL ? v != 0 : v);
		break;
	case REC_REAL:
		d = *(const double *)p;
		if (isfinite(d))
			sqlite3_bind_double(st, i, d);
		else
			sqlite3_bind_null(st, i);
		break;
	case REC_BLOB: {
		const struct rec_blob *b = p;
		if (b->p)
			sqlite3_bind_blob64(st, i, b->p, b->n, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, i);
		break;
	}
	}
}

/* Reads column i of st into field f of rec. */
static void
read_field(sqlite3_stmt *st, int i, const struct rec_field *f, void *rec)
{
	void *p = (char *)rec + f->offset;
	int null = sqlite3_column_type(st, i) == SQLITE_NULL;

	switch (f->type) {
	case REC_TEXT:
	case REC_JSON:
		*(char **)p = null ? NULL :
			xstrdup((const char *)sqlite3_column_text(st, i));
		break;
	case REC_INT:
	case REC_BOOL:
		*(int64_t *)p = null ? ((f->flags & REC_NEG_NULL) ? -1 : 0) :
			sqlite3_column_int64(st, i);
		break;
	case REC_REAL:
		*(double *)p = null ? NAN : sqlite3_column_double(st, i);
		break;
	case REC_BLOB: {
		struct rec_blob *b = p;
		const void *data = sqlite3_column_blob(st, i);
		size_t n = (size_t)sqlite3_column_bytes(st, i);
		if (null) {
			b->p = NULL;
			b->n = 0;
		} else {
			*b = rec_blob_dup(data, n);
		}
		break;
	}
	}
}

/* INSERT of a record into its table; *id gets the new row's id. */
static int
rec_insert(struct store *s, const struct rec_field *fields, const void *rec,
	   int64_t *id)
{
	size_t k = table_of(fields), i, n = *rec_tables[k].n;
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st;
	int param = 0;

	buf_addf(&sql, "INSERT INTO %s(", rec_tables[k].table);
	for (i = 0; i < n; i++)
		if (stored(&fields[i]))
			buf_addf(&sql, "%s%s", param++ ? ", " : "",
				 fields[i].column);
	buf_adds(&sql, ") VALUES(");
	for (i = 0; i < (size_t)param; i++)
		buf_addf(&sql, "%s?%zu", i ? "," : "", i + 1);
	buf_adds(&sql, ")");
	st = prepare(s, sql.buf);
	buf_release(&sql);
	if (!st)
		return -1;
	for (i = 0, param = 1; i < n; i++)
		if (stored(&fields[i]))
			bind_field(st, param++, &fields[i], rec);
	return insert_id(s, st, rec_tables[k].table, id);
}

/* "SELECT id, col… FROM table " for a walked table. */
static void
select_sql(struct buf *sql, const struct rec_field *fields, const char *rest)
{
	size_t k = table_of(fields), i;

	buf_adds(sql, "SELECT id");
	for (i = 0; i < *rec_tables[k].n; i++)
		if (stored(&fields[i]))
			buf_addf(sql, ", %s", fields[i].column);
	buf_addf(sql, " FROM %s %s", rec_tables[k].table, rest);
}

/* Reads the current row of a select_sql() statement into rec. */
static void
read_rec(sqlite3_stmt *st, const struct rec_field *fields, void *rec,
	 int64_t *id)
{
	size_t k = table_of(fields), i;
	int col = 1;

	*id = sqlite3_column_int64(st, 0);
	for (i = 0; i < *rec_tables[k].n; i++)
		if (stored(&fields[i]))
			read_field(st, col++, &fields[i], rec);
}

int
store_session_add(struct store *s, const struct session_rec *r, int64_t *id)
{

	op_begin(s);
	return rec_insert(s, sessionrec_fields, r, id);
}

int
store_session_get(struct store *s, int64_t id, struct session_rec *out)
{
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st;
	int rc, found = 0;

	op_begin(s);
	memset(out, 0, sizeof(*out));
	select_sql(&sql, sessionrec_fields, "WHERE id=?1");
	st = prepare_cached(s, sql.buf);
	buf_release(&sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		read_rec(st, sessionrec_fields, out, &out->id);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = db_error(s, "read session");
	}
	done_cached(s, st);
	return found;
}

int
store_session_find_hash(struct store *s, const char *hash, int64_t *id)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	op_begin(s);
	st = prepare(s,
		"SELECT id FROM sessions WHERE content_hash=?1");

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
	sqlite3_stmt *st;

	op_begin(s);
	st = prepare(s,
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
	sqlite3_stmt *st;

	op_begin(s);
	st = prepare(s,
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
	sqlite3_stmt *st;

	op_begin(s);
	st = prepare(s,
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
	sqlite3_stmt *st;
	int rc;

	op_begin(s);
	st = prepare(s,
		"INSERT INTO artifacts(sha256, kind, path, size, facts_json)"
		" VALUES(?1,?2,?3,?4,?5)"
		" ON CONFLICT(sha256, kind) DO UPDATE SET"
		"  path=coalesce(excluded.path, path),"
		"  size=coalesce(excluded.size, size),"
		"  facts_json=coalesce(excluded.facts_json, facts_json)"
		" RETURNING id");

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

	op_begin(s);
	return rec_insert(s, runrec_fields, r, id);
}

int
store_runs_get(struct store *s, int64_t sid, struct run_rec **out, size_t *n)
{
	struct buf sql = BUF_INIT;
	struct run_rec *v = NULL;
	sqlite3_stmt *st;
	size_t k = 0;
	int rc;

	op_begin(s);
	*out = NULL;
	*n = 0;
	select_sql(&sql, runrec_fields, "WHERE session_id=?1 ORDER BY seq, id");
	st = prepare(s, sql.buf);
	buf_release(&sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (k + 1) * sizeof(*v));
		memset(&v[k], 0, sizeof(*v));
		read_rec(st, runrec_fields, &v[k], &v[k].id);
		k++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_runs_free(v, k);
		return db_error(s, "read runs");
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

int
store_result_add(struct store *s, int64_t run_id, int idx,
		 const struct lb_row *row, int64_t *id)
{
	sqlite3_stmt *st;
	int64_t rid;
	size_t i;

	op_begin(s);
	st = prepare(s,
		"INSERT INTO results(run_id, idx, test, n_prompt, n_gen,"
		" n_depth, threads, ngl, flash_attn, backend, build_commit,"
		" build_number, model_type, model_size, model_n_params,"
		" avg_ts, raw_json, stddev_ts, spread_source)"
		" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,"
		"?16,?17,?18,?19)");

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
	/* rows not made by lb_parse (MLX-LM) have no printed deviation */
	if (row->spread_source && isfinite(row->stddev_ts))
		sqlite3_bind_double(st, 18, row->stddev_ts);
	else
		sqlite3_bind_null(st, 18);
	bind_text(st, 19, row->spread_source ? row->spread_source :
		  row->n_samples ? "samples" : "table");
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

/* The SQL of the selection keys that name a column, by enum sel_key. */
static const char *const sel_columns[SEL_NKEYS] = {
	[SEL_KEY_SESSION] = "r.session_id",
	[SEL_KEY_VARIANT] = "r.variant",
	[SEL_KEY_TARGET] = "r.target",
	[SEL_KEY_MODEL] = "r.model",
	[SEL_KEY_ROLE] = "r.role",
	[SEL_KEY_RUNTIME] = "r.runtime",
	[SEL_KEY_STATUS] = "r.status",
	[SEL_KEY_SESSION_STATUS] = "s.status",
	[SEL_KEY_TAMPERED] = "s.tampered",
	[SEL_KEY_VERIFICATION] = "r.verification",
	[SEL_KEY_TEST] = "x.test",
	[SEL_KEY_OS_BUILD] = "e.os_build",
	[SEL_KEY_OS_VERSION] = "e.os_version",
	[SEL_KEY_IDENTITY] = "e.identity",
	[SEL_KEY_BASE_IDENTITY] = "e.base_identity",
	[SEL_KEY_KIND] = "s.kind",
	[SEL_KEY_LABEL] = "s.label",
	[SEL_KEY_BUILD] = "x.build_commit",
	[SEL_KEY_SHA256] = "coalesce(r.model_sha256, a.sha256, '')",
};

static char *
col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return xstrdup(t ? (const char *)t : "");
}

static char *
col_text_null(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? xstrdup((const char *)t) : NULL;
}

/* ---- configurations -------------------------------------------------------- */

static void
config_release(struct store_config *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->keys[i]);
		free(c->values[i]);
	}
	free(c->keys);
	free(c->values);
	free(c->canon);
	memset(c, 0, sizeof(*c));
}

static void
configs_drop(struct store *s)
{
	size_t i;

	for (i = 0; i < s->nconfigs; i++)
		config_release(&s->configs[i]);
	free(s->configs);
	s->configs = NULL;
	s->nconfigs = 0;
	config_release(&s->none);
}

/* "$.a.b" or '$."t/s"' as "a.b" and "t/s" (caller frees). */
static char *
config_key(const char *fullkey)
{
	struct buf b = BUF_INIT;
	const char *p = fullkey;

	if (p[0] == '$')
		p++;
	if (p[0] == '.')
		p++;
	for (; *p; p++)
		if (*p != '"')
			buf_addch(&b, *p);
	return buf_detach(&b, NULL);
}

static int
cmp_kv(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;

	return strcmp(x[0], y[0]);
}

/* Sorts c's fields by key and writes its canonical text. */
static void
config_finish(struct store_config *c)
{
	char **kv = xcalloc(2 * c->n + 2, sizeof(char *));
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < c->n; i++) {
		kv[2 * i] = c->keys[i];
		kv[2 * i + 1] = c->values[i];
	}
	qsort(kv, c->n, 2 * sizeof(char *), cmp_kv);
	for (i = 0; i < c->n; i++) {
		c->keys[i] = kv[2 * i];
		c->values[i] = kv[2 * i + 1];
		buf_addf(&b, "%s=%s\n", c->keys[i], c->values[i]);
	}
	free(kv);
	c->canon = buf_detach(&b, NULL);
}

/*
 * (Re)loads the configs table into the cache: one statement over the
 * table's leaves (json_tree), a few rows per configuration.
 */
static int
configs_load(struct store *s)
{
	sqlite3_stmt *st;
	int64_t max_id = 0;
	int rc;

	configs_drop(s);
	s->none.canon = xstrdup("");
	st = prepare(s, "SELECT max(id) FROM configs");
	if (!st)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		max_id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	s->configs = xcalloc((size_t)max_id + 1, sizeof(*s->configs));
	s->nconfigs = (size_t)max_id + 1;
	st = prepare(s, "SELECT c.id, j.fullkey, j.type, j.atom FROM configs c,"
		     " json_tree(c.json) j WHERE j.type NOT IN ('object','array')"
		     " ORDER BY c.id");
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		struct store_config *c;
		const char *type = (const char *)sqlite3_column_text(st, 2);
		const char *atom = (const char *)sqlite3_column_text(st, 3);

		if (id < 0 || id > max_id)
			continue;
		c = &s->configs[id];
		c->id = id;
		c->keys = xrealloc(c->keys, (c->n + 1) * sizeof(char *));
		c->values = xrealloc(c->values, (c->n + 1) * sizeof(char *));
		c->keys[c->n] = config_key((const char *)
					   sqlite3_column_text(st, 1));
		c->values[c->n] = xstrdup(type && !strcmp(type, "true") ?
					  "true" : type && !strcmp(type, "false") ?
					  "false" : atom ? atom : "null");
		c->n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(s, "read configurations");
	for (max_id = 0; (size_t)max_id < s->nconfigs; max_id++) {
		struct store_config *c = &s->configs[max_id];

		c->id = max_id;
		config_finish(c);
	}
	return 0;
}

const struct store_config *
store_config_get(struct store *s, int64_t id)
{
	if (!s->none.canon || (id > 0 && (size_t)id >= s->nconfigs)) {
		op_begin(s);
		if (configs_load(s) < 0)
			return NULL;
	}
	if (id <= 0 || (size_t)id >= s->nconfigs)
		return &s->none;
	return &s->configs[id];
}

const char *
store_config_value(const struct store_config *c, const char *key)
{
	size_t i;

	for (i = 0; c && i < c->n; i++)
		if (!strcmp(c->keys[i], key))
			return c->values[i];
	for (i = 0; c && i < c->n; i++)
		if (lb_field_same(c->keys[i], key))
			return c->values[i];
	return NULL;
}

/* 1 when key names a configuration field whatever the store holds: one
 * with two names (backend and backends, fa and flash_attn). */
static int
config_alias(const char *key)
{
	const struct lb_field *f = lb_field_find(key);

	return f && f->md && f->role == LB_CONFIG;
}

/* 1 when key names a field of some stored configuration (or an alias). */
static int
config_key_known(struct store *s, const char *key)
{
	size_t i;

	if (!store_config_get(s, 0))
		return -1;
	if (config_alias(key))
		return 1;
	for (i = 0; i < s->nconfigs; i++)
		if (store_config_value(&s->configs[i], key))
			return 1;
	return 0;
}

/* ---- queries ---------------------------------------------------------------- */

/* Appends to names the distinct keys of the stored fingerprints. */
static int
fingerprint_keys(struct store *s, char ***names, size_t *n)
{
	sqlite3_stmt *st = prepare(s, "SELECT DISTINCT j.key FROM"
				   " environments e, json_each(e.fingerprint_json) j"
				   " WHERE json_valid(e.fingerprint_json)");
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*names = strv_push(*names, n, col_text(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(s, "fingerprint keys");
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * What a key not among the columns is: 1 a configuration field, 2 a
 * fingerprint key; -2 after error() naming the keys known; -1 error.
 */
static int
key_kind(struct store *s, const char *key)
{
	char **names = NULL;
	size_t n = 0, i, k;
	struct buf b = BUF_INIT;
	int rc = config_key_known(s, key);

	if (rc)
		return rc < 0 ? -1 : 1;
	if (fingerprint_keys(s, &names, &n) < 0)
		return -1;
	for (i = 0; i < n && strcmp(names[i], key); i++)
		;
	if (i < n) {
		strv_free(names);
		return 2;
	}
	/* unknown: name everything that is known */
	for (k = 1; k < SEL_NKEYS; k++)
		names = strv_push(names, &n,
				  xstrdup(selection_key_name((enum sel_key)k)));
	names = strv_push(names, &n, xstrdup("include"));
	for (k = 0; k < s->nconfigs; k++)
		for (i = 0; i < s->configs[k].n; i++)
			names = strv_push(names, &n,
					  xstrdup(s->configs[k].keys[i]));
	for (k = 0; k < lb_nfields; k++)
		if (config_alias(lb_fields[k].name))
			names = strv_push(names, &n, xstrdup(lb_fields[k].md));
	qsort(names, n, sizeof(char *), cmp_str);
	for (i = 0; i < n; i++)
		if (!i || strcmp(names[i], names[i - 1]))
			buf_addf(&b, "%s%s", b.len ? ", " : "", names[i]);
	error("unknown selection key '%s'; known keys: %s", key, b.buf);
	buf_release(&b);
	strv_free(names);
	return -2;
}

/*
 * The WHERE clause of a selection (after "WHERE 1") and, in order, the
 * values to bind (NULL-terminated; owned by the caller). counted: the
 * default exclusion applies, else its negation (what it left out).
 * 0; -2 unknown key; -1 error.
 */
static int
where_of(struct store *s, const struct selection *sel, int counted,
	 struct buf *w, char ***binds)
{
	size_t nb = 0, i, k;
	unsigned inc = sel ? sel->include : 0;
	struct buf cond = BUF_INIT;

	*binds = xcalloc(1, sizeof(char *));
	for (i = 0; sel && i < sel->n; i++) {
		const struct sel_term *t = &sel->t[i];
		int kind;

		if (t->latest >= 0) {
			buf_adds(w, " AND r.session_id=(SELECT id FROM sessions"
				 " ORDER BY id DESC LIMIT 1 OFFSET ?)");
			*binds = strv_push(*binds, &nb, xstrfmt("%ld", t->latest));
			continue;
		}
		if (t->key != SEL_KEY_OTHER) {
			buf_addf(w, " AND %s=?", sel_columns[t->key]);
			*binds = strv_push(*binds, &nb, xstrdup(t->value));
			continue;
		}
		kind = key_kind(s, t->name);
		if (kind < 0) {
			strv_free(*binds);
			*binds = NULL;
			return kind;
		}
		if (kind == 2) {
			buf_adds(w, " AND json_extract(e.fingerprint_json,"
				 " '$.' || ?)=?");
			*binds = strv_push(*binds, &nb, xstrdup(t->name));
			*binds = strv_push(*binds, &nb, xstrdup(t->value));
			continue;
		}
		/* a configuration field: the ids whose value matches */
		buf_adds(w, " AND coalesce(rc.config_id,0) IN (-1");
		for (k = 1; k < s->nconfigs; k++) {
			const char *v = store_config_value(&s->configs[k], t->name);

			if (v && selection_value_matches(v, t->value))
				buf_addf(w, ",%zu", k);
		}
		buf_adds(w, ")");
	}
	/* the default: what counts (selection.h) */
	buf_adds(&cond, "(s.status IN (");
	for (i = k = 0; i < selection_nstatuses; i++)
		if (!selection_statuses[i].bit || (selection_statuses[i].bit & inc)) {
			buf_adds(&cond, k++ ? ",?" : "?");
			*binds = strv_push(*binds, &nb,
					   xstrdup(selection_statuses[i].status));
		}
	buf_adds(&cond, ")");
	if (!(inc & SEL_TAMPERED))
		buf_adds(&cond, " AND s.tampered=0");
	if (!(inc & SEL_PARTIAL))
		buf_adds(&cond, " AND r.status='ok'");
	buf_adds(&cond, ")");
	buf_addf(w, counted ? " AND %s" : " AND NOT %s", cond.buf);
	buf_release(&cond);
	return 0;
}

static void
bind_all(sqlite3_stmt *st, char *const *binds)
{
	int i;

	for (i = 0; binds && binds[i]; i++)
		bind_text(st, i + 1, binds[i]);
}

#define RESULTS_FROM \
	" FROM results x JOIN runs r ON r.id=x.run_id" \
	" LEFT JOIN result_configs rc ON rc.result_id=x.id" \
	" JOIN sessions s ON s.id=r.session_id" \
	" LEFT JOIN environments e ON e.id=r.environment_id" \
	" LEFT JOIN artifacts a ON a.id=r.artifact_id" \
	" WHERE 1"

struct rid_row {
	int64_t id;
	size_t row;
};

static int
cmp_rid(const void *a, const void *b)
{
	const struct rid_row *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * The samples of rows[0..n), one statement: the samples table read in
 * its primary key's order over the range of the rows' result ids (no
 * join: a sample whose result is not a row is skipped), placed by
 * result id in idx order.
 */
/*
 * One pass over the samples of result ids [lo, hi], placed into rows by
 * ix. scan: the table in its own (insertion) order, every row read once
 * (for large selections); else the primary key's index over the range.
 * Returns 0; 1 when a scan met samples out of idx order (the caller
 * reads again by the index); -1 after error().
 */
static int
samples_pass(struct store *s, struct store_result *rows, size_t n,
	     const struct rid_row *ix, int scan, double **all_ts,
	     size_t **all_row, size_t *nall)
{
	size_t cap = 0, last = 0;
	sqlite3_stmt *st;
	int rc;

	*nall = 0;
	st = prepare(s, scan ?
		     "SELECT result_id, idx, ts FROM samples NOT INDEXED"
		     " WHERE result_id BETWEEN ?1 AND ?2" :
		     "SELECT result_id, idx, ts FROM samples"
		     " WHERE result_id BETWEEN ?1 AND ?2 ORDER BY result_id, idx");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, ix[0].id);
	sqlite3_bind_int64(st, 2, ix[n - 1].id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		size_t lo = 0, hi = n, k;

		if (ix[last].id != id) {
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (ix[mid].id < id)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == n || ix[lo].id != id)
				continue;   /* not a row of the selection */
			last = lo;
		}
		k = ix[last].row;
		if (sqlite3_column_int64(st, 1) != (int64_t)rows[k].n) {
			sqlite3_finalize(st);
			return 1;           /* out of idx order */
		}
		if (*nall == cap) {
			cap = cap ? 2 * cap : 1024;
			*all_ts = xrealloc(*all_ts, cap * sizeof(double));
			*all_row = xrealloc(*all_row, cap * sizeof(size_t));
		}
		(*all_ts)[*nall] = sqlite3_column_double(st, 2);
		(*all_row)[(*nall)++] = k;
		rows[k].n++;
	}
	sqlite3_finalize(st);
	/* A damaged page is an error, never fewer samples. */
	if (rc != SQLITE_DONE)
		return db_error(s, "query samples");
	return 0;
}

/*
 * The samples of rows[0..n), one statement (two when a table scan meets
 * samples out of order): read over the range of the rows' result ids
 * without a join (a sample whose result is not a row is skipped) and
 * placed by result id in idx order.
 */
static int
load_samples(struct store *s, struct store_result *rows, size_t n)
{
	struct rid_row *ix = xcalloc(n + 1, sizeof(*ix));
	double *all_ts = NULL;
	size_t *all_row = NULL, nall = 0, i, *fill = NULL;
	int rc, ret = -1;

	if (!n) {
		free(ix);
		return 0;
	}
	for (i = 0; i < n; i++) {
		ix[i].id = rows[i].result_id;
		ix[i].row = i;
	}
	qsort(ix, n, sizeof(*ix), cmp_rid);
	/* many results: one sequential scan beats an index lookup per sample */
	rc = samples_pass(s, rows, n, ix, n > 5000, &all_ts, &all_row, &nall);
	if (rc == 1) {
		for (i = 0; i < n; i++)
			rows[i].n = 0;
		rc = samples_pass(s, rows, n, ix, 0, &all_ts, &all_row, &nall);
	}
	if (rc != 0)
		goto cleanup;
	fill = xcalloc(n + 1, sizeof(size_t));
	for (i = 0; i < n; i++)
		rows[i].ts = xmalloc((rows[i].n ? rows[i].n : 1) * sizeof(double));
	for (i = 0; i < nall; i++)
		rows[all_row[i]].ts[fill[all_row[i]]++] = all_ts[i];
	ret = 0;
cleanup:
	free(all_ts);
	free(all_row);
	free(fill);
	free(ix);
	return ret;
}

/* The order of result rows: session, run seq, run id, result idx. */
struct row_key {
	int64_t session, seq, run, idx;
	size_t pos;
};

static int
cmp_row_key(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;

	if (x->session != y->session)
		return x->session < y->session ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static uint64_t
str_hash(const char *t, size_t len)
{
	uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)t[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/*
 * Column i as a string owned by the store (one copy per distinct value:
 * a result query repeats the same few hundred strings many thousands of
 * times). "" for NULL.
 */
static char *
col_interned(struct store *s, sqlite3_stmt *st, int i, char **lastv)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	size_t len = t ? (size_t)sqlite3_column_bytes(st, i) : 0, k;
	uint64_t h;

	if (!t)
		t = "";
	/* consecutive rows mostly repeat a column's value */
	if (lastv[i] && !strncmp(lastv[i], t, len) && !lastv[i][len])
		return lastv[i];
	if (2 * (s->npool + 1) > s->cap_pool) {
		size_t cap = s->cap_pool ? 2 * s->cap_pool : 1024;
		char **pool = xcalloc(cap, sizeof(char *));

		for (k = 0; k < s->cap_pool; k++) {
			size_t j;

			if (!s->pool[k])
				continue;
			j = str_hash(s->pool[k], strlen(s->pool[k])) & (cap - 1);
			while (pool[j])
				j = (j + 1) & (cap - 1);
			pool[j] = s->pool[k];
		}
		free(s->pool);
		s->pool = pool;
		s->cap_pool = cap;
	}
	h = str_hash(t, len);
	for (k = h & (s->cap_pool - 1); s->pool[k]; k = (k + 1) & (s->cap_pool - 1))
		if (!strncmp(s->pool[k], t, len) && !s->pool[k][len])
			return lastv[i] = s->pool[k];
	s->pool[k] = xstrndup(t, len);
	s->npool++;
	return lastv[i] = s->pool[k];
}

int
store_query_results(struct store *s, const struct selection *sel,
		    struct store_result **out, size_t *n)
{
	struct buf sql = BUF_INIT, where = BUF_INIT;
	struct store_result *rows = NULL;
	struct row_key *keys = NULL;
	size_t nrows = 0, cap = 0;
	char **binds = NULL, *lastv[40] = { 0 };
	sqlite3_stmt *st = NULL;
	int rc, ret = -1, sorted = 1;

	op_begin(s);
	*out = NULL;
	*n = 0;
	if (!store_config_get(s, 0))
		return -1;
	rc = where_of(s, sel, 1, &where, &binds);
	if (rc < 0) {
		buf_release(&where);
		return rc;
	}
	buf_addf(&sql,
		"SELECT s.id, r.id, x.id, coalesce(r.environment_id,0),"
		" coalesce(rc.config_id,0), s.started_at,"
		" CASE WHEN coalesce(r.started_at,'')<>'' THEN r.started_at"
		"  ELSE coalesce(json_extract(x.raw_json,'$.test_time'),'') END,"
		" s.status, s.tampered, r.target, r.variant,"
		" r.role, r.model, r.model_label, r.runtime,"
		" coalesce(r.model_sha256, a.sha256, ''), r.status,"
		" r.verification, x.test, x.n_prompt, x.n_gen, x.n_depth,"
		" x.build_commit, e.os_build, e.os_version, e.identity,"
		" e.base_identity, x.model_size, x.model_n_params, r.seq, x.idx,"
		" x.avg_ts, x.stddev_ts, coalesce(x.spread_source,'samples')"
		RESULTS_FROM "%s", where.buf);
	st = prepare(s, sql.buf);
	if (!st)
		goto cleanup;
	bind_all(st, binds);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_result *r;
		int k = 0;

		if (nrows == cap) {
			cap = cap ? 2 * cap : 64;
			rows = xrealloc(rows, cap * sizeof(*rows));
			keys = xrealloc(keys, cap * sizeof(*keys));
		}
		r = &rows[nrows++];
		memset(r, 0, sizeof(*r));
		r->session_id = sqlite3_column_int64(st, k++);
		r->run_id = sqlite3_column_int64(st, k++);
		r->result_id = sqlite3_column_int64(st, k++);
		r->environment_id = sqlite3_column_int64(st, k++);
		r->config_id = sqlite3_column_int64(st, k++);
		r->session_started = col_interned(s, st, k++, lastv);
		r->measured_at = col_interned(s, st, k++, lastv);
		r->session_status = col_interned(s, st, k++, lastv);
		r->session_tampered = sqlite3_column_int(st, k++);
		r->target = col_interned(s, st, k++, lastv);
		r->variant = col_interned(s, st, k++, lastv);
		r->role = col_interned(s, st, k++, lastv);
		r->model = col_interned(s, st, k++, lastv);
		r->model_label = col_interned(s, st, k++, lastv);
		r->runtime = col_interned(s, st, k++, lastv);
		r->model_sha256 = col_interned(s, st, k++, lastv);
		r->run_status = col_interned(s, st, k++, lastv);
		r->verification = col_interned(s, st, k++, lastv);
		r->test = col_interned(s, st, k++, lastv);
		r->n_prompt = sqlite3_column_int64(st, k++);
		r->n_gen = sqlite3_column_int64(st, k++);
		r->n_depth = sqlite3_column_int64(st, k++);
		r->build_commit = col_interned(s, st, k++, lastv);
		r->os_build = col_interned(s, st, k++, lastv);
		r->os_version = col_interned(s, st, k++, lastv);
		r->identity = col_interned(s, st, k++, lastv);
		r->base_identity = col_interned(s, st, k++, lastv);
		r->model_size = sqlite3_column_int64(st, k++);
		r->model_n_params = sqlite3_column_int64(st, k++);
		keys[nrows - 1].session = r->session_id;
		keys[nrows - 1].seq = sqlite3_column_int64(st, k++);
		keys[nrows - 1].run = r->run_id;
		keys[nrows - 1].idx = sqlite3_column_int64(st, k++);
		keys[nrows - 1].pos = nrows - 1;
		r->avg_ts = sqlite3_column_type(st, k) == SQLITE_NULL ? NAN :
			sqlite3_column_double(st, k);
		k++;
		r->stddev_ts = sqlite3_column_type(st, k) == SQLITE_NULL ? NAN :
			sqlite3_column_double(st, k);
		k++;
		r->from_table = !strcmp((const char *)sqlite3_column_text(st, k++),
					"table");
		if (nrows > 1 && cmp_row_key(&keys[nrows - 2], &keys[nrows - 1]) > 0)
			sorted = 0;
	}
	if (rc != SQLITE_DONE) {
		db_error(s, "query results");
		goto cleanup;
	}
	sqlite3_finalize(st);
	st = NULL;
	/* ordered here: an ORDER BY made SQLite sort every wide row */
	if (!sorted) {
		struct store_result *by = xmalloc((nrows ? nrows : 1) * sizeof(*by));
		size_t i;

		qsort(keys, nrows, sizeof(*keys), cmp_row_key);
		for (i = 0; i < nrows; i++)
			by[i] = rows[keys[i].pos];
		free(rows);
		rows = by;
	}
	if (load_samples(s, rows, nrows) < 0)
		goto cleanup;
	{
		/* configurations added meanwhile (another writer) reload once */
		size_t i;

		for (i = 0; i < nrows; i++) {
			rows[i].config = store_config_get(s, rows[i].config_id);
			if (!rows[i].config)
				goto cleanup;
		}
	}
	*out = rows;
	*n = nrows;
	rows = NULL;
	nrows = 0;
	ret = 0;
cleanup:
	sqlite3_finalize(st);
	store_results_free(rows, nrows);
	free(keys);
	strv_free(binds);
	buf_release(&sql);
	buf_release(&where);
	return ret;
}

void
store_results_free(struct store_result *r, size_t n)
{
	size_t i;

	/* the strings are the store's (interned) */
	for (i = 0; i < n; i++)
		free(r[i].ts);
	free(r);
}

int
store_query_left_out(struct store *s, const struct selection *sel,
		     struct store_left_out **out, size_t *n)
{
	struct buf sql = BUF_INIT, where = BUF_INIT;
	struct store_left_out *v = NULL;
	char **binds = NULL;
	sqlite3_stmt *st;
	size_t k = 0;
	int rc;

	op_begin(s);
	*out = NULL;
	*n = 0;
	if (!store_config_get(s, 0))
		return -1;
	rc = where_of(s, sel, 0, &where, &binds);
	if (rc < 0) {
		buf_release(&where);
		return rc;
	}
	buf_addf(&sql, "SELECT s.id, s.status, s.tampered, r.status,"
		 " count(DISTINCT r.id), count(*)" RESULTS_FROM "%s"
		 " GROUP BY s.id, s.status, s.tampered, r.status"
		 " ORDER BY s.id, r.status", where.buf);
	st = prepare(s, sql.buf);
	if (st) {
		bind_all(st, binds);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct store_left_out *l;

			v = xrealloc(v, (k + 1) * sizeof(*v));
			l = &v[k++];
			l->session = sqlite3_column_int64(st, 0);
			l->session_status = col_text(st, 1);
			l->tampered = sqlite3_column_int(st, 2);
			l->run_status = col_text(st, 3);
			l->runs = (long)sqlite3_column_int64(st, 4);
			l->results = (long)sqlite3_column_int64(st, 5);
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			db_error(s, "query what was left out");
	}
	strv_free(binds);
	buf_release(&sql);
	buf_release(&where);
	if (s->nErr) {
		store_left_out_free(v, k);
		return -1;
	}
	*out = v;
	*n = k;
	return 0;
}

void
store_left_out_free(struct store_left_out *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(l[i].session_status);
		free(l[i].run_status);
	}
	free(l);
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

	op_begin(s);
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
	sqlite3_stmt *st;
	int rc, i, ncol;

	op_begin(s);
	st = prepare(s, sql);

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
	sqlite3_stmt *st;

	op_begin(s);
	st = prepare(s,
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

int
store_session_set_hash(struct store *s, int64_t id, const char *hash)
{
	sqlite3_stmt *st;

	op_begin(s);
	st = prepare(s, "UPDATE sessions SET content_hash=?1 WHERE id=?2");
	if (!st)
		return -1;
	bind_text(st, 1, hash);
	sqlite3_bind_int64(st, 2, id);
	return step_done(s, st, "set session content hash");
}

int
store_envs_get(struct store *s, int64_t sid, struct env_rec **out, size_t *n)
{
	sqlite3_stmt *st;
	struct env_rec *v = NULL;
	size_t k = 0;
	int rc;

	op_begin(s);
	*out = NULL;
	*n = 0;
	st = prepare_cached(s, "SELECT id, target, fingerprint_json, identity,"
			    " base_identity FROM environments WHERE session_id=?1"
			    " ORDER BY id");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (k + 1) * sizeof(*v));
		v[k].id = sqlite3_column_int64(st, 0);
		v[k].target = col_text(st, 1);
		v[k].fingerprint_json = col_text(st, 2);
		v[k].identity = col_text(st, 3);
		v[k].base_identity = col_text(st, 4);
		k++;
	}
	done_cached(s, st);
	if (rc != SQLITE_DONE) {
		while (k)
			env_rec_release(&v[--k]);
		free(v);
		return db_error(s, "read environments");
	}
	*out = v;
	*n = k;
	return 0;
}

/*
 * The models a session's runs name: one per name, with the artifact's
 * hash and facts when the run has one, else the run's own label and hash.
 */
int
store_models_get(struct store *s, int64_t sid, struct model_rec **out,
		 size_t *n)
{
	sqlite3_stmt *st;
	struct model_rec *v = NULL;
	size_t k = 0;
	int rc;

	op_begin(s);
	*out = NULL;
	*n = 0;
	st = prepare(s,
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
		m->name = col_text(st, 1);
		m->label = col_text_null(st, 2);
		m->sha256 = col_text_null(st, 3);
		m->file = col_text_null(st, 4);
		m->size = sqlite3_column_int64(st, 5);
		m->facts_json = col_text_null(st, 6);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		while (k)
			model_rec_release(&v[--k]);
		free(v);
		return db_error(s, "read models");
	}
	*out = v;
	*n = k;
	return 0;
}

int
store_run_find_stdout(struct store *s, const char *sha256, int64_t *session,
		      int64_t *run)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	op_begin(s);
	st = prepare(s, "SELECT r.session_id, r.id FROM runs r"
		     " WHERE r.stdout_sha256=?1 AND EXISTS(SELECT 1 FROM"
		     " results x WHERE x.run_id=r.id) ORDER BY r.id LIMIT 1");
	if (!st)
		return -1;
	bind_text(st, 1, sha256);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*session = sqlite3_column_int64(st, 0);
		*run = sqlite3_column_int64(st, 1);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = db_error(s, "find run by output");
	}
	sqlite3_finalize(st);
	return found;
}

/* Runs whose stdout another session (or this one) already holds. */
static int
refuse_duplicates(struct store *s, const struct session_data *d)
{
	size_t i, j;
	int64_t sid, rid;
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
	return 0;
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

	if (rec_insert(s, sessionrec_fields, &d->s, id) < 0)
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

		r.session_id = *id;
		r.environment_id = env_id_of(d, env_ids, r.target);
		r.artifact_id = m ? model_ids[m - d->models] : 0;
		if (rec_insert(s, runrec_fields, &r, &run_id) < 0)
			goto cleanup;
		for (j = 0; j < d->runs[i].lb.n; j++)
			if (store_result_add(s, run_id, (int)j,
					     &d->runs[i].lb.rows[j], NULL) < 0)
				goto cleanup;
	}
	ret = s->nErr ? -1 : 0;
cleanup:
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
		rc = s->nErr ? -1 : -2;
		if (own)
			store_rollback(s);
		else if (rc == -2)
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
		return rc < 0 ? -1 : error("store '%s' has no session %lld",
					   s->path, (long long)sid);
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
	size_t k = 0;
	int rc;

	op_begin(s);
	st = prepare(s,
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
		e->kind = col_text(st, 1);
		e->started_at = col_text(st, 2);
		e->status = col_text(st, 3);
		e->label = col_text(st, 4);
		e->tampered = sqlite3_column_int(st, 5);
		e->runs = (long)sqlite3_column_int64(st, 6);
		e->unverified = (long)sqlite3_column_int64(st, 7);
		e->os_builds = col_text(st, 8);
		e->measured_from = col_text(st, 9);
		e->measured_to = col_text(st, 10);
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

	op_begin(s);
	st = prepare(s, "SELECT id FROM sessions ORDER BY id DESC LIMIT 1"
		     " OFFSET ?1");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, back);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = db_error(s, "latest session");
	}
	sqlite3_finalize(st);
	return found;
}

/* Rows of one session in a table reached through its runs. */
static long
count_of(struct store *s, const char *sql, int64_t id)
{
	sqlite3_stmt *st = prepare(s, sql);
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
store_session_remove(struct store *s, int64_t id, struct store_removed *rm)
{
	sqlite3_stmt *st;
	int own = !s->in_tx;

	memset(rm, 0, sizeof(*rm));
	op_begin(s);
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
	st = prepare(s, "DELETE FROM sessions WHERE id=?1");
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		step_done(s, st, "remove session");
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

	op_begin(s);
	st = prepare(s, "SELECT sha256 FROM hash_cache WHERE dev=?1 AND ino=?2"
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
		hit = db_error(s, "hash cache lookup");
	}
	sqlite3_finalize(st);
	return hit;
}

int
store_hash_cache_put(struct store *s, uint64_t dev, uint64_t ino,
		     int64_t size, int64_t mtime_ns, int64_t ctime_ns,
		     const char *path, const char *sha256)
{
	char now[21];
	sqlite3_stmt *st;

	op_begin(s);
	st = prepare(s, "INSERT OR REPLACE INTO hash_cache(dev, ino, size,"
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
	bind_text(st, 6, path);
	bind_text(st, 7, sha256);
	bind_text(st, 8, now);
	return step_done(s, st, "hash cache store");
}

/* noise calibration and gate queries (compare/gate) */

int
store_noise_add(struct store *s, const struct noise_rec *r)
{
	char now[21];
	sqlite3_stmt *st;

	op_begin(s);
	st = prepare(s,
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
	sqlite3_stmt *st;
	int rc, found = 0;

	op_begin(s);
	st = prepare(s,
		"SELECT between_cv, within_cv, coalesce(session_id,0)"
		" FROM noise WHERE identity=?1 AND test=?2"
		" ORDER BY (model IS ?3) DESC, id DESC LIMIT 1");

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
	return found;
}

int
store_environment_base(struct store *s, int64_t env_id, char **base,
		       char **os_build)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	op_begin(s);
	st = prepare(s,
		"SELECT coalesce(base_identity,''), coalesce(os_build,'')"
		" FROM environments WHERE id=?1");

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
	return found;
}

int
store_sessions_of_base(struct store *s, const char *base,
		       const char *os_build, int64_t exclude,
		       struct store_base_session **out, size_t *n)
{
	struct store_base_session *v = NULL;
	sqlite3_stmt *st;
	size_t k = 0;
	int rc;

	op_begin(s);
	*out = NULL;
	*n = 0;
	st = prepare(s,
		"SELECT x.id, coalesce(x.status,''), x.tampered,"
		" coalesce(e.os_build,''),"
		" coalesce((SELECT max(r.started_at) FROM runs r"
		"  WHERE r.session_id=x.id), x.started_at, '') AS m"
		" FROM environments e JOIN sessions x ON x.id=e.session_id"
		" WHERE e.base_identity=?1 AND coalesce(e.os_build,'') IS NOT ?2"
		" AND e.session_id<>?3"
		" GROUP BY x.id ORDER BY m DESC, x.id DESC");
	if (!st)
		return -1;
	bind_text(st, 1, base);
	bind_text(st, 2, os_build);
	sqlite3_bind_int64(st, 3, exclude);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_base_session *b;

		v = xrealloc(v, (k + 1) * sizeof(*v));
		b = &v[k++];
		b->id = sqlite3_column_int64(st, 0);
		b->status = col_text(st, 1);
		b->tampered = sqlite3_column_int(st, 2);
		b->os_build = col_text(st, 3);
		b->measured = col_text(st, 4);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_base_sessions_free(v, k);
		return db_error(s, "sessions of a base fingerprint");
	}
	*out = v;
	*n = k;
	return 0;
}

void
store_base_sessions_free(struct store_base_session *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].status);
		free(v[i].os_build);
		free(v[i].measured);
	}
	free(v);
}

int
store_noise_list(struct store *s, struct store_noise_row **out, size_t *n)
{
	sqlite3_stmt *st;
	struct store_noise_row *v = NULL;
	size_t k = 0;
	int rc;

	op_begin(s);
	*out = NULL;
	*n = 0;
	st = prepare(s, "SELECT id, coalesce(session_id,0), identity,"
		     " coalesce(target,''), coalesce(model,''), test,"
		     " coalesce(created_at,''), coalesce(details_json,''),"
		     " coalesce(processes,0), coalesce(samples,0), within_cv,"
		     " between_cv, mde FROM noise ORDER BY id");
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_noise_row *r;

		v = xrealloc(v, (k + 1) * sizeof(*v));
		r = &v[k++];
		r->id = sqlite3_column_int64(st, 0);
		r->session_id = sqlite3_column_int64(st, 1);
		r->identity = col_text(st, 2);
		r->target = col_text(st, 3);
		r->model = col_text(st, 4);
		r->test = col_text(st, 5);
		r->created_at = col_text(st, 6);
		r->details_json = col_text(st, 7);
		r->processes = sqlite3_column_int(st, 8);
		r->samples = sqlite3_column_int(st, 9);
		r->within_cv = sqlite3_column_double(st, 10);
		r->between_cv = sqlite3_column_double(st, 11);
		r->mde = sqlite3_column_double(st, 12);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_noise_list_free(v, k);
		return db_error(s, "list noise floors");
	}
	*out = v;
	*n = k;
	return 0;
}

void
store_noise_list_free(struct store_noise_row *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].identity);
		free(r[i].target);
		free(r[i].model);
		free(r[i].test);
		free(r[i].created_at);
		free(r[i].details_json);
	}
	free(r);
}

int
store_noise_remove(struct store *s, int64_t id, const char *identity,
		   const char *target, const char *model, const char *test,
		   int64_t session, long *removed)
{
	sqlite3_stmt *st;

	*removed = 0;
	op_begin(s);
	st = prepare(s, "DELETE FROM noise WHERE (?1 = 0 OR id = ?1)"
		     " AND (?2 IS NULL OR identity = ?2)"
		     " AND (?3 IS NULL OR target = ?3)"
		     " AND (?4 IS NULL OR model = ?4)"
		     " AND (?5 IS NULL OR test = ?5)"
		     " AND (?6 = 0 OR session_id = ?6)");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, identity);
	bind_text(st, 3, target);
	bind_text(st, 4, model);
	bind_text(st, 5, test);
	sqlite3_bind_int64(st, 6, session);
	if (step_done(s, st, "forget noise floors") < 0)
		return -1;
	*removed = (long)sqlite3_changes(s->db);
	return 0;
}

/* doctor */
const char *
store_sqlite_version(void)
{
	return sqlite3_libversion();
}

/* ---- provenance ----------------------------------------------------------- */

static void
facts_empty(struct store_run_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->target = f->variant = f->role = f->runtime = f->model =
		f->model_label = f->model_sha256 = f->model_file =
		f->started_at = f->status = f->verification = (char *)"";
}

struct id_at {
	int64_t id;
	size_t at;
};

static int
cmp_id_at(const void *a, const void *b)
{
	const struct id_at *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * One statement over the range of the ids (not one per id: a report of
 * 10,000 sessions asks for 60,000 runs), each row placed where its id
 * was asked for; ids not found stay empty records with id 0.
 */
int
store_run_facts(struct store *s, const int64_t *ids, size_t n,
		struct store_run_facts **out)
{
	struct store_run_facts *v = xcalloc(n ? n : 1, sizeof(*v));
	struct id_at *ix = xcalloc(n ? n : 1, sizeof(*ix));
	sqlite3_stmt *st;
	size_t i;
	char *lastv[16] = { 0 };
	int rc = SQLITE_DONE;

	op_begin(s);
	*out = NULL;
	for (i = 0; i < n; i++) {
		ix[i].id = ids[i];
		ix[i].at = i;
	}
	qsort(ix, n, sizeof(*ix), cmp_id_at);
	st = n ? prepare(s,
		"SELECT r.id, r.session_id, coalesce(r.environment_id, 0),"
		" r.target, r.variant, r.role, r.runtime, coalesce(r.model, ''),"
		" coalesce(r.model_label, r.model, ''),"
		" coalesce(r.model_sha256, a.sha256, ''), coalesce(a.path, ''),"
		" coalesce(r.started_at, ''), r.status, r.verification"
		" FROM runs r LEFT JOIN artifacts a ON a.id=r.artifact_id"
		" WHERE r.id BETWEEN ?1 AND ?2 ORDER BY r.id") : NULL;
	if (n && !st) {
		free(v);
		free(ix);
		return -1;
	}
	if (n) {
		sqlite3_bind_int64(st, 1, ix[0].id);
		sqlite3_bind_int64(st, 2, ix[n - 1].id);
	}
	i = 0;
	while (n && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		while (i < n && ix[i].id < id)
			i++;
		/* every place that asked for this id (an id asked twice) */
		for (; i < n && ix[i].id == id; i++) {
			struct store_run_facts *f = &v[ix[i].at];
			int k = 0;

			f->id = sqlite3_column_int64(st, k++);
			f->session_id = sqlite3_column_int64(st, k++);
			f->environment_id = sqlite3_column_int64(st, k++);
			f->target = col_interned(s, st, k++, lastv);
			f->variant = col_interned(s, st, k++, lastv);
			f->role = col_interned(s, st, k++, lastv);
			f->runtime = col_interned(s, st, k++, lastv);
			f->model = col_interned(s, st, k++, lastv);
			f->model_label = col_interned(s, st, k++, lastv);
			f->model_sha256 = col_interned(s, st, k++, lastv);
			f->model_file = col_interned(s, st, k++, lastv);
			f->started_at = col_interned(s, st, k++, lastv);
			f->status = col_interned(s, st, k++, lastv);
			f->verification = col_interned(s, st, k++, lastv);
		}
	}
	sqlite3_finalize(st);
	for (i = 0; i < n; i++)
		if (!v[i].target)
			facts_empty(&v[i]);
	free(ix);
	if (n && rc != SQLITE_DONE) {
		store_run_facts_free(v, n);
		return db_error(s, "read run facts");
	}
	*out = v;
	return 0;
}

void
store_run_facts_free(struct store_run_facts *f, size_t n)
{
	(void)n;                /* the strings are the store's (interned) */
	free(f);
}
