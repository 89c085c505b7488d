/*
 * A stand-in Vulkan loader for the shim's tests on machines without a GPU:
 * built as libvulkan.so.1, it answers like one device ("Fake Vulkan GPU")
 * that has every capability the shim can hide. It reproduces the real
 * loader's trap: vkGetInstanceProcAddr returns the addresses of this
 * library's *exported* functions, and since it is not linked -Bsymbolic
 * the dynamic linker resolves those addresses to a preloaded library's
 * functions of the same names. Extension entry points (the shape lists,
 * the KHR alias of vkGetPhysicalDeviceProperties2) are static, as a real
 * loader's generated trampolines are.
 *
 * vkCreateDevice checks what a client enables against what it offers and
 * records the extensions it was given in FAKE_VULKAN_CREATED, when that
 * names a file.
 */
#include <vulkan/vulkan.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static int instance_token, device_token, pdev_token;

static const char *const extensions[] = {
	VK_KHR_16BIT_STORAGE_EXTENSION_NAME,
	VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME,
	VK_KHR_MAINTENANCE_4_EXTENSION_NAME,
	VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME,
	VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME,
	VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME,
	VK_NV_COOPERATIVE_MATRIX_DECODE_VECTOR_EXTENSION_NAME,
	VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME,
	VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME,
	VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME,
	VK_VALVE_SHADER_MIXED_FLOAT_DOT_PRODUCT_EXTENSION_NAME,
	VK_EXT_MEMORY_BUDGET_EXTENSION_NAME,
};
#define NEXT (sizeof(extensions) / sizeof(extensions[0]))

/* The shapes: f16 x f16 -> f32 and f16, int8 -> int32, bf16 -> f32. */
static const uint32_t shapes[][4] = {
	{ VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR,
	  VK_COMPONENT_TYPE_FLOAT32_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR },
	{ VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR,
	  VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR },
	{ VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_SINT8_KHR,
	  VK_COMPONENT_TYPE_SINT32_KHR, VK_COMPONENT_TYPE_SINT32_KHR },
	{ VK_COMPONENT_TYPE_BFLOAT16_KHR, VK_COMPONENT_TYPE_BFLOAT16_KHR,
	  VK_COMPONENT_TYPE_FLOAT32_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR },
};
#define NSHAPES 4u

EXPORT VkResult
vkEnumerateInstanceVersion(uint32_t *v)
{
	*v = VK_API_VERSION_1_3;
	return VK_SUCCESS;
}

EXPORT VkResult
vkCreateInstance(const VkInstanceCreateInfo *ci, const VkAllocationCallbacks *a,
		 VkInstance *inst)
{
	*inst = (VkInstance)(void *)&instance_token;
	return VK_SUCCESS;
}

EXPORT void
vkDestroyInstance(VkInstance inst, const VkAllocationCallbacks *a)
{
}

EXPORT VkResult
vkEnumeratePhysicalDevices(VkInstance inst, uint32_t *n, VkPhysicalDevice *pd)
{
	if (!pd) {
		*n = 1;
		return VK_SUCCESS;
	}
	if (*n < 1)
		return VK_INCOMPLETE;
	pd[0] = (VkPhysicalDevice)(void *)&pdev_token;
	*n = 1;
	return VK_SUCCESS;
}

EXPORT VkResult
vkEnumerateDeviceExtensionProperties(VkPhysicalDevice pd, const char *layer,
				     uint32_t *n, VkExtensionProperties *p)
{
	uint32_t i, k;

	if (layer)
		return VK_ERROR_LAYER_NOT_PRESENT;
	if (!p) {
		*n = NEXT;
		return VK_SUCCESS;
	}
	k = *n < NEXT ? *n : NEXT;
	for (i = 0; i < k; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		snprintf(p[i].extensionName, sizeof(p[i].extensionName), "%s",
			 extensions[i]);
		p[i].specVersion = 1;
	}
	*n = k;
	return k < NEXT ? VK_INCOMPLETE : VK_SUCCESS;
}

EXPORT void
vkGetPhysicalDeviceProperties(VkPhysicalDevice pd, VkPhysicalDeviceProperties *p)
{
	memset(p, 0, sizeof(*p));
	p->apiVersion = VK_API_VERSION_1_3;
	p->vendorID = 0x10de;
	p->deviceType = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
	snprintf(p->deviceName, sizeof(p->deviceName), "Fake Vulkan GPU");
	p->limits.maxComputeSharedMemorySize = 49152;
}

/* Sets every VkBool32 after the header of a structure of `size` bytes. */
static void
all_true(void *s, size_t size)
{
	size_t off;

	for (off = sizeof(VkBaseOutStructure); off + 4 <= size; off += 4)
		*(VkBool32 *)(void *)((char *)s + off) = VK_TRUE;
}

