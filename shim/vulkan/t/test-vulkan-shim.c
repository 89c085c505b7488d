/*
 * Tests of the Vulkan capability shim without a GPU: the configuration
 * and the answer filters called directly, then the real library preloaded
 * into processes whose libvulkan.so.1 is a fake loader (t/fake-vulkan.c)
 * that reproduces the real loader's self-reference trap: a ggml-like
 * client (t/vk-client.c), the probe, /bin/sh, eight threads at once.
 */
#define _GNU_SOURCE
#include "test.h"
#include "vkcaps.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- the configuration ----------------------------------------------------- */

static const struct {
	const char *profile, *hide, *max, *describe, *why;
} configs[] = {
	{ "stock", NULL, NULL, "profile=stock hide=coopmat,coopmat2,int-dot,"
	  "fp16,bf16,subgroup-size-control,dot2", NULL },
	{ "shim", NULL, "", "profile=shim hide=none", NULL },
	{ "", "coopmat", NULL, "profile=hide hide=coopmat", NULL },
	{ NULL, "fp16,coopmat", NULL, "profile=hide hide=coopmat,fp16", NULL },
	{ NULL, "all", NULL, "profile=hide hide=coopmat,coopmat2,int-dot,fp16,"
	  "bf16,subgroup-size-control,dot2", NULL },
	{ "stock", NULL, "16384", "profile=stock hide=coopmat,coopmat2,int-dot,"
	  "fp16,bf16,subgroup-size-control,dot2 maxSharedMemory=16384", NULL },
	{ NULL, "dot2", "4294967295", "profile=hide hide=dot2 "
	  "maxSharedMemory=4294967295", NULL },
	{ NULL, NULL, NULL, NULL, "no configuration" },
	{ "", "", "", NULL, "no configuration" },
	{ NULL, NULL, "1024", NULL, "no configuration" },
	{ "Stock", NULL, NULL, NULL, "VULKAN_CAPS_PROFILE='Stock' is not a profile" },
	{ "stock ", NULL, NULL, NULL, "is not a profile" },
	{ "stock", "fp16", NULL, NULL, "are both set" },
	{ NULL, "coopmatt", NULL, NULL, "names 'coopmatt', not a capability" },
	{ NULL, "coopmat,", NULL, NULL, "has an empty name" },
	{ NULL, ",fp16", NULL, NULL, "has an empty name" },
	{ NULL, "fp16,,bf16", NULL, NULL, "has an empty name" },
	{ NULL, "16bit-storage", NULL, NULL, "VK_KHR_16bit_storage is never hidden" },
	{ NULL, "VK_KHR_16bit_storage", NULL, NULL, "is never hidden" },
	{ NULL, "FP16", NULL, NULL, "not a capability" },
	{ "shim", NULL, "16384", NULL, "the shim profile changes nothing" },
	{ "stock", NULL, "0", NULL, "is not a decimal byte count" },
	{ "stock", NULL, "0x4000", NULL, "is not a decimal byte count" },
	{ "stock", NULL, "-1", NULL, "is not a decimal byte count" },
	{ "stock", NULL, "16384 ", NULL, "is not a decimal byte count" },
	{ "stock", NULL, "4294967296", NULL, "is not a decimal byte count" },
	{ "\033[31mx", NULL, NULL, NULL, "'?[31mx' is not a profile" },
};

static void
test_config(void)
{
	size_t i;

	for (i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		struct vkcaps_config c;
		char d[400];
		int rc = vkcaps_config_parse(configs[i].profile, configs[i].hide,
					     configs[i].max, &c);

		if (configs[i].describe) {
			CHECK(rc == 0);
			vkcaps_describe(&c, d, sizeof(d));
			CHECK_STR(d, configs[i].describe);
		} else {
			CHECK(rc == -1);
			if (!strstr(c.why, configs[i].why))
				printf("  case %zu: why '%s'\n", i, c.why);
			CHECK(strstr(c.why, configs[i].why) != NULL);
		}
	}
}

static void
test_names(void)
{
	unsigned b;
	int n = 0;

	for (b = 1; b & VKCAPS_ALL; b <<= 1, n++)
		CHECK(vkcaps_cap_name(b) && strstr(vkcaps_cap_names(),
						   vkcaps_cap_name(b)));
	CHECK(n == 7);
	CHECK(vkcaps_cap_name(VKCAPS_ALL) == NULL);
	CHECK(vkcaps_ext_cap("VK_KHR_16bit_storage") == 0);
	CHECK(vkcaps_ext_cap("VK_KHR_shader_float16_int8") == 0);
	CHECK(vkcaps_ext_cap("VK_KHR_cooperative_matrix") == VKCAPS_COOPMAT);
	CHECK(vkcaps_ext_cap("VK_NV_cooperative_matrix_decode_vector") ==
	      VKCAPS_COOPMAT2);
}

