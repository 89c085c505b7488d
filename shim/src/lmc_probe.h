#ifndef LMC_PROBE_H
#define LMC_PROBE_H

/*
 * The JSON writer of the metal-capabilities probe, separate from its
 * main() so the Linux tests can run it against a fake device.
 */

#include <stdio.h>

#include "lmc_objc.h"

/*
 * Writes one JSON object describing dev to fp: device name,
 * supportsFamily: for Apple 1001-1020, Mac 2001-2002, Common 3001-3005,
 * Metal 5001-5002, the highest true family of each group,
 * maxThreadgroupMemoryLength, recommendedMaxWorkingSetSize,
 * hasUnifiedMemory (null when the device lacks the method) and the
 * shim's status (shim_status NULL: not loaded). Returns 0, or -1 when
 * writing failed.
 */
int lmc_probe_write(FILE *fp, id dev, const char *shim_status);

/* The shim's status string when it is loaded in this process, or NULL. */
const char *lmc_probe_shim_status(void);

#endif
