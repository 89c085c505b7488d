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

#define LMC_ENV_FAMILY_MAX "LUME_METAL_APPLE_FAMILY_MAX"
#define LMC_ENV_THREADGROUP "LUME_METAL_MAX_THREADGROUP_MEMORY"
#define LMC_ENV_WORKING_SET "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE"

/* Every message the shim prints starts with this (the published prefix). */
#define LMC_PREFIX "[LumeMetalCapabilities] "

struct lmc_config {
	unsigned long long family_max;          /* 1001..1999 */
	unsigned long long threadgroup_limit;   /* valid when has_threadgroup_limit */
	unsigned long long working_set;         /* valid when has_working_set */
	int has_threadgroup_limit;
	int has_working_set;
	/* Non-empty when LUME_METAL_MAX_THREADGROUP_MEMORY was set but
	 * malformed or 0 and is therefore ignored: the one-line message
	 * the shim prints (newline included). */
	char threadgroup_note[200];
	size_t threadgroup_note_len;            /* 0: no note */
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
 *
 * LUME_METAL_MAX_THREADGROUP_MEMORY only ever lowers the device's answer,
 * so a malformed value (or 0, which no kernel can use) cannot make the
 * shim claim more than the hardware: it is ignored, the device's own
 * answer stands, and cfg->threadgroup_note holds the message saying so
 * (proc names the process in it). Everything else still applies.
 */
int lmc_config_load(struct lmc_config *cfg,
		    const char *(*get)(const char *name),
		    const char *proc, char *why, size_t whylen);

/*
 * LUME_METAL_MAX_THREADGROUP_MEMORY read through get as the shim reads
 * it: 1 and *out set when it is a usable limit (a number above 0), 0 when
 * unset or empty, -1 when it is ignored (malformed or 0).
 */
int lmc_threadgroup_limit(const char *(*get)(const char *name),
			  unsigned long long *out);

/* supportsFamily: original || 1001 <= family <= family_max. */
int lmc_family_answer(const struct lmc_config *cfg, int original,
		      long family);
/*
 * maxThreadgroupMemoryLength: min(original, threadgroup_limit) when a
 * limit is configured, else original. Never more than the device says.
 */
unsigned long long lmc_threadgroup_answer(const struct lmc_config *cfg,
					  unsigned long long original);
/*
 * Whether the configured limit is above what the device reports, so the
 * device's own (lower) answer stands; then the shim says so once, with
 * lmc_format_clamp.
 */
int lmc_threadgroup_clamped(const struct lmc_config *cfg,
			    unsigned long long original);
/* recommendedMaxWorkingSetSize: max(original, working_set) if set. */
unsigned long long lmc_working_set_answer(const struct lmc_config *cfg,
					  unsigned long long original);

/*
 * Formats the success marker, newline included, into out (size n):
 * "[LumeMetalCapabilities] Enabled for PROC (appleFamilyMax=N[
 * maxThreadgroupMemory=N][ recommendedMaxWorkingSetSize=N])\n", the
 * published banner's keys; maxThreadgroupMemory only when a limit is
 * configured (it is the limit: the device's answer, when lower, stands).
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

/*
 * "[LumeMetalCapabilities] LUME_METAL_MAX_THREADGROUP_MEMORY=N is above
 * the M bytes PROC's device reports; answering M (the shim only lowers
 * it)\n". Returns its length.
 */
size_t lmc_format_clamp(char *out, size_t n, const char *proc,
			const struct lmc_config *cfg,
			unsigned long long original);

#endif