/* ---- the filters, called directly ------------------------------------------ */

static void
test_filter_extensions(void)
{
	static const char *const in[] = { "VK_KHR_16bit_storage",
		"VK_KHR_cooperative_matrix", "VK_KHR_shader_bfloat16",
		"VK_EXT_memory_budget", "VK_NV_cooperative_matrix2" };
	VkExtensionProperties p[5];
	uint32_t i, n;

	for (i = 0; i < 5; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		strcpy(p[i].extensionName, in[i]);
	}
	n = vkcaps_filter_extensions(VKCAPS_COOPMAT | VKCAPS_BF16, p, 5);
	CHECK(n == 3);
	CHECK_STR(p[0].extensionName, "VK_KHR_16bit_storage");
	CHECK_STR(p[1].extensionName, "VK_EXT_memory_budget");
	CHECK_STR(p[2].extensionName, "VK_NV_cooperative_matrix2");
	CHECK(vkcaps_filter_extensions(VKCAPS_ALL, p, 3) == 2);
	CHECK(vkcaps_filter_extensions(0, p, 2) == 2);
}

static void
test_clear_features(void)
{
	VkPhysicalDeviceFeatures2 f = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 };
	VkPhysicalDeviceVulkan11Features v11 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES };
	VkPhysicalDeviceVulkan12Features v12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES };
	VkPhysicalDeviceVulkan13Features v13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES };
	VkPhysicalDeviceShaderBfloat16FeaturesKHR bf = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR };

	f.pNext = &v11;
	v11.pNext = &v12;
	v12.pNext = &v13;
	v13.pNext = &bf;
	f.features.shaderInt16 = v11.storageBuffer16BitAccess = VK_TRUE;
	v12.shaderFloat16 = v12.shaderInt8 = v12.bufferDeviceAddress = VK_TRUE;
	v13.shaderIntegerDotProduct = v13.subgroupSizeControl =
		v13.computeFullSubgroups = v13.maintenance4 = VK_TRUE;
	bf.shaderBFloat16Type = bf.shaderBFloat16DotProduct =
		bf.shaderBFloat16CooperativeMatrix = VK_TRUE;
	vkcaps_clear_features(VKCAPS_COOPMAT, &f);
	CHECK(bf.shaderBFloat16Type && bf.shaderBFloat16DotProduct &&
	      !bf.shaderBFloat16CooperativeMatrix);
	CHECK(v12.shaderFloat16 && v13.shaderIntegerDotProduct);
	vkcaps_clear_features(VKCAPS_ALL, &f);
	CHECK(!v12.shaderFloat16 && !v13.shaderIntegerDotProduct &&
	      !v13.subgroupSizeControl && !v13.computeFullSubgroups &&
	      !bf.shaderBFloat16Type && !bf.shaderBFloat16DotProduct);
	/* never what ggml needs or what is not a capability of ours */
	CHECK(f.features.shaderInt16 && v11.storageBuffer16BitAccess &&
	      v12.shaderInt8 && v12.bufferDeviceAddress && v13.maintenance4);
}

static void
test_lower_properties(void)
{
	struct vkcaps_config c = { .hide = VKCAPS_INT_DOT, .max_shared = 16384 };
	VkPhysicalDeviceProperties2 p = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
	VkPhysicalDeviceVulkan13Properties v13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES };
	VkPhysicalDeviceProperties v1 = { 0 };

	p.pNext = &v13;
	p.properties.limits.maxComputeSharedMemorySize = 49152;
	v13.requiredSubgroupSizeStages = VK_SHADER_STAGE_COMPUTE_BIT;
	v13.integerDotProduct8BitUnsignedAccelerated = VK_TRUE;
	v13.integerDotProduct4x8BitPackedSignedAccelerated = VK_TRUE;
	v13.integerDotProductAccumulatingSaturating64BitMixedSignednessAccelerated = VK_TRUE;
	v13.storageTexelBufferOffsetAlignmentBytes = 16;
	v13.maxBufferSize = 1u << 30;
	vkcaps_lower_properties(&c, &p);
	CHECK(p.properties.limits.maxComputeSharedMemorySize == 16384);
	CHECK(!v13.integerDotProduct8BitUnsignedAccelerated &&
	      !v13.integerDotProduct4x8BitPackedSignedAccelerated &&
	      !v13.integerDotProductAccumulatingSaturating64BitMixedSignednessAccelerated);
	CHECK(v13.requiredSubgroupSizeStages == VK_SHADER_STAGE_COMPUTE_BIT);
	CHECK(v13.storageTexelBufferOffsetAlignmentBytes == 16 &&
	      v13.maxBufferSize == 1u << 30);
	c.hide = VKCAPS_SGSC;
	vkcaps_lower_properties(&c, &p);
	CHECK(v13.requiredSubgroupSizeStages == 0);
	/* a limit is only ever lowered */
	v1.limits.maxComputeSharedMemorySize = 8192;
	vkcaps_lower_limits(&c, &v1);
	CHECK(v1.limits.maxComputeSharedMemorySize == 8192);
	c.max_shared = 0;
	v1.limits.maxComputeSharedMemorySize = 49152;
	vkcaps_lower_limits(&c, &v1);
	CHECK(v1.limits.maxComputeSharedMemorySize == 49152);
}

