#ifndef LMC_PROBE_H
#define LMC_PROBE_H

/*
 * The metal-capabilities probe: its command line, its two output forms
 * and its main(), apart from the real Metal device so that the Linux
 * tests run all of it against a fake device.
 *
 *   metal-capabilities [--json] [FAMILY]
 *
 * FAMILY (default 1009, read like strtoull(s, &end, 0) but strictly) is
 * the MTLGPUFamily value to ask supportsFamily: about, as the published
 * probe takes it. The default output is the published probe's key=value
 * lines (device=, family=, supports_family=, max_threadgroup_memory=, in
 * that order), followed by lines of our own (see lmc_probe_write_kv);
 * --json prints the JSON object of lmc_probe_write instead.
 */

#include <stdio.h>

#include "lmc_objc.h"

#define LMC_PROBE_DEFAULT_FAMILY 1009ULL
/* Larger values are no MTLGPUFamily (the highest group is 5001-5002). */
#define LMC_PROBE_MAX_FAMILY 99999ULL

struct lmc_probe_args {
	unsigned long long family;  /* the family asked about */
	int family_given;           /* FAMILY was on the command line */
	int json;                   /* --json */
};

/*
 * Reads the command line (argv[0] is the program). Returns 0 to go on,
 * 1 when --help was printed to out (exit 0), 2 after printing a usage
 * error to err ("invalid family: X", as the published probe says it).
 */
int lmc_probe_parse_args(int argc, char **argv, struct lmc_probe_args *a,
			 FILE *out, FILE *err);

/*
 * Writes one JSON object describing dev to fp: device name,
 * supportsFamily: for Apple 1001-1020, Mac 2001-2002, Common 3001-3005,
 * Metal 5001-5002, the highest true family of each group,
 * maxThreadgroupMemoryLength, maxThreadgroupMemoryLimit (what
 * LUME_METAL_MAX_THREADGROUP_MEMORY asks the shim for, read as the shim
 * reads it: the number, null when unset, "ignored" when malformed or 0),
 * recommendedMaxWorkingSetSize,
 * hasUnifiedMemory (null when the device lacks the method) and the
 * shim's status (shim_status NULL: not loaded). Returns 0, or -1 when
 * writing failed.
 */
int lmc_probe_write(FILE *fp, id dev, const char *shim_status);

/*
 * The same object with the asked family first: "family" and
 * "supports_family" after "device", so the published probe's keys
 * answer in both forms. family NULL: exactly lmc_probe_write.
 */
int lmc_probe_write_json(FILE *fp, id dev, const unsigned long long *family,
			 const char *shim_status);

/*
 * key=value lines: the published probe's four (device=NAME, family=N,
 * supports_family=true|false, max_threadgroup_memory=N), then ours:
 * highest_apple_family= (the highest of 1001-1020 answered true, 0 for
 * none), recommended_max_working_set_size= and has_unified_memory=
 * (empty when the device lacks the method),
 * max_threadgroup_memory_limit= (the limit asked for, as in the JSON:
 * empty when unset, "ignored"), shim_loaded=true|false and
 * shim_status= (empty when not loaded). Returns 0, or -1 when writing
 * failed.
 */
int lmc_probe_write_kv(FILE *fp, id dev, unsigned long long family,
		       const char *shim_status);

/*
 * The probe's main(): arguments, the device from make_device (NULL: none
 * was there), the output on stdout. Returns the exit code: 0 printed,
 * 2 usage, 3 no Metal device or a write failure.
 */
int lmc_probe_main(int argc, char **argv, id (*make_device)(void));

/* The shim's status string when it is loaded in this process, or NULL. */
const char *lmc_probe_shim_status(void);

#endif
