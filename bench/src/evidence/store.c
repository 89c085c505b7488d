#define _POSIX_C_SOURCE 200809L
/*
 * The store (store.h): opening and closing, the schema and its
 * migrations, transactions, the SQL helpers and the records walked from
 * their field tables that the other parts share (store-internal.h).
 */
#include "evidence/store.h"
#include "evidence/store-internal.h"
#include "evidence/lbfields.h"
#include "base/files.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
	/* 6: raw_text_migration() (issue 17) */
	NULL,
	/* 7 (issue 19 §3): a noise floor is keyed by everything that changes
	 * the measurement: fingerprint identity, test, model, variant and
	 * configuration (the canon of store_config); older floors get theirs
	 * from the details they were stored with */
	"ALTER TABLE noise ADD COLUMN variant TEXT;"
	"ALTER TABLE noise ADD COLUMN config TEXT;"
	"UPDATE noise SET variant=json_extract(details_json,'$.variant'),"
	"  config=json_extract(details_json,'$.configuration')"
	"  WHERE json_valid(details_json);"
	"CREATE INDEX noise_key ON noise(identity, test, model, variant);",
	/* 8 (issue 20): config_rederive(): gpu_info is configuration, a
	 * fork's measurements are not, booleans are 0 and 1 */
	NULL,
	/* 9 (issue 21): who runs a session, so that one whose process died
	 * shows as abandoned and can be resumed (store-owner.c) */
	"CREATE TABLE session_owners("
	"  session_id INTEGER PRIMARY KEY"
	"    REFERENCES sessions(id) ON DELETE CASCADE,"
	"  host TEXT NOT NULL, pid INTEGER NOT NULL,"
	"  started_at TEXT NOT NULL, bundle_dir TEXT);",
};

/*
 * The configuration of a raw row col, as SQL: the row without the
 * fields that do not change the measurement (lbfields.h: every name,
 * json or markdown, of a field that names the test, holds a result, or
 * names the model or the hardware; the model's identity is the run's
 * SHA-256, else its name and the row's model fields, and the hardware's
 * the fingerprint's), without the fields no llama-bench prints whose
 * numeric values are named as measurements (lb_field_in_config: a
 * fork's avg_ttft_ms), with markdown names as json names and booleans
 * as 0 and 1 (json_each gives them so): a csv "0" and a json false, an
 * md "threads" and a json "n_threads", are one configuration (a text
 * "8" and a number 8 have one canonical value, store-query.c).
 */
