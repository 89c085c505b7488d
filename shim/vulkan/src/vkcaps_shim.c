/*
 * VulkanCapabilities: a process-scoped Vulkan capability shim, injected
 * with LD_PRELOAD. It exports the entry points through which a Vulkan
 * client learns what a device can do (ggml's libggml-vulkan imports
 * vkGetInstanceProcAddr and vkGetPhysicalDeviceFeatures2 and looks the
 * rest up through vkGetInstanceProcAddr) and answers them from the real
 * driver's answers, with the configured capabilities hidden.
 *
 * How "next" is found, and the traps it avoids:
 *  - The Vulkan loader is found with dlopen("libvulkan.so.1") and dlsym
 *    on that handle, which returns the loader's own definitions. RTLD_NEXT
 *    would not do: ggml's backend is dlopen'ed, the loader is not in the
 *    global scope at our position.
 *  - The loader is not linked -Bsymbolic: its vkGetInstanceProcAddr hands
 *    back the address of its exported trampolines, which the dynamic
 *    linker resolves to *our* definitions of the same names. Every pointer
 *    the loader gives is checked against our own functions, so we never
 *    call ourselves as "next"; for a KHR alias that comes back as ours,
 *    the core function's next is used.
 *  - LD_PRELOAD through a shell wrapper loads this library into /bin/sh
 *    too. There is no constructor: the configuration is read, the loader
 *    opened and the marker printed on the first call of a Vulkan entry
 *    point, once per process.
 *
 * A missing or malformed configuration leaves every answer exactly as the
 * driver gave it and says so in one stderr line.
 */
#define _GNU_SOURCE
#include "vkcaps.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* The entry points we answer; a hook's "next" is the driver's. */
enum {
	H_GIPA, H_FEATURES2, H_FEATURES2_KHR, H_PROPERTIES, H_PROPERTIES2,
	H_PROPERTIES2_KHR, H_ENUM_EXT, H_CREATE_DEVICE, H_COOPMAT_KHR,
	H_COOPMAT_NV, H_FLEX_NV, H_COUNT
};

static void features2_khr(VkPhysicalDevice, VkPhysicalDeviceFeatures2 *);
static void properties2_khr(VkPhysicalDevice, VkPhysicalDeviceProperties2 *);
static VkResult coopmat_khr(VkPhysicalDevice, uint32_t *,
			    VkCooperativeMatrixPropertiesKHR *);
static VkResult coopmat_nv(VkPhysicalDevice, uint32_t *,
			   VkCooperativeMatrixPropertiesNV *);
static VkResult flex_nv(VkPhysicalDevice, uint32_t *,
			VkCooperativeMatrixFlexibleDimensionsPropertiesNV *);

struct hook {
	const char *name;
	PFN_vkVoidFunction ours;
	int exported;          /* next comes from dlsym on the loader */
	int alias_of;          /* -1, or the core hook whose next is a fallback */
	void *next;            /* read and written with __atomic builtins */
};

