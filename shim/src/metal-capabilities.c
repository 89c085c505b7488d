/*
 * metal-capabilities: prints what the default Metal device of this
 * process reports, as JSON (see lmc_probe.h), including whether the
 * capability shim is loaded. Run it with the same environment as the
 * workload (DYLD_INSERT_LIBRARIES, LUME_METAL_*) to see what the
 * workload will see. macOS only.
 *
 * Exit codes: 0 printed, 2 usage, 3 no Metal device or write failure.
 */
#include <stdio.h>
#include <string.h>

#include "lmc_probe.h"

/* Metal's C entry point; declared here because Metal.h is Objective-C. */
extern id MTLCreateSystemDefaultDevice(void);

int
main(int argc, char **argv)
{
	id dev;

	if (argc > 1) {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			puts("usage: metal-capabilities\n"
			     "Prints the default Metal device's capabilities "
			     "as JSON.");
			return 0;
		}
		fprintf(stderr, "error: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	dev = MTLCreateSystemDefaultDevice();
	if (!dev) {
		fputs("error: no metal device (MTLCreateSystemDefaultDevice "
		      "returned nil)\n", stderr);
		return 3;
	}
	if (lmc_probe_write(stdout, dev, lmc_probe_shim_status()) < 0 ||
	    fflush(stdout) != 0) {
		fputs("error: cannot write to stdout\n", stderr);
		return 3;
	}
	return 0;
}
