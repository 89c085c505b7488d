/*
 * A Vulkan client that asks the way ggml's backend does, for the shim's
 * tests: linked against libvulkan.so.1 (the fake loader in the tests), so
 * its imports vkGetInstanceProcAddr, vkGetPhysicalDeviceFeatures2 and
 * vkCreateDevice resolve to a preloaded shim first; everything else is
 * looked up through vkGetInstanceProcAddr. Prints key=value lines.
 *
 *   vk-client ggml       every query path, the shape lists, the gate; the
 *                        shape lists even when their extension is not
 *                        offered (the fake loader only)
 *   vk-client real       the same, calling only offered extensions' entry
 *                        points (safe with a real loader and driver)
 *   vk-client threads    eight threads make the first Vulkan call at once
 */
#define _GNU_SOURCE
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static VkInstance inst;
static VkPhysicalDevice pd;
static int offered_only;   /* call extension functions only when offered */

#define FN(type, name) ((type)vkGetInstanceProcAddr(inst, name))

static void
setup(void)
{
	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO };
	VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO };
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)
		vkGetInstanceProcAddr(NULL, "vkCreateInstance");
	uint32_t n = 1;

	/* Vulkan 1.3, as ggml asks: the 1.1 queries are core then */
	app.apiVersion = VK_API_VERSION_1_3;
	ci.pApplicationInfo = &app;

	if (!create || create(&ci, NULL, &inst) != VK_SUCCESS) {
		printf("setup=failed\n");
		exit(3);
	}
	FN(PFN_vkEnumeratePhysicalDevices, "vkEnumeratePhysicalDevices")(inst, &n, &pd);
}

/* Whether the loader's own vkGetInstanceProcAddr hands out the preloaded
 * definition of one of its exported names: the trap the shim avoids. */
static void
trap(void)
{
	void *h = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD);
	PFN_vkGetInstanceProcAddr own = h ? (PFN_vkGetInstanceProcAddr)
		dlsym(h, "vkGetInstanceProcAddr") : NULL;
	void *handed = own ? (void *)own(inst, "vkGetPhysicalDeviceFeatures2") : NULL;
	void *global = dlsym(RTLD_DEFAULT, "vkGetPhysicalDeviceFeatures2");
	void *loader = h ? dlsym(h, "vkGetPhysicalDeviceFeatures2") : NULL;

	printf("loader_hands_out=%s\n", !handed ? "nothing" :
	       handed == loader ? "its own" :
	       handed == global ? "the preloaded one" : "other");
	printf("gipa_self=%s\n", (void *)vkGetInstanceProcAddr(inst,
	       "vkGetInstanceProcAddr") == (void *)vkGetInstanceProcAddr ?
	       "true" : "false");
	printf("gipa_null_create_device=%s\n",
	       vkGetInstanceProcAddr(NULL, "vkCreateDevice") ? "set" : "null");
	printf("gipa_unknown=%s\n",
	       vkGetInstanceProcAddr(inst, "vkNoSuchFunction") ? "set" : "null");
}

static void
features(const char *key, PFN_vkGetPhysicalDeviceFeatures2 f2)
{
	VkPhysicalDeviceFeatures2 f = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 };
	VkPhysicalDeviceVulkan11Features v11 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES };
	VkPhysicalDeviceVulkan12Features v12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES };
	VkPhysicalDeviceVulkan13Features v13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES };
	VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR };
	VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV };
	VkPhysicalDeviceShaderBfloat16FeaturesKHR bf = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR };
	VkPhysicalDeviceShaderMixedFloatDotProductFeaturesVALVE d2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_MIXED_FLOAT_DOT_PRODUCT_FEATURES_VALVE };

	f.pNext = &v11;
	v11.pNext = &v12;
	v12.pNext = &v13;
	v13.pNext = &cm;
	cm.pNext = &cm2;
	cm2.pNext = &bf;
	bf.pNext = &d2;
	if (!f2) {
		printf("%s=unavailable\n", key);
		return;
	}
	f2(pd, &f);
	printf("%s=storage16:%u fp16:%u int8:%u idot:%u sgsc:%u full:%u "
	       "cm:%u cm2:%u%u%u%u%u%u%u bf16:%u%u%u dot2:%u%u%u%u\n", key,
	       v11.storageBuffer16BitAccess, v12.shaderFloat16, v12.shaderInt8,
	       v13.shaderIntegerDotProduct, v13.subgroupSizeControl,
	       v13.computeFullSubgroups, cm.cooperativeMatrix,
	       cm2.cooperativeMatrixWorkgroupScope,
	       cm2.cooperativeMatrixFlexibleDimensions,
	       cm2.cooperativeMatrixReductions, cm2.cooperativeMatrixConversions,
	       cm2.cooperativeMatrixPerElementOperations,
	       cm2.cooperativeMatrixTensorAddressing,
	       cm2.cooperativeMatrixBlockLoads, bf.shaderBFloat16Type,
	       bf.shaderBFloat16DotProduct, bf.shaderBFloat16CooperativeMatrix,
	       d2.shaderMixedFloatDotProductFloat16AccFloat32,
	       d2.shaderMixedFloatDotProductFloat16AccFloat16,
	       d2.shaderMixedFloatDotProductBFloat16Acc,
	       d2.shaderMixedFloatDotProductFloat8AccFloat32);
}