static struct hook hooks[H_COUNT] = {
	[H_GIPA] = { "vkGetInstanceProcAddr",
		(PFN_vkVoidFunction)vkGetInstanceProcAddr, 1, -1, NULL },
	[H_FEATURES2] = { "vkGetPhysicalDeviceFeatures2",
		(PFN_vkVoidFunction)vkGetPhysicalDeviceFeatures2, 1, -1, NULL },
	[H_FEATURES2_KHR] = { "vkGetPhysicalDeviceFeatures2KHR",
		(PFN_vkVoidFunction)features2_khr, 0, H_FEATURES2, NULL },
	[H_PROPERTIES] = { "vkGetPhysicalDeviceProperties",
		(PFN_vkVoidFunction)vkGetPhysicalDeviceProperties, 1, -1, NULL },
	[H_PROPERTIES2] = { "vkGetPhysicalDeviceProperties2",
		(PFN_vkVoidFunction)vkGetPhysicalDeviceProperties2, 1, -1, NULL },
	[H_PROPERTIES2_KHR] = { "vkGetPhysicalDeviceProperties2KHR",
		(PFN_vkVoidFunction)properties2_khr, 0, H_PROPERTIES2, NULL },
	[H_ENUM_EXT] = { "vkEnumerateDeviceExtensionProperties",
		(PFN_vkVoidFunction)vkEnumerateDeviceExtensionProperties, 1, -1,
		NULL },
	[H_CREATE_DEVICE] = { "vkCreateDevice",
		(PFN_vkVoidFunction)vkCreateDevice, 1, -1, NULL },
	[H_COOPMAT_KHR] = { "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
		(PFN_vkVoidFunction)coopmat_khr, 0, -1, NULL },
	[H_COOPMAT_NV] = { "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV",
		(PFN_vkVoidFunction)coopmat_nv, 0, -1, NULL },
	[H_FLEX_NV] = {
		"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV",
		(PFN_vkVoidFunction)flex_nv, 0, -1, NULL },
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct vkcaps_config cfg;
static int active;                 /* configured, and the loader found */
static const char *status = "";    /* "enabled" or "disabled" after init */
static char config_text[400];      /* the marker's description, or why not */

static const char *
process_name(void)
{
	return program_invocation_short_name && *program_invocation_short_name ?
		program_invocation_short_name : "?";
}

/* One stderr line, written with one write(2) so lines never interleave. */
static void
say(const char *fmt, ...)
{
	char line[640];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	while (write(STDERR_FILENO, line, (size_t)n) < 0 && errno == EINTR)
		;
}

static int
is_ours(const void *p)
{
	size_t i;

	for (i = 0; i < H_COUNT; i++)
		if (p == (const void *)hooks[i].ours)
			return 1;
	return 0;
}

static void *
next_of(int h)
{
	void *p = __atomic_load_n(&hooks[h].next, __ATOMIC_ACQUIRE);

	if (!p && hooks[h].alias_of >= 0)
		p = __atomic_load_n(&hooks[hooks[h].alias_of].next,
				    __ATOMIC_ACQUIRE);
	return p;
}

static void
disable(const char *why)
{
	active = 0;
	status = "disabled";
	snprintf(config_text, sizeof(config_text), "%s", why);
	say(VKCAPS_TAG " Disabled for %s: %s; leaving the driver's answers "
	    "unchanged", process_name(), why);
}

/* Opens the loader and resolves the exported hooks' next; 0 or -1. */
static int
find_loader(char *why, size_t n)
{
	void *h = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!h) {
		const char *e = dlerror();

		snprintf(why, n, "cannot load the Vulkan loader "
			 "(libvulkan.so.1): %s", e ? e : "not found");
		return -1;
	}
	for (i = 0; i < H_COUNT; i++) {
		void *p;

		if (!hooks[i].exported)
			continue;
		p = dlsym(h, hooks[i].name);
		if (p && is_ours(p)) {
			snprintf(why, n, "libvulkan.so.1 resolves '%s' to this "
				 "library itself, not to a Vulkan loader",
				 hooks[i].name);
			return -1;
		}
		__atomic_store_n(&hooks[i].next, p, __ATOMIC_RELEASE);
	}
	if (!hooks[H_GIPA].next) {
		snprintf(why, n, "libvulkan.so.1 has no vkGetInstanceProcAddr");
		return -1;
	}
	return 0;
}

static void
init_once(void)
{
	char why[400];
	int ok;

	ok = vkcaps_config_parse(getenv(VKCAPS_ENV_PROFILE),
				 getenv(VKCAPS_ENV_HIDE),
				 getenv(VKCAPS_ENV_MAX_SHARED), &cfg) == 0;
	if (find_loader(why, sizeof(why)) < 0) {
		/* Nothing to forward to: every entry point fails as a
		 * process without a driver would see it. */
		for (size_t i = 0; i < H_COUNT; i++)
			__atomic_store_n(&hooks[i].next, NULL, __ATOMIC_RELEASE);
		disable(why);
		return;
	}
	if (!ok) {
		disable(cfg.why);
		return;
	}
	vkcaps_describe(&cfg, config_text, sizeof(config_text));
	active = 1;
	status = "enabled";
	say(VKCAPS_TAG " Enabled for %s (%s)", process_name(), config_text);
}

static void
init(void)
{
	pthread_once(&once, init_once);
}

/* ---- the exported entry points -------------------------------------------- */

