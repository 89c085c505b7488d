#ifndef EVIDENCE_STORE_INTERNAL_H
#define EVIDENCE_STORE_INTERNAL_H

/*
 * Inside the store (store.h); nothing else includes this. The store is
 * split by concern, as git splits refs:
 *   store.c          opening, the schema and its migrations,
 *                    transactions, the SQL helpers below, records walked
 *                    from their field tables (runrec.h)
 *   store-check.c    the integrity check and the verified mark
 *   store-records.c  sessions, environments, artifacts, runs, results:
 *                    written, read back, listed, removed; the hash cache
 *   store-query.c    selections as queries: results with their samples,
 *                    what the default left out, configurations, the
 *                    facts of runs for provenance
 *   store-owner.c    who runs a session: its row and its lock
 *   store-noise.c    noise floors and the sessions a baseline may be
 * Only these files include <sqlite3.h> (check-layers.sh).
 *
 * The helpers keep a sticky error count (nErr, as in SQLite's
 * sqlite3-rsync.c): once a statement fails, later steps of the same
 * operation are skipped and the caller gets -1 once.
 */

#include <stddef.h>
#include <stdint.h>

#include "evidence/runrec.h"
#include "evidence/store.h"

struct sqlite3;
struct sqlite3_stmt;
struct buf;

/* The files of a store as the verified mark records them (store-check.c). */
struct store_files {
	int64_t db[5];          /* dev, inode, size, mtime ns, ctime ns */
	int64_t wal[5];         /* the same of -wal; all 0: absent or empty */
	int64_t uid;            /* the store file's owner */
};

struct store {
	struct sqlite3 *db;
	char *path;
	int nErr;
	int in_tx;              /* 1 inside store_begin() .. commit/rollback;
				   2 inside store_read_begin() */
	int writable;           /* opened by store_open() */
	int from_version;       /* the schema version found at open */
	int memory_copy;        /* an earlier schema read through an
				   upgraded copy in memory (store.c) */
	int verified;           /* the files as in `seen` hold a store that
				   passed the check, and only SQLite wrote to
				   them since (store-check.c) */
	struct store_files seen;
	struct store_config *configs;   /* the configs table, by id (cache) */
	size_t nconfigs;
	struct store_config none;       /* id 0: unknown */
	char **pool;                    /* interned result strings (hash set) */
	size_t npool, cap_pool;
	struct {                        /* statements asked for once per
					   session (provenance of 10,000) */
		char *sql;
		struct sqlite3_stmt *st;
	} cached[4];
};

/* -1 after error() naming the store, what failed and SQLite's message. */
int sq_error(struct store *s, const char *what);
/* A statement, or NULL after error() (and when nErr is set already). */
struct sqlite3_stmt *sq_prepare(struct store *s, const char *sql);
/*
 * A statement kept between calls (reset, its bindings cleared): for the
 * few lookups asked for once per session. Never finalize it; end its use
 * with sq_done_cached(). NULL after error().
 */
struct sqlite3_stmt *sq_prepare_cached(struct store *s, const char *sql);
void sq_done_cached(struct store *s, struct sqlite3_stmt *st);
/* NULL binds NULL; an id <= 0 binds NULL. */
void sq_bind_text(struct sqlite3_stmt *st, int i, const char *v);
void sq_bind_id(struct sqlite3_stmt *st, int i, int64_t v);
/* Steps a statement that returns no rows, then finalizes it. */
int sq_step_done(struct store *s, struct sqlite3_stmt *st, const char *what);
/* sq_step_done(), then *id (may be NULL) gets the new row's id. */
int sq_insert_id(struct store *s, struct sqlite3_stmt *st, const char *what,
		 int64_t *id);
/* Column i as a new string: "" (col_text) or NULL (_null) for NULL. */
char *sq_col_text(struct sqlite3_stmt *st, int i);
char *sq_col_text_null(struct sqlite3_stmt *st, int i);
/*
 * Every public function starts with this: outside a transaction a past
 * error is forgotten; inside one it stays until commit or rollback.
 */
void sq_op_begin(struct store *s);

/* Records walked from their field tables (runrec.h). */
int sq_rec_insert(struct store *s, const struct rec_field *fields,
		  const void *rec, int64_t *id);
/* "SELECT id, col… FROM table REST" of a walked table. */
void sq_select_sql(struct buf *sql, const struct rec_field *fields,
		   const char *rest);
/* The current row of a sq_select_sql() statement into rec. */
void sq_read_rec(struct sqlite3_stmt *st, const struct rec_field *fields,
		 void *rec, int64_t *id);

/* store-query.c: drops the configuration cache (store_close()). */
void sq_configs_drop(struct store *s);

/*
 * store-check.c, the verified mark, where a writer changes the files:
 * sq_check_open() once a store is opened for writing (fresh: this open
 * created it); sq_check_write_begin() once the write lock is held
 * (store_begin()); sq_check_write_end() after its commit or rollback;
 * sq_check_close() around sqlite3_close() (before: 0, after: 1).
 */
void sq_check_open(struct store *s, int fresh);
void sq_check_write_begin(struct store *s);
void sq_check_write_end(struct store *s);
void sq_check_close(struct store *s, int after);

/*
 * A write outside a transaction becomes a transaction of its own, so
 * that the verified mark follows it: sq_write_begin() (*own set when it
 * began one), then sq_write_end() with the write's return, which it
 * returns (-1 when the commit fails).
 */
int sq_write_begin(struct store *s, int *own);
int sq_write_end(struct store *s, int own, int rc);

#endif
