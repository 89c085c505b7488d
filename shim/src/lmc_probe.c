#ifndef __APPLE__
#define _GNU_SOURCE     /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>

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

int
lmc_probe_write(FILE *fp, id dev, const char *shim_status)
{
	SEL s_name = sel_registerName("name");
	SEL s_utf8 = sel_registerName("UTF8String");
	SEL s_family = sel_registerName("supportsFamily:");
	SEL s_tg = sel_registerName("maxThreadgroupMemoryLength");
	SEL s_ws = sel_registerName("recommendedMaxWorkingSetSize");
	SEL s_unified = sel_registerName("hasUnifiedMemory");
	long highest[sizeof(family_groups) / sizeof(family_groups[0])];
	id name = nil;
	const char *cname = NULL;
	size_t g;
	long f;
	int first = 1;

	if (lmc_responds(dev, s_name))
		name = LMC_MSG(id (*)(id, SEL), dev, s_name)(dev, s_name);
	if (lmc_responds(name, s_utf8))
		cname = LMC_MSG(const char *(*)(id, SEL), name, s_utf8)(
			name, s_utf8);

	fputs("{\n  \"device\": ", fp);
	if (cname)
		put_json_str(fp, cname);
	else
		fputs("null", fp);
	fputs(",\n  \"supportsFamily\": {", fp);
	for (g = 0; g < sizeof(family_groups) / sizeof(family_groups[0]); g++) {
		highest[g] = 0;
		for (f = family_groups[g].first; f <= family_groups[g].last; f++) {
			BOOL yes = LMC_MSG(BOOL (*)(id, SEL, lmc_nsint), dev,
					   s_family)(dev, s_family, f);

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