EXPORT PFN_vkVoidFunction
vkGetInstanceProcAddr(VkInstance instance, const char *name)
{
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkVoidFunction r;
	int i;

	init();
	gipa = (PFN_vkGetInstanceProcAddr)next_of(H_GIPA);
	if (!gipa)
		return NULL;
	r = gipa(instance, name);
	if (!name || !r)
		return r;    /* what the driver lacks is never advertised */
	for (i = 0; i < H_COUNT; i++)
		if (!strcmp(name, hooks[i].name))
			break;
	if (i == H_COUNT)
		return r;
	if (i == H_GIPA)
		return (PFN_vkVoidFunction)vkGetInstanceProcAddr;
	/* The loader's own trampoline becomes next, unless it is ours. */
	if (!hooks[i].exported && !is_ours((void *)r)) {
		void *expected = NULL;

		__atomic_compare_exchange_n(&hooks[i].next, &expected, (void *)r,
					    0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	}
	if (!next_of(i))
		return NULL;   /* nothing to forward to */
	return active ? hooks[i].ours : r;
}

static void
features2(int h, VkPhysicalDevice pd, VkPhysicalDeviceFeatures2 *f)
{
	PFN_vkGetPhysicalDeviceFeatures2 next;

	init();
	next = (PFN_vkGetPhysicalDeviceFeatures2)next_of(h);
	if (!next)
		return;
	next(pd, f);
	if (active)
		vkcaps_clear_features(cfg.hide, f);
}

EXPORT void
vkGetPhysicalDeviceFeatures2(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2 *f)
{
	features2(H_FEATURES2, pd, f);
}

static void
features2_khr(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2 *f)
{
	features2(H_FEATURES2_KHR, pd, f);
}

EXPORT void
vkGetPhysicalDeviceProperties(VkPhysicalDevice pd, VkPhysicalDeviceProperties *p)
{
	PFN_vkGetPhysicalDeviceProperties next;

	init();
	next = (PFN_vkGetPhysicalDeviceProperties)next_of(H_PROPERTIES);
	if (!next)
		return;
	next(pd, p);
	if (active)
		vkcaps_lower_limits(&cfg, p);
}

static void
properties2(int h, VkPhysicalDevice pd, VkPhysicalDeviceProperties2 *p)
{
	PFN_vkGetPhysicalDeviceProperties2 next;

	init();
	next = (PFN_vkGetPhysicalDeviceProperties2)next_of(h);
	if (!next)
		return;
	next(pd, p);
	if (active)
		vkcaps_lower_properties(&cfg, p);
}

EXPORT void
vkGetPhysicalDeviceProperties2(VkPhysicalDevice pd,
			       VkPhysicalDeviceProperties2 *p)
{
	properties2(H_PROPERTIES2, pd, p);
}

static void
properties2_khr(VkPhysicalDevice pd, VkPhysicalDeviceProperties2 *p)
{
	properties2(H_PROPERTIES2_KHR, pd, p);
}

/*
 * The two-call idiom over a filtered list: with out == NULL, *count is set
 * to how many there are; else at most *count are copied (the caller's
 * sType and pNext of each element are kept when `header` is set) and
 * VK_INCOMPLETE says there were more. all[0..n) is the filtered list.
 */
static VkResult
hand_out(const void *all, uint32_t n, size_t size, int header,
	 uint32_t *count, void *out)
{
	uint32_t k, i;
	size_t skip = header ? sizeof(VkBaseOutStructure) : 0;

	if (!out) {
		*count = n;
		return VK_SUCCESS;
	}
	k = *count < n ? *count : n;
	for (i = 0; i < k; i++)
		memcpy((char *)out + i * size + skip,
		       (const char *)all + i * size + skip, size - skip);
	*count = k;
	return k < n ? VK_INCOMPLETE : VK_SUCCESS;
}

/*
 * Asks a list query for its whole list (retrying while the driver says
 * VK_INCOMPLETE); *all is malloc'd, each element's header set to stype
 * when stype is not 0. Returns the driver's error, or VK_SUCCESS.
 */
typedef VkResult (*list_fn)(void *ctx, uint32_t *count, void *out);

static VkResult
whole_list(list_fn fn, void *ctx, size_t size, VkStructureType stype,
	   void **all, uint32_t *n)
{
	VkResult r;
	uint32_t i;

	*all = NULL;
	for (;;) {
		uint32_t want = 0;
		void *buf;

		r = fn(ctx, &want, NULL);
		if (r != VK_SUCCESS && r != VK_INCOMPLETE)
			return r;
		buf = calloc(want ? want : 1, size);
		if (!buf)
			return VK_ERROR_OUT_OF_HOST_MEMORY;
		for (i = 0; stype && i < want; i++)
			((VkBaseOutStructure *)(void *)((char *)buf + i * size))
				->sType = stype;
		*n = want;
		r = fn(ctx, n, buf);
		if (r == VK_SUCCESS) {
			*all = buf;
			return VK_SUCCESS;
		}
		free(buf);
		if (r != VK_INCOMPLETE)
			return r;
	}
}

struct ext_ctx {
	PFN_vkEnumerateDeviceExtensionProperties next;
	VkPhysicalDevice pd;
	const char *layer;
};

static VkResult
ext_list(void *ctx, uint32_t *count, void *out)
{
	struct ext_ctx *c = ctx;

	return c->next(c->pd, c->layer, count, out);
}

EXPORT VkResult
vkEnumerateDeviceExtensionProperties(VkPhysicalDevice pd, const char *layer,
				     uint32_t *count, VkExtensionProperties *out)
{
	struct ext_ctx c;
	void *all;
	uint32_t n;
	VkResult r;

	init();
	c.next = (PFN_vkEnumerateDeviceExtensionProperties)next_of(H_ENUM_EXT);
	if (!c.next)
		return VK_ERROR_INITIALIZATION_FAILED;
	if (!active || !cfg.hide)
		return c.next(pd, layer, count, out);
	c.pd = pd;
	c.layer = layer;
	r = whole_list(ext_list, &c, sizeof(VkExtensionProperties), 0, &all, &n);
	if (r != VK_SUCCESS)
		return r;
	n = vkcaps_filter_extensions(cfg.hide, all, n);
	r = hand_out(all, n, sizeof(VkExtensionProperties), 0, count, out);
	free(all);
	return r;
}

EXPORT VkResult
vkCreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci,
	       const VkAllocationCallbacks *alloc, VkDevice *dev)
{
	PFN_vkCreateDevice next;
	char why[256];
	VkResult r;

	init();
	next = (PFN_vkCreateDevice)next_of(H_CREATE_DEVICE);
	if (!next)
		return VK_ERROR_INITIALIZATION_FAILED;
	if (active && (r = vkcaps_gate(cfg.hide, ci, why, sizeof(why))) !=
	    VK_SUCCESS) {
		say(VKCAPS_TAG " Refused vkCreateDevice for %s: %s by %s",
		    process_name(), why, config_text);
		return r;
	}
	return next(pd, ci, alloc, dev);
}

