/*
 * What the Vulkan capability shim does to the driver's answers: one table
 * of extensions and one of feature bits, each naming the capability that
 * hides it. The same feature table clears the bits of a query and gates
 * vkCreateDevice, so a client can never enable what a query hid.
 */
#include "vkcaps.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	unsigned cap;
} hidden_exts[] = {
	{ VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME, VKCAPS_COOPMAT },
	{ VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME, VKCAPS_COOPMAT },
	{ VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME, VKCAPS_COOPMAT2 },
	{ VK_NV_COOPERATIVE_MATRIX_DECODE_VECTOR_EXTENSION_NAME, VKCAPS_COOPMAT2 },
	{ VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME, VKCAPS_INT_DOT },
	{ VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME, VKCAPS_BF16 },
	{ VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME, VKCAPS_SGSC },
	{ VK_VALVE_SHADER_MIXED_FLOAT_DOT_PRODUCT_EXTENSION_NAME, VKCAPS_DOT2 },
	/* VK_KHR_shader_float16_int8 stays: it also carries shaderInt8, and
	 * ggml's fp16 needs its shaderFloat16 bit, which is cleared. */
};
#define NEXTS (sizeof(hidden_exts) / sizeof(hidden_exts[0]))

/* One VkBool32 of a feature structure and the capabilities that hide it. */
struct feature_bit {
	VkStructureType stype;
	size_t offset;
	const char *type, *field;
	unsigned caps;
};

#define F(st, type, field, caps) \
	{ VK_STRUCTURE_TYPE_##st, offsetof(type, field), #type, #field, caps }
static const struct feature_bit feature_bits[] = {
	F(PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, VkPhysicalDeviceVulkan12Features,
	  shaderFloat16, VKCAPS_FP16),
	F(PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
	  VkPhysicalDeviceShaderFloat16Int8Features, shaderFloat16, VKCAPS_FP16),
	F(PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, VkPhysicalDeviceVulkan13Features,
	  shaderIntegerDotProduct, VKCAPS_INT_DOT),
	F(PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, VkPhysicalDeviceVulkan13Features,
	  subgroupSizeControl, VKCAPS_SGSC),
	F(PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, VkPhysicalDeviceVulkan13Features,
	  computeFullSubgroups, VKCAPS_SGSC),
	F(PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES,
	  VkPhysicalDeviceShaderIntegerDotProductFeatures,
	  shaderIntegerDotProduct, VKCAPS_INT_DOT),
	F(PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
	  VkPhysicalDeviceSubgroupSizeControlFeatures, subgroupSizeControl,
	  VKCAPS_SGSC),
	F(PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
	  VkPhysicalDeviceSubgroupSizeControlFeatures, computeFullSubgroups,
	  VKCAPS_SGSC),
	F(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
	  VkPhysicalDeviceCooperativeMatrixFeaturesKHR, cooperativeMatrix,
	  VKCAPS_COOPMAT),
	F(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
	  VkPhysicalDeviceCooperativeMatrixFeaturesKHR,
	  cooperativeMatrixRobustBufferAccess, VKCAPS_COOPMAT),
	F(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
	  VkPhysicalDeviceCooperativeMatrixFeaturesNV, cooperativeMatrix,
	  VKCAPS_COOPMAT),
	F(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
	  VkPhysicalDeviceCooperativeMatrixFeaturesNV,
	  cooperativeMatrixRobustBufferAccess, VKCAPS_COOPMAT),
#define CM2(field) F(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV, \
	VkPhysicalDeviceCooperativeMatrix2FeaturesNV, field, VKCAPS_COOPMAT2)
	CM2(cooperativeMatrixWorkgroupScope),
	CM2(cooperativeMatrixFlexibleDimensions),
	CM2(cooperativeMatrixReductions),
	CM2(cooperativeMatrixConversions),
	CM2(cooperativeMatrixPerElementOperations),
	CM2(cooperativeMatrixTensorAddressing),
	CM2(cooperativeMatrixBlockLoads),
#undef CM2
	F(PHYSICAL_DEVICE_COOPERATIVE_MATRIX_DECODE_VECTOR_FEATURES_NV,
	  VkPhysicalDeviceCooperativeMatrixDecodeVectorFeaturesNV,
	  cooperativeMatrixDecodeVector, VKCAPS_COOPMAT2),
	F(PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR,
	  VkPhysicalDeviceShaderBfloat16FeaturesKHR, shaderBFloat16Type,
	  VKCAPS_BF16),
	F(PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR,
	  VkPhysicalDeviceShaderBfloat16FeaturesKHR, shaderBFloat16DotProduct,
	  VKCAPS_BF16),
	F(PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR,
	  VkPhysicalDeviceShaderBfloat16FeaturesKHR,
	  shaderBFloat16CooperativeMatrix, VKCAPS_BF16 | VKCAPS_COOPMAT),
#define DOT2(field, caps) F(PHYSICAL_DEVICE_SHADER_MIXED_FLOAT_DOT_PRODUCT_FEATURES_VALVE, \
	VkPhysicalDeviceShaderMixedFloatDotProductFeaturesVALVE, field, caps)
	DOT2(shaderMixedFloatDotProductFloat16AccFloat32, VKCAPS_DOT2 | VKCAPS_FP16),
	DOT2(shaderMixedFloatDotProductFloat16AccFloat16, VKCAPS_DOT2 | VKCAPS_FP16),
	DOT2(shaderMixedFloatDotProductBFloat16Acc, VKCAPS_DOT2 | VKCAPS_BF16),
	DOT2(shaderMixedFloatDotProductFloat8AccFloat32, VKCAPS_DOT2),
