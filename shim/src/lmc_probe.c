#ifndef __APPLE__
#define _GNU_SOURCE     /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "lmc_config.h"
#include "lmc_probe.h"
#include "lmc_status.h"

static const struct {
	const char *group;
	long first, last;
} family_groups[] = {
	{ "apple", 1001, 1020 },
	{ "mac", 2001, 2002 },
	{ "common", 3001, 3005 },
	{ "metal", 5001, 5002 },
};

static const char *
get_env(const char *name)
{
	return getenv(name);
}

/*
 * The threadgroup memory limit this process asks the shim for, as the
 * shim reads it: the number, "" when unset, "ignored" when malformed
 * or 0. buf has room for a 20-digit number.
 */
static const char *
threadgroup_limit(char *buf, size_t n)
{
	unsigned long long v;
	int r = lmc_threadgroup_limit(get_env, &v);

	if (r < 0)
		return "ignored";
	if (r == 0)
		return "";
	snprintf(buf, n, "%llu", v);
	return buf;
}

static void
put_json_str(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', fp);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(fp, "\\u%04x", *p);
		else
			fputc(*p, fp);
	}
	fputc('"', fp);
}

/* Sends a no-argument message returning an unsigned integer. */
static unsigned long long
send_u64(id dev, SEL s)
{
	return LMC_MSG(unsigned long long (*)(id, SEL), dev, s)(dev, s);
}

/* The device's name, or NULL when it has none. */
static const char *
device_name(id dev)
{
	SEL s_name = sel_registerName("name");
	SEL s_utf8 = sel_registerName("UTF8String");
	id name = nil;

	if (lmc_responds(dev, s_name))
		name = LMC_MSG(id (*)(id, SEL), dev, s_name)(dev, s_name);
	if (lmc_responds(name, s_utf8))
		return LMC_MSG(const char *(*)(id, SEL), name, s_utf8)(
			name, s_utf8);
	return NULL;
}

static int
supports(id dev, unsigned long long family)
{
	SEL s_family = sel_registerName("supportsFamily:");

	return LMC_MSG(BOOL (*)(id, SEL, lmc_nsint), dev, s_family)(
		dev, s_family, (lmc_nsint)family) ? 1 : 0;
}

int
lmc_probe_write(FILE *fp, id dev, const char *shim_status)
{
	return lmc_probe_write_json(fp, dev, NULL, shim_status);
}

int
lmc_probe_write_json(FILE *fp, id dev, const unsigned long long *family,
		     const char *shim_status)
{
	SEL s_tg = sel_registerName("maxThreadgroupMemoryLength");
	SEL s_ws = sel_registerName("recommendedMaxWorkingSetSize");
	SEL s_unified = sel_registerName("hasUnifiedMemory");
	long highest[sizeof(family_groups) / sizeof(family_groups[0])];
	const char *cname = device_name(dev);
	char limit_buf[24];
	const char *limit;
	size_t g;
	long f;
	int first = 1;

	fputs("{\n  \"device\": ", fp);
	if (cname)
		put_json_str(fp, cname);
	else
		fputs("null", fp);
	if (family)
		fprintf(fp, ",\n  \"family\": %llu,\n  \"supports_family\": %s",
			*family, supports(dev, *family) ? "true" : "false");
	fputs(",\n  \"supportsFamily\": {", fp);
	for (g = 0; g < sizeof(family_groups) / sizeof(family_groups[0]); g++) {
		highest[g] = 0;
		for (f = family_groups[g].first; f <= family_groups[g].last; f++) {
			int yes = supports(dev, (unsigned long long)f);

			if (yes)
				highest[g] = f;
			fprintf(fp, "%s\n    \"%ld\": %s", first ? "" : ",", f,
				yes ? "true" : "false");
			first = 0;
		}
	}
	fputs("\n  },\n  \"highestFamily\": {", fp);
	for (g = 0; g < sizeof(family_groups) / sizeof(family_groups[0]); g++) {
		fprintf(fp, "%s\"%s\": ", g ? ", " : "", family_groups[g].group);
		if (highest[g])
			fprintf(fp, "%ld", highest[g]);
		else
			fputs("null", fp);
	}
	fprintf(fp, "},\n  \"maxThreadgroupMemoryLength\": %llu",
		send_u64(dev, s_tg));
	limit = threadgroup_limit(limit_buf, sizeof(limit_buf));
	fputs(",\n  \"maxThreadgroupMemoryLimit\": ", fp);
	if (!*limit)
		fputs("null", fp);
	else if (!strcmp(limit, "ignored"))
		put_json_str(fp, limit);
	else
		fputs(limit, fp);
	fputs(",\n  \"recommendedMaxWorkingSetSize\": ", fp);
	if (lmc_responds(dev, s_ws))
		fprintf(fp, "%llu", send_u64(dev, s_ws));
	else
		fputs("null", fp);
	fputs(",\n  \"hasUnifiedMemory\": ", fp);
	if (lmc_responds(dev, s_unified))
		fputs(LMC_MSG(BOOL (*)(id, SEL), dev, s_unified)(dev, s_unified) ?
		      "true" : "false", fp);
	else
		fputs("null", fp);
	fputs(",\n  \"shim\": {\"loaded\": ", fp);
	if (shim_status) {
		fputs("true, \"status\": ", fp);
		put_json_str(fp, shim_status);
	} else {
		fputs("false", fp);
	}
	fputs("}\n}\n", fp);
	return ferror(fp) ? -1 : 0;
}

