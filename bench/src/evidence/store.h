#ifndef EVIDENCE_STORE_H
#define EVIDENCE_STORE_H

/*
 * The SQLite store: sessions, environments, artifacts, runs, results,
 * samples, the model hash cache and noise calibrations. WAL, foreign keys,
 * busy timeout, a versioned schema migrated on open. Values are always
 * bound, never formatted into SQL. The runs and sessions tables are
 * walked from their field tables (runrec.h): a field added there is a
 * column here. SQL storage only: what a selection is lives in
 * selection.h, the llama-bench fields in lbfields.h, the choice of a
 * baseline in analysis/baseline.h. The implementation is split by
 * concern (store-internal.h lists the files).
 *
 * Functions return 0 on success and -1 after error(). Strings returned in
 * structs are owned by the struct; release with the matching *_free().
 */

#include <stddef.h>
#include <stdint.h>

#include "evidence/runrec.h"

struct store;
struct lb_row;
struct session_data;
struct selection;           /* evidence/selection.h */

/*
 * Return codes beyond RC_OK and RC_ERROR (base/util.h): RC_USAGE when a
 * selection names a key the store does not know (store_query_results()),
 * and STORE_DUPLICATE when a session holds evidence already stored
 * (store_session_save()).
 */
enum {
	STORE_DUPLICATE = -2,       /* after error(): refused, counted twice */
};

/*
 * Opens (creating and migrating) the store at path for writing. "" and
 * ":memory:" are refused (what is stored would be lost), and path is
 * always a file name, never an SQLite URI. The store's files are
 * registered with files_protect(): no output may overwrite them.
 */
int store_open(struct store **out, const char *path);
/*
 * Opens an existing store read-only (report, sessions, compare, gate,
 * reproduce, history, export): it works on a read-only mount and on a
 * store owned by another user. A WAL store without a -wal file whose
 * -shm cannot be made is read as immutable; with a -wal file it is
 * refused. Nothing is migrated: another schema version is an error.
 */
int store_open_readonly(struct store **out, const char *path);
/*
 * PRAGMA quick_check, then every stored raw file against its recorded
 * SHA-256: 0 when the store is intact, -1 after error() naming what is
 * damaged.
 */
int store_check(struct store *s);
/*
 * store_check() unless the store's files are exactly as the verified
 * mark beside them ("PATH-verified") says they were when they last
 * passed it: the same device, inode, size, mtime and ctime of the
 * database and its -wal (store-check.c says who writes the mark and
 * what it trusts). A check that passes writes the mark where it can.
 * Commands that read the store run it before they answer. Same return
 * as store_check().
 */
int store_verify(struct store *s);
void store_close(struct store *s);
int store_schema_version(struct store *s);
/* The schema version the file had when this open found it (before a
 * writer's open migrated it; 0 for a new store). */
int store_schema_found(struct store *s);

/*
 * One transaction: begin, then commit or rollback. Inside it, a failed
 * statement makes every later one fail too and commit roll back (a
 * sticky error count); outside one, every public function starts clean.
 */
int store_begin(struct store *s);
/*
 * A read transaction: every query until store_read_end() sees one
 * snapshot of the store (a concurrent import is either all there or not
 * at all), and SQLite takes its shared lock once instead of per
 * statement. Nothing happens inside a transaction already open.
 */
int store_read_begin(struct store *s);
void store_read_end(struct store *s);
int store_commit(struct store *s);
void store_rollback(struct store *s);

/* Sessions, by the table in runrec.h. */
int store_session_add(struct store *s, const struct session_rec *r,
		      int64_t *id);
/* 1 found (*out filled; rec_release() it), 0 no such session, -1 error. */
int store_session_get(struct store *s, int64_t id, struct session_rec *out);
/* 1 when a session with that content hash exists (id set), 0 when not. */
int store_session_find_hash(struct store *s, const char *hash, int64_t *id);
int store_session_finish(struct store *s, int64_t id, const char *status);
int store_session_set_hash(struct store *s, int64_t id, const char *hash);