#undef DOT2
};
#undef F
#define NBITS (sizeof(feature_bits) / sizeof(feature_bits[0]))

unsigned
vkcaps_ext_cap(const char *name)
{
	size_t i;

	for (i = 0; i < NEXTS; i++)
		if (!strcmp(name, hidden_exts[i].name))
			return hidden_exts[i].cap;
	return 0;
}

uint32_t
vkcaps_filter_extensions(unsigned hide, VkExtensionProperties *p, uint32_t n)
{
	uint32_t i, k = 0;

	for (i = 0; i < n; i++) {
		char name[VK_MAX_EXTENSION_NAME_SIZE + 1];

		memcpy(name, p[i].extensionName, VK_MAX_EXTENSION_NAME_SIZE);
		name[VK_MAX_EXTENSION_NAME_SIZE] = '\0';
		if (vkcaps_ext_cap(name) & hide)
			continue;
		if (k != i)
			p[k] = p[i];
		k++;
	}
	return k;
}

/* A link of a pNext chain; the chain is walked by sType alone. */
struct link {
	VkStructureType sType;
	struct link *pNext;
};

void
vkcaps_clear_features(unsigned hide, void *chain)
{
	struct link *s;
	size_t i;

	if (!hide)
		return;
	for (s = chain; s; s = s->pNext)
		for (i = 0; i < NBITS; i++)
			if (feature_bits[i].stype == s->sType &&
			    (feature_bits[i].caps & hide))
				*(VkBool32 *)((char *)s +
					      feature_bits[i].offset) = VK_FALSE;
}

void
vkcaps_lower_limits(const struct vkcaps_config *c,
		    VkPhysicalDeviceProperties *p)
{
	if (c->max_shared && p->limits.maxComputeSharedMemorySize > c->max_shared)
		p->limits.maxComputeSharedMemorySize = c->max_shared;
}

/* Sets the VkBool32 members in [from, to) of s to VK_FALSE. */
static void
clear_range(void *s, size_t from, size_t to)
{
	size_t off;

	for (off = from; off + sizeof(VkBool32) <= to; off += sizeof(VkBool32))
		*(VkBool32 *)((char *)s + off) = VK_FALSE;
}

