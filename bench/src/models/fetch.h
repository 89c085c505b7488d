#ifndef MODELS_FETCH_H
#define MODELS_FETCH_H

/*
 * Downloading a manifest model. curl, an external program run through
 * base/proc.h (an argv, never a shell), fetches the model's URL
 * (manifest_model_url) into DIR/FILE.part, continuing what an earlier
 * attempt left there (`--continue-at -`: an HTTP Range request). A
 * transfer cut short is resumed up to `retries` more times. The complete
 * file's size and SHA-256 are checked against the manifest before it is
 * renamed to DIR/FILE, so DIR/FILE is either absent or verified; a file
 * that does not verify is deleted. A model whose manifest entry pins no
 * SHA-256 is never downloaded.
 */

#include <stdint.h>

struct manifest_model;

struct fetch_progress {
	const char *name;       /* the manifest name */
	uint64_t have;          /* bytes in DIR/FILE.part */
	int64_t total;          /* expected size, -1 unknown */
	uint64_t resumed_at;    /* bytes already there when this attempt began */
	double rate;            /* bytes per second of this attempt */
	int attempt;            /* 1-based */
};

struct fetch_opts {
	const char *dir;        /* where models live (NULL: "models") */
	const char *base_url;   /* replaces scheme and host (NULL: none) */
	const char *curl;       /* the program (NULL: "curl", on PATH) */
	int retries;            /* further attempts after a cut transfer */
	double retry_delay;     /* seconds before attempt k+1: k x this */
	/* about once a second while curl runs (NULL: none) */
	void (*progress)(void *ctx, const struct fetch_progress *p);
	void *progress_ctx;
};

struct fetch_result {
	char *path;             /* DIR/FILE */
	char *url;
	char sha256[65];        /* of the verified file */
	uint64_t bytes;
	uint64_t resumed_at;    /* bytes of an earlier .part reused, or 0 */
	int attempts;           /* curl runs */
	int present;            /* 1: DIR/FILE was already there and verified */
};

enum {
	FETCH_ENV = -1,         /* curl missing or failed, a file error */
	FETCH_MISMATCH = -2,    /* size or SHA-256 differs from the manifest */
	FETCH_NO_SOURCE = -3,   /* no URL or no pinned SHA-256 */
};

/*
 * Fetches mm as described above. Returns 0 (res filled; release it with
 * fetch_result_release()), or one of FETCH_* after error() saying what
 * failed, with curl's own message when it failed.
 */
int fetch_model(const struct manifest_model *mm, const struct fetch_opts *o,
		struct fetch_result *res);
void fetch_result_release(struct fetch_result *res);

#endif
