#ifndef EVIDENCE_MODELVERIFY_H
#define EVIDENCE_MODELVERIFY_H

/*
 * Model files checked against the manifest (`models verify`). For each
 * model, the first check that fails decides, cheapest first: the file is
 * there (a model named by the caller and not there is MISSING; any other
 * is only absent), its size, its GGUF facts (model_size and parameter
 * count, when the manifest pins them), then its SHA-256 through the hash
 * cache (evidence/hashcache.h), several files in parallel. A model whose
 * manifest entry pins no SHA-256 stops at its facts.
 *
 * Every failure is reported with error() naming the file and what
 * differs, as it is found; the caller prints the per-model lines.
 */

#include <stddef.h>

#include "models/hash.h"

struct manifest;
struct manifest_model;

enum model_state {
	MODEL_OK,          /* size, facts and SHA-256 match */
	MODEL_FACTS_OK,    /* size and facts match; the manifest pins no
			      SHA-256 */
	MODEL_ABSENT,      /* not there, and not named: not a failure */
	MODEL_MISSING,     /* named, and not there */
	MODEL_MISMATCH,    /* size, facts or SHA-256 differ */
	MODEL_UNREADABLE,  /* it could not be read to the end */
};

struct model_check {
	const struct manifest_model *model;  /* borrowed from the manifest */
	char *path;                          /* where it was looked for */
	enum model_state state;
	int hashed;            /* 1 when job holds the hash's answer */
	struct hash_job job;   /* cached, bytes, seconds; job.path is path */
};

struct model_checks {
	size_t n;
	struct model_check *v;   /* in manifest order, or the names' order */
};

struct model_verify_opts {
	const char *dir;       /* where model files are; NULL: "models" */
	const char *db_path;   /* the store holding the hash cache; NULL:
				  none. Opened only when a file is to be
				  hashed; when it cannot be, a warning and
				  hashing without it */
	int rehash;            /* read every file again, ignoring the cache */
	int progress;          /* a progress bar for large files (hash.h) */
};

enum {
	MODEL_VERIFY_FAILED = -1,   /* a model is missing, differs or is
				       unreadable (each after error()) */
	MODEL_VERIFY_UNKNOWN = -2,  /* a name the manifest lacks, after
				       error(); nothing was checked */
};

/*
 * Checks the models of m named in names[0..nnames) (nnames 0: every
 * model of m) into *out, which the caller releases with
 * model_checks_release() whatever the result. Returns 0 when every file
 * there matches (absent unnamed models included), else one of
 * MODEL_VERIFY_*.
 */
int model_verify(const struct manifest *m, const char *const *names,
		 size_t nnames, const struct model_verify_opts *o,
		 struct model_checks *out);
void model_checks_release(struct model_checks *c);

#endif