static void
test_filter_shapes(void)
{
	VkCooperativeMatrixPropertiesKHR s[4];
	const size_t at = offsetof(VkCooperativeMatrixPropertiesKHR, AType);
	int i;

	memset(s, 0, sizeof(s));
	for (i = 0; i < 4; i++)
		s[i].MSize = (uint32_t)i;
	s[0].AType = s[0].BType = VK_COMPONENT_TYPE_FLOAT16_KHR;
	s[0].CType = s[0].ResultType = VK_COMPONENT_TYPE_FLOAT32_KHR;
	s[1].AType = s[1].BType = VK_COMPONENT_TYPE_SINT8_KHR;
	s[1].CType = s[1].ResultType = VK_COMPONENT_TYPE_SINT32_KHR;
	s[2].AType = s[2].BType = VK_COMPONENT_TYPE_BFLOAT16_KHR;
	s[2].CType = s[2].ResultType = VK_COMPONENT_TYPE_FLOAT32_KHR;
	s[3].AType = s[3].BType = VK_COMPONENT_TYPE_FLOAT32_KHR;
	s[3].CType = VK_COMPONENT_TYPE_FLOAT32_KHR;
	s[3].ResultType = VK_COMPONENT_TYPE_FLOAT16_KHR;
	CHECK(vkcaps_filter_shapes(0, VKCAPS_COOPMAT, s, 4, sizeof(s[0]), at) == 4);
	CHECK(vkcaps_filter_shapes(VKCAPS_COOPMAT2, VKCAPS_COOPMAT, s, 4,
				   sizeof(s[0]), at) == 4);
	CHECK(vkcaps_filter_shapes(VKCAPS_BF16, VKCAPS_COOPMAT, s, 4,
				   sizeof(s[0]), at) == 3);
	CHECK(s[0].MSize == 0 && s[1].MSize == 1 && s[2].MSize == 3);
	CHECK(vkcaps_filter_shapes(VKCAPS_FP16, VKCAPS_COOPMAT, s, 3,
				   sizeof(s[0]), at) == 1);
	CHECK(s[0].MSize == 1);
	CHECK(vkcaps_filter_shapes(VKCAPS_COOPMAT, VKCAPS_COOPMAT, s, 1,
				   sizeof(s[0]), at) == 0);
}

static void
test_gate(void)
{
	const char *exts[] = { "VK_KHR_16bit_storage", "VK_EXT_subgroup_size_control" };
	VkDeviceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO };
	VkPhysicalDeviceFeatures2 f = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 };
	VkPhysicalDeviceVulkan13Features v13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES };
	char why[200] = "";

	ci.enabledExtensionCount = 1;
	ci.ppEnabledExtensionNames = exts;
	ci.pNext = &f;
	f.pNext = &v13;
	v13.maintenance4 = VK_TRUE;
	CHECK(vkcaps_gate(VKCAPS_ALL, &ci, why, sizeof(why)) == VK_SUCCESS);
	ci.enabledExtensionCount = 2;
	CHECK(vkcaps_gate(VKCAPS_ALL, &ci, why, sizeof(why)) ==
	      VK_ERROR_EXTENSION_NOT_PRESENT);
	CHECK_STR(why, "extension 'VK_EXT_subgroup_size_control' is hidden "
		  "(subgroup-size-control)");
	CHECK(vkcaps_gate(VKCAPS_COOPMAT, &ci, why, sizeof(why)) == VK_SUCCESS);
	ci.enabledExtensionCount = 1;
	v13.computeFullSubgroups = VK_TRUE;
	CHECK(vkcaps_gate(VKCAPS_ALL, &ci, why, sizeof(why)) ==
	      VK_ERROR_FEATURE_NOT_PRESENT);
	CHECK_STR(why, "feature 'computeFullSubgroups' of "
		  "VkPhysicalDeviceVulkan13Features is hidden "
		  "(subgroup-size-control)");
	CHECK(vkcaps_gate(VKCAPS_FP16, &ci, why, sizeof(why)) == VK_SUCCESS);
	CHECK(vkcaps_gate(0, &ci, why, sizeof(why)) == VK_SUCCESS);
}