/*
 * Stores a target's fingerprint (a JSON object of key=value facts) with
 * its identity hash and its base identity (the same hash without the OS
 * version and build: the OS-update gate pairs on it). The indexed
 * columns os_version, os_build, hw_model, is_vm, gpu and llama_build are
 * taken from the JSON keys of those names.
 */
int store_environment_add(struct store *s, int64_t session_id,
			  const char *target, const char *fingerprint_json,
			  const char *identity, const char *base_identity,
			  int64_t *id);
/* Replaces an environment's fingerprint and identities. */
int store_environment_update(struct store *s, int64_t id,
			     const char *fingerprint_json,
			     const char *identity, const char *base_identity);

/* Upserts an artifact by (sha256, kind); returns its id. */
int store_artifact_add(struct store *s, const char *sha256, const char *kind,
		       const char *path, int64_t size, const char *facts_json,
		       int64_t *id);

/* Runs, by the table in runrec.h. */
int store_run_add(struct store *s, const struct run_rec *r, int64_t *id);
/* Stores one llama-bench row and its samples under run_id. */
int store_result_add(struct store *s, int64_t run_id, int idx,
		     const struct lb_row *row, int64_t *id);
/* The runs of a session in order (free with store_runs_free()). */
int store_runs_get(struct store *s, int64_t sid, struct run_rec **out,
		   size_t *n);
void store_runs_free(struct run_rec *r, size_t n);
/* The environments of a session. */
int store_envs_get(struct store *s, int64_t sid, struct env_rec **out,
		   size_t *n);

/*
 * Stores a whole session (an import) in one transaction: the session,
 * its environments, models, runs, results and samples; nothing when any
 * step fails. When the store already holds the same content (content
 * hash), stores nothing and sets *already and *id. A run whose stdout is
 * already stored (same SHA-256, with results) refuses the session:
 * STORE_DUPLICATE after error() naming the file and where it is stored. Inside a
 * caller's transaction (store_begin), it joins that one.
 */
int store_session_save(struct store *s, const struct session_data *d,
		       int64_t *id, int *already);
/* Everything of a stored session, for an export; session_data_release(). */
int store_session_load(struct store *s, int64_t sid, struct session_data *d);

/*
 * A configuration: the fields of a stored row that change the
 * measurement (its raw llama-bench row without the fields that name the
 * model, the hardware or the test, or that hold results), flattened
 * ("configuration.seed" for nested objects) and sorted by key. canon is
 * "key=value\n…", equal for equal configurations whatever the order of
 * the row's fields. Owned by the store: valid until store_close().
 */
struct store_config {
	int64_t id;                 /* 0: unknown (no parsable raw row) */
	size_t n;
	char **keys, **values;
	char *canon;
};
/* The value of key in c (aliases: backend/backends, threads/n_threads,
 * ngl/n_gpu_layers, fa/flash_attn, ...), or NULL. */
const char *store_config_value(const struct store_config *c, const char *key);

struct store_result {
	int64_t session_id, run_id, result_id, environment_id, config_id;
	char *session_started;      /* when the session was stored */
	char *measured_at;          /* the run's start, else the row's
				       test_time; "" unknown */
	char *session_status;
	int session_tampered;
	char *target, *variant, *role, *model, *model_label, *runtime;
	char *model_sha256;         /* the run's, else its artifact's; "" */
	/*
	 * The row's own model (issue 20: one llama-bench process may
	 * measure several, -m a.gguf -m b.gguf): its model_type, and the
	 * base name of its model_filename when the model has no SHA-256
	 * ("" when unknown). model_label is "model not named: model_type
	 * (file)" when the run names no model.
	 */
	char *model_type, *model_file;
	char *run_status, *verification;
	char *test;
	long n_prompt, n_gen, n_depth;
	char *build_commit;
	char *os_build, *os_version, *identity, *base_identity;
	int64_t model_size, model_n_params;
	const struct store_config *config;   /* owned by the store */
	double avg_ts, stddev_ts;   /* as printed; NAN when unknown */
	int from_table;             /* avg ± stddev of a table: no samples */
	size_t n;
	double *ts;                 /* samples_ts, in stored order */
};
/*
 * Rows ordered by session, run seq, result idx, with their samples (two
 * statements in all, whatever the number of rows). The rows' strings are
 * the store's (one copy of each distinct value): valid until
 * store_close(), never freed by the caller; ts is the row's.
 * 0; -1 after error(); RC_USAGE after error() when a selection key is
 * unknown (the message names the keys the store knows).
 */