static void
properties(const char *key, PFN_vkGetPhysicalDeviceProperties2 p2)
{
	VkPhysicalDeviceProperties2 p = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
	VkPhysicalDeviceVulkan13Properties v13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES };
	VkPhysicalDeviceShaderIntegerDotProductProperties id = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES };
	VkPhysicalDeviceSubgroupSizeControlProperties sg = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES };
	VkPhysicalDeviceCooperativeMatrixPropertiesKHR cm = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR };
	VkPhysicalDeviceCooperativeMatrix2PropertiesNV cm2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV };

	p.pNext = &v13;
	v13.pNext = &id;
	id.pNext = &sg;
	sg.pNext = &cm;
	cm.pNext = &cm2;
	if (!p2) {
		printf("%s=unavailable\n", key);
		return;
	}
	p2(pd, &p);
	printf("%s=shared:%u v13stages:%u v13idot:%u idot4x8:%u sgstages:%u "
	       "cmstages:%u cm2max:%u texel:%llu name:%s\n", key,
	       p.properties.limits.maxComputeSharedMemorySize,
	       v13.requiredSubgroupSizeStages,
	       v13.integerDotProduct4x8BitPackedSignedAccelerated,
	       id.integerDotProduct4x8BitPackedSignedAccelerated,
	       sg.requiredSubgroupSizeStages, cm.cooperativeMatrixSupportedStages,
	       cm2.cooperativeMatrixFlexibleDimensionsMaxDimension,
	       (unsigned long long)v13.storageTexelBufferOffsetAlignmentBytes,
	       p.properties.deviceName);
}

static void
extensions(void)
{
	PFN_vkEnumerateDeviceExtensionProperties en = FN(
		PFN_vkEnumerateDeviceExtensionProperties,
		"vkEnumerateDeviceExtensionProperties");
	VkExtensionProperties e[64], one[1];
	uint32_t n = 64, i, k = 1;
	VkResult r;

	r = en(pd, NULL, &n, e);
	printf("extensions=%u:", n);
	for (i = 0; i < n; i++)
		printf("%s%s", i ? "," : "", e[i].extensionName);
	printf(" (result %d)\n", r);
	r = en(pd, NULL, &k, one);
	printf("extensions_one=%d %u %s\n", r, k, one[0].extensionName);
	n = 0;
	en(pd, NULL, &n, NULL);
	printf("extensions_count=%u\n", n);
}

/* Whether the device offers extension `name` (a real loader hands out
 * trampolines for every device function, offered or not). */
static int
has_ext(const char *name)
{
	PFN_vkEnumerateDeviceExtensionProperties en = FN(
		PFN_vkEnumerateDeviceExtensionProperties,
		"vkEnumerateDeviceExtensionProperties");
	VkExtensionProperties *e;
	uint32_t n = 0, i;
	int found = 0;

	en(pd, NULL, &n, NULL);
	e = calloc(n + 1, sizeof(*e));
	if (e && en(pd, NULL, &n, e) == VK_SUCCESS)
		for (i = 0; i < n; i++)
			found |= !strcmp(e[i].extensionName, name);
	free(e);
	return found;
}

static void
shapes(const char *key, const char *ext, const char *name, size_t size,
       size_t types)
{
	VkResult (*fn)(VkPhysicalDevice, uint32_t *, void *) =
		(VkResult (*)(VkPhysicalDevice, uint32_t *, void *))
		vkGetInstanceProcAddr(inst, name);
	char buf[8 * 128];
	uint32_t n = 0, i, two = 2;
	VkResult r;

	if (!fn || (offered_only && !has_ext(ext))) {
		printf("%s=unavailable\n", key);
		return;
	}
	fn(pd, &n, NULL);
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < n && i < 8; i++) {
		((VkBaseOutStructure *)(void *)(buf + i * size))->sType = 0;
		((VkBaseOutStructure *)(void *)(buf + i * size))->pNext = NULL;
	}
	r = fn(pd, &n, buf);
	printf("%s=%u (result %d) A:", key, n, r);
	for (i = 0; i < n && i < 8; i++)
		printf("%s%u", i ? "," : "", *(uint32_t *)(void *)(buf + i * size + types));
	r = fn(pd, &two, buf);
	printf(" two:%d/%u\n", r, two);
}