EXPORT void
vkGetPhysicalDeviceProperties2(VkPhysicalDevice pd, VkPhysicalDeviceProperties2 *p)
{
	VkBaseOutStructure *s;

	vkGetPhysicalDeviceProperties(pd, &p->properties);
	for (s = p->pNext; s; s = s->pNext) {
		switch (s->sType) {
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES:
			snprintf(((VkPhysicalDeviceDriverProperties *)(void *)s)
				 ->driverName, VK_MAX_DRIVER_NAME_SIZE, "fake");
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES:
			((VkPhysicalDeviceSubgroupProperties *)(void *)s)
				->subgroupSize = 32;
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES:
			((VkPhysicalDeviceSubgroupSizeControlProperties *)(void *)s)
				->requiredSubgroupSizeStages = VK_SHADER_STAGE_COMPUTE_BIT;
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES: {
			VkPhysicalDeviceVulkan13Properties *v = (void *)s;

			v->requiredSubgroupSizeStages = VK_SHADER_STAGE_COMPUTE_BIT;
			v->integerDotProduct4x8BitPackedSignedAccelerated = VK_TRUE;
			v->storageTexelBufferOffsetAlignmentBytes = 16;
			break;
		}
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES:
			all_true(s, sizeof(VkPhysicalDeviceShaderIntegerDotProductProperties));
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR:
			((VkPhysicalDeviceCooperativeMatrixPropertiesKHR *)(void *)s)
				->cooperativeMatrixSupportedStages = VK_SHADER_STAGE_COMPUTE_BIT;
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV: {
			VkPhysicalDeviceCooperativeMatrix2PropertiesNV *c = (void *)s;

			c->cooperativeMatrixWorkgroupScopeMaxWorkgroupSize = 256;
			c->cooperativeMatrixFlexibleDimensionsMaxDimension = 4096;
			c->cooperativeMatrixWorkgroupScopeReservedSharedMemory = 1024;
			break;
		}
		default:
			break;
		}
	}
}

static void
properties2_khr(VkPhysicalDevice pd, VkPhysicalDeviceProperties2 *p)
{
	vkGetPhysicalDeviceProperties2(pd, p);
}

/* The feature structures this device fills in, and their sizes. */
static const struct {
	VkStructureType type;
	size_t size;
} feature_structs[] = {
#define S(t, T) { VK_STRUCTURE_TYPE_##t, sizeof(T) }
	S(PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, VkPhysicalDeviceVulkan11Features),
	S(PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, VkPhysicalDeviceVulkan12Features),
	S(PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, VkPhysicalDeviceVulkan13Features),
	S(PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, VkPhysicalDeviceShaderFloat16Int8Features),
	S(PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, VkPhysicalDevice16BitStorageFeatures),
	S(PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES, VkPhysicalDeviceShaderIntegerDotProductFeatures),
	S(PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES, VkPhysicalDeviceSubgroupSizeControlFeatures),
	S(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR, VkPhysicalDeviceCooperativeMatrixFeaturesKHR),
	S(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV, VkPhysicalDeviceCooperativeMatrixFeaturesNV),
	S(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV, VkPhysicalDeviceCooperativeMatrix2FeaturesNV),
	S(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_DECODE_VECTOR_FEATURES_NV, VkPhysicalDeviceCooperativeMatrixDecodeVectorFeaturesNV),
	S(PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR, VkPhysicalDeviceShaderBfloat16FeaturesKHR),
	S(PHYSICAL_DEVICE_SHADER_MIXED_FLOAT_DOT_PRODUCT_FEATURES_VALVE, VkPhysicalDeviceShaderMixedFloatDotProductFeaturesVALVE),
#undef S
};

EXPORT void
vkGetPhysicalDeviceFeatures2(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2 *f)
{
	VkBaseOutStructure *s;
	size_t i;

	memset(&f->features, 0, sizeof(f->features));
	f->features.shaderInt16 = VK_TRUE;
	for (s = f->pNext; s; s = s->pNext)
		for (i = 0; i < sizeof(feature_structs) / sizeof(feature_structs[0]); i++)
			if (feature_structs[i].type == s->sType) {
				/* every member after the header is a VkBool32 */
				all_true(s, feature_structs[i].size);
				break;
			}
}

