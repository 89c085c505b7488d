/*
 * fake-host: a stand-in workload for recording the shim's real stderr
 * on Linux. It builds the fake paravirtual device (FAKE_PRIVATE world),
 * loads the shim library named by LMC_SHIM_SO (a compile-time string)
 * the way dyld would before main, initialises one device as Metal does,
 * and asks for the Apple family the way ggml does (downward from
 * Apple1+20). Run it under the name of the real workload (bash's
 * `exec -a llama-bench`) so the marker line carries that name.
 *
 * With --probe it prints the metal-capabilities JSON for the device on
 * stdout; with --probe-main ARGS... it runs the probe's own main() (the
 * command line and both output forms) on that device. Everything on
 * stderr comes from the shim itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "fake-metal.h"
#include "../src/lmc_probe.h"

static id the_device;

static id
device(void)
{
	return the_device;
}

int
main(int argc, char **argv)
{
	id dev;
	long f;

	fake_world_build(FAKE_PRIVATE);
	if (!dlopen(LMC_SHIM_SO, RTLD_NOW | RTLD_GLOBAL)) {
		printf("fake-host: %s\n", dlerror());
		return 3;
	}
	dev = fake_device_new();
	fake_device_init(dev);
	for (f = 1021; f > 1000 && !fake_supports(dev, f); f--)
		;
	the_device = dev;
	if (argc > 1 && !strcmp(argv[1], "--probe-main"))
		return lmc_probe_main(argc - 1, argv + 1, device);
	if (argc > 1 && !strcmp(argv[1], "--probe"))
		return lmc_probe_write(stdout, dev, lmc_probe_shim_status()) ?
			3 : 0;
	printf("apple family %ld, max threadgroup memory %lu\n", f,
	       fake_tg(dev));
	return 0;
}
