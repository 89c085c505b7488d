#ifndef STORE_H
#define STORE_H

/*
 * The SQLite store: sessions, environments, artifacts, runs, results,
 * samples, the model hash cache and noise calibrations. WAL, foreign keys,
 * busy timeout, a versioned schema migrated on open. Values are always
 * bound, never formatted into SQL.
 *
 * Functions return 0 on success and -1 after error(). Strings returned in
 * structs are owned by the struct; release with the matching *_free().
 */

#include <stddef.h>
#include <stdint.h>

struct store;
struct lb_row;

int store_open(struct store **out, const char *path);
void store_close(struct store *s);
int store_schema_version(struct store *s);

/* One transaction: begin, then commit or rollback. */
int store_begin(struct store *s);
int store_commit(struct store *s);
void store_rollback(struct store *s);

struct session_rec {
	const char *kind;          /* "run" or "import" */
	const char *started_at;    /* UTC ISO 8601 */
	const char *status;        /* "running", "ok", "failed", "interrupted" */
	const char *source;        /* plan path or imported directory */
	const char *content_hash;  /* import: SHA-256 over the content; NULL for run */
	int tampered;              /* imported with --allow-tampered */
	const char *plan_json;     /* may be NULL */
	const char *warnings_json; /* JSON array or NULL */
	const char *label;         /* free text, may be NULL */
};
int store_session_add(struct store *s, const struct session_rec *r,
		      int64_t *id);
/* 1 when a session with that content hash exists (id set), 0 when not. */
int store_session_find_hash(struct store *s, const char *hash, int64_t *id);
int store_session_finish(struct store *s, int64_t id, const char *status);
int store_session_set_warnings(struct store *s, int64_t id,
			       const char *warnings_json);

/*
 * Stores a target's fingerprint (a JSON object of key=value facts) with
 * its identity hash and its base identity (the same hash without the OS
 * version and build: the OS-update gate pairs on it). The indexed columns os_version, os_build, hw_model,
 * is_vm, gpu and llama_build are taken from the JSON keys of those names.
 */
int store_environment_add(struct store *s, int64_t session_id,
			  const char *target, const char *fingerprint_json,
			  const char *identity, const char *base_identity,
			  int64_t *id);

/* Upserts an artifact by (sha256, kind); returns its id. */
int store_artifact_add(struct store *s, const char *sha256, const char *kind,
		       const char *path, int64_t size, const char *facts_json,
		       int64_t *id);

struct run_rec {
	int64_t session_id;
	int64_t environment_id;     /* 0 = none */
	int64_t artifact_id;        /* the model; 0 = none */
	const char *target;
	const char *variant;
	const char *role;           /* "bare-metal", "stock", "shim" or free */
	const char *model;          /* manifest name or file name */
	const char *model_label;    /* display name, e.g. "TinyLlama 1.1B Q4_K_M" */
	const char *runtime;        /* "llama.cpp" */
	int seq;                    /* order within the session */
	const char *argv_json;
	const char *env_json;
	const char *status;         /* ok, failed, incomplete, timeout, crashed, refused */
	int exit_code;              /* -1 unknown */
	int signal;                 /* 0 none */
	int timed_out;
	double wall_s;
	const char *stdout_path;    /* relative to the bundle, may be NULL */
	const char *stderr_path;
	const char *stdout_sha256;
	const char *stderr_sha256;
	const char *stdout_text;    /* capped copy, may be NULL */
	const char *stderr_text;
	const char *capabilities_json;
	const char *expect_json;    /* expected markers (JSON array) or NULL */
	const char *verification;   /* "verified", "unverified", "not-required" */
	const char *verification_detail;
	const char *error;
};
int store_run_add(struct store *s, const struct run_rec *r, int64_t *id);

/* Stores one llama-bench row and its samples under run_id. */
int store_result_add(struct store *s, int64_t run_id, int idx,
		     const struct lb_row *row, int64_t *id);

/*
 * Selections: "key=value[,key=value…]". Keys: session, variant, target,
 * model, role, runtime, test, status, verification, os_build, os_version,
 * identity, kind, and any other fingerprint key (json). An empty
 * selection selects everything.
 */
