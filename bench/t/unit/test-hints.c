/*
 * The likely causes of an unverified injection (evidence/hints.c): by how
 * the library was injected and what the process printed. A Linux run
 * through LD_PRELOAD must never be sent looking for SIP, arm64e or dyld;
 * a macOS run keeps the published causes. Then through
 * derive_verification(), as run and import use it.
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "evidence/caps.h"
#include "evidence/derive.h"
#include "evidence/hints.h"
#include "evidence/runrec.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define VK_MARK "[VulkanCapabilities] Enabled for llama-bench (profile=shim"
#define METAL_MARK "[LumeMetalCapabilities] Enabled for"
#define LD "{\"LD_PRELOAD\":\"/opt/vk/libVulkanCapabilities.so\",\"VULKAN_CAPS_PROFILE\":\"shim\"}"
#define DYLD "{\"DYLD_INSERT_LIBRARIES\":\"/Users/lume/lmc.dylib\"}"
#define VK_CAPS "{\"backend\":\"vulkan\",\"shim_marker\":false}"
#define CPU_CAPS "{\"backend\":\"cpu\",\"shim_marker\":false}"
#define METAL_CAPS "{\"backend\":[\"metal\",\"cpu\"],\"shim_marker\":false}"

static const struct {
	const char *name, *env, *caps, *marker, *err;
	const char *want[3];     /* substrings that must be there */
	const char *never[4];    /* and must not */
} cases[] = {
	{ "linux vulkan shim, no marker", LD, VK_CAPS, VK_MARK, "",
	  { "likely causes: LD_PRELOAD ignored (a setuid or setgid program, a "
	    "statically linked one)", "VULKAN_CAPS_PROFILE", "VK_DRIVER_FILES" },
	  { "SIP", "DYLD", "arm64e", "no ggml_vulkan line" } },
	{ "linux vulkan shim, no Vulkan device used", LD, CPU_CAPS, VK_MARK,
	  "ggml_vulkan: No devices found.\n",
	  { "the process used no Vulkan device (no ggml_vulkan line); likely "
	    "causes: LD_PRELOAD", "GGML_VK_VISIBLE_DEVICES", NULL },
	  { "SIP", "DYLD", "arm64e", NULL } },
	{ "linux: ld.so did not preload", LD, VK_CAPS, VK_MARK,
	  "ERROR: ld.so: object '/opt/vk/libVulkanCapabilities.so' from "
	  "LD_PRELOAD cannot be preloaded (cannot open shared object file): "
	  "ignored.\nggml_vulkan: 0 = x\n",
	  { "the dynamic linker did not preload the library: ERROR: ld.so: "
	    "object '/opt/vk/libVulkanCapabilities.so' from LD_PRELOAD cannot "
	    "be preloaded (cannot open shared object file): ignored.; likely "
	    "causes:", NULL, NULL },
	  { "SIP", "DYLD", NULL, NULL } },
	{ "linux: the shim disabled itself", LD, VK_CAPS, VK_MARK,
	  "[VulkanCapabilities] Disabled for llama-bench: VULKAN_CAPS_PROFILE="
	  "'stok' is not a profile (stock, shim); leaving the driver's answers "
	  "unchanged\n",
	  { "the shim disabled itself: [VulkanCapabilities] Disabled for "
	    "llama-bench: VULKAN_CAPS_PROFILE='stok' is not a profile", NULL,
	    NULL },
	  { "SIP", NULL, NULL, NULL } },
	{ "linux, another preloaded library", LD, CPU_CAPS,
	  "[shimbench-test-preload] Enabled for", "",
	  { "likely causes: LD_PRELOAD ignored", "the library's own "
	    "configuration", NULL },
	  { "SIP", "VULKAN_CAPS", "ggml_vulkan", NULL } },
	{ "macOS: the published causes", DYLD, METAL_CAPS, METAL_MARK, "",
	  { "likely causes: DYLD_INSERT_LIBRARIES pruned by SIP or the "
	    "hardened runtime, a library without this process's architecture "
	    "slice (arm64 vs arm64e), or a bad shim configuration "
	    "(LUME_METAL_APPLE_FAMILY_MAX)", NULL, NULL },
	  { "LD_PRELOAD", "VULKAN", NULL, NULL } },
	{ "Metal output replayed under LD_PRELOAD: Metal means macOS", LD,
	  METAL_CAPS, METAL_MARK, "",
	  { "likely causes: DYLD_INSERT_LIBRARIES pruned by SIP", NULL, NULL },
	  { "LD_PRELOAD", NULL, NULL, NULL } },
	{ "published Metal evidence without an environment", NULL, METAL_CAPS,
	  METAL_MARK, "", { "DYLD_INSERT_LIBRARIES pruned by SIP", NULL, NULL },
	  { "LD_PRELOAD", NULL, NULL, NULL } },
	{ "a Vulkan shim marker, nothing injected", "{}", VK_CAPS, VK_MARK, "",
	  { "no library was injected into this run", NULL, NULL },
	  { "SIP", "LD_PRELOAD ignored", NULL, NULL } },
	{ "a device marker, nothing injected", "{\"GGML_VK_VISIBLE_DEVICES\":\"0\"}",
	  CPU_CAPS, "ggml_vulkan: 0 = ", "",
	  { "ran on another device or backend", NULL, NULL },
	  { "SIP", "LD_PRELOAD", NULL, NULL } },
	{ "garbage environment and capabilities", "not json", "[1", VK_MARK, "",
	  { "no library was injected", NULL, NULL }, { "SIP", NULL, NULL, NULL } },
};

