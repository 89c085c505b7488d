#ifndef FUZZ_EVIDENCE_DIR_H
#define FUZZ_EVIDENCE_DIR_H

/*
 * A private evidence directory for the bundle.json and mapping targets:
 * fixed raw files (a llama-bench jsonl run, its stderr with the shim's
 * marker, an MLX-LM result, a run bundle's runs/ files and a probe
 * output) that fuzzed bundle.json and mapping texts can name, and a
 * SHA256SUMS over them (plus bundle.json when one is given).
 */

#include <stddef.h>

/* Makes the directory once (removed at exit); its path (static). Exits
 * on failure. */
const char *evidence_dir(void);
/* The mapping file's path, beside the directory (static), and writing it. */
const char *evidence_mapping(void);
void evidence_put_mapping(const char *data, size_t len);
/*
 * Writes SHA256SUMS over the fixed files and, when bundle_json is not
 * NULL, writes bundle.json with those bytes and lists it too.
 */
void evidence_sums(const char *bundle_json, size_t len);

#endif
