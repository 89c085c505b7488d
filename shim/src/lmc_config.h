#ifndef LMC_CONFIG_H
#define LMC_CONFIG_H

/*
 * The decision logic of the Metal capability shim, in plain C with no
 * Objective-C and no libc calls, so it can be tested anywhere: parsing
 * the LUME_METAL_* configuration, the answers the hooks give, and the
 * one-line stderr messages. Nothing here allocates.
 */

#include <stddef.h>

#define LMC_FAMILY_APPLE_FIRST 1001
#define LMC_FAMILY_APPLE_LAST 1999
#define LMC_DEFAULT_THREADGROUP_MEMORY 65536ULL

#define LMC_ENV_FAMILY_MAX "LUME_METAL_APPLE_FAMILY_MAX"
#define LMC_ENV_THREADGROUP "LUME_METAL_MAX_THREADGROUP_MEMORY"
#define LMC_ENV_WORKING_SET "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE"

/* Every message the shim prints starts with this (the published prefix). */
#define LMC_PREFIX "[LumeMetalCapabilities] "

struct lmc_config {
	unsigned long long family_max;          /* 1001..1999 */
	unsigned long long threadgroup_memory;  /* default 65536 */
	unsigned long long working_set;         /* valid when has_working_set */
	int has_working_set;
};

/*
 * Parses s as strtoull(s, &end, 0) would, but strictly: the whole string
 * must be consumed, it must start with a digit (no whitespace, no sign),
 * "0x" needs at least one hex digit, and overflow is an error. Returns 0
 * and sets *out, or -1.
 */
int lmc_parse_u64(const char *s, unsigned long long *out);

/*
 * Fills cfg from the three variables, read through get (getenv or a
 * test double). Returns 0 when the shim should act, -1 when it must leave
 * the process untouched; then why (size whylen, always NUL-terminated)
 * says which variable was wrong, quoting a sanitised copy of its value.
 * An empty optional variable counts as unset, as in the published shim.
 */
int lmc_config_load(struct lmc_config *cfg,
		    const char *(*get)(const char *name),
		    char *why, size_t whylen);

/* supportsFamily: original || 1001 <= family <= family_max. */
int lmc_family_answer(const struct lmc_config *cfg, int original,
		      long family);
/* maxThreadgroupMemoryLength: max(original, threadgroup_memory). */
unsigned long long lmc_threadgroup_answer(const struct lmc_config *cfg,
					  unsigned long long original);
/* recommendedMaxWorkingSetSize: max(original, working_set) if set. */
unsigned long long lmc_working_set_answer(const struct lmc_config *cfg,
					  unsigned long long original);

/*
 * Formats the success marker, newline included, into out (size n):
 * "[LumeMetalCapabilities] Enabled for PROC (appleFamilyMax=N
 * maxThreadgroupMemory=N[ recommendedMaxWorkingSetSize=N])\n".
 * Returns its length (truncated to n - 1).
 */
size_t lmc_format_banner(char *out, size_t n, const char *proc,
			 const struct lmc_config *cfg);

/*
 * Formats "[LumeMetalCapabilities] Disabled for PROC: WHY; leaving stock
 * capabilities unchanged\n" into out. Returns its length.
 */
size_t lmc_format_refusal(char *out, size_t n, const char *proc,
			  const char *why);

#endif