/* ---- processes with the real library ------------------------------------- */

struct child {
	char out[16384], err[16384];
	int status;                 /* exit status, or 128 + signal */
};

static void
read_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t k = fd >= 0 ? read(fd, buf, n - 1) : 0;

	buf[k > 0 ? k : 0] = '\0';
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* Whether an environment entry is one the tests control. */
static int
controlled(const char *e)
{
	return !strncmp(e, "VULKAN_CAPS_", 12) || !strncmp(e, "LD_PRELOAD=", 11) ||
	       !strncmp(e, "LD_LIBRARY_PATH=", 16);
}

/*
 * Runs argv with this environment less the controlled variables, plus
 * `set` (NULL-terminated "K=V"); stdout and stderr into c.
 */
static void
run(const char *const *argv, const char *const *set, struct child *c)
{
	char out[] = "/tmp/vkshim-out-XXXXXX", err[] = "/tmp/vkshim-err-XXXXXX";
	int fo = mkstemp(out), fe = mkstemp(err), st;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		char **env = calloc(512, sizeof(char *));
		size_t n = 0, i;

		for (i = 0; environ[i] && n < 400; i++)
			if (!controlled(environ[i]))
				env[n++] = environ[i];
		for (i = 0; set && set[i]; i++)
			env[n++] = (char *)set[i];
		dup2(fo, 1);
		dup2(fe, 2);
		execve(argv[0], (char *const *)argv, env);
		_exit(127);
	}
	close(fo);
	close(fe);
	waitpid(pid, &st, 0);
	c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	read_file(out, c->out, sizeof(c->out));
	read_file(err, c->err, sizeof(c->err));
}