const char *
lmc_probe_shim_status(void)
{
	lmc_status_fn fn = (lmc_status_fn)dlsym(RTLD_DEFAULT,
						 LMC_STATUS_SYMBOL);

	return fn ? fn() : NULL;
}

int
lmc_probe_write_kv(FILE *fp, id dev, unsigned long long family,
		   const char *shim_status)
{
	SEL s_tg = sel_registerName("maxThreadgroupMemoryLength");
	SEL s_ws = sel_registerName("recommendedMaxWorkingSetSize");
	SEL s_unified = sel_registerName("hasUnifiedMemory");
	const char *cname = device_name(dev);
	char limit_buf[24];
	long f, highest = 0;

	/* The published probe's four lines, in its order. */
	fprintf(fp, "device=%s\n", cname ? cname : "");
	fprintf(fp, "family=%llu\n", family);
	fprintf(fp, "supports_family=%s\n",
		supports(dev, family) ? "true" : "false");
	fprintf(fp, "max_threadgroup_memory=%llu\n", send_u64(dev, s_tg));
	/* Ours. */
	for (f = family_groups[0].first; f <= family_groups[0].last; f++)
		if (supports(dev, (unsigned long long)f))
			highest = f;
	fprintf(fp, "highest_apple_family=%ld\n", highest);
	fputs("recommended_max_working_set_size=", fp);
	if (lmc_responds(dev, s_ws))
		fprintf(fp, "%llu", send_u64(dev, s_ws));
	fputs("\nhas_unified_memory=", fp);
	if (lmc_responds(dev, s_unified))
		fputs(LMC_MSG(BOOL (*)(id, SEL), dev, s_unified)(dev, s_unified) ?
		      "true" : "false", fp);
	fprintf(fp, "\nmax_threadgroup_memory_limit=%s",
		threadgroup_limit(limit_buf, sizeof(limit_buf)));
	fprintf(fp, "\nshim_loaded=%s\nshim_status=%s\n",
		shim_status ? "true" : "false", shim_status ? shim_status : "");
	return ferror(fp) ? -1 : 0;
}

int
lmc_probe_parse_args(int argc, char **argv, struct lmc_probe_args *a,
		     FILE *out, FILE *err)
{
	int i;

	a->family = LMC_PROBE_DEFAULT_FAMILY;
	a->family_given = 0;
	a->json = 0;
	for (i = 1; i < argc; i++) {
		unsigned long long v;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs("usage: metal-capabilities [--json] [FAMILY]\n"
			      "Prints what the default Metal device of this "
			      "process reports, as\nkey=value lines (device=, "
			      "family=, supports_family=,\nmax_threadgroup_"
			      "memory=, then ours) or, with --json, as JSON.\n"
			      "FAMILY is the MTLGPUFamily asked about "
			      "(default 1009, Apple9).\n", out);
			return 1;
		}
		if (!strcmp(argv[i], "--json")) {
			a->json = 1;
			continue;
		}
		if (argv[i][0] == '-' || a->family_given) {
			fprintf(err, "error: unexpected argument '%s'\n",
				argv[i]);
			return 2;
		}
		if (lmc_parse_u64(argv[i], &v) < 0 || v == 0 ||
		    v > LMC_PROBE_MAX_FAMILY) {
			fprintf(err, "invalid family: %s\n", argv[i]);
			return 2;
		}
		a->family = v;
		a->family_given = 1;
	}
	return 0;
}

int
lmc_probe_main(int argc, char **argv, id (*make_device)(void))
{
	struct lmc_probe_args a;
	id dev;
	int rc;

	rc = lmc_probe_parse_args(argc, argv, &a, stdout, stderr);
	if (rc)
		return rc == 1 ? 0 : 2;
	dev = make_device();
	if (!dev) {
		fputs("error: no metal device (MTLCreateSystemDefaultDevice "
		      "returned nil)\n", stderr);
		return 3;
	}
	rc = a.json ? lmc_probe_write_json(stdout, dev,
					   a.family_given ? &a.family : NULL,
					   lmc_probe_shim_status()) :
		lmc_probe_write_kv(stdout, dev, a.family,
				   lmc_probe_shim_status());
	if (rc < 0 || fflush(stdout) != 0) {
		fputs("error: cannot write to stdout\n", stderr);
		return 3;
	}
	return 0;
}
