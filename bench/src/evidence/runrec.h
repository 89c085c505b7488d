#ifndef EVIDENCE_RUNREC_H
#define EVIDENCE_RUNREC_H

/*
 * The records of a session, each described by ONE table of fields that
 * both the store (SQL columns, INSERT and SELECT, schema migrations) and
 * the bundle (bundle.json keys, the importer's key check and types) walk.
 * Adding a field to a run is one row in runrec_fields[] and one member in
 * struct run_rec; the store adds the column on open, bundles carry it.
 *
 * Records own their strings (malloc'd; rec_release() frees them by the
 * table). NULL strings are SQL NULL and absent bundle keys.
 */

#include <stddef.h>
#include <stdint.h>

#include "evidence/llamabench.h"

enum rec_type {
	REC_TEXT,     /* char * */
	REC_INT,      /* int64_t */
	REC_REAL,     /* double */
	REC_BOOL,     /* int64_t 0/1; a JSON boolean in bundles */
	REC_JSON,     /* char *: JSON text; an embedded value in bundles */
	REC_BLOB,     /* struct rec_blob: bytes (raw output), store only */
};

enum {
	REC_NOT_NULL = 1 << 0,    /* the column is NOT NULL */
	REC_REQUIRED = 1 << 1,    /* a bundle must have the key */
	REC_ZERO_NULL = 1 << 2,   /* ints: 0 is stored as NULL (ids) */
	REC_NEG_NULL = 1 << 3,    /* ints: < 0 is stored as NULL (unknown) */
	REC_STORE_ONLY = 1 << 4,  /* not a bundle key */
	REC_BUNDLE_ONLY = 1 << 5, /* not a column of this table */
};

struct rec_blob {
	char *p;
	size_t n;
};

struct rec_field {
	const char *column;       /* SQL column */
	const char *key;          /* bundle.json key */
	enum rec_type type;
	size_t offset;            /* in the record struct */
	unsigned flags;
	int since;                /* store schema version that added it */
	const char *decl;         /* SQL declaration after the column name */
	const char *dflt;         /* text fields: the value when NULL */
};

/* ---- runs: one llama-bench (or MLX-LM) process ------------------------- */

struct run_rec {
	int64_t id;
	int64_t session_id;
	int64_t environment_id;       /* 0: none */
	int64_t artifact_id;          /* the model; 0: none */
	char *target;
	char *variant;
	char *role;                   /* bare-metal, stock, shim, or free */
	char *model;                  /* manifest name or file name */
	char *model_label;            /* display name */
	char *model_sha256;           /* the model file's SHA-256, if known */
	char *runtime;                /* llama.cpp or mlx-lm */
	int64_t seq;                  /* order within the session */
	char *started_at;             /* UTC ISO 8601: when it was measured */
	char *argv_json;
	char *env_json;
	char *status;                 /* ok, failed, incomplete, timeout, crashed,
					 interrupted */
	int64_t exit_code;            /* -1: unknown */
	int64_t signal;               /* 0: none */
	int64_t timed_out;
	double wall_s;
	char *stdout_path;            /* bundle-relative */
	char *stderr_path;
	char *probe_path;             /* the capability probe's stdout */
	char *stdout_sha256;
	char *stderr_sha256;
	char *probe_sha256;
	struct rec_blob stdout_text;  /* the whole stream */
	struct rec_blob stderr_text;
	struct rec_blob probe_text;
	char *capabilities_json;      /* derived from stderr (and the probe) */
	char *expect_json;            /* markers that must appear (JSON array) */
	char *probe_expect_json;      /* probe expectations (JSON object) */
	char *verification;           /* verified, unverified, not-required */
	char *verification_detail;
	char *error;
	char *measure_sha256;         /* the SHA-256 of what its rows measured
					 (tests, test times, samples, means),
					 not of their bytes: store-records.c */
};

extern const struct rec_field runrec_fields[];
extern const size_t runrec_nfields;

/* ---- sessions ------------------------------------------------------------- */

struct session_rec {
	int64_t id;
	char *kind;                   /* run or import */
	char *started_at;
	char *finished_at;
	char *status;                 /* running, importing, ok, failed,
					 interrupted */
	char *source;                 /* plan path or imported directory */
	char *content_hash;           /* what the runs hold (see bundle.h) */
	int64_t tampered;
	char *plan_json;
	char *warnings_json;          /* JSON array of strings */
	char *label;
};

extern const struct rec_field sessionrec_fields[];
extern const size_t sessionrec_nfields;

/* ---- environments and models of a session -------------------------------- */

struct env_rec {
	int64_t id;
	char *target;
	char *fingerprint_json;       /* a JSON object of facts */
	char *identity, *base_identity;
};

struct model_rec {
	int64_t id;                   /* artifact id */
	char *name;                   /* the key runs use */
	char *label;                  /* NULL when the evidence gives none */
	char *sha256;
	char *file;
	int64_t size;                 /* -1 unknown */
	char *facts_json;
};

/* ---- a whole session, as bundles and the store exchange it -------------- */

struct run_data {
	struct run_rec r;
	struct lb_output lb;          /* the results parsed from r.stdout_text */
};

struct session_data {
	struct session_rec s;
	struct env_rec *envs;
	size_t nenvs;
	struct model_rec *models;
	size_t nmodels;
	struct run_data *runs;
	size_t nruns;
};

void session_data_release(struct session_data *d);
/* The model of a run by name, or NULL. */
const struct model_rec *session_model(const struct session_data *d,
				      const char *name);

/* Frees the strings and blobs of a record by its table, and zeroes them. */
void rec_release(const struct rec_field *fields, size_t n, void *rec);
void env_rec_release(struct env_rec *e);
void model_rec_release(struct model_rec *m);

/* A copy of the bytes as a blob (NUL-terminated for convenience). */
struct rec_blob rec_blob_dup(const void *p, size_t n);

/* Field lookups by key, and typed member access. */
const struct rec_field *rec_field_by_key(const struct rec_field *fields,
					 size_t n, const char *key);
#define REC_MEMBER(rec, f, type) ((type *)(void *)((char *)(rec) + (f)->offset))

#endif
