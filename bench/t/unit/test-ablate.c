/* Capability ablation: "ablate" in a plan becomes checked variants. */
#include "test.h"
#include "run/plan.h"
#include "base/util.h"

#include <stdlib.h>

static int
parse(const char *text, struct plan *p)
{
	int rc;

	error_silent++;
	rc = plan_parse(text, strlen(text), "p.json", NULL, p);
	error_silent--;
	return rc;
}

static const struct plan_variant *
variant(const struct plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nvariants; i++)
		if (!strcmp(p->variants[i].name, name))
			return &p->variants[i];
	return NULL;
}

static int
has(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (!strcmp(*v, s))
			return 1;
	return 0;
}

/* Whether any string of v holds s. */
static int
holds(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strstr(*v, s))
			return 1;
	return 0;
}

static void
test_vulkan_plan(void)
{
	static const char *const caps[] = { "coopmat", "coopmat2", "int-dot",
		"fp16", "bf16", "subgroup-size-control", "dot2" };
	const struct plan_variant *v;
	struct plan p, again;
	size_t i;

	CHECK(plan_load("bench/plans/vulkan-ablation.json", NULL, &p) == 0);
	/* bare, stock, shim, one per capability, all */
	CHECK(p.nvariants == 3 + 7 + 1);
	for (i = 0; i < 7; i++) {
		char *name = xstrfmt("shim-hide-%s", caps[i]);
		char *env = xstrfmt("VULKAN_CAPS_HIDE=%s", caps[i]);
		char *mark = xstrfmt("(profile=hide hide=%s)", caps[i]);

		v = variant(&p, name);
		CHECK(v != NULL);
		if (v) {
			CHECK_STR(v->role, "ablation");
			CHECK_STR(v->target, "here");
			CHECK(has(v->env_set, env));
			CHECK(has(v->env_set, "GGML_VK_VISIBLE_DEVICES=0"));
			CHECK(!holds(v->env_set, "VULKAN_CAPS_PROFILE"));
			CHECK(has(v->expect, mark));
			CHECK(has(v->expect, "[VulkanCapabilities] Enabled for "));
			CHECK(has(v->expect, "ggml_vulkan: 0 = "));
			CHECK(!holds(v->expect, "profile=shim"));
			CHECK_STR(v->inject_lib,
				  "build/shim/vulkan/libVulkanCapabilities.so");
			CHECK(v->probe_expect &&
			      strstr(v->probe_expect, "\"shim_profile\":\"hide\""));
		}
		free(name);
		free(env);
		free(mark);
	}
	v = variant(&p, "shim-hide-fp16");
	CHECK(v && has(v->expect, "fp16: 0 |") && !holds(v->expect, "int dot"));
	/* fp16 hides a feature, not the extension the probe enables */
	CHECK(v && strstr(v->probe_expect, "\"fp16\":false") &&
	      strstr(v->probe_expect, "\"create_device\":\"VK_SUCCESS\"") &&
	      !strstr(v->probe_expect, "\"coopmat\""));
	v = variant(&p, "shim-hide-coopmat");
	CHECK(v && strstr(v->probe_expect, "\"coopmat\":false") &&
	      strstr(v->probe_expect, "VK_ERROR_EXTENSION_NOT_PRESENT"));
	CHECK(v && !holds(v->expect, "matrix cores"));
	v = variant(&p, "shim-hide-all");
	CHECK(v && has(v->env_set, "VULKAN_CAPS_HIDE=coopmat,coopmat2,int-dot,"
		       "fp16,bf16,subgroup-size-control,dot2"));
	CHECK(v && has(v->expect, "(profile=hide hide=coopmat,coopmat2,int-dot,"
		       "fp16,bf16,subgroup-size-control,dot2)"));
	CHECK(v && has(v->expect, "matrix cores: none") &&
	      has(v->expect, "int dot: 0 |") && has(v->expect, "bf16: 0 |"));
	/* the plan as recorded is the expanded one, and loads as itself */
	CHECK(p.json && !strstr(p.json, "\"ablate\""));
	CHECK(parse(p.json, &again) == 0);
	CHECK(again.nvariants == p.nvariants);
	plan_free(&again);
	/* the others are untouched */
	v = variant(&p, "shim");
	CHECK(v && has(v->env_set, "VULKAN_CAPS_PROFILE=shim"));
	plan_free(&p);
}

