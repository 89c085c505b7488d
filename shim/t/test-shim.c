/*
 * Tests of the capability shim on Linux: the decision logic directly,
 * and the real shim library (built for the GNU Objective-C runtime),
 * dlopen()ed into a forked child that has built a fake Metal device
 * first, so the shim's constructor runs exactly as under dyld. Each
 * scenario runs in its own process because the shim's state is
 * process-wide, as it is in a real workload.
 *
 * LMC_SHIM_SO (a compile-time string) is the shim library to load.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "fake-metal.h"
#include "../src/lmc_config.h"
#include "../src/lmc_probe.h"
#include "../src/lmc_status.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#ifndef LMC_SHIM_SO
#error "build with -DLMC_SHIM_SO='\"/path/to/libLumeMetalCapabilities.so\"'"
#endif

/* ---- decision logic ------------------------------------------------ */

static const struct {
	const char *in;
	int ok;
	unsigned long long want;
} parse_cases[] = {
	{ "1009", 1, 1009 },
	{ "0x3F1", 1, 1009 },
	{ "0X3f1", 1, 1009 },
	{ "01761", 1, 1009 },
	{ "0", 1, 0 },
	{ "18446744073709551615", 1, 18446744073709551615ULL },
	{ "0xffffffffffffffff", 1, 18446744073709551615ULL },
	{ "18446744073709551616", 0, 0 },
	{ "0x10000000000000000", 0, 0 },
	{ "99999999999999999999999", 0, 0 },
	{ "", 0, 0 },
	{ "0x", 0, 0 },
	{ "1009x", 0, 0 },
	{ "-1009", 0, 0 },
	{ "+1009", 0, 0 },
	{ " 1009", 0, 0 },
	{ "1009 ", 0, 0 },
	{ "\t1009", 0, 0 },
	{ "09", 0, 0 },
	{ "1e3", 0, 0 },
	{ "0x3F1g", 0, 0 },
	{ "10 09", 0, 0 },
};

static void
test_parse_u64(void)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(parse_cases); i++) {
		unsigned long long v = 12345;
		int r = lmc_parse_u64(parse_cases[i].in, &v);

		if ((r == 0) != parse_cases[i].ok ||
		    (r == 0 && v != parse_cases[i].want)) {
			printf("  case '%s': r=%d v=%llu\n",
			       parse_cases[i].in, r, v);
			CHECK(0);
		}
	}
	CHECK(lmc_parse_u64(NULL, &(unsigned long long){ 0 }) < 0);
}

static const char *env_fm, *env_tg, *env_ws;

static const char *
fake_getenv(const char *name)
{
	if (!strcmp(name, LMC_ENV_FAMILY_MAX))
		return env_fm;
	if (!strcmp(name, LMC_ENV_THREADGROUP))
		return env_tg;
	if (!strcmp(name, LMC_ENV_WORKING_SET))
		return env_ws;
	return NULL;
}

static void
test_config_defaults_and_answers(void)
{
	struct lmc_config c;
	char why[200];
	char line[400];

	env_fm = "1009"; env_tg = NULL; env_ws = NULL;
	CHECK(lmc_config_load(&c, fake_getenv, "llama-bench", why, sizeof(why)) == 0);
	CHECK(c.family_max == 1009);
	CHECK(!c.has_threadgroup_limit && !c.has_working_set);
	CHECK(c.threadgroup_note_len == 0);

	CHECK(lmc_family_answer(&c, 0, 1000) == 0);
	CHECK(lmc_family_answer(&c, 0, 1001) == 1);
	CHECK(lmc_family_answer(&c, 0, 1009) == 1);
	CHECK(lmc_family_answer(&c, 0, 1010) == 0);
	CHECK(lmc_family_answer(&c, 0, 2002) == 0);
	CHECK(lmc_family_answer(&c, 1, 2002) == 1);
	CHECK(lmc_family_answer(&c, 0, 3003) == 0);
	CHECK(lmc_family_answer(&c, 0, 5001) == 0);
	CHECK(lmc_family_answer(&c, 0, -1) == 0);
	CHECK(lmc_family_answer(&c, 1, 1010) == 1);
	/* No limit configured: the device's own answer, never raised
	 * (the published shim's default raised it to 65536). */
	CHECK(lmc_threadgroup_answer(&c, 32768) == 32768);
	CHECK(lmc_threadgroup_answer(&c, 131072) == 131072);
	CHECK(!lmc_threadgroup_clamped(&c, 32768));
	CHECK(lmc_working_set_answer(&c, 77) == 77);

	lmc_format_banner(line, sizeof(line), "llama-bench", &c);
	CHECK_STR(line, "[LumeMetalCapabilities] Enabled for llama-bench "
		  "(appleFamilyMax=1009)\n");

	/* Empty optional variables count as unset (published behaviour). */
	env_tg = ""; env_ws = "";
	CHECK(lmc_config_load(&c, fake_getenv, "llama-bench", why, sizeof(why)) == 0);
	CHECK(!c.has_threadgroup_limit && !c.has_working_set);
	CHECK(c.threadgroup_note_len == 0);

	/* A limit only lowers: below the device's answer it wins, above
	 * it the device's answer stands (and the shim says so). */
	env_tg = "32768";
	CHECK(lmc_config_load(&c, fake_getenv, "llama-bench", why, sizeof(why)) == 0);
	CHECK(c.has_threadgroup_limit && c.threadgroup_limit == 32768);
	CHECK(lmc_threadgroup_answer(&c, 65536) == 32768);
	CHECK(lmc_threadgroup_answer(&c, 32768) == 32768);
	CHECK(lmc_threadgroup_answer(&c, 16384) == 16384);
	CHECK(!lmc_threadgroup_clamped(&c, 65536));
	CHECK(!lmc_threadgroup_clamped(&c, 32768));
	CHECK(lmc_threadgroup_clamped(&c, 16384));
	lmc_format_clamp(line, sizeof(line), "llama-bench", &c, 16384);
	CHECK_STR(line, "[LumeMetalCapabilities] "
		  "LUME_METAL_MAX_THREADGROUP_MEMORY=32768 is above the 16384 "
		  "bytes the device of llama-bench reports; answering 16384 "
		  "(the shim only lowers it)\n");

	env_fm = "0x7CF"; env_tg = "32768"; env_ws = "0x400000000";
	CHECK(lmc_config_load(&c, fake_getenv, "llama-bench", why, sizeof(why)) == 0);
	CHECK(c.family_max == 1999);
	CHECK(c.has_working_set && c.working_set == 0x400000000ULL);
	CHECK(lmc_working_set_answer(&c, 1) == 0x400000000ULL);
	CHECK(lmc_working_set_answer(&c, 0x800000000ULL) == 0x800000000ULL);
	lmc_format_banner(line, sizeof(line), "mlx", &c);
	CHECK_STR(line, "[LumeMetalCapabilities] Enabled for mlx "
		  "(appleFamilyMax=1999 maxThreadgroupMemory=32768 "
		  "recommendedMaxWorkingSetSize=17179869184)\n");
}

