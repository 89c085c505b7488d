#ifndef BUNDLE_H
#define BUNDLE_H

/*
 * Evidence bundles: loading (the project's own bundle.json layout, or a
 * directory of raw llama-bench files plus a mapping file), verifying
 * SHA256SUMS, storing, and exporting a stored session as a bundle.
 * The formats are documented in README.md.
 */

#include <stdint.h>

struct store;
struct ingest;

/*
 * Loads dir: verifies SHA256SUMS first, then reads the bundle.json (or the
 * mapping file when mapping is not NULL) and parses every raw file.
 * Nothing is stored. Returns 0; -1 with error() for bad input; -2 when a
 * checksum is wrong or a file is not covered by SHA256SUMS (unless
 * allow_tampered, which loads and marks the ingest tampered).
 */
int bundle_load(const char *dir, const char *mapping, int allow_tampered,
		struct ingest **out);
void bundle_free(struct ingest *in);

/* Counts for messages. */
void bundle_counts(const struct ingest *in, int *runs, int *results,
		   int *samples, int *unverified);
int bundle_tampered(const struct ingest *in);

/*
 * Stores a loaded ingest as one session, one transaction per run. Sets
 * *already (and *session_id) when identical content was imported before;
 * then nothing is stored. 0, or -1 with error().
 */
int bundle_store(const struct ingest *in, struct store *s,
		 const char *label, int64_t *session_id, int *already);

/*
 * Writes session_id of the store as a bundle into dir (created): raw
 * jsonl/stderr per run, bundle.json, results.csv, README.md with the
 * tables, SHA256SUMS over every other file. 0, or -1 with error().
 */
int bundle_export(struct store *s, int64_t session_id, const char *dir);

#endif