/* A Metal study plan (the shipped one's shape) with "ablate" ADD. */
static char *
metal_plan(const char *add)
{
	return xstrfmt(
		"{\"models\": [{\"name\": \"m\", \"path\": \"m.gguf\"}],"
		" \"targets\": {\"host\": {\"transport\": \"local\"},"
		" \"guest\": {\"transport\": \"lume\", \"vm\": \"vm\"}},"
		" \"variants\": [{\"name\": \"bare-metal\", \"target\": \"host\","
		" \"role\": \"bare-metal\"}, {\"name\": \"shim\", \"target\":"
		" \"guest\", \"role\": \"shim\", \"inject\": {\"library\":"
		" \"/l.dylib\", \"sha256\": \"%064d\", \"env\":"
		" {\"LUME_METAL_APPLE_FAMILY_MAX\": \"1009\"}}, \"expect\":"
		" [\"[LumeMetalCapabilities] Enabled for\", \"GPU family:"
		" MTLGPUFamilyApple9\", \"simdgroup matrix mul. = true\"],"
		" \"probe\": {\"argv\": [\"/metal-capabilities\", \"1009\"],"
		" \"expect\": {\"family\": 1009, \"supports_family\": true}}}],"
		" \"ablate\": %s}", 0, add);
}

static void
test_metal_plan(void)
{
	char *text = metal_plan("{\"from\": \"shim\", \"shim\": \"metal\","
				" \"family\": [1006, 1008],"
				" \"threadgroup_memory\": [16384]}");
	const struct plan_variant *v;
	struct plan p;

	CHECK(parse(text, &p) == 0);
	CHECK(p.nvariants == 2 + 3 + 1);
	v = variant(&p, "shim-family-1006");
	CHECK(v && has(v->env_set, "LUME_METAL_APPLE_FAMILY_MAX=1006"));
	CHECK(v && has(v->expect, "appleFamilyMax=1006") &&
	      has(v->expect, "GPU family: MTLGPUFamilyApple6  (1006)") &&
	      has(v->expect, "simdgroup matrix mul. = false") &&
	      !holds(v->expect, "Apple9") && !has(v->expect,
						   "simdgroup matrix mul. = true"));
	CHECK(v && v->probe_argv && !strcmp(v->probe_argv[1], "1006"));
	CHECK(v && strstr(v->probe_expect, "\"family\":1006") &&
	      strstr(v->probe_expect, "\"supports_family\":true"));
	v = variant(&p, "shim-family-1008");
	CHECK(v && has(v->expect, "simdgroup matrix mul. = true"));
	v = variant(&p, "shim-tgmem-16384");
	CHECK(v && has(v->env_set, "LUME_METAL_APPLE_FAMILY_MAX=1009") &&
	      has(v->env_set, "LUME_METAL_MAX_THREADGROUP_MEMORY=16384"));
	CHECK(v && has(v->expect, "maxThreadgroupMemory=16384") &&
	      has(v->expect, "GPU family: MTLGPUFamilyApple9"));
	CHECK(v && strstr(v->probe_expect,
			  "\"max_threadgroup_memory_limit\":16384") &&
	      strstr(v->probe_expect, "\"family\":1009"));
	v = variant(&p, "shim-lowest");
	CHECK(v && has(v->env_set, "LUME_METAL_APPLE_FAMILY_MAX=1006") &&
	      has(v->env_set, "LUME_METAL_MAX_THREADGROUP_MEMORY=16384"));
	CHECK(v && !strcmp(v->target, "guest") && !strcmp(v->role, "ablation"));
	plan_free(&p);
	free(text);
}

