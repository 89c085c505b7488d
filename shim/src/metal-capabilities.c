/*
 * metal-capabilities: prints what the default Metal device of this
 * process reports, including whether the capability shim is loaded. Run
 * it with the same environment as the workload (DYLD_INSERT_LIBRARIES,
 * LUME_METAL_*) to see what the workload will see. macOS only.
 *
 *   metal-capabilities [--json] [FAMILY]
 *
 * It takes the published probe's argument (`metal-capabilities 1009`)
 * and prints its key=value lines by default; --json prints our JSON
 * object (see lmc_probe.h).
 *
 * Exit codes: 0 printed, 2 usage, 3 no Metal device or write failure.
 */
#include "lmc_probe.h"

/* Metal's C entry point; declared here because Metal.h is Objective-C. */
extern id MTLCreateSystemDefaultDevice(void);

int
main(int argc, char **argv)
{
	return lmc_probe_main(argc, argv, MTLCreateSystemDefaultDevice);
}
