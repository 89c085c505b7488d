#ifndef MANIFEST_H
#define MANIFEST_H

/*
 * models/manifest.json: the models shimbench knows, by name, with the
 * facts a file must match (SHA-256, size) and the facts llama-bench
 * reports for it (model_size, model_n_params). Synthetic entries also
 * name the generator's shape, type and seed.
 *
 * All strings belong to the struct manifest; manifest_free() releases
 * them. Unknown integers are -1; absent strings are NULL.
 */

#include <stdint.h>
#include <stddef.h>

struct manifest_model {
	char *name;        /* "tinyllama-1.1b-q4_k_m" */
	char *label;       /* "TinyLlama 1.1B Q4_K_M" */
	char *file;        /* file name looked for in the models directory */
	char *path;        /* explicit path (relative to the current
			      directory), or NULL */
	char *sha256;      /* 64 lowercase hex digits */
	int64_t size;      /* file size in bytes */
	int64_t model_size, n_params;   /* llama-bench's figures */
	char *repository;  /* Hugging Face repository, "owner/name" */
	char *revision;    /* its pinned commit: 40 hex digits */
	char *url;         /* explicit download URL, or NULL */
	char *synth_shape, *synth_type; /* synthetic models only */
	int64_t synth_seed;
};

struct manifest {
	char *path;
	size_t n;
	struct manifest_model *models;
};

/*
 * The manifest path: $SHIMBENCH_MANIFEST, else models/manifest.json in
 * the current directory, else the one of the repository this binary was
 * built in (<exe dir>/../models/manifest.json).
 */
const char *manifest_default_path(void);

/*
 * Loads and validates path (NULL: the default). Returns 0, or -1 after
 * error() naming the file and the bad entry.
 */
int manifest_load(const char *path, struct manifest *m);
void manifest_free(struct manifest *m);

/* Lookups; the result is borrowed from m, NULL when there is none. */
const struct manifest_model *manifest_find(const struct manifest *m,
					   const char *name);

/*
 * Where the model's file is expected: its path, or DIR/file (dir NULL:
 * "models"). Returns an allocated string; free() it.
 */
char *manifest_model_path(const struct manifest_model *mm, const char *dir);

/* Where Hugging Face serves a pinned file: DEFAULT/REPO/resolve/REV/FILE. */
#define MANIFEST_DEFAULT_BASE_URL "https://huggingface.co"

/*
 * The model's download URL: its url, else the Hugging Face URL
 * <base>/REPOSITORY/resolve/REVISION/FILE. base (NULL: the default)
 * replaces the scheme and host of either, so a mirror or a test server
 * serves the same paths. Returns an allocated string, or NULL when the
 * entry names no source (neither url nor repository, revision and file).
 */
char *manifest_model_url(const struct manifest_model *mm, const char *base);

#endif