static void
create(const char *key, const char *ext, int feature)
{
	VkDeviceQueueCreateInfo q = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO };
	VkDeviceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO };
	VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 };
	VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR };
	VkPhysicalDeviceVulkan12Features v12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES };
	float prio = 1;
	VkDevice dev;
	PFN_vkCreateDevice through_gipa = FN(PFN_vkCreateDevice, "vkCreateDevice");

	q.queueCount = 1;
	q.pQueuePriorities = &prio;
	ci.queueCreateInfoCount = 1;
	ci.pQueueCreateInfos = &q;
	ci.enabledExtensionCount = 1;
	ci.ppEnabledExtensionNames = &ext;
	ci.pNext = &f2;
	f2.pNext = &v12;
	if (feature == 1) {
		v12.pNext = &cm;
		cm.cooperativeMatrix = VK_TRUE;
	} else if (feature == 2) {
		v12.shaderFloat16 = VK_TRUE;
	}
	printf("%s=%d gipa:%d\n", key, vkCreateDevice(pd, &ci, NULL, &dev),
	       through_gipa ? through_gipa(pd, &ci, NULL, &dev) : 99);
}

static void *
first_call(void *barrier)
{
	pthread_barrier_wait(barrier);
	vkGetInstanceProcAddr(NULL, "vkCreateInstance");
	return NULL;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 2 && !strcmp(argv[1], "threads")) {
		pthread_t t[8];
		pthread_barrier_t b;
		int i;

		pthread_barrier_init(&b, NULL, 8);
		for (i = 0; i < 8; i++)
			pthread_create(&t[i], NULL, first_call, &b);
		for (i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
		printf("threads=done\n");
		return 0;
	}
	if (argc != 2 || (strcmp(argv[1], "ggml") && strcmp(argv[1], "real"))) {
		fprintf(stderr, "usage: vk-client ggml|real|threads\n");
		return 2;
	}
	offered_only = !strcmp(argv[1], "real");
	setup();
	trap();
	features("features_import", vkGetPhysicalDeviceFeatures2);
	features("features_gipa", FN(PFN_vkGetPhysicalDeviceFeatures2,
				     "vkGetPhysicalDeviceFeatures2"));
	features("features_khr", FN(PFN_vkGetPhysicalDeviceFeatures2,
				    "vkGetPhysicalDeviceFeatures2KHR"));
	properties("properties_gipa", FN(PFN_vkGetPhysicalDeviceProperties2,
					 "vkGetPhysicalDeviceProperties2"));
	properties("properties_khr", FN(PFN_vkGetPhysicalDeviceProperties2,
					"vkGetPhysicalDeviceProperties2KHR"));
	{
		VkPhysicalDeviceProperties p;
		FN(PFN_vkGetPhysicalDeviceProperties,
		   "vkGetPhysicalDeviceProperties")(pd, &p);
		printf("properties_v1=shared:%u\n",
		       p.limits.maxComputeSharedMemorySize);
	}
	extensions();
	shapes("shapes_khr", VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME,
	       "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
	       sizeof(VkCooperativeMatrixPropertiesKHR),
	       offsetof(VkCooperativeMatrixPropertiesKHR, AType));
	shapes("shapes_nv", VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME,
	       "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV",
	       sizeof(VkCooperativeMatrixPropertiesNV),
	       offsetof(VkCooperativeMatrixPropertiesNV, AType));
	shapes("shapes_flex", VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME,
	       "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV",
	       sizeof(VkCooperativeMatrixFlexibleDimensionsPropertiesNV),
	       offsetof(VkCooperativeMatrixFlexibleDimensionsPropertiesNV, AType));
	create("create_plain", VK_KHR_16BIT_STORAGE_EXTENSION_NAME, 0);
	create("create_hidden_ext", VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME, 0);
	create("create_hidden_feature", VK_KHR_16BIT_STORAGE_EXTENSION_NAME, 1);
	create("create_hidden_fp16", VK_KHR_16BIT_STORAGE_EXTENSION_NAME, 2);
	create("create_unknown_ext", "VK_FAKE_no_such_extension", 0);
	return 0;
}