static void
config_of(struct buf *sql, const char *col)
{
	size_t i, k;

	/* markdown names under their json names ("threads": n_threads) */
	buf_adds(sql, "(SELECT json_group_object(CASE key");
	for (i = 0; i < lb_nfields; i++)
		if (lb_fields[i].md && lb_fields[i].role == LB_CONFIG &&
		    strcmp(lb_fields[i].md, lb_fields[i].name))
			buf_addf(sql, " WHEN '%s' THEN '%s'", lb_fields[i].md,
				 lb_fields[i].name);
	buf_adds(sql, " ELSE key END, CASE WHEN type IN"
		 " ('object','array') THEN json(value) ELSE value END)"
		 " FROM json_each(json_remove(");
	buf_adds(sql, col);
	for (i = 0; i < lb_nfields; i++) {
		const char *names[2] = { lb_fields[i].name, lb_fields[i].md };

		if (lb_fields[i].role == LB_CONFIG)
			continue;
		for (k = 0; k < 2 && names[k]; k++)
			buf_addf(sql, strchr(names[k], '/') ? ",'$.\"%s\"'" :
				 ",'$.%s'", names[k]);
	}
	buf_adds(sql, ")) WHERE NOT (type IN ('integer','real','array') AND (");
	for (i = 0; lb_measure_prefixes[i]; i++)
		buf_addf(sql, "%skey GLOB '%s*'", i ? " OR " : "",
			 lb_measure_prefixes[i]);
	for (i = 0; lb_measure_suffixes[i]; i++)
		buf_addf(sql, " OR key GLOB '?*%s'", lb_measure_suffixes[i]);
	buf_adds(sql, ")))");
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

/*
 * The trigger that derives the configuration of a result from its raw
 * row when the row is stored (version 6 on: the raw row lives in
 * result_raw).
 */
static void
config_trigger(struct buf *sql)
{
	buf_adds(sql, "CREATE TRIGGER result_raw_config AFTER INSERT ON"
		 " result_raw WHEN json_valid(NEW.raw_json) AND"
		 " json_type(NEW.raw_json)='object' BEGIN"
		 "  INSERT OR IGNORE INTO configs(json) VALUES(");
	config_of(sql, "NEW.raw_json");
	buf_adds(sql, ");"
		 "  INSERT OR REPLACE INTO result_configs(result_id, config_id)"
		 "    SELECT NEW.result_id, id FROM configs WHERE json=");
	config_of(sql, "NEW.raw_json");
	buf_adds(sql, ";END;");
}

/*
 * 6 (issue 17): the raw llama-bench text out of the rows every read
 * scans. A run's stdout, stderr and probe output (2-4 kB each, in front
 * of its later columns) and a result's raw row (1 kB) made `report`
 * read 410 MB of pages at 10,000 sessions for 20 MB of facts. They move,
 * unchanged, to run_texts and result_raw (one row per run and per
 * result, same id); the old columns are dropped (SQLite 3.35), the
 * configuration trigger follows the raw row.
 */
static void
raw_text_migration(struct buf *sql)
{
	buf_adds(sql, "CREATE TABLE run_texts("
		 "  run_id INTEGER PRIMARY KEY REFERENCES runs(id)"
		 " ON DELETE CASCADE,"
		 "  stdout_text TEXT, stderr_text TEXT, probe_text TEXT);"
		 "INSERT INTO run_texts(run_id, stdout_text, stderr_text,"
		 " probe_text) SELECT id, stdout_text, stderr_text, probe_text"
		 " FROM runs ORDER BY id;"
		 "ALTER TABLE runs DROP COLUMN stdout_text;"
		 "ALTER TABLE runs DROP COLUMN stderr_text;"
		 "ALTER TABLE runs DROP COLUMN probe_text;"
		 "CREATE TABLE result_raw("
		 "  result_id INTEGER PRIMARY KEY REFERENCES results(id)"
		 " ON DELETE CASCADE,"
		 "  raw_json TEXT NOT NULL);"
		 "INSERT INTO result_raw(result_id, raw_json)"
		 " SELECT id, raw_json FROM results ORDER BY id;"
		 "DROP TRIGGER results_config;"
		 "ALTER TABLE results DROP COLUMN raw_json;");
	config_trigger(sql);
}

/*
 * 8 (issue 20): the trigger again, from the table as it is now, and the
 * configurations of the stored rows derived again (config_of() changed:
 * gpu_info became configuration, unknown numeric fields named as
 * measurements left it, booleans became 0 and 1). Configuration ids are
 * renumbered; nothing outside these two tables holds them.
 */
static void
config_rederive(struct buf *sql)
{
	buf_adds(sql, "DROP TRIGGER IF EXISTS result_raw_config;"
		 "DELETE FROM result_configs; DELETE FROM configs;");
	config_trigger(sql);
	buf_adds(sql, "INSERT OR IGNORE INTO configs(json) SELECT ");
	config_of(sql, "raw_json");
	buf_adds(sql, "  FROM result_raw WHERE json_valid(raw_json) AND"
		 " json_type(raw_json)='object' ORDER BY result_id;"
		 "INSERT INTO result_configs(result_id, config_id)"
		 "  SELECT x.result_id, c.id FROM result_raw x JOIN configs c"
		 " ON c.json=");
	config_of(sql, "x.raw_json");
	buf_adds(sql, "  WHERE json_valid(x.raw_json) AND"
		 " json_type(x.raw_json)='object';"
		 /* runs.measure_sha256 (runrec.c, version 8): by value */
		 "CREATE INDEX runs_measure ON runs(measure_sha256);");
}

/* The SQL of migration v (0-based), appended to sql. */
static void
migration_sql(struct buf *sql, int v)
{
	if (migrations[v])
		buf_adds(sql, migrations[v]);
	else if (v == 4)
		config_migration(sql);
	else if (v == 5)
		raw_text_migration(sql);
	else if (v == 7)
		config_rederive(sql);
}

/* The version whose step moved the raw text out (raw_text_migration()). */
#define RAW_TEXT_VERSION 6

/*
 * The tables walked from field tables. From RAW_TEXT_VERSION on, the
 * REC_BLOB fields of a table with a side table (raw bytes) live there,
 * one row per record keyed by the record's id, not in the table.
 */
static const struct {
	const char *table;
	const struct rec_field *fields;
	const size_t *n;
	const char *side, *side_key;
} rec_tables[] = {
	{ "sessions", sessionrec_fields, &sessionrec_nfields, NULL, NULL },
	{ "runs", runrec_fields, &runrec_nfields, "run_texts", "run_id" },
};

int
sq_error(struct store *s, const char *what)
{
	s->nErr++;
	return error("store '%s': %s: %s", s->path, what,
		     sqlite3_errmsg(s->db));
}

static int
sq_exec(struct store *s, const char *sql)
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
 * sq_exec() for statements that can meet SQLITE_BUSY without the busy
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
	return rc == SQLITE_OK ? 0 : sq_exec(s, sql);
}