/* The struct caps stored as json (as the store holds it); no json: no
 * facts known (an empty struct), as for a run without capabilities. */
static int
caps_of(const char *json, struct caps *c)
{
	caps_init(c);
	return json ? caps_from_json(json, c) : 0;
}

/* What caps_read() makes of err, as its JSON (caller frees). */
static char *
caps_json_of(const char *err)
{
	struct caps c;
	char *json;

	caps_init(&c);
	caps_read(err, strlen(err), &c);
	json = caps_to_json(&c);
	caps_release(&c);
	return json;
}

static void
test_table(void)
{
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b = BUF_INIT;
		const char *m[] = { cases[i].marker };
		struct caps c;
		int bad = 0;

		/* garbage capabilities read as none known */
		(void)caps_of(cases[i].caps, &c);
		hint_unverified(&b, cases[i].env, &c, m, 1,
				cases[i].err, strlen(cases[i].err));
		caps_release(&c);
		for (k = 0; k < 3; k++)
			if (cases[i].want[k] && !strstr(b.buf, cases[i].want[k]))
				bad = 1;
		for (k = 0; k < 4; k++)
			if (cases[i].never[k] && strstr(b.buf, cases[i].never[k]))
				bad = 1;
		CHECK(!bad);
		if (bad)
			printf("  %s: '%s'\n", cases[i].name, b.buf);
		buf_release(&b);
	}
}

static void
test_injection_of(void)
{
	CHECK(hint_injection_of(LD) == HINT_INJECT_LD);
	CHECK(hint_injection_of(DYLD) == HINT_INJECT_DYLD);
	CHECK(hint_injection_of("{\"LD_PRELOAD\":null}") == HINT_INJECT_NONE);
	CHECK(hint_injection_of("{}") == HINT_INJECT_NONE);
	CHECK(hint_injection_of(NULL) == HINT_INJECT_NONE);
	CHECK(hint_injection_of("[\"LD_PRELOAD\"]") == HINT_INJECT_NONE);
}

/* Appended after what is already there, "; "-separated. */
static void
test_separator(void)
{
	struct buf b = BUF_INIT;
	const char *m[] = { VK_MARK };
	struct caps c;

	CHECK(caps_of(VK_CAPS, &c) == 0);
	buf_adds(&b, "missing marker 'x'");
	hint_unverified(&b, LD, &c, m, 1, "", 0);
	caps_release(&c);
	CHECK(!strncmp(b.buf, "missing marker 'x'; likely causes: ", 35));
	buf_release(&b);
}