static VkResult
list_shapes(uint32_t *n, void *out, size_t size, size_t types)
{
	uint32_t i, k;

	if (!out) {
		*n = NSHAPES;
		return VK_SUCCESS;
	}
	k = *n < NSHAPES ? *n : NSHAPES;
	for (i = 0; i < k; i++) {
		char *e = (char *)out + i * size;

		memset(e + sizeof(VkBaseOutStructure), 0,
		       size - sizeof(VkBaseOutStructure));
		memcpy(e + types, shapes[i], sizeof(shapes[i]));
		/* the sizes: 16 x 16 x 16, as the first three members */
		((uint32_t *)(void *)(e + sizeof(VkBaseOutStructure)))[0] = 16;
		((uint32_t *)(void *)(e + sizeof(VkBaseOutStructure)))[1] = 16;
		((uint32_t *)(void *)(e + sizeof(VkBaseOutStructure)))[2] = 16;
	}
	*n = k;
	return k < NSHAPES ? VK_INCOMPLETE : VK_SUCCESS;
}

static VkResult
coopmat_khr(VkPhysicalDevice pd, uint32_t *n, VkCooperativeMatrixPropertiesKHR *p)
{
	return list_shapes(n, p, sizeof(*p),
			   offsetof(VkCooperativeMatrixPropertiesKHR, AType));
}

static VkResult
coopmat_nv(VkPhysicalDevice pd, uint32_t *n, VkCooperativeMatrixPropertiesNV *p)
{
	return list_shapes(n, p, sizeof(*p),
			   offsetof(VkCooperativeMatrixPropertiesNV, AType));
}

static VkResult
flex_nv(VkPhysicalDevice pd, uint32_t *n,
	VkCooperativeMatrixFlexibleDimensionsPropertiesNV *p)
{
	return list_shapes(n, p, sizeof(*p),
			   offsetof(VkCooperativeMatrixFlexibleDimensionsPropertiesNV,
				    AType));
}

EXPORT VkResult
vkCreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci,
	       const VkAllocationCallbacks *a, VkDevice *dev)
{
	const char *rec = getenv("FAKE_VULKAN_CREATED");
	uint32_t i;
	size_t k;

	for (i = 0; i < ci->enabledExtensionCount; i++) {
		for (k = 0; k < NEXT; k++)
			if (!strcmp(ci->ppEnabledExtensionNames[i], extensions[k]))
				break;
		if (k == NEXT)
			return VK_ERROR_EXTENSION_NOT_PRESENT;
	}
	if (rec && *rec) {
		FILE *fp = fopen(rec, "a");

		if (fp) {
			for (i = 0; i < ci->enabledExtensionCount; i++)
				fprintf(fp, "%s\n", ci->ppEnabledExtensionNames[i]);
			fclose(fp);
		}
	}
	*dev = (VkDevice)(void *)&device_token;
	return VK_SUCCESS;
}

EXPORT void
vkDestroyDevice(VkDevice dev, const VkAllocationCallbacks *a)
{
}

EXPORT PFN_vkVoidFunction
vkGetDeviceProcAddr(VkDevice dev, const char *name)
{
	if (!strcmp(name, "vkDestroyDevice"))
		return (PFN_vkVoidFunction)vkDestroyDevice;
	return NULL;
}

EXPORT PFN_vkVoidFunction
vkGetInstanceProcAddr(VkInstance inst, const char *name)
{
	static const struct {
		const char *name;
		PFN_vkVoidFunction fn;
		int global;            /* answered with a NULL instance too */
	} table[] = {
#define G(f) { #f, (PFN_vkVoidFunction)f, 1 }
#define I(f) { #f, (PFN_vkVoidFunction)f, 0 }
		G(vkGetInstanceProcAddr), G(vkEnumerateInstanceVersion),
		G(vkCreateInstance),
		I(vkDestroyInstance), I(vkEnumeratePhysicalDevices),
		I(vkEnumerateDeviceExtensionProperties),
		I(vkGetPhysicalDeviceProperties), I(vkGetPhysicalDeviceProperties2),
		I(vkGetPhysicalDeviceFeatures2), I(vkCreateDevice),
		I(vkGetDeviceProcAddr), I(vkDestroyDevice),
		/* the KHR alias of a core function: the core trampoline,
		 * exported, so it comes back as the preloaded one (the trap) */
		{ "vkGetPhysicalDeviceFeatures2KHR",
		  (PFN_vkVoidFunction)vkGetPhysicalDeviceFeatures2, 0 },
		{ "vkGetPhysicalDeviceProperties2KHR",
		  (PFN_vkVoidFunction)properties2_khr, 0 },
		{ "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
		  (PFN_vkVoidFunction)coopmat_khr, 0 },
		{ "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV",
		  (PFN_vkVoidFunction)coopmat_nv, 0 },
		{ "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV",
		  (PFN_vkVoidFunction)flex_nv, 0 },
#undef G
#undef I
	};
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(name, table[i].name))
			return inst || table[i].global ? table[i].fn : NULL;
	return NULL;
}