/* The value of "key=" in text (up to the end of its line), or "". */
static const char *
value(const char *text, const char *key)
{
	static char v[1024];
	const char *p = text;
	size_t k = strlen(key), n;

	v[0] = '\0';
	while (p && *p) {
		if (!strncmp(p, key, k) && p[k] == '=') {
			n = strcspn(p + k + 1, "\n");
			if (n >= sizeof(v))
				n = sizeof(v) - 1;
			memcpy(v, p + k + 1, n);
			v[n] = '\0';
			return v;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return v;
}

static int
starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int
lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#define PRELOAD "LD_PRELOAD=" VKCAPS_SO
#define FAKE "LD_LIBRARY_PATH=" VKCAPS_T

static const char *const client[] = { VKCAPS_T "/vk-client", "ggml", NULL };
static struct child base;

static void
client_run(struct child *c, const char *a, const char *b, const char *d)
{
	const char *set[] = { PRELOAD, a, b, d, NULL };

	run(client, set, c);
}

static void
test_baseline(void)
{
	const char *set[] = { NULL };

	run(client, set, &base);
	CHECK(base.status == 0);
	CHECK_STR(value(base.out, "loader_hands_out"), "its own");
	CHECK_STR(value(base.out, "features_import"), "storage16:1 fp16:1 int8:1 "
		  "idot:1 sgsc:1 full:1 cm:1 cm2:1111111 bf16:111 dot2:1111");
	CHECK(strstr(value(base.out, "extensions"), "12:") != NULL);
	CHECK(starts(value(base.out, "shapes_khr"), "4 "));
	CHECK(base.err[0] == '\0');
}

static void
test_stock(void)
{
	struct child c;
	const char *f;

	client_run(&c, "VULKAN_CAPS_PROFILE=stock", NULL, NULL);
	CHECK(c.status == 0);
	/* the fake loader really hands out our own functions: the trap */
	CHECK_STR(value(c.out, "loader_hands_out"), "the preloaded one");
	CHECK_STR(value(c.out, "gipa_self"), "true");
	CHECK_STR(value(c.out, "gipa_null_create_device"), "null");
	CHECK_STR(value(c.out, "gipa_unknown"), "null");
	f = "storage16:1 fp16:0 int8:1 idot:0 sgsc:0 full:0 cm:0 cm2:0000000 "
	    "bf16:000 dot2:0000";
	CHECK_STR(value(c.out, "features_import"), f);
	CHECK_STR(value(c.out, "features_gipa"), f);
	CHECK_STR(value(c.out, "features_khr"), f);
	f = "shared:49152 v13stages:0 v13idot:0 idot4x8:0 sgstages:0 cmstages:0 "
	    "cm2max:0 texel:16 name:Fake Vulkan GPU";
	CHECK_STR(value(c.out, "properties_gipa"), f);
	CHECK_STR(value(c.out, "properties_khr"), f);
	CHECK_STR(value(c.out, "extensions"), "4:VK_KHR_16bit_storage,"
		  "VK_KHR_shader_float16_int8,VK_KHR_maintenance4,"
		  "VK_EXT_memory_budget (result 0)");
	CHECK_STR(value(c.out, "extensions_one"), "5 1 VK_KHR_16bit_storage");
	CHECK_STR(value(c.out, "extensions_count"), "4");
	CHECK_STR(value(c.out, "shapes_khr"), "0 (result 0) A: two:0/0");
	CHECK_STR(value(c.out, "shapes_nv"), "0 (result 0) A: two:0/0");
	CHECK_STR(value(c.out, "shapes_flex"), "0 (result 0) A: two:0/0");
	/* the gate: what a query hid cannot be enabled, either way in */
	CHECK_STR(value(c.out, "create_plain"), "0 gipa:0");
	CHECK_STR(value(c.out, "create_hidden_ext"), "-7 gipa:-7");
	CHECK_STR(value(c.out, "create_hidden_feature"), "-8 gipa:-8");
	CHECK_STR(value(c.out, "create_hidden_fp16"), "-8 gipa:-8");
	CHECK_STR(value(c.out, "create_unknown_ext"), "-7 gipa:-7");
	CHECK(starts(c.err, VKCAPS_TAG " Enabled for vk-client (profile=stock "
		     "hide=coopmat,coopmat2,int-dot,fp16,bf16,"
		     "subgroup-size-control,dot2)\n"));
	CHECK(strstr(c.err, VKCAPS_TAG " Refused vkCreateDevice for vk-client: "
		     "extension 'VK_KHR_cooperative_matrix' is hidden (coopmat)"));
	CHECK(strstr(c.err, "feature 'shaderFloat16' of "
		     "VkPhysicalDeviceVulkan12Features is hidden (fp16)"));
	CHECK(lines(c.err) == 7);
}

/* The client's output without its first line (which names the trap). */
static const char *
after_trap(const char *out)
{
	const char *p = strchr(out, '\n');

	return p ? p + 1 : out;
}

static void
test_shim_identity(void)
{
	struct child c;

	client_run(&c, "VULKAN_CAPS_PROFILE=shim", NULL, NULL);
	CHECK(c.status == 0);
	CHECK_STR(after_trap(c.out), after_trap(base.out));
	CHECK_STR(c.err, VKCAPS_TAG " Enabled for vk-client (profile=shim "
		  "hide=none)\n");
}

static void
test_hide_lists(void)
{
	struct child c;

	client_run(&c, "VULKAN_CAPS_HIDE=bf16", NULL, NULL);
	CHECK_STR(value(c.out, "features_khr"), "storage16:1 fp16:1 int8:1 "
		  "idot:1 sgsc:1 full:1 cm:1 cm2:1111111 bf16:000 dot2:1101");
	CHECK_STR(value(c.out, "shapes_khr"), "3 (result 0) A:0,0,3 two:5/2");
	CHECK_STR(value(c.out, "shapes_flex"), "3 (result 0) A:0,0,3 two:5/2");
	CHECK(strstr(value(c.out, "extensions"), "11:") &&
	      !strstr(value(c.out, "extensions"), "bfloat16"));
	CHECK_STR(value(c.out, "create_hidden_ext"), "0 gipa:0");
	CHECK_STR(c.err, VKCAPS_TAG " Enabled for vk-client (profile=hide "
		  "hide=bf16)\n");

	client_run(&c, "VULKAN_CAPS_HIDE=fp16", NULL, NULL);
	CHECK_STR(value(c.out, "features_import"), "storage16:1 fp16:0 int8:1 "
		  "idot:1 sgsc:1 full:1 cm:1 cm2:1111111 bf16:111 dot2:0011");
	CHECK_STR(value(c.out, "shapes_khr"), "2 (result 0) A:3,1000141000 two:0/2");
	CHECK_STR(value(c.out, "extensions_count"), "12");
	CHECK_STR(value(c.out, "create_hidden_fp16"), "-8 gipa:-8");

	client_run(&c, "VULKAN_CAPS_HIDE=coopmat2,int-dot", NULL, NULL);
	CHECK_STR(value(c.out, "properties_gipa"), "shared:49152 v13stages:32 "
		  "v13idot:0 idot4x8:0 sgstages:32 cmstages:32 cm2max:0 texel:16 "
		  "name:Fake Vulkan GPU");
	CHECK_STR(value(c.out, "shapes_khr"), value(base.out, "shapes_khr"));
	CHECK_STR(value(c.out, "shapes_flex"), "0 (result 0) A: two:0/0");
}

static void
test_shared_memory(void)
{
	struct child c;

	client_run(&c, "VULKAN_CAPS_HIDE=coopmat",
		   "VULKAN_CAPS_MAX_SHARED_MEMORY=16384", NULL);
	CHECK(starts(value(c.out, "properties_gipa"), "shared:16384 "));
	CHECK(starts(value(c.out, "properties_khr"), "shared:16384 "));
	CHECK_STR(value(c.out, "properties_v1"), "shared:16384");
	CHECK(starts(c.err, VKCAPS_TAG " Enabled for vk-client (profile=hide "
		     "hide=coopmat maxSharedMemory=16384)\n"));
	/* never raised above what the driver reports */
	client_run(&c, "VULKAN_CAPS_PROFILE=stock",
		   "VULKAN_CAPS_MAX_SHARED_MEMORY=65536", NULL);
	CHECK(starts(value(c.out, "properties_gipa"), "shared:49152 "));
	CHECK_STR(value(c.out, "properties_v1"), "shared:49152");
}

static const char *const malformed[][3] = {
	{ "VULKAN_CAPS_PROFILE=bogus", NULL, "VULKAN_CAPS_PROFILE='bogus' is not a profile (stock, shim)" },
	{ "VULKAN_CAPS_HIDE=coopmatt", NULL, "VULKAN_CAPS_HIDE names 'coopmatt', not a capability" },
	{ "VULKAN_CAPS_HIDE=16bit-storage", NULL, "VK_KHR_16bit_storage is never hidden" },
	{ "VULKAN_CAPS_HIDE=coopmat,,fp16", NULL, "has an empty name" },
	{ "VULKAN_CAPS_PROFILE=stock", "VULKAN_CAPS_HIDE=fp16", "are both set" },
	{ "VULKAN_CAPS_PROFILE=shim", "VULKAN_CAPS_MAX_SHARED_MEMORY=1024", "the shim profile changes nothing" },
	{ "VULKAN_CAPS_PROFILE=stock", "VULKAN_CAPS_MAX_SHARED_MEMORY=16k", "is not a decimal byte count" },
	{ "VULKAN_CAPS_PROFILE=", NULL, "no configuration" },
	{ NULL, NULL, "no configuration" },
};

static void
test_malformed(void)
{
	size_t i;

	for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		struct child c;
		const char *want = malformed[i][2];

		client_run(&c, malformed[i][0], malformed[i][1], NULL);
		CHECK(c.status == 0);
		/* exactly the driver's answers, and one line that says so */
		CHECK_STR(after_trap(c.out), after_trap(base.out));
		CHECK(starts(c.err, VKCAPS_TAG " Disabled for vk-client: "));
		CHECK(strstr(c.err, want) != NULL);
		CHECK(strstr(c.err, "; leaving the driver's answers unchanged\n"));
		CHECK(lines(c.err) == 1);
		if (lines(c.err) != 1 || !strstr(c.err, want))
			printf("  case %zu: stderr %s", i, c.err);
	}
}

static void
test_threads(void)
{
	static const char *const argv[] = { VKCAPS_T "/vk-client", "threads", NULL };
	const char *set[] = { PRELOAD, "VULKAN_CAPS_PROFILE=stock", NULL };
	struct child c;
	int i;

	for (i = 0; i < 20; i++) {
		run(argv, set, &c);
		CHECK(c.status == 0);
		CHECK(lines(c.err) == 1);
		CHECK(starts(c.err, VKCAPS_TAG " Enabled for vk-client (profile=stock"));
	}
}

/* A shell that LD_PRELOAD reaches first: no output, no loader loaded. */
static void
test_shell(void)
{
	static const char *const argv[] = { "/bin/sh", "-c",
		"grep -c libvulkan /proc/$$/maps; echo done", NULL };
	const char *set[] = { PRELOAD, FAKE, "VULKAN_CAPS_PROFILE=stock", NULL };
	const char *bad[] = { PRELOAD, FAKE, "VULKAN_CAPS_PROFILE=bogus", NULL };
	struct child c;

	run(argv, set, &c);
	CHECK_STR(c.out, "0\ndone\n");
	CHECK_STR(c.err, "");
	run(argv, bad, &c);
	CHECK_STR(c.out, "0\ndone\n");
	CHECK_STR(c.err, "");
}

static const char *const probe[] = { VKCAPS_PROBE, NULL };

static void
test_probe(void)
{
	static const char *const gate[] = { VKCAPS_PROBE, "--enable",
		"VK_KHR_cooperative_matrix", "--enable", "cooperativeMatrix", NULL };
	static const char *const feat[] = { VKCAPS_PROBE, "--enable",
		"shaderFloat16", NULL };
	const char *plain[] = { FAKE, NULL };
	const char *stock[] = { FAKE, PRELOAD, "VULKAN_CAPS_PROFILE=stock", NULL };
	const char *shim[] = { FAKE, PRELOAD, "VULKAN_CAPS_PROFILE=shim", NULL };
	struct child c, p;

	run(probe, plain, &p);
	CHECK(p.status == 0);
	CHECK_STR(value(p.out, "device"), "Fake Vulkan GPU");
	CHECK_STR(value(p.out, "driver"), "fake");
	CHECK_STR(value(p.out, "device_type"), "discrete-gpu");
	CHECK_STR(value(p.out, "vendor_id"), "0x10de");
	CHECK_STR(value(p.out, "api_version"), "1.3.0");
	CHECK_STR(value(p.out, "storage_16bit"), "true");
	CHECK_STR(value(p.out, "fp16"), "true");
	CHECK_STR(value(p.out, "bf16"), "true");
	CHECK_STR(value(p.out, "int_dot"), "true");
	CHECK_STR(value(p.out, "coopmat"), "true");
	CHECK_STR(value(p.out, "coopmat_shapes"), "4");
	CHECK_STR(value(p.out, "coopmat2"), "true");
	CHECK_STR(value(p.out, "subgroup_size_control"), "true");
	CHECK_STR(value(p.out, "dot2"), "true");
	CHECK_STR(value(p.out, "warp_size"), "32");
	CHECK_STR(value(p.out, "shared_memory"), "49152");
	CHECK_STR(value(p.out, "consistent"), "true");
	CHECK_STR(value(p.out, "shim_loaded"), "false");
	CHECK_STR(value(p.out, "shim_status"), "");
	CHECK(!strstr(p.out, "create_device="));

	run(probe, stock, &c);
	CHECK(c.status == 0);
	CHECK_STR(value(c.out, "storage_16bit"), "true");
	CHECK_STR(value(c.out, "fp16"), "false");
	CHECK_STR(value(c.out, "bf16"), "false");
	CHECK_STR(value(c.out, "int_dot"), "false");
	CHECK_STR(value(c.out, "coopmat"), "false");
	CHECK_STR(value(c.out, "coopmat_shapes"), "0");
	CHECK_STR(value(c.out, "coopmat2"), "false");
	CHECK_STR(value(c.out, "subgroup_size_control"), "false");
	CHECK_STR(value(c.out, "dot2"), "false");
	CHECK_STR(value(c.out, "consistent"), "true");
	CHECK_STR(value(c.out, "shim_loaded"), "true");
	CHECK_STR(value(c.out, "shim_status"), "enabled");
	CHECK_STR(value(c.out, "shim_profile"), "stock");
	CHECK_STR(value(c.out, "shim_config"), "profile=stock hide=coopmat,"
		  "coopmat2,int-dot,fp16,bf16,subgroup-size-control,dot2");

	/* the shim profile: the driver's facts, and the shim's state */
	run(probe, shim, &c);
	CHECK(!strncmp(c.out, p.out, (size_t)(strstr(p.out, "shim_loaded") - p.out)));
	CHECK_STR(value(c.out, "shim_profile"), "shim");

	run(gate, stock, &c);
	CHECK_STR(value(c.out, "create_device"), "VK_ERROR_EXTENSION_NOT_PRESENT");
	run(feat, stock, &c);
	CHECK_STR(value(c.out, "create_device"), "VK_ERROR_FEATURE_NOT_PRESENT");
	CHECK(strstr(c.err, "Refused vkCreateDevice for vulkan-capabilities: "
		     "feature 'shaderFloat16'"));
	run(gate, shim, &c);
	CHECK_STR(value(c.out, "create_device"), "VK_SUCCESS");

	stock[2] = "VULKAN_CAPS_PROFILE=stok";
	run(probe, stock, &c);
	CHECK_STR(value(c.out, "coopmat"), "true");
	CHECK_STR(value(c.out, "shim_status"), "disabled");
	CHECK_STR(value(c.out, "shim_profile"), "");
	CHECK(strstr(value(c.out, "shim_config"), "'stok' is not a profile"));
}

static void
test_probe_errors(void)
{
	static const char *const bad[][4] = {
		{ VKCAPS_PROBE, "--device", "x", NULL },
		{ VKCAPS_PROBE, "--enable", "fastMath", NULL },
		{ VKCAPS_PROBE, "--json", NULL, NULL },
	};
	static const char *const dev1[] = { VKCAPS_PROBE, "--device", "1", NULL };
	const char *plain[] = { FAKE, NULL };
	const char *none[] = { "LD_LIBRARY_PATH=/nonexistent", NULL };
	struct child c;
	size_t i;

	for (i = 0; i < 3; i++) {
		run(bad[i], plain, &c);
		CHECK(c.status == 2);
		CHECK(strstr(c.err, "usage: vulkan-capabilities"));
	}
	run(dev1, plain, &c);
	CHECK(c.status == 3);
	CHECK(strstr(c.err, "no such device"));
	/* no loader at all (unless this machine has one of its own) */
	if (!dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD)) {
		void *h = dlopen("libvulkan.so.1", RTLD_NOW);

		if (!h) {
			run(probe, none, &c);
			CHECK(c.status == 3);
			CHECK(strstr(c.err, "cannot load libvulkan.so.1"));
		} else {
			printf("  (this machine has a libvulkan.so.1: the "
			       "no-loader case is not run)\n");
			dlclose(h);
		}
	}
}