struct selection {
	size_t n;
	char **keys;
	char **values;
};
int selection_parse(const char *text, struct selection *out);
void selection_free(struct selection *sel);

struct store_result {
	int64_t session_id, run_id, result_id, environment_id;
	char *session_started;
	char *session_status;
	int session_tampered;
	char *target, *variant, *role, *model, *model_label, *runtime;
	char *run_status, *verification;
	char *test;
	long n_prompt, n_gen, n_depth;
	char *build_commit;
	char *os_build, *os_version, *identity;
	int64_t model_size, model_n_params;
	size_t n;
	double *ts;                 /* samples_ts, in stored order */
};
/* Rows ordered by session, run seq, result idx. */
int store_query_results(struct store *s, const struct selection *sel,
			struct store_result **out, size_t *n);
void store_results_free(struct store_result *r, size_t n);

/* Counts, for tests and doctor: table name -> rows; -1 on error. */
long store_count(struct store *s, const char *table);

/* Runs one read-only query and prints each row as tab-separated text. */
int store_dump_query(struct store *s, const char *sql);

/* Replaces an environment's fingerprint and identities. */
int store_environment_update(struct store *s, int64_t id,
			     const char *fingerprint_json,
			     const char *identity, const char *base_identity);

/* Appends the bundle.json (compact) of session sid to out. */
struct buf;
int store_session_bundle_json(struct store *s, int64_t sid, struct buf *out);

/*
 * Calls fn for every raw file of the session's runs (stdout, stderr)
 * with its bundle-relative name, recorded SHA-256 and stored text. Stops
 * at the first non-zero return and returns it.
 */
int store_session_files(struct store *s, int64_t sid,
			int (*fn)(void *ctx, const char *name,
				  const char *sha256, const char *text,
				  size_t len),
			void *ctx);

/* One line per session for `shimbench sessions`. */
struct store_session {
	int64_t id;
	char *kind, *started_at, *status, *label, *os_builds;
	long runs, unverified;
	int tampered;
};
int store_sessions_list(struct store *s, struct store_session **out,
			size_t *n);
void store_sessions_free(struct store_session *ss, size_t n);

/* The hash cache, keyed by (dev, ino, size, mtime_ns). */
int store_hash_cache_get(struct store *s, uint64_t dev, uint64_t ino,
			 int64_t size, int64_t mtime_ns,
			 char sha256[65]);   /* 1 hit, 0 miss, -1 error */
int store_hash_cache_put(struct store *s, uint64_t dev, uint64_t ino,
			 int64_t size, int64_t mtime_ns, const char *path,
			 const char *sha256);

/* noise calibration and gate queries (compare/gate) */
struct noise_rec {
	const char *identity;       /* the fingerprint identity calibrated */
	const char *target, *model, *test;
	int64_t session_id;         /* the A/A session; 0 = none */
	int processes, samples;
	double within_cv, between_cv, mde;
	const char *details_json;   /* may be NULL */
};
int store_noise_add(struct store *s, const struct noise_rec *r);
/*
 * The latest calibration for identity and test, preferring the same
 * model: 1 found (outputs set, *session may be NULL), 0 none, -1 error.
 */
int store_noise_get(struct store *s, const char *identity, const char *model,
		    const char *test, double *between, double *within,
		    int64_t *session);
/* The base identity and OS build of an environment (caller frees both);
 * 1 found, 0 none, -1 error. */
int store_environment_base(struct store *s, int64_t env_id, char **base,
			   char **os_build);
/*
 * For `gate --baseline auto`: the most recent session other than
 * exclude with an environment of base identity base whose OS build is
 * not os_build. 1 found (*session set), 0 none, -1 error.
 */
int store_latest_session_base(struct store *s, const char *base,
			      const char *os_build, int64_t exclude,
			      int64_t *session);

/* doctor */
/* The version of the SQLite library linked in ("3.40.1"); static text. */
const char *store_sqlite_version(void);

#endif