/* Malformed or missing configurations and the reason each must give. */
static const struct {
	const char *fm, *tg, *ws;
	const char *why;
} bad_configs[] = {
	{ NULL, NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX is not set" },
	{ "", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX is not set" },
	{ "1000", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX=1000 is outside 1001-1999" },
	{ "2000", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX=2000 is outside 1001-1999" },
	{ "0", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX=0 is outside 1001-1999" },
	{ "5001", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX=5001 is outside 1001-1999" },
	{ "1009x", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX='1009x' is not an unsigned number" },
	{ "-1009", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX='-1009' is not an unsigned number" },
	{ "+1009", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX='+1009' is not an unsigned number" },
	{ "0x", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX='0x' is not an unsigned number" },
	{ " 1009", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX=' 1009' is not an unsigned number" },
	{ "1009 ", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX='1009 ' is not an unsigned number" },
	{ "18446744073709551616", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX='18446744073709551616' is not an unsigned number" },
	{ "18446744073709551615", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX=18446744073709551615 is outside 1001-1999" },
	{ "1009\n", NULL, NULL, "LUME_METAL_APPLE_FAMILY_MAX='1009?' is not an unsigned number" },
	{ "123456789012345678901234567890123456789", NULL, NULL,
	  "LUME_METAL_APPLE_FAMILY_MAX='12345678901234567890123456789012...' is not an unsigned number" },
	/* A malformed threadgroup limit is ignored, not refused (see
	 * ignored_limits); with a bad working set the whole shim refuses. */
	{ "1009", "64k", "0x", "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE='0x' is not an unsigned number" },
	{ "1009", NULL, "0x", "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE='0x' is not an unsigned number" },
	{ "1009", NULL, "12 GB", "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE='12 GB' is not an unsigned number" },
};

static void
test_config_rejects(void)
{
	struct lmc_config c;
	char why[200];
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad_configs); i++) {
		env_fm = bad_configs[i].fm;
		env_tg = bad_configs[i].tg;
		env_ws = bad_configs[i].ws;
		strcpy(why, "unchanged");
		CHECK(lmc_config_load(&c, fake_getenv, "llama-bench", why, sizeof(why)) < 0);
		CHECK_STR(why, bad_configs[i].why);
	}
}

/*
 * LUME_METAL_MAX_THREADGROUP_MEMORY values the shim ignores, each with
 * its note; the rest of the configuration still applies.
 */
static const struct {
	const char *tg, *note;
} ignored_limits[] = {
	{ "64k", "[LumeMetalCapabilities] Ignoring LUME_METAL_MAX_THREADGROUP_MEMORY='64k' for llama-bench: not an unsigned number; maxThreadgroupMemoryLength stays what the device reports\n" },
	{ "-1", "[LumeMetalCapabilities] Ignoring LUME_METAL_MAX_THREADGROUP_MEMORY='-1' for llama-bench: not an unsigned number; maxThreadgroupMemoryLength stays what the device reports\n" },
	{ " ", "[LumeMetalCapabilities] Ignoring LUME_METAL_MAX_THREADGROUP_MEMORY=' ' for llama-bench: not an unsigned number; maxThreadgroupMemoryLength stays what the device reports\n" },
	{ "0x", "[LumeMetalCapabilities] Ignoring LUME_METAL_MAX_THREADGROUP_MEMORY='0x' for llama-bench: not an unsigned number; maxThreadgroupMemoryLength stays what the device reports\n" },
	{ "32768\n", "[LumeMetalCapabilities] Ignoring LUME_METAL_MAX_THREADGROUP_MEMORY='32768?' for llama-bench: not an unsigned number; maxThreadgroupMemoryLength stays what the device reports\n" },
	{ "0", "[LumeMetalCapabilities] Ignoring LUME_METAL_MAX_THREADGROUP_MEMORY='0' for llama-bench: 0 bytes is no usable limit; maxThreadgroupMemoryLength stays what the device reports\n" },
	{ "000", "[LumeMetalCapabilities] Ignoring LUME_METAL_MAX_THREADGROUP_MEMORY='000' for llama-bench: 0 bytes is no usable limit; maxThreadgroupMemoryLength stays what the device reports\n" },
	{ "18446744073709551616", "[LumeMetalCapabilities] Ignoring LUME_METAL_MAX_THREADGROUP_MEMORY='18446744073709551616' for llama-bench: not an unsigned number; maxThreadgroupMemoryLength stays what the device reports\n" },
};

static void
test_config_ignores_bad_limit(void)
{
	struct lmc_config c;
	char why[200];
	size_t i;

	for (i = 0; i < ARRAY_LEN(ignored_limits); i++) {
		env_fm = "1009"; env_tg = ignored_limits[i].tg; env_ws = "4096";
		CHECK(lmc_config_load(&c, fake_getenv, "llama-bench", why,
				      sizeof(why)) == 0);
		CHECK(c.family_max == 1009 && c.has_working_set);
		CHECK(!c.has_threadgroup_limit);
		CHECK(lmc_threadgroup_answer(&c, 32768) == 32768);
		CHECK_STR(c.threadgroup_note, ignored_limits[i].note);
		CHECK(c.threadgroup_note_len == strlen(ignored_limits[i].note));
	}
	/* The probe reads the limit the same way. */
	{
		unsigned long long v = 0;

		env_tg = "0x8000";
		CHECK(lmc_threadgroup_limit(fake_getenv, &v) == 1 && v == 32768);
		env_tg = "";
		CHECK(lmc_threadgroup_limit(fake_getenv, &v) == 0);
		env_tg = "0";
		CHECK(lmc_threadgroup_limit(fake_getenv, &v) == -1);
	}
}

static void
test_refusal_format(void)
{
	char line[400];

	lmc_format_refusal(line, sizeof(line), "llama-bench",
			   "LUME_METAL_APPLE_FAMILY_MAX is not set");
	CHECK_STR(line, "[LumeMetalCapabilities] Disabled for llama-bench: "
		  "LUME_METAL_APPLE_FAMILY_MAX is not set; leaving stock "
		  "capabilities unchanged\n");
	/* A tiny buffer truncates but stays terminated. */
	CHECK(lmc_format_refusal(line, 8, "x", "y") == 7);
	CHECK_STR(line, "[LumeMe");
}

/* ---- the real library in a child process --------------------------- */

static char child_err[8192];    /* the child's whole stderr */
static void *shim_handle;

struct scenario {
	enum fake_world world;
	const char *fm, *tg, *ws;   /* NULL: unset */
	int load_shim;
};

static void
setenv_or_unset(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

/* Child side: builds the world, sets the environment, loads the shim. */
static void
child_setup(const struct scenario *s)
{
	fake_world_build(s->world);
	setenv_or_unset(LMC_ENV_FAMILY_MAX, s->fm);
	setenv_or_unset(LMC_ENV_THREADGROUP, s->tg);
	setenv_or_unset(LMC_ENV_WORKING_SET, s->ws);
	if (!s->load_shim)
		return;
	shim_handle = dlopen(LMC_SHIM_SO, RTLD_NOW | RTLD_GLOBAL);
	if (!shim_handle) {
		printf("  dlopen: %s\n", dlerror());
		CHECK(0);
		fflush(stdout);
		_exit(100);
	}
}

static const char *
shim_status(void)
{
	return lmc_probe_shim_status();
}

/*
 * Runs fn in a forked child after child_setup(s); the child's failed
 * checks become its exit status and are added here, its stderr lands in
 * child_err. A child killed by a signal is a failure.
 */
static void
run_child(const struct scenario *s, void (*fn)(const struct scenario *))
{
	char path[] = "/tmp/test-shim-err.XXXXXX";
	int fd = mkstemp(path), status;
	pid_t pid;
	FILE *fp;
	size_t n;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		test_failed_checks = 0;
		child_setup(s);
		fn(s);
		fflush(stdout);
		_exit(test_failed_checks > 99 ? 99 : test_failed_checks);
	}
	CHECK(pid > 0);
	if (pid > 0 && waitpid(pid, &status, 0) == pid) {
		if (WIFSIGNALED(status)) {
			printf("  child killed by signal %d\n", WTERMSIG(status));
			CHECK(0);
		} else {
			test_failed_checks += WEXITSTATUS(status);
		}
	}
	fp = fopen(path, "r");
	n = fp ? fread(child_err, 1, sizeof(child_err) - 1, fp) : 0;
	child_err[n] = '\0';
	if (fp)
		fclose(fp);
	close(fd);
	unlink(path);
}

/* fmt with its one or two %s replaced by this program's name (the
 * shim's process name); four rotating static buffers. */
static const char *
line_for(const char *fmt)
{
	static char bufs[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(bufs[k], sizeof(bufs[k]), fmt, program_invocation_short_name,
		 program_invocation_short_name);
	return bufs[k];
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Families asked at the boundaries, with the hooked answer for max. */
static const long boundary_families[] = {
	-1, 0, 1000, 1001, 1005, 1006, 1008, 1009, 1010, 1011, 1998, 1999,
	2000, 2001, 2002, 2003, 3001, 3003, 3004, 4001, 5001, 5002, 9999,
};

static int
hooked_answer(long f, long max)
{
	return fake_stock_family(f) || (f >= 1001 && f <= max);
}

/* Asserts every boundary answer of dev and that each query reached the
 * original exactly once. */
static void
check_answers(id dev, long max)
{
	long before = atomic_load(&fake_calls.family);
	size_t i;

	for (i = 0; i < ARRAY_LEN(boundary_families); i++) {
		long f = boundary_families[i];
		int want = max ? hooked_answer(f, max) : fake_stock_family(f);

		if (fake_supports(dev, f) != want) {
			printf("  supportsFamily:%ld != %d (max %ld)\n",
			       f, want, max);
			CHECK(0);
		}
	}
	CHECK(atomic_load(&fake_calls.family) - before ==
	      (long)ARRAY_LEN(boundary_families));
}

static void
child_stock(const struct scenario *s)
{
	id dev = fake_device_new();

	fake_device_init(dev);
	check_answers(dev, 0);
	CHECK(fake_tg(dev) == FAKE_STOCK_TG);
	CHECK(fake_ws(dev) == FAKE_STOCK_WS);
	CHECK(shim_status() == NULL);
}

static void
test_stock_without_shim(void)
{
	struct scenario s = { FAKE_PRIVATE, "1009", NULL, NULL, 0 };

	run_child(&s, child_stock);
	CHECK_STR(child_err, "");
}

static void
child_private_1009(const struct scenario *s)
{
	id dev, other, base;

	/* Armed by the constructor; nothing hooked before device init. */
	CHECK_STR(shim_status(), "armed");
	dev = fake_device_new();
	CHECK(fake_supports(dev, 1009) == 0);
	fake_device_init(dev);
	CHECK_STR(shim_status(), "installed");
	CHECK(atomic_load(&fake_calls.init) == 1);

	check_answers(dev, 1009);
	CHECK(fake_tg(dev) == FAKE_STOCK_TG);     /* no limit: never raised */
	CHECK(atomic_load(&fake_calls.tg) == 1);
	CHECK(fake_ws(dev) == FAKE_STOCK_WS);     /* not configured */
	CHECK(atomic_load(&fake_calls.ws) == 1);

	/* Only the concrete class changed: its sibling and the base class
	 * keep the stock answers, even after their own initialisation. */
	other = fake_object_new("FakeOtherDevice");
	fake_device_init(other);
	CHECK(atomic_load(&fake_calls.init) == 2);
	check_answers(other, 0);
	CHECK(fake_tg(other) == FAKE_STOCK_TG);
	CHECK(fake_is_stock_imp(objc_getClass("FakeOtherDevice"),
				"supportsFamily:"));
	CHECK(fake_is_stock_imp(objc_getClass("_MTLDevice"),
				"maxThreadgroupMemoryLength"));
	CHECK(!fake_is_stock_imp(objc_getClass("FakeParavirtualDevice"),
				 "supportsFamily:"));
	base = fake_object_new("_MTLDevice");
	check_answers(base, 0);
	/* A second device of the hooked class is hooked too. */
	dev = fake_device_new();
	fake_device_init(dev);
	check_answers(dev, 1009);
}

static void
test_hooked_private_class(void)
{
	struct scenario s = { FAKE_PRIVATE, "1009", NULL, NULL, 1 };

	run_child(&s, child_private_1009);
	CHECK_STR(child_err, line_for("[LumeMetalCapabilities] Enabled for "
		  "%s (appleFamilyMax=1009)\n"));
}

static void
child_private_1999(const struct scenario *s)
{
	id dev = fake_device_new();

	fake_device_init(dev);
	check_answers(dev, 1999);
	/* Configured below the device's own value: the limit wins (this
	 * was max(original, limit), raising, before the shim only
	 * lowered). */
	CHECK(fake_tg(dev) == 16384);
	CHECK(atomic_load(&fake_calls.tg) == 1);
	CHECK(fake_ws(dev) == 0x400000000ULL);
	CHECK(atomic_load(&fake_calls.ws) == 1);
}

static void
test_hooked_max_and_working_set(void)
{
	struct scenario s = { FAKE_PRIVATE, "0x7CF", "16384", "0x400000000", 1 };

	run_child(&s, child_private_1999);
	CHECK_STR(child_err, line_for("[LumeMetalCapabilities] Enabled for "
		  "%s (appleFamilyMax=1999 maxThreadgroupMemory=16384 "
		  "recommendedMaxWorkingSetSize=17179869184)\n"));
}

static void
child_working_set_below(const struct scenario *s)
{
	id dev = fake_device_new();

	fake_device_init(dev);
	check_answers(dev, 1001);
	/* Configured above the device's value: the device's answer stands. */
	CHECK(fake_tg(dev) == FAKE_STOCK_TG);
	CHECK(fake_tg(dev) == FAKE_STOCK_TG);
	CHECK(atomic_load(&fake_calls.tg) == 2);
	CHECK(fake_ws(dev) == FAKE_STOCK_WS);
}

static void
test_hooked_working_set_below(void)
{
	struct scenario s = { FAKE_PRIVATE, "1001", "131072", "1024", 1 };

	run_child(&s, child_working_set_below);
	/* The banner, then one clamp line for two queries. */
	CHECK_STR(child_err, line_for("[LumeMetalCapabilities] Enabled for %s "
		  "(appleFamilyMax=1001 maxThreadgroupMemory=131072 "
		  "recommendedMaxWorkingSetSize=1024)\n"
		  "[LumeMetalCapabilities] LUME_METAL_MAX_THREADGROUP_MEMORY="
		  "131072 is above the 32768 bytes the device of %s reports; "
		  "answering 32768 (the shim only lowers it)\n"));
}

static void
child_public(const struct scenario *s)
{
	id dev;

	/* Installed by the constructor, through MTLCreateSystemDefaultDevice,
	 * whose +1 result it released. */
	CHECK_STR(shim_status(), "installed");
	CHECK(atomic_load(&fake_calls.create) == 1);
	CHECK(atomic_load(&fake_calls.release) == 1);
	dev = fake_device_new();
	check_answers(dev, 1009);
	CHECK(fake_tg(dev) == 32000);
	check_answers(fake_object_new("FakeOtherDevice"), 0);
}

static void
test_hooked_public_fallback(void)
{
	struct scenario s = { FAKE_PUBLIC, "1009", "32000", NULL, 1 };

	run_child(&s, child_public);
	CHECK_STR(child_err, line_for("[LumeMetalCapabilities] Enabled for "
		  "%s (appleFamilyMax=1009 maxThreadgroupMemory=32000)\n"));
}

static void
child_copy_all(const struct scenario *s)
{
	CHECK_STR(shim_status(), "installed");
	CHECK(atomic_load(&fake_calls.create) == 1);
	CHECK(atomic_load(&fake_calls.copy_all) == 1);
	CHECK(atomic_load(&fake_calls.release) == 1);   /* the array */
	check_answers(fake_device_new(), 1008);
}

static void
test_hooked_copy_all_fallback(void)
{
	struct scenario s = { FAKE_COPY_ALL, "1008", NULL, NULL, 1 };

	run_child(&s, child_copy_all);
	CHECK(count_lines(child_err) == 1);
	CHECK(strstr(child_err, line_for("Enabled for %s (appleFamilyMax=1008)\n"))
	      != NULL);
}

static void
child_no_device(const struct scenario *s)
{
	CHECK_STR(shim_status(), "failed");
	check_answers(fake_device_new(), 0);
}

static void
test_no_device(void)
{
	struct scenario s = { FAKE_NONE, "1009", NULL, NULL, 1 };

	run_child(&s, child_no_device);
	CHECK_STR(child_err, line_for("[LumeMetalCapabilities] Disabled for %s: "
		  "no Metal device class found; leaving stock capabilities "
		  "unchanged\n"));
}

static void
child_missing_method(const struct scenario *s)
{
	id dev = fake_device_new();

	fake_device_init(dev);
	CHECK_STR(shim_status(), "failed");
	check_answers(dev, 0);
	CHECK(atomic_load(&fake_calls.init) == 1);
}

static void
test_missing_method_fails_closed(void)
{
	struct scenario s = { FAKE_PRIVATE_NO_TG, "1009", NULL, NULL, 1 };

	run_child(&s, child_missing_method);
	CHECK_STR(child_err, line_for("[LumeMetalCapabilities] Disabled for %s: "
		  "required device methods are unavailable on class "
		  "'FakeParavirtualDevice'; leaving stock capabilities "
		  "unchanged\n"));
}

static void
child_disabled(const struct scenario *s)
{
	Class base = objc_getClass("_MTLDevice");
	id dev = fake_device_new();

	CHECK_STR(shim_status(), "disabled");
	/* Untouched: not even initGPUFamilySupport was wrapped. */
	CHECK(fake_is_stock_imp(base, "initGPUFamilySupport"));
	CHECK(fake_is_stock_imp(objc_getClass("FakeParavirtualDevice"),
				"supportsFamily:"));
	fake_device_init(dev);
	check_answers(dev, 0);
	CHECK(fake_tg(dev) == FAKE_STOCK_TG);
	CHECK(fake_ws(dev) == FAKE_STOCK_WS);
}

static void
test_malformed_configs_untouched(void)
{
	char want[400];
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad_configs); i++) {
		struct scenario s = { FAKE_PRIVATE, bad_configs[i].fm,
			bad_configs[i].tg, bad_configs[i].ws, 1 };
		int before = test_failed_checks;

		run_child(&s, child_disabled);
		lmc_format_refusal(want, sizeof(want),
				   program_invocation_short_name,
				   bad_configs[i].why);
		CHECK_STR(child_err, want);
		CHECK(count_lines(child_err) == 1);
		if (test_failed_checks != before)
			printf("  (config %zu: fm=%s tg=%s ws=%s)\n", i,
			       s.fm ? s.fm : "(unset)", s.tg ? s.tg : "(unset)",
			       s.ws ? s.ws : "(unset)");
	}
}

static void
child_ignored_limit(const struct scenario *s)
{
	id dev = fake_device_new();

	fake_device_init(dev);
	CHECK_STR(shim_status(), "installed");
	check_answers(dev, 1009);
	CHECK(fake_tg(dev) == FAKE_STOCK_TG);
}

/* A malformed limit: the note, then the banner; the family still hooked. */
static void
test_ignored_limit_in_process(void)
{
	struct scenario s = { FAKE_PRIVATE, "1009", "32k", NULL, 1 };

	run_child(&s, child_ignored_limit);
	CHECK_STR(child_err, line_for("[LumeMetalCapabilities] Ignoring "
		  "LUME_METAL_MAX_THREADGROUP_MEMORY='32k' for %s: not an "
		  "unsigned number; maxThreadgroupMemoryLength stays what the "
		  "device reports\n"
		  "[LumeMetalCapabilities] Enabled for %s (appleFamilyMax=1009)\n"));
}

#define NTHREADS 8

static pthread_barrier_t barrier;

static void *
racer(void *arg)
{
	id dev = fake_device_new();
	int *ok = arg;

	pthread_barrier_wait(&barrier);
	fake_device_init(dev);
	/* Whoever returns from init must already see the hooks. */
	*ok = fake_supports(dev, 1009) == 1 && fake_tg(dev) == 16384;
	return NULL;
}

static void
child_concurrent(const struct scenario *s)
{
	pthread_t t[NTHREADS];
	int ok[NTHREADS];
	long family_before;
	size_t i;

	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&t[i], NULL, racer, &ok[i]) == 0);
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK(ok[i]);
	}
	CHECK(atomic_load(&fake_calls.init) == NTHREADS);
	/* Hooked once: one query reaches the original exactly once. */
	CHECK(atomic_load(&fake_calls.family) == NTHREADS);
	family_before = atomic_load(&fake_calls.family);
	CHECK(fake_supports(fake_device_new(), 1003) == 1);
	CHECK(atomic_load(&fake_calls.family) == family_before + 1);
	CHECK_STR(shim_status(), "installed");
}

static void
test_concurrent_first_calls(void)
{
	struct scenario s = { FAKE_PRIVATE, "1009", "16384", NULL, 1 };
	int round;

	for (round = 0; round < 20; round++) {
		run_child(&s, child_concurrent);
		CHECK_STR(child_err, line_for("[LumeMetalCapabilities] "
			  "Enabled for %s (appleFamilyMax=1009 "
			  "maxThreadgroupMemory=16384)\n"));
	}
}

static const char probe_stock_json[] =
	"{\n"
	"  \"device\": \"Apple Paravirtual device\",\n"
	"  \"supportsFamily\": {\n"
	"    \"1001\": true,\n    \"1002\": true,\n    \"1003\": true,\n"
	"    \"1004\": true,\n    \"1005\": true,\n    \"1006\": false,\n"
	"    \"1007\": false,\n    \"1008\": false,\n    \"1009\": false,\n"
	"    \"1010\": false,\n    \"1011\": false,\n    \"1012\": false,\n"
	"    \"1013\": false,\n    \"1014\": false,\n    \"1015\": false,\n"
	"    \"1016\": false,\n    \"1017\": false,\n    \"1018\": false,\n"
	"    \"1019\": false,\n    \"1020\": false,\n"
	"    \"2001\": true,\n    \"2002\": true,\n"
	"    \"3001\": true,\n    \"3002\": true,\n    \"3003\": true,\n"
	"    \"3004\": false,\n    \"3005\": false,\n"
	"    \"5001\": false,\n    \"5002\": false\n"
	"  },\n"
	"  \"highestFamily\": {\"apple\": 1005, \"mac\": 2002, "
	"\"common\": 3003, \"metal\": null},\n"
	"  \"maxThreadgroupMemoryLength\": 32768,\n"
	"  \"maxThreadgroupMemoryLimit\": null,\n"
	"  \"recommendedMaxWorkingSetSize\": 12009275392,\n"
	"  \"hasUnifiedMemory\": true,\n"
	"  \"shim\": {\"loaded\": false}\n"
	"}\n";

/* Replaces the first occurrence of from in s (size n) with to. */
static void
replace1(char *s, size_t n, const char *from, const char *to)
{
	char tail[4096];
	char *p = strstr(s, from);

	if (!p || strlen(s) - strlen(from) + strlen(to) >= n) {
		printf("  replace1: '%s' not found or no room\n", from);
		CHECK(0);
		return;
	}
	snprintf(tail, sizeof(tail), "%s", p + strlen(from));
	snprintf(p, n - (size_t)(p - s), "%s%s", to, tail);
}

/* The stock JSON with the answers a 1009 shim gives. */
static const char *
probe_shimmed_json(void)
{
	static char out[sizeof(probe_stock_json) + 64];

	snprintf(out, sizeof(out), "%s", probe_stock_json);
	replace1(out, sizeof(out), "\"1006\": false", "\"1006\": true");
	replace1(out, sizeof(out), "\"1007\": false", "\"1007\": true");
	replace1(out, sizeof(out), "\"1008\": false", "\"1008\": true");
	replace1(out, sizeof(out), "\"1009\": false", "\"1009\": true");
	replace1(out, sizeof(out), "\"apple\": 1005", "\"apple\": 1009");
	replace1(out, sizeof(out), "{\"loaded\": false}",
		 "{\"loaded\": true, \"status\": \"installed\"}");
	return out;
}

static char probe_out[4096];

static void
child_probe(const struct scenario *s)
{
	id dev = fake_device_new();
	FILE *fp = fmemopen(probe_out, sizeof(probe_out), "w");

	fake_device_init(dev);
	CHECK(lmc_probe_write(fp, dev, lmc_probe_shim_status()) == 0);
	fclose(fp);
	CHECK_STR(probe_out, s->load_shim ? probe_shimmed_json() :
		  probe_stock_json);
}

static void
test_probe_json(void)
{
	struct scenario stock = { FAKE_PRIVATE, "1009", NULL, NULL, 0 };
	struct scenario shim = { FAKE_PRIVATE, "1009", NULL, NULL, 1 };

	run_child(&stock, child_probe);
	run_child(&shim, child_probe);
}

/* ---- the probe's command line and key=value form ---------------- */

static const struct {
	const char *argv[4];
	int rc;
	unsigned long long family;
	int given, json;
	const char *err;
} probe_args[] = {
	{ { NULL }, 0, 1009, 0, 0, "" },
	{ { "1009" }, 0, 1009, 1, 0, "" },
	{ { "1007" }, 0, 1007, 1, 0, "" },
	{ { "0x3F1" }, 0, 1009, 1, 0, "" },
	{ { "5001" }, 0, 5001, 1, 0, "" },
	{ { "--json" }, 0, 1009, 0, 1, "" },
	{ { "--json", "1021" }, 0, 1021, 1, 1, "" },
	{ { "1021", "--json" }, 0, 1021, 1, 1, "" },
	{ { "--help" }, 1, 1009, 0, 0, "" },
	{ { "-h" }, 1, 1009, 0, 0, "" },
	{ { "1009x" }, 2, 0, 0, 0, "invalid family: 1009x\n" },
	{ { "" }, 2, 0, 0, 0, "invalid family: \n" },
	{ { "0" }, 2, 0, 0, 0, "invalid family: 0\n" },
	{ { "100000" }, 2, 0, 0, 0, "invalid family: 100000\n" },
	{ { "1009", "1010" }, 2, 0, 0, 0, "error: unexpected argument '1010'\n" },
	{ { "--kv" }, 2, 0, 0, 0, "error: unexpected argument '--kv'\n" },
	{ { "-1" }, 2, 0, 0, 0, "error: unexpected argument '-1'\n" },
};

static void
test_probe_args(void)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(probe_args); i++) {
		char *argv[5] = { "metal-capabilities" };
		char out[1024] = "", err[256] = "";
		FILE *fo = fmemopen(out, sizeof(out), "w");
		FILE *fe = fmemopen(err, sizeof(err), "w");
		struct lmc_probe_args a;
		int argc = 1, rc;

		while (argc < 4 && probe_args[i].argv[argc - 1]) {
			argv[argc] = (char *)probe_args[i].argv[argc - 1];
			argc++;
		}
		rc = lmc_probe_parse_args(argc, argv, &a, fo, fe);
		fclose(fo);
		fclose(fe);
		if (rc != probe_args[i].rc || strcmp(err, probe_args[i].err) ||
		    (rc == 0 && (a.family != probe_args[i].family ||
				 a.family_given != probe_args[i].given ||
				 a.json != probe_args[i].json))) {
			printf("  case %zu ('%s'): rc %d, err '%s'\n", i,
			       argv[1] ? argv[1] : "", rc, err);
			CHECK(0);
		}
		if (rc == 1)
			CHECK(strstr(out, "usage: metal-capabilities [--json] "
				     "[FAMILY]") == out);
	}
}

static char probe_kv[1024];

static void
child_probe_kv(const struct scenario *s)
{
	id dev = fake_device_new();
	FILE *fp = fmemopen(probe_kv, sizeof(probe_kv), "w");

	fake_device_init(dev);
	CHECK(lmc_probe_write_kv(fp, dev, 1009, lmc_probe_shim_status()) == 0);
	fclose(fp);
	if (s->load_shim)
		CHECK_STR(probe_kv, "device=Apple Paravirtual device\n"
			  "family=1009\n"
			  "supports_family=true\n"
			  "max_threadgroup_memory=32768\n"
			  "highest_apple_family=1009\n"
			  "recommended_max_working_set_size=12009275392\n"
			  "has_unified_memory=true\n"
			  "max_threadgroup_memory_limit=\n"
			  "shim_loaded=true\n"
			  "shim_status=installed\n");
	else
		CHECK_STR(probe_kv, "device=Apple Paravirtual device\n"
			  "family=1009\n"
			  "supports_family=false\n"
			  "max_threadgroup_memory=32768\n"
			  "highest_apple_family=1005\n"
			  "recommended_max_working_set_size=12009275392\n"
			  "has_unified_memory=true\n"
			  "max_threadgroup_memory_limit=\n"
			  "shim_loaded=false\n"
			  "shim_status=\n");
}

static void
test_probe_kv(void)
{
	struct scenario stock = { FAKE_PRIVATE, "1009", NULL, NULL, 0 };
	struct scenario shim = { FAKE_PRIVATE, "1009", NULL, NULL, 1 };

	run_child(&stock, child_probe_kv);
	run_child(&shim, child_probe_kv);
}

/* --json with a family: the asked family's answer after "device". */
static void
child_probe_json_family(const struct scenario *s)
{
	id dev = fake_device_new();
	unsigned long long fam = 1009;
	FILE *fp = fmemopen(probe_out, sizeof(probe_out), "w");
	char want[4096];

	fake_device_init(dev);
	CHECK(lmc_probe_write_json(fp, dev, &fam, lmc_probe_shim_status()) == 0);
	fclose(fp);
	snprintf(want, sizeof(want), "%s", probe_shimmed_json());
	replace1(want, sizeof(want), "\"device\": \"Apple Paravirtual device\",\n",
		 "\"device\": \"Apple Paravirtual device\",\n"
		 "  \"family\": 1009,\n  \"supports_family\": true,\n");
	CHECK_STR(probe_out, want);
	(void)s;
}

static void
test_probe_json_family(void)
{
	struct scenario shim = { FAKE_PRIVATE, "1009", NULL, NULL, 1 };

	run_child(&shim, child_probe_json_family);
}

/* The limit as the probe shows it, with the shim and without it. */
static void
child_probe_kv_limit(const struct scenario *s)
{
	id dev = fake_device_new();
	FILE *fp = fmemopen(probe_kv, sizeof(probe_kv), "w");

	fake_device_init(dev);
	CHECK(lmc_probe_write_kv(fp, dev, 1009, lmc_probe_shim_status()) == 0);
	fclose(fp);
	if (!strcmp(s->tg, "16384") && s->load_shim)
		CHECK(strstr(probe_kv, "\nmax_threadgroup_memory=16384\n") &&
		      strstr(probe_kv, "\nmax_threadgroup_memory_limit=16384\n"));
	else if (!strcmp(s->tg, "16384"))
		/* Asked for, not loaded: the limit shows, the answer is stock. */
		CHECK(strstr(probe_kv, "\nmax_threadgroup_memory=32768\n") &&
		      strstr(probe_kv, "\nmax_threadgroup_memory_limit=16384\n"));
	else
		CHECK(strstr(probe_kv, "\nmax_threadgroup_memory=32768\n") &&
		      strstr(probe_kv, "\nmax_threadgroup_memory_limit=ignored\n"));
	fp = fmemopen(probe_out, sizeof(probe_out), "w");
	CHECK(lmc_probe_write(fp, dev, lmc_probe_shim_status()) == 0);
	fclose(fp);
	CHECK(strstr(probe_out, !strcmp(s->tg, "16384") ?
		     "\"maxThreadgroupMemoryLimit\": 16384,\n" :
		     "\"maxThreadgroupMemoryLimit\": \"ignored\",\n") != NULL);
}

static void
test_probe_limit(void)
{
	struct scenario shim = { FAKE_PRIVATE, "1009", "16384", NULL, 1 };
	struct scenario stock = { FAKE_PRIVATE, "1009", "16384", NULL, 0 };
	struct scenario bad = { FAKE_PRIVATE, "1009", "0", NULL, 1 };

	run_child(&shim, child_probe_kv_limit);
	run_child(&stock, child_probe_kv_limit);
	run_child(&bad, child_probe_kv_limit);
}

static const struct test_case tests[] = {
	{ "parse_u64 strict strtoull(..., 0)", test_parse_u64 },
	{ "config defaults, answers, banner", test_config_defaults_and_answers },
	{ "config rejects every malformed value", test_config_rejects },
	{ "config ignores a malformed or zero threadgroup limit, with a note", test_config_ignores_bad_limit },
	{ "refusal line format", test_refusal_format },
	{ "stock answers without the shim", test_stock_without_shim },
	{ "hooks via _MTLDevice initGPUFamilySupport (max 1009)", test_hooked_private_class },
	{ "hooks at max 1999, threadgroup limit below the device (lowers), working set above", test_hooked_max_and_working_set },
	{ "hooks at max 1001, threadgroup limit above the device (clamped, one line), working set below", test_hooked_working_set_below },
	{ "malformed threadgroup limit: ignored with a note, family still hooked", test_ignored_limit_in_process },
	{ "hooks via MTLCreateSystemDefaultDevice fallback", test_hooked_public_fallback },
	{ "hooks via MTLCopyAllDevices fallback", test_hooked_copy_all_fallback },
	{ "no device: fails closed with one line", test_no_device },
	{ "missing device method: fails closed with one line", test_missing_method_fails_closed },
	{ "malformed configuration: untouched with one line", test_malformed_configs_untouched },
	{ "installed once under concurrent first calls", test_concurrent_first_calls },
	{ "probe JSON on the fake device, stock and shimmed", test_probe_json },
	{ "probe command line: [--json] [FAMILY] as the published probe", test_probe_args },
	{ "probe key=value lines, stock and shimmed", test_probe_kv },
	{ "probe shows the threadgroup limit asked for and the answer", test_probe_limit },
	{ "probe --json with a family answers it first", test_probe_json_family },
};

TEST_MAIN(tests)
