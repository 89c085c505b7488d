#ifndef TOOLS_H
#define TOOLS_H

/*
 * Finding the external programs shimbench drives: llama-bench and
 * llama-quantize. The search order is
 *
 *   1. "plan"      an explicit path or name (from a plan's llama_bench key)
 *   2. "env"       $LLAMA_BENCH / $LLAMA_QUANTIZE
 *   3. "PATH"      the name on $PATH
 *   4. "prefix"    the provisioned wrapper .llama/bin/NAME (make llama-bench),
 *                  in the current directory, then beside the shimbench
 *                  executable (<exe dir>/../.llama/bin/NAME), then the link
 *                  make install puts beside an installed one
 *                  (<exe dir>/../libexec/shimbench/NAME)
 *   5. "homebrew"  macOS only: $HOMEBREW_PREFIX/bin, /opt/homebrew/bin,
 *                  /usr/local/bin
 *
 * An explicit choice (1 or 2) that does not name an executable is an
 * error, not a reason to look further.
 */

#include "models/hash.h"

struct tool {
	char *name;    /* "llama-bench" */
	char *path;    /* what to execute (absolute unless found relative on PATH) */
	char *binary;  /* the real binary: the wrapper's target, symlinks resolved */
	const char *where; /* "plan", "env", "PATH", "prefix" or "homebrew" */
};

#define TOOL_INIT { 0 }

/*
 * Finds name following the order above; explicit may be NULL. Returns 0
 * and fills t (free with tool_release()), or -1 after error() saying where
 * it looked and how to get the tool.
 */
int tool_find(const char *name, const char *explicit, struct tool *t);
void tool_release(struct tool *t);

/* The environment variable naming a tool: "LLAMA_BENCH" for llama-bench. */
char *tool_env_name(const char *name);

/* SHA-256 of t->binary; 0, or -1 after error(). */
int tool_binary_sha256(const struct tool *t, char hex[SHA256_HEX_LEN + 1]);

#endif