static void
test_refused(void)
{
	static const struct { const char *ablate, *err; } bad[] = {
		{ "{\"from\": \"shim\", \"shim\": \"metal\", \"family\": [1006],"
		  " \"x\": 1}", "unknown key 'ablate.x'" },
		{ "{\"from\": \"nope\", \"shim\": \"metal\", \"family\": [1006]}",
		  "unknown variant 'nope'" },
		{ "{\"from\": \"bare-metal\", \"shim\": \"metal\","
		  " \"family\": [1006]}", "injects no library" },
		{ "{\"from\": \"shim\", \"shim\": \"cuda\"}",
		  "'ablate.shim' must be" },
		{ "{\"from\": \"shim\", \"shim\": \"metal\"}",
		  "needs 'family' or 'threadgroup_memory'" },
		{ "{\"from\": \"shim\", \"shim\": \"metal\", \"family\": [1009]}",
		  "'ablate.family[0]' is 1009, not below" },
		{ "{\"from\": \"shim\", \"shim\": \"metal\","
		  " \"family\": [1006, 1006]}", "'ablate.family[1]' repeats" },
		{ "{\"from\": \"shim\", \"shim\": \"metal\","
		  " \"family\": [\"1006\"]}", "'ablate.family[0]' must be" },
		{ "{\"from\": \"shim\", \"shim\": \"metal\", \"hide\": [\"fp16\"]}",
		  "'ablate.hide' is the Vulkan shim's" },
		{ "{\"from\": \"shim\", \"shim\": \"vulkan\"}",
		  "VULKAN_CAPS_PROFILE=shim" },
		{ "{\"from\": \"shim\", \"shim\": \"metal\", \"family\": [1006],"
		  " \"all\": 1}", "'ablate.all' must be" },
		{ "[1]", "'ablate' must be an object" },
	};
	struct plan p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char *text = metal_plan(bad[i].ablate);

		CHECK(parse(text, &p) == -1);
		if (!strstr(error_last(), bad[i].err))
			printf("  case %zu: '%s'\n", i, error_last());
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		free(text);
	}
}

/* The Vulkan side's refusals, on the shipped plan's variants. */
static void
test_refused_vulkan(void)
{
	static const struct { const char *hide, *err; } bad[] = {
		{ "[\"coopmatt\"]", "'ablate.hide[0]' is 'coopmatt'; expected" },
		{ "[\"fp16\", \"16bit-storage\"]",
		  "'ablate.hide[1]' is '16bit-storage', which the shim never" },
		{ "[\"fp16\", \"fp16\"]", "'ablate.hide[1]' names 'fp16' twice" },
		{ "[]", "'ablate.hide' must be a non-empty array" },
		{ "[3]", "'ablate.hide[0]' is not a string" },
	};
	struct buf plan = BUF_INIT;
	struct plan p;
	size_t i;

	CHECK(buf_read_file(&plan, "bench/plans/vulkan-ablation.json") == 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char *at = strstr(plan.buf, "\"hide\": [");
		char *end = at ? strchr(at, ']') : NULL;
		char *text;

		if (!end)
			break;
		text = xstrfmt("%.*s\"hide\": %s%s", (int)(at - plan.buf),
			       plan.buf, bad[i].hide, end + 1);
		CHECK(parse(text, &p) == -1);
		if (!strstr(error_last(), bad[i].err))
			printf("  case %zu: '%s'\n", i, error_last());
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		free(text);
	}
	/* a generated name the plan already has */
	{
		char *at = strstr(plan.buf, "{ \"name\": \"stock\"");
		char *text = at ? xstrfmt("%.*s{ \"name\": \"shim-hide-dot2\","
					  " \"target\": \"here\" }, %s",
					  (int)(at - plan.buf), plan.buf, at) :
			     NULL;

		CHECK(text && parse(text, &p) == -1);
		CHECK(strstr(error_last(), "would generate variant "
			     "'shim-hide-dot2'") != NULL);
		free(text);
	}
	buf_release(&plan);
}

static const struct test_case tests[] = {
	{ "the Vulkan ablation plan expands, one capability at a time and all",
	  test_vulkan_plan },
	{ "a Metal plan ablates family and threadgroup memory",
	  test_metal_plan },
	{ "bad ablate objects are refused, naming the key", test_refused },
	{ "bad Vulkan capability lists are refused", test_refused_vulkan },
};

TEST_MAIN(tests)