/* ---- cooperative-matrix shape lists -------------------------------------- */

struct shape_ctx {
	VkResult (*next)(VkPhysicalDevice, uint32_t *, void *);
	VkPhysicalDevice pd;
};

static VkResult
shape_list(void *ctx, uint32_t *count, void *out)
{
	struct shape_ctx *c = ctx;

	return c->next(c->pd, count, out);
}

/* A shape query: the driver's list less the hidden shapes. */
static VkResult
shapes(int h, unsigned cap, VkStructureType stype, size_t size, size_t types,
       VkPhysicalDevice pd, uint32_t *count, void *out)
{
	struct shape_ctx c;
	void *all;
	uint32_t n;
	VkResult r;

	init();
	c.next = (VkResult (*)(VkPhysicalDevice, uint32_t *, void *))next_of(h);
	if (!c.next)
		return VK_ERROR_INITIALIZATION_FAILED;
	if (!active || !(cfg.hide & (cap | VKCAPS_FP16 | VKCAPS_BF16)))
		return c.next(pd, count, out);
	c.pd = pd;
	r = whole_list(shape_list, &c, size, stype, &all, &n);
	if (r != VK_SUCCESS)
		return r;
	n = vkcaps_filter_shapes(cfg.hide, cap, all, n, size, types);
	r = hand_out(all, n, size, 1, count, out);
	free(all);
	return r;
}

static VkResult
coopmat_khr(VkPhysicalDevice pd, uint32_t *count,
	    VkCooperativeMatrixPropertiesKHR *out)
{
	return shapes(H_COOPMAT_KHR, VKCAPS_COOPMAT,
		      VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR,
		      sizeof(*out), offsetof(VkCooperativeMatrixPropertiesKHR,
					     AType), pd, count, out);
}

static VkResult
coopmat_nv(VkPhysicalDevice pd, uint32_t *count,
	   VkCooperativeMatrixPropertiesNV *out)
{
	return shapes(H_COOPMAT_NV, VKCAPS_COOPMAT,
		      VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV,
		      sizeof(*out), offsetof(VkCooperativeMatrixPropertiesNV,
					     AType), pd, count, out);
}

static VkResult
flex_nv(VkPhysicalDevice pd, uint32_t *count,
	VkCooperativeMatrixFlexibleDimensionsPropertiesNV *out)
{
	return shapes(H_FLEX_NV, VKCAPS_COOPMAT2,
		      VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV,
		      sizeof(*out),
		      offsetof(VkCooperativeMatrixFlexibleDimensionsPropertiesNV,
			       AType), pd, count, out);
}

/* ---- state, for the probe ------------------------------------------------ */

/* "enabled" or "disabled" (initialising first, as a Vulkan call would). */
EXPORT const char *
vulkan_capabilities_status(void)
{
	init();
	return status;
}

/* The marker's description ("profile=stock hide=..."), or why disabled. */
EXPORT const char *
vulkan_capabilities_config(void)
{
	init();
	return config_text;
}
