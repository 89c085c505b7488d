#ifndef RUN_VARIANT_H
#define RUN_VARIANT_H

/*
 * A variant's way to run: the environment its processes get (its own
 * variables and the injected library) and its capability probe.
 */

#include <stddef.h>

struct plan_variant;
struct plan_target;
struct buf;

/*
 * The environment of a variant's processes: its variables, and the
 * injected library in LD_PRELOAD (DYLD_INSERT_LIBRARIES when macos),
 * appended to an inherited value when the variant says so. The vector
 * borrows from v except *inj, which the caller frees with the vector.
 */
const char **variant_env(const struct plan_variant *v, int macos,
			 char **inj);

/*
 * Runs the variant's probe (e.g. the shim's metal-capabilities) on t with
 * the variant's environment. Returns its stdout (malloc'd, *len bytes), or
 * NULL when it could not run or failed; detail says what happened.
 */
char *variant_probe(const struct plan_variant *v, const struct plan_target *t,
		    int macos, size_t *len, struct buf *detail);

#endif