/* Through derive_verification(), as run and import reach it. */
static void
test_derive(void)
{
	static const char err[] =
		"[VulkanCapabilities] Disabled for llama-bench: VULKAN_CAPS_HIDE "
		"names 'coopmatt', not a capability; leaving the driver's "
		"answers unchanged\nggml_vulkan: Found 1 Vulkan devices:\n"
		"ggml_vulkan: 0 = llvmpipe (LLVM 22.1.8, 256 bits) (llvmpipe) | "
		"uma: 0 | fp16: 1 | bf16: 0 | fp4: 0 | warp size: 8 | shared "
		"memory: 32768 | int dot: 0 | matrix cores: KHR_coopmat\n";
	struct run_data rd;

	memset(&rd, 0, sizeof(rd));
	rd.r.stderr_text = rec_blob_dup(err, strlen(err));
	rd.r.expect_json = xstrdup("[\"[VulkanCapabilities] Enabled for\", "
				   "\"matrix cores: none\"]");
	rd.r.env_json = xstrdup(LD);
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "unverified");
	CHECK(strstr(rd.r.verification_detail, "missing markers "
		     "'[VulkanCapabilities] Enabled for'; 'matrix cores: none'; "
		     "the shim disabled itself: [VulkanCapabilities] Disabled "
		     "for llama-bench: VULKAN_CAPS_HIDE names 'coopmatt'") != NULL);
	CHECK(!strstr(rd.r.verification_detail, "SIP"));
	rec_release(runrec_fields, runrec_nfields, &rd.r);

	/* everything found: no causes at all */
	memset(&rd, 0, sizeof(rd));
	rd.r.stderr_text = rec_blob_dup(err, strlen(err));
	rd.r.expect_json = xstrdup("[\"matrix cores: KHR_coopmat\"]");
	rd.r.env_json = xstrdup(LD);
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "verified");
	CHECK(!strstr(rd.r.verification_detail, "likely"));
	rec_release(runrec_fields, runrec_nfields, &rd.r);
}

/* The Vulkan shim's lines are capability facts like the Metal shim's. */
static void
test_caps_marker(void)
{
	static const char err[] =
		"[VulkanCapabilities] Enabled for llama-bench (profile=stock "
		"hide=coopmat,coopmat2,int-dot,fp16,bf16,subgroup-size-control,dot2)\n"
		"[VulkanCapabilities] Refused vkCreateDevice for llama-bench: "
		"extension 'VK_KHR_cooperative_matrix' is hidden (coopmat) by "
		"profile=stock\n";
	static const char off[] =
		"[VulkanCapabilities] Disabled for llama-bench: no configuration; "
		"leaving the driver's answers unchanged\n";
	char *c = caps_json_of(err);

	CHECK(strstr(c, "\"shim_marker\":true") != NULL);
	CHECK(strstr(c, "\"process\":\"llama-bench\"") != NULL);
	CHECK(strstr(c, "\"profile\":\"stock\"") != NULL);
	CHECK(strstr(c, "\"hide\":\"coopmat,coopmat2,int-dot,fp16,bf16,"
		     "subgroup-size-control,dot2\"") != NULL);
	CHECK(strstr(c, "Refused vkCreateDevice for llama-bench") != NULL);
	free(c);
	c = caps_json_of(off);
	CHECK(strstr(c, "\"shim_marker\":false") != NULL);
	CHECK(strstr(c, "Disabled for llama-bench: no configuration") != NULL);
	free(c);
}

static const struct test_case TESTS[] = {
	{ "the Vulkan shim's lines as capability facts", test_caps_marker },
	{ "causes by injection and backend", test_table },
	{ "the injection of a run's environment", test_injection_of },
	{ "appended after the missing markers", test_separator },
	{ "derive_verification gives them", test_derive },
};

int
main(void)
{
	return test_main(TESTS, sizeof(TESTS) / sizeof(TESTS[0]));
}