/*
 * A libvulkan.so.1 that is the shim itself: it must find that out, never
 * call itself as the driver, and say so.
 */
static void
test_self_reference(void)
{
	char dir[] = "/tmp/vkshim-self-XXXXXX", link[64], lp[96];
	const char *set[] = { PRELOAD, lp, "VULKAN_CAPS_PROFILE=stock", NULL };
	struct child c;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(link, sizeof(link), "%s/libvulkan.so.1", dir);
	snprintf(lp, sizeof(lp), "LD_LIBRARY_PATH=%s", dir);
	CHECK(symlink(VKCAPS_SO, link) == 0);
	run(probe, set, &c);
	CHECK(c.status == 3);
	CHECK(strstr(c.err, VKCAPS_TAG " Disabled for vulkan-capabilities: "
		     "libvulkan.so.1 resolves 'vkGetInstanceProcAddr' to this "
		     "library itself"));
	unlink(link);
	rmdir(dir);
}

/* In a process with no Vulkan loader, the shim says so and answers nothing. */
static void
test_no_loader(void)
{
	int fd[2];
	pid_t pid;
	char buf[1024] = "";
	ssize_t n;
	int st;

	if (dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD) ||
	    getenv("LD_LIBRARY_PATH")) {
		printf("  (a loader may be reachable here: not run)\n");
		return;
	}
	CHECK(pipe(fd) == 0);
	pid = fork();
	if (pid == 0) {
		void *h;
		const char *(*status)(void);
		PFN_vkGetInstanceProcAddr gipa;

		dup2(fd[1], 2);
		unsetenv("VULKAN_CAPS_HIDE");
		unsetenv("VULKAN_CAPS_MAX_SHARED_MEMORY");
		setenv("VULKAN_CAPS_PROFILE", "stock", 1);
		h = dlopen(VKCAPS_SO, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			_exit(10);
		gipa = (PFN_vkGetInstanceProcAddr)dlsym(h, "vkGetInstanceProcAddr");
		status = (const char *(*)(void))dlsym(h, "vulkan_capabilities_status");
		if (dlopen("libvulkan.so.1", RTLD_NOW)) {
			fprintf(stderr, "loader found\n");
			_exit(0);
		}
		_exit(gipa(NULL, "vkCreateInstance") == NULL &&
		      !strcmp(status(), "disabled") ? 0 : 11);
	}
	close(fd[1]);
	n = read(fd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (strstr(buf, "loader found"))
		return;
	CHECK(strstr(buf, "Disabled for test-vulkan-shim: cannot load the "
		     "Vulkan loader (libvulkan.so.1)"));
}

static const struct test_case TESTS[] = {
	{ "config: profiles, hide lists, shared memory, malformed", test_config },
	{ "capability and extension names", test_names },
	{ "filter: extensions removed, order kept", test_filter_extensions },
	{ "filter: feature bits cleared, 16-bit storage never", test_clear_features },
	{ "filter: properties and limits only lowered", test_lower_properties },
	{ "filter: cooperative-matrix shapes", test_filter_shapes },
	{ "gate: hidden extensions and features refused", test_gate },
	{ "fake loader: the driver's answers without the shim", test_baseline },
	{ "stock: every path hidden, the trap avoided, the gate", test_stock },
	{ "shim: identity plus the marker", test_shim_identity },
	{ "hide lists: only what is named", test_hide_lists },
	{ "shared memory lowered, never raised", test_shared_memory },
	{ "malformed configuration: the driver's answers, one line", test_malformed },
	{ "eight threads at the first call: one marker, 20 times", test_threads },
	{ "/bin/sh under LD_PRELOAD: silent, no loader", test_shell },
	{ "probe: key=value facts, stock, shim, the gate", test_probe },
	{ "probe: bad arguments, no device, no loader", test_probe_errors },
	{ "a libvulkan.so.1 that is the shim itself", test_self_reference },
	{ "no Vulkan loader in the process", test_no_loader },
};

int
main(void)
{
	return test_main(TESTS, sizeof(TESTS) / sizeof(TESTS[0]));
}
