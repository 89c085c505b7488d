#ifndef VKCAPS_H
#define VKCAPS_H

/*
 * VulkanCapabilities: the decisions of the Vulkan capability shim, free of
 * any loader work so that they can be tested on their own. The shim
 * (vkcaps_shim.c) calls them on what the real driver answered; the probe
 * (vulkan-capabilities.c) uses the names and the configuration parser.
 *
 * The shim only ever hides: it clears feature and property bits, removes
 * extensions from the list and lowers limits. It never sets a bit, adds
 * an extension or raises a limit, so it can never advertise what the
 * driver lacks. VK_KHR_16bit_storage is never hidden: ggml refuses a
 * device without it.
 */

#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

/* Every extension the shim hides must be known to the headers (Debian
 * sid's libvulkan-dev 1.4.363 has them; Debian 12's 1.3.239 does not). */
#if !defined(VK_VALVE_shader_mixed_float_dot_product) || \
    !defined(VK_NV_cooperative_matrix_decode_vector) || \
    !defined(VK_KHR_shader_bfloat16) || !defined(VK_NV_cooperative_matrix2)
#error "Vulkan headers too old; sh bench/scripts/llama-bench.sh --vulkan provides new ones"
#endif

/* The capabilities that can be hidden, as bits of a mask. */
enum {
	VKCAPS_COOPMAT = 1u << 0,   /* VK_KHR_cooperative_matrix (and NV's) */
	VKCAPS_COOPMAT2 = 1u << 1,  /* VK_NV_cooperative_matrix2, decode_vector */
	VKCAPS_INT_DOT = 1u << 2,   /* VK_KHR_shader_integer_dot_product */
	VKCAPS_FP16 = 1u << 3,      /* shaderFloat16 (fp16 arithmetic) */
	VKCAPS_BF16 = 1u << 4,      /* VK_KHR_shader_bfloat16 */
	VKCAPS_SGSC = 1u << 5,      /* VK_EXT_subgroup_size_control */
	VKCAPS_DOT2 = 1u << 6,      /* VK_VALVE_shader_mixed_float_dot_product */
	VKCAPS_ALL = (1u << 7) - 1,
};

/* The environment variables of the configuration. */
#define VKCAPS_ENV_PROFILE "VULKAN_CAPS_PROFILE"
#define VKCAPS_ENV_HIDE "VULKAN_CAPS_HIDE"
#define VKCAPS_ENV_MAX_SHARED "VULKAN_CAPS_MAX_SHARED_MEMORY"

/* The prefix of every line the shim writes to stderr. */
#define VKCAPS_TAG "[VulkanCapabilities]"

/* The name of capability bit `bit` ("coopmat", "int-dot", ...), or NULL. */
const char *vkcaps_cap_name(unsigned bit);

/* Every capability name, ", "-separated, in bit order (for messages). */
const char *vkcaps_cap_names(void);

struct vkcaps_config {
	char profile[8];            /* "stock", "shim" or "hide" */
	unsigned hide;              /* VKCAPS_* bits */
	uint32_t max_shared;        /* maxComputeSharedMemorySize cap; 0: none */
	char why[320];              /* when the parse failed: why */
};

/*
 * Reads a configuration from the values of the three variables (NULL or
 * "" meaning unset):
 *
 *   VULKAN_CAPS_PROFILE=stock   hide every capability above
 *   VULKAN_CAPS_PROFILE=shim    hide nothing (the driver's own answers)
 *   VULKAN_CAPS_HIDE=a,b,...    hide exactly these ("all" for every one)
 *   VULKAN_CAPS_MAX_SHARED_MEMORY=N   lower maxComputeSharedMemorySize to
 *                               N bytes (stock or a hide list only)
 *
 * PROFILE and HIDE exclude each other. Returns 0 with *c filled in, or -1
 * with c->why saying what is wrong (an unset configuration included);
 * the shim then answers exactly as the driver does.
 */
int vkcaps_config_parse(const char *profile, const char *hide,
			const char *max_shared, struct vkcaps_config *c);

/*
 * The configuration as the marker line shows it, e.g.
 * "profile=stock hide=coopmat,coopmat2,... maxSharedMemory=16384" (no
 * maxSharedMemory when unset; "hide=none" for the shim profile).
 */
void vkcaps_describe(const struct vkcaps_config *c, char *out, size_t n);

/* The capability bit that hides extension `name`, or 0. */
unsigned vkcaps_ext_cap(const char *name);

/*
 * Removes the extensions hidden by `hide` from p[0..n), keeping the order
 * of the rest; returns how many are left.
 */
uint32_t vkcaps_filter_extensions(unsigned hide, VkExtensionProperties *p,
				  uint32_t n);

/*
 * Clears the feature bits hidden by `hide` in a feature chain (a
 * VkPhysicalDeviceFeatures2 or any structure that starts a pNext chain).
 */
void vkcaps_clear_features(unsigned hide, void *chain);

/* Lowers the limits of one VkPhysicalDeviceProperties. */
void vkcaps_lower_limits(const struct vkcaps_config *c,
			 VkPhysicalDeviceProperties *p);

/*
 * Lowers a property chain (a VkPhysicalDeviceProperties2 and what it
 * chains): limits, subgroup-size-control stages, the integer dot product
 * "accelerated" bits, the cooperative matrix stages and sizes.
 */
void vkcaps_lower_properties(const struct vkcaps_config *c, void *chain);

/*
 * Filters a cooperative-matrix shape list in place (the elements are
 * `size` bytes apart; the four component types are at `types`, four
 * consecutive 32-bit enums): all of them when `cap` (VKCAPS_COOPMAT or
 * VKCAPS_COOPMAT2) is hidden, those with a float16 type when fp16 is,
 * those with a bfloat16 type when bf16 is. Returns how many are left.
 */
uint32_t vkcaps_filter_shapes(unsigned hide, unsigned cap, void *p,
			      uint32_t n, size_t size, size_t types);

/*
 * The device-creation gate: whether a client asks for a hidden extension
 * or feature. Returns VK_SUCCESS, or VK_ERROR_EXTENSION_NOT_PRESENT /
 * VK_ERROR_FEATURE_NOT_PRESENT (what a driver answers for what it does not
 * support) with `why` naming the first one asked for.
 */
VkResult vkcaps_gate(unsigned hide, const VkDeviceCreateInfo *ci, char *why,
		     size_t n);

#endif
