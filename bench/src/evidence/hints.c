#define _POSIX_C_SOURCE 200809L
#include "evidence/hints.h"
#include "evidence/caps.h"
#include "base/json.h"
#include "base/util.h"

#include <string.h>

enum hint_injection
hint_injection_of(const char *env_json)
{
	struct json *env;
	enum hint_injection how = HINT_INJECT_NONE;
	size_t end;

	if (!env_json)
		return how;
	env = json_parse_prefix(env_json, strlen(env_json), &end);
	if (json_type(env) == JSON_OBJECT) {
		if (json_get_str(env, "DYLD_INSERT_LIBRARIES"))
			how = HINT_INJECT_DYLD;
		else if (json_get_str(env, "LD_PRELOAD"))
			how = HINT_INJECT_LD;
	}
	json_free(env);
	return how;
}

/* Whether the process used backend b (the summary's backends). */
static int
used_backend(const struct caps *c, enum caps_backend b)
{
	size_t i;

	if (!c)
		return 0;
	for (i = 0; i < c->sum.nbackends; i++)
		if (c->sum.backend[i] == b)
			return 1;
	return 0;
}

static int
expects(const char *const *markers, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(markers[i], what))
			return 1;
	return 0;
}

/* The first stderr line holding `what`, appended after `intro`; 1 if any. */
static int
quote_line(struct buf *out, const char *err, size_t len, const char *what,
	   const char *intro)
{
	size_t pos = 0, wl = strlen(what);

	while (pos < len) {
		const char *nl = memchr(err + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - err) : len, i;

		for (i = pos; i + wl <= end; i++)
			if (!memcmp(err + i, what, wl)) {
				buf_addf(out, "%s%s", out->len ? "; " : "", intro);
				buf_add_term_safe(out, err + pos, end - pos);
				return 1;
			}
		pos = end + 1;
	}
	return 0;
}

static void
causes(struct buf *out, const char *text)
{
	buf_addf(out, "%slikely causes: %s", out->len ? "; " : "", text);
}

/* A Linux run: LD_PRELOAD through the dynamic linker. */
static void
ld_causes(struct buf *out, const struct caps *c, int vulkan_shim,
	  const char *err, size_t len)
{
	quote_line(out, err, len, "from LD_PRELOAD cannot be preloaded",
		   "the dynamic linker did not preload the library: ");
	quote_line(out, err, len, "[VulkanCapabilities] Disabled for",
		   "the shim disabled itself: ");
	if (vulkan_shim && !used_backend(c, CAPS_VULKAN))
		buf_addf(out, "%sthe process used no Vulkan device (no "
			 "ggml_vulkan line)", out->len ? "; " : "");
	causes(out, vulkan_shim ?
	       "LD_PRELOAD ignored (a setuid or setgid program, a statically "
	       "linked one), the library missing, unreadable or of another "
	       "architecture on the target, no Vulkan loader or driver in "
	       "the process (libvulkan.so.1, VK_DRIVER_FILES; "
	       "GGML_VK_VISIBLE_DEVICES for a CPU device such as lavapipe), "
	       "or a bad shim configuration (VULKAN_CAPS_PROFILE, "
	       "VULKAN_CAPS_HIDE, VULKAN_CAPS_MAX_SHARED_MEMORY)" :
	       "LD_PRELOAD ignored (a setuid or setgid program, a statically "
	       "linked one), the library missing, unreadable or of another "
	       "architecture on the target, or the library's own "
	       "configuration");
}

void
hint_unverified(struct buf *out, const char *env_json, const struct caps *c,
		const char *const *markers, size_t nmarkers, const char *err,
		size_t len)
{
	enum hint_injection how = hint_injection_of(env_json);
	int metal_shim = expects(markers, nmarkers, "[LumeMetalCapabilities]");
	int vulkan_shim = expects(markers, nmarkers, "[VulkanCapabilities]");

	/* Metal runs only on macOS: the Metal shim's markers or a Metal
	 * device make it a macOS run whatever carried the library (published
	 * evidence records no environment; a replay on Linux preloads). */
	if (how == HINT_INJECT_DYLD || metal_shim ||
	    used_backend(c, CAPS_METAL)) {
		causes(out, "DYLD_INSERT_LIBRARIES pruned by SIP or the "
		       "hardened runtime, a library without this process's "
		       "architecture slice (arm64 vs arm64e), or a bad shim "
		       "configuration (LUME_METAL_APPLE_FAMILY_MAX)");
	} else if (how == HINT_INJECT_LD) {
		ld_causes(out, c, vulkan_shim, err, len);
	} else if (vulkan_shim) {
		quote_line(out, err, len, "[VulkanCapabilities] Disabled for",
			   "the shim disabled itself: ");
		causes(out, "no library was injected into this run (the "
		       "variant's inject.library), or a bad shim configuration "
		       "(VULKAN_CAPS_PROFILE, VULKAN_CAPS_HIDE)");
	} else {
		causes(out, "the process ran on another device or backend than "
		       "the variant expects, or printed less than it "
		       "(llama-bench's build, GGML_VK_VISIBLE_DEVICES, the "
		       "driver)");
	}
}
