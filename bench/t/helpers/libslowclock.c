/*
 * A slowdown of known size for the tests, where a real one cannot be
 * had on demand (this machine's load swamps any small one): loaded
 * through LD_PRELOAD into the real llama-bench, it stretches every
 * interval clock_gettime() reports by $SHIMBENCH_TEST_SLOW_FACTOR
 * (default 1: nothing changes), measured from the first call in the
 * process, so llama-bench's samples_ns grow and its samples_ts shrink
 * by that factor while everything else (the model, the arguments, the
 * configuration llama-bench reports) stays what it is. The work and its
 * noise are real; only the clock is stretched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

typedef int (*gettime_fn)(clockid_t, struct timespec *);

static gettime_fn real_gettime;
static double factor = 1;
static long long origin[16];
static int have_origin[16];

__attribute__((constructor)) static void
init(void)
{
	const char *f = getenv("SHIMBENCH_TEST_SLOW_FACTOR");

	real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	if (f && atof(f) >= 1)
		factor = atof(f);
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	long long ns, t;
	int rc, k = (int)id & 15;

	if (!real_gettime)
		real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	rc = real_gettime(id, ts);
	if (rc != 0 || factor == 1)
		return rc;
	ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
	if (!have_origin[k]) {
		origin[k] = ns;
		have_origin[k] = 1;
	}
	t = origin[k] + (long long)((double)(ns - origin[k]) * factor);
	ts->tv_sec = (time_t)(t / 1000000000LL);
	ts->tv_nsec = (long)(t % 1000000000LL);
	return rc;
}