sqlite3_stmt *
sq_prepare(struct store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (s->nErr)
		return NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		sq_error(s, "prepare");
		return NULL;
	}
	return st;
}

/*
 * A statement kept between calls (reset, its bindings cleared): for the
 * few lookups asked for once per session. Never finalize it; sq_done_cached()
 * resets it. NULL after error().
 */
sqlite3_stmt *
sq_prepare_cached(struct store *s, const char *sql)
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
		return sq_prepare(s, sql);         /* full: an ordinary one */
	s->cached[i].st = sq_prepare(s, sql);
	if (s->cached[i].st)
		s->cached[i].sql = xstrdup(sql);
	return s->cached[i].st;
}

/* Ends the use of a statement from sq_prepare_cached(). */
void
sq_done_cached(struct store *s, sqlite3_stmt *st)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(s->cached); i++)
		if (s->cached[i].st == st) {
			sqlite3_reset(st);
			return;
		}
	sqlite3_finalize(st);
}

void
sq_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

void
sq_bind_id(sqlite3_stmt *st, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* Steps a statement that returns no rows, then finalizes it. */
int
sq_step_done(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		sq_error(s, what);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

char *
sq_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return xstrdup(t ? (const char *)t : "");
}

char *
sq_col_text_null(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? xstrdup((const char *)t) : NULL;
}

static int
user_version(struct store *s)
{
	sqlite3_stmt *st = sq_prepare(s, "PRAGMA user_version");
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
			const char *table = rec_tables[k].table;

			if (f->since != v + 1 || (f->flags & REC_BUNDLE_ONLY))
				continue;
			if (rec_tables[k].side && f->type == REC_BLOB &&
			    f->since > RAW_TEXT_VERSION)
				table = rec_tables[k].side;
			buf_addf(sql, "ALTER TABLE %s ADD COLUMN %s %s;", table,
				 f->column, f->decl);
		}
	if (v < (int)ARRAY_SIZE(migrations))
		migration_sql(sql, v);
	buf_addf(sql, "PRAGMA user_version=%d;", v + 1);
}

/*
 * After the raw text moved out (raw_text_migration()): the rows it left
 * keep their pages, one run a page, so reads would still page through
 * them until the file is rewritten. VACUUM rewrites it, atomically; when
 * it cannot (disk space, another reader), the store is upgraded and
 * correct, only slower to read, and the warning says how to compact it.
 */
static void
compact(struct store *s)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, "VACUUM", NULL, NULL, &msg) != SQLITE_OK) {
		warning("store '%s' upgraded, but not compacted (%s): reads stay "
			"slower until `sqlite3 '%s' VACUUM` succeeds", s->path,
			msg ? msg : sqlite3_errmsg(s->db), s->path);
		sqlite3_free(msg);
	}
}

