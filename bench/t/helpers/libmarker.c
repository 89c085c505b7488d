/*
 * A test library for injection verification on Linux: loaded through
 * LD_PRELOAD, it prints one marker line to stderr, like the capability
 * shim does on macOS. SHIMBENCH_TEST_MARKER_QUIET=1 keeps it silent (a
 * library that loaded but did not take effect).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void
marker(void)
{
	const char *quiet = getenv("SHIMBENCH_TEST_MARKER_QUIET");

	if (quiet && *quiet == '1')
		return;
	fprintf(stderr, "[shimbench-test-preload] Enabled for pid %ld\n",
		(long)getpid());
}