void
vkcaps_lower_properties(const struct vkcaps_config *c, void *chain)
{
	unsigned h = c->hide;
	struct link *s;

	for (s = chain; s; s = s->pNext) {
		switch (s->sType) {
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2:
			vkcaps_lower_limits(c, &((VkPhysicalDeviceProperties2 *)
						 (void *)s)->properties);
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES:
			if (h & VKCAPS_SGSC)
				((VkPhysicalDeviceVulkan13Properties *)(void *)s)
					->requiredSubgroupSizeStages = 0;
			if (h & VKCAPS_INT_DOT)
				clear_range(s, offsetof(VkPhysicalDeviceVulkan13Properties,
					integerDotProduct8BitUnsignedAccelerated),
					offsetof(VkPhysicalDeviceVulkan13Properties,
					integerDotProductAccumulatingSaturating64BitMixedSignednessAccelerated)
					+ sizeof(VkBool32));
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES:
			if (h & VKCAPS_SGSC)
				((VkPhysicalDeviceSubgroupSizeControlProperties *)
				 (void *)s)->requiredSubgroupSizeStages = 0;
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES:
			if (h & VKCAPS_INT_DOT)
				clear_range(s, offsetof(VkPhysicalDeviceShaderIntegerDotProductProperties,
					integerDotProduct8BitUnsignedAccelerated),
					sizeof(VkPhysicalDeviceShaderIntegerDotProductProperties));
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR:
			if (h & VKCAPS_COOPMAT)
				((VkPhysicalDeviceCooperativeMatrixPropertiesKHR *)
				 (void *)s)->cooperativeMatrixSupportedStages = 0;
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV:
			if (h & VKCAPS_COOPMAT)
				((VkPhysicalDeviceCooperativeMatrixPropertiesNV *)
				 (void *)s)->cooperativeMatrixSupportedStages = 0;
			break;
		case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV:
			if (h & VKCAPS_COOPMAT2) {
				VkPhysicalDeviceCooperativeMatrix2PropertiesNV *p =
					(void *)s;
				p->cooperativeMatrixWorkgroupScopeMaxWorkgroupSize = 0;
				p->cooperativeMatrixFlexibleDimensionsMaxDimension = 0;
				p->cooperativeMatrixWorkgroupScopeReservedSharedMemory = 0;
			}
			break;
		default:
			break;
		}
	}
}

static int
has_type(const uint32_t *t, uint32_t type)
{
	return t[0] == type || t[1] == type || t[2] == type || t[3] == type;
}

uint32_t
vkcaps_filter_shapes(unsigned hide, unsigned cap, void *p, uint32_t n,
		     size_t size, size_t types)
{
	uint32_t i, k = 0;
	char *base = p;

	if (hide & cap)
		return 0;
	for (i = 0; i < n; i++) {
		const uint32_t *t = (const uint32_t *)(void *)(base + i * size + types);

		if ((hide & VKCAPS_FP16) &&
		    has_type(t, VK_COMPONENT_TYPE_FLOAT16_KHR))
			continue;
		if ((hide & VKCAPS_BF16) &&
		    has_type(t, VK_COMPONENT_TYPE_BFLOAT16_KHR))
			continue;
		if (k != i)
			memmove(base + k * size, base + i * size, size);
		k++;
	}
	return k;
}

/* Whether a feature structure asks for a hidden bit; its entry or NULL. */
static const struct feature_bit *
asks_hidden(unsigned hide, const struct link *s)
{
	size_t i;

	for (i = 0; i < NBITS; i++)
		if (feature_bits[i].stype == s->sType &&
		    (feature_bits[i].caps & hide) &&
		    *(const VkBool32 *)((const char *)s + feature_bits[i].offset))
			return &feature_bits[i];
	return NULL;
}

VkResult
vkcaps_gate(unsigned hide, const VkDeviceCreateInfo *ci, char *why, size_t n)
{
	const struct link *s;
	uint32_t i;

	if (!hide || !ci)
		return VK_SUCCESS;
	for (i = 0; i < ci->enabledExtensionCount; i++) {
		const char *e = ci->ppEnabledExtensionNames[i];
		unsigned cap = e ? vkcaps_ext_cap(e) & hide : 0;

		if (cap) {
			snprintf(why, n, "extension '%s' is hidden (%s)", e,
				 vkcaps_cap_name(cap));
			return VK_ERROR_EXTENSION_NOT_PRESENT;
		}
	}
	for (s = ci->pNext; s; s = s->pNext) {
		const struct feature_bit *f = asks_hidden(hide, s);

		if (f) {
			unsigned cap = f->caps & hide;

			snprintf(why, n, "feature '%s' of %s is hidden (%s)",
				 f->field, f->type,
				 vkcaps_cap_name(cap & -cap));
			return VK_ERROR_FEATURE_NOT_PRESENT;
		}
	}
	return VK_SUCCESS;
}