static int
migrate(struct store *s)
{
	int v = user_version(s), target = schema_target(), from;
	struct buf sql = BUF_INIT;

	if (v < 0)
		return -1;
	s->from_version = v;
	if (v > target)
		return error("store '%s' has schema version %d; this shimbench "
			     "knows up to %d (upgrade shimbench)", s->path, v,
			     target);
	if (v == target)
		return 0;
	/* raw_text_migration() drops columns */
	if (v < RAW_TEXT_VERSION && sqlite3_libversion_number() < 3035000)
		return error("store '%s' has schema version %d; writing it needs "
			     "SQLite 3.35 or later (this shimbench runs on "
			     "SQLite %s)", s->path, v, sqlite3_libversion());
	if (sq_exec(s, "BEGIN IMMEDIATE") < 0)
		return -1;
	/* Another process may have migrated while we waited for the lock. */
	v = from = user_version(s);
	for (; v >= 0 && v < target && !s->nErr; v++) {
		buf_reset(&sql);
		step_sql(&sql, v);
		sq_exec(s, sql.buf);
	}
	buf_release(&sql);
	if (s->nErr || v < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	if (sq_exec(s, "COMMIT") < 0)
		return -1;
	/* a store that had rows (not one this open created) */
	if (from >= 1 && from < RAW_TEXT_VERSION && v >= RAW_TEXT_VERSION &&
	    !s->memory_copy)
		compact(s);
	return 0;
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

/*
 * A database that holds tables but no shimbench schema (user_version 0
 * with tables, or no sessions and runs tables): -1 after error() naming
 * the file and a few of its tables, before anything is written to it (a
 * --db pointed at another program's SQLite file must stay that file).
 * 0 for a store, an empty database, or one SQLite cannot read (the
 * caller's next statement says why).
 */
static int
foreign_check(struct store *s)
{
	sqlite3_stmt *st = NULL;
	struct buf names = BUF_INIT;
	int n = 0, ours = 0, v, ret = 0;

	/* One snapshot for the version and the tables: another process
	 * creating the store may commit its schema between two reads. */
	if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return 0;
	v = user_version(s);
	if (v < 0) {
		s->nErr = 0;
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return 0;
	}
	if (sqlite3_prepare_v2(s->db, "SELECT name FROM sqlite_master WHERE "
			       "type = 'table' AND name NOT LIKE 'sqlite_%' "
			       "ORDER BY name", -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return 0;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		if (!t)
			continue;
		ours += !strcmp(t, "sessions") || !strcmp(t, "runs");
		if (n++ < 4)
			buf_addf(&names, "%s'%s'", n > 1 ? ", " : "", t);
	}
	sqlite3_finalize(st);
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (n && (v == 0 || ours < 2))
		ret = error("'%s' is not a shimbench store: an SQLite database "
			    "of %d table%s (%s%s) and %s; nothing was written "
			    "to it (give --db a new file, or a shimbench "
			    "store)", s->path, n, n == 1 ? "" : "s", names.buf,
			    n > 4 ? ", ..." : "", v ? "no sessions and runs "
			    "tables" : "no shimbench schema version");
	buf_release(&names);
	return ret;
}

/* Removes path and the WAL and shared-memory files beside it. */
static void
remove_store_files(const char *path)
{
	static const char *const ext[] = { "", "-wal", "-shm", "-journal" };
	size_t i;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		char *f = xstrfmt("%s%s", path, ext[i]);

		unlink(f);
		free(f);
	}
}

int
store_open(struct store **out, const char *path)
{
	struct store *s;
	struct stat st;
	char *uri;
	int rc, fresh, created;

	*out = NULL;
	if (!*path || !strcmp(path, ":memory:"))
		return error("'%s' is not a file: a store that is written to "
			     "must be a file, or what is stored is lost at "
			     "exit (give --db PATH)", path);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return error("'%s' is a directory, not a store: --db names the "
			     "store's file (e.g. '%s/shimbench.db')", path, path);
	s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(path);
	/* a store this open creates is verified by construction */
	rc = stat(path, &st);
	fresh = rc < 0 ? errno == ENOENT : S_ISREG(st.st_mode) && !st.st_size;
	created = rc < 0 && errno == ENOENT;
	uri = path_uri(path, "mode=rwc");
	rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		error("cannot open store '%s': %s", path,
		      s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 10000);
	if (foreign_check(s) < 0)
		goto fail;
	files_protect(path, "the store");
	sqlite3_busy_timeout(s->db, 10000);
	if (sq_exec(s, "PRAGMA foreign_keys=ON") < 0)
		goto fail;
	/* A file that is not a database fails here, not later. */
	if (exec_sql_retry(s, "PRAGMA journal_mode=WAL") < 0)
		goto fail;
	if (sq_exec(s, "PRAGMA synchronous=NORMAL") < 0 || migrate(s) < 0)
		goto fail;
	sq_check_open(s, fresh);
	*out = s;
	return 0;
fail:
	/* A store this open created and could not give its schema (a full
	 * disk) holds nothing: it does not stay behind as an empty file. */
	if (created && s->db) {
		s->nErr = 0;
		created = user_version(s) == 0;
	}
	store_close(s);
	if (created)
		remove_store_files(path);
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

/*
 * A store of an earlier schema (a previous release's), read as it is:
 * copied into memory with SQLite's backup, migrated there as a writer
 * would migrate the file, and read from the copy. The file is never
 * written; a note says which command upgrades it in place.
 */
static int
upgraded_copy(struct store *s, int v, int target)
{
	sqlite3 *mem = NULL;
	sqlite3_backup *b;
	int rc;

	if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		sqlite3_close(mem);
		return error("cannot read store '%s' of schema version %d: "
			     "no memory for an upgraded copy", s->path, v);
	}
	b = sqlite3_backup_init(mem, "main", s->db, "main");
	rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(mem);
	if (b)
		sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		error("cannot read store '%s' of schema version %d: %s", s->path,
		      v, sqlite3_errmsg(mem));
		sqlite3_close(mem);
		return -1;
	}
	sqlite3_close(s->db);
	s->db = mem;
	s->memory_copy = 1;   /* nothing to compact: it goes at exit */
	if (sq_exec(s, "PRAGMA foreign_keys=ON") < 0 || migrate(s) < 0)
		return error("cannot upgrade a copy of store '%s' from schema "
			     "version %d to %d", s->path, v, target);
	warning("store '%s' has schema version %d (an earlier shimbench): "
		"read through a copy upgraded to %d in memory, the file "
		"unchanged; `shimbench --db '%s' upgrade` upgrades it in place",
		s->path, v, target, s->path);
	return 0;
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
	if (foreign_check(s) < 0)
		goto fail;
	files_protect(path, "the store");
	v = user_version(s);
	if (v < 0)
		goto fail;
	if (v > target || v == 0) {
		error("store '%s' has schema version %d; this shimbench %s %d "
		      "(%s)", path, v, v > target ? "knows up to" : "reads",
		      target, v > target ? "upgrade shimbench" :
		      "not a store shimbench wrote");
		goto fail;
	}
	if (v < target && upgraded_copy(s, v, target) < 0)
		goto fail;
	if (sq_exec(s, "PRAGMA query_only=ON") < 0)
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
	sq_check_close(s, 0);
	sqlite3_close(s->db);
	sq_check_close(s, 1);
	sq_configs_drop(s);
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
store_schema_found(struct store *s)
{
	return s->from_version;
}

int
store_begin(struct store *s)
{
	s->nErr = 0;
	if (sq_exec(s, "BEGIN IMMEDIATE") < 0)
		return -1;
	s->in_tx = 1;
	sq_check_write_begin(s);
	return 0;
}

int
store_read_begin(struct store *s)
{
	if (s->in_tx)
		return 0;
	s->nErr = 0;
	if (sq_exec(s, "BEGIN") < 0)
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
	if (sq_exec(s, "COMMIT") < 0) {
		store_rollback(s);
		return -1;
	}
	s->in_tx = 0;
	sq_check_write_end(s);
	return 0;
}

void
store_rollback(struct store *s)
{
	int was = s->in_tx;

	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->nErr = 0;
	s->in_tx = 0;
	if (was == 1)
		sq_check_write_end(s);
}

int
sq_write_begin(struct store *s, int *own)
{
	*own = !s->in_tx;
	if (*own)
		return store_begin(s);
	sq_op_begin(s);
	return 0;
}

int
sq_write_end(struct store *s, int own, int rc)
{
	if (!own)
		return rc;
	if (rc < 0) {
		store_rollback(s);
		return rc;
	}
	return store_commit(s) < 0 ? -1 : rc;
}

/*
 * Every public function starts with this: outside a transaction a past
 * error is forgotten; inside one it stays until commit or rollback.
 */
void
sq_op_begin(struct store *s)
{
	if (!s->in_tx)
		s->nErr = 0;
}

int
sq_insert_id(struct store *s, sqlite3_stmt *st, const char *what, int64_t *id)
{
	if (sq_step_done(s, st, what) < 0)
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

/* 1 when field f of walked table k lives in the table's side table. */
static int
in_side(size_t k, const struct rec_field *f)
{
	return rec_tables[k].side && f->type == REC_BLOB;
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
		sq_bind_text(st, i, str ? str : f->dflt);
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

/*
 * INSERT into table k (side: its side table, keyed by id) of the
 * record's stored fields that live there.
 */
static int
insert_part(struct store *s, size_t k, int side, const void *rec,
	    int64_t *id)
{
	const struct rec_field *fields = rec_tables[k].fields;
	size_t i, n = *rec_tables[k].n;
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st;
	int param = 0;

	buf_addf(&sql, "INSERT INTO %s(", side ? rec_tables[k].side :
		 rec_tables[k].table);
	if (side) {
		buf_adds(&sql, rec_tables[k].side_key);
		param++;
	}
	for (i = 0; i < n; i++)
		if (stored(&fields[i]) && in_side(k, &fields[i]) == side)
			buf_addf(&sql, "%s%s", param++ ? ", " : "",
				 fields[i].column);
	buf_adds(&sql, ") VALUES(");
	for (i = 0; i < (size_t)param; i++)
		buf_addf(&sql, "%s?%zu", i ? "," : "", i + 1);
	buf_adds(&sql, ")");
	st = sq_prepare(s, sql.buf);
	buf_release(&sql);
	if (!st)
		return -1;
	param = 1;
	if (side)
		sqlite3_bind_int64(st, param++, *id);
	for (i = 0; i < n; i++)
		if (stored(&fields[i]) && in_side(k, &fields[i]) == side)
			bind_field(st, param++, &fields[i], rec);
	return sq_insert_id(s, st, rec_tables[k].table, side ? NULL : id);
}

/*
 * INSERT of a record into its table (and its raw bytes into the side
 * table); *id gets the new row's id.
 */
int
sq_rec_insert(struct store *s, const struct rec_field *fields, const void *rec,
	   int64_t *id)
{
	size_t k = table_of(fields);
	int64_t rid;

	if (insert_part(s, k, 0, rec, &rid) < 0)
		return -1;
	if (rec_tables[k].side && insert_part(s, k, 1, rec, &rid) < 0)
		return -1;
	if (id)
		*id = rid;
	return 0;
}

/*
 * "SELECT id, col… FROM table REST" for a walked table; the side
 * table's columns come from a LEFT JOIN (alias "side"), so REST names
 * the table's own columns unqualified.
 */
void
sq_select_sql(struct buf *sql, const struct rec_field *fields, const char *rest)
{
	size_t k = table_of(fields), i;
	const char *t = rec_tables[k].table;

	buf_addf(sql, "SELECT %s.id", t);
	for (i = 0; i < *rec_tables[k].n; i++)
		if (stored(&fields[i]))
			buf_addf(sql, ", %s.%s", in_side(k, &fields[i]) ?
				 "side" : t, fields[i].column);
	buf_addf(sql, " FROM %s", t);
	if (rec_tables[k].side)
		buf_addf(sql, " LEFT JOIN %s side ON side.%s=%s.id",
			 rec_tables[k].side, rec_tables[k].side_key, t);
	buf_addf(sql, " %s", rest);
}

/* Reads the current row of a sq_select_sql() statement into rec. */
void
sq_read_rec(sqlite3_stmt *st, const struct rec_field *fields, void *rec,
	 int64_t *id)
{
	size_t k = table_of(fields), i;
	int col = 1;

	*id = sqlite3_column_int64(st, 0);
	for (i = 0; i < *rec_tables[k].n; i++)
		if (stored(&fields[i]))
			read_field(st, col++, &fields[i], rec);
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

	sq_op_begin(s);
	/* Table names cannot be bound: only known names are accepted. */
	for (i = 0; i < ARRAY_SIZE(tables); i++)
		if (!strcmp(tables[i], table))
			break;
	if (i == ARRAY_SIZE(tables))
		return -1;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", tables[i]);
	st = sq_prepare(s, sql);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* doctor */
const char *
store_sqlite_version(void)
{
	return sqlite3_libversion();
}