int store_query_results(struct store *s, const struct selection *sel,
			struct store_result **out, size_t *n);
/*
 * The rows of two selections, each as store_query_results() gives them,
 * their samples read in one pass (compare of all stock against all shim
 * runs scanned every sample twice, issue 17). 0; -1 after error(); 1
 * when a selection names a key the store does not know (nothing said,
 * nothing returned: the caller queries them one at a time, which says
 * it in order).
 */
int store_query_results_pair(struct store *s, const struct selection *a,
			     const struct selection *b,
			     struct store_result **ra, size_t *na,
			     struct store_result **rb, size_t *nb);
void store_results_free(struct store_result *r, size_t n);

/*
 * What the default left out of a selection: per session, run status and
 * reason, the runs and results (only classes sel does not include).
 */
struct store_left_out {
	int64_t session;
	char *session_status, *run_status;
	int tampered;
	long runs, results;
};
int store_query_left_out(struct store *s, const struct selection *sel,
			 struct store_left_out **out, size_t *n);
void store_left_out_free(struct store_left_out *l, size_t n);

/* Counts, for tests and doctor: table name -> rows; -1 on error. */
long store_count(struct store *s, const char *table);

/* One line per session for `shimbench sessions`. */
struct store_session {
	int64_t id;
	char *kind, *started_at, *status, *label, *os_builds;
	char *measured_from, *measured_to;   /* dates of its runs, or "" */
	long runs, unverified;
	int tampered;
};
int store_sessions_list(struct store *s, struct store_session **out,
			size_t *n);
void store_sessions_free(struct store_session *ss, size_t n);
/* The id of the newest session (back = 0) or of one `back` before it:
 * 1 found, 0 none, -1 error. */
int store_session_latest(struct store *s, long back, int64_t *id);

/*
 * Who runs a session (store-owner.c, issue 21). store_session_claim()
 * takes the session's lock (held until store_close() or this process
 * ends) and records this host, pid, time and the bundle directory; -1
 * after error() when another process holds the lock.
 * store_session_owner(): 1 with *o filled when a row exists (alive: its
 * lock is held, or it is another host's and cannot be checked), 0 when
 * none does (o->alive 1: unknown), -1 after error(); free with
 * store_owner_release(). store_session_shown_status(): the status to show
 * for a stored one: "abandoned" for a running session whose owner is
 * gone, else stored itself.
 */
struct store_owner {
	int found, alive, same_host;
	char *host, *started_at, *bundle_dir;
	long pid;
};
int store_session_claim(struct store *s, int64_t sid, const char *bundle_dir);
int store_session_owner(struct store *s, int64_t sid, struct store_owner *o);
void store_owner_release(struct store_owner *o);
const char *store_session_shown_status(struct store *s, int64_t sid,
				       const char *stored);

/* What removing a session removed (found = 0: there was no such session). */
struct store_removed {
	int found;
	long runs, results, samples, environments, calibrations;
};
/* Removes run seq of session sid with its results (run --resume redoes
 * an interrupted one). 0, or -1 after error(). */
int store_run_remove(struct store *s, int64_t sid, int64_t seq);
/* Removes a session and everything that hangs on it, in one transaction. */
int store_session_remove(struct store *s, int64_t id, struct store_removed *rm);

/* The hash cache, keyed by (dev, ino, size, mtime_ns, ctime_ns). */
int store_hash_cache_get(struct store *s, uint64_t dev, uint64_t ino,
			 int64_t size, int64_t mtime_ns, int64_t ctime_ns,
			 char sha256[65]);   /* 1 hit, 0 miss, -1 error */
int store_hash_cache_put(struct store *s, uint64_t dev, uint64_t ino,
			 int64_t size, int64_t mtime_ns, int64_t ctime_ns,
			 const char *path, const char *sha256);

/* noise calibration and gate queries (compare/gate) */
struct noise_rec {
	const char *identity;       /* the fingerprint identity calibrated */
	const char *target, *model, *test;
	const char *variant;        /* the variant calibrated */
	const char *config;         /* its configuration (store_config canon) */
	int64_t session_id;         /* the A/A session; 0 = none */
	int processes, samples;
	double within_cv, between_cv, mde;
	const char *details_json;   /* may be NULL */
};
int store_noise_add(struct store *s, const struct noise_rec *r);
/*
 * The latest calibration of exactly this measurement: fingerprint
 * identity, test, model, variant and configuration (config: the canon
 * of store_config) all equal; a floor of another model, variant or
 * configuration never stands in. 1 found (outputs set; session and
 * processes may be NULL), 0 none, -1 error.
 */
struct noise_key {
	const char *identity, *model, *test, *variant, *config;
};
int store_noise_get(struct store *s, const struct noise_key *k,
		    double *between, double *within, int64_t *session,
		    int *processes);
/* How many floors exist for identity and test in other models, variants
 * or configurations than k's (for the words of "uncalibrated"); -1 on
 * error. */
long store_noise_others(struct store *s, const struct noise_key *k);
/*
 * For `gate --baseline auto` (analysis/baseline.h chooses): every session
 * other than exclude with an environment of base identity base whose OS
 * build is not os_build, newest measurement first (the date of its
 * newest run, else when it was stored; ties by id, newest first), with
 * its status, tampered flag, OS build and that date.
 * store_base_sessions_free() it; 0, or -1 after error().
 */
struct store_base_session {
	int64_t id;
	char *status;               /* "" when none */
	int tampered;
	char *os_build, *measured;  /* "" when unknown */
};
int store_sessions_of_base(struct store *s, const char *base,
			   const char *os_build, int64_t exclude,
			   struct store_base_session **out, size_t *n);
void store_base_sessions_free(struct store_base_session *v, size_t n);

/*
 * Stored noise floors, for `calibrate --list` and `--forget`: every
 * row of the noise table, oldest first; removal by id or by the rows a
 * filter matches (identity, target, model, test or session; NULL
 * values match anything). *removed gets the count.
 */
struct store_noise_row {
	int64_t id, session_id;
	char *identity, *target, *model, *test, *created_at, *details_json;
	int processes, samples;
	double within_cv, between_cv, mde;
};
int store_noise_list(struct store *s, struct store_noise_row **out,
		     size_t *n);
void store_noise_list_free(struct store_noise_row *r, size_t n);
int store_noise_remove(struct store *s, int64_t id, const char *identity,
		       const char *target, const char *model,
		       const char *test, int64_t session, long *removed);

/* doctor */
/* The version of the SQLite library linked in ("3.40.1"); static text. */
const char *store_sqlite_version(void);

/* ---- provenance (analysis/provenance.h) --------------------------------- */

/* What a report says about one run: who, where, when, on which model. */
struct store_run_facts {
	int64_t id, session_id, environment_id;
	char *target, *variant, *role, *runtime;
	char *model, *model_label;
	char *model_sha256;   /* the run's, else its artifact's; "" unknown */
	char *model_file;     /* the artifact's file name; "" unknown */
	char *started_at;     /* when it was measured (UTC); "" unknown */
	char *status, *verification;
};
/*
 * The facts of the runs ids[0..n), in that order, into *out (n records;
 * a run that does not exist has id 0). Free with store_run_facts_free();
 * the strings are the store's (interned, as store_query_results()'s):
 * valid until store_close(). 0, or -1 after error().
 */
int store_run_facts(struct store *s, const int64_t *ids, size_t n,
		    struct store_run_facts **out);
void store_run_facts_free(struct store_run_facts *f, size_t n);

/*
 * The stored capability facts of the runs ids[0..n) (JSON, evidence/
 * caps.h), in that order, into *out (n strings; "" for a run without any
 * or that does not exist): one lookup by id each, so a report reads only
 * the runs it shows the facts of, never a range of the table. The
 * strings are the store's (interned: runs with the same facts share one),
 * valid until store_close(); free(*out) only. 0, or -1 after error().
 * (issue 18)
 */
int store_run_capabilities(struct store *s, const int64_t *ids, size_t n,
			   const char ***out);

#endif
