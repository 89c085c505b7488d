#ifndef EVIDENCE_HINTS_H
#define EVIDENCE_HINTS_H

/*
 * Why an injection was not verified: the likely causes of a run whose
 * expected markers are missing, told by how the library was injected and
 * what the process printed, so that a Linux run through LD_PRELOAD (the
 * Vulkan capability shim) is never sent looking for SIP, and a macOS run
 * gets the causes that apply there. A run is a macOS run when it used
 * DYLD_INSERT_LIBRARIES, expected the Metal shim's marker or used a Metal
 * device (Metal exists only there).
 *
 *   env_json   the run's environment changes (a JSON object: the injection
 *              variable is DYLD_INSERT_LIBRARIES or LD_PRELOAD); may be NULL
 *   c          caps_read() of its stderr (the backend it used); may be NULL
 *   markers    what was expected (which shim: "[VulkanCapabilities]…",
 *              "[LumeMetalCapabilities]…")
 *   err, len   its whole stderr (the dynamic linker's refusal, the shim's
 *              own Disabled line)
 */

#include <stddef.h>

struct buf;
struct caps;

/* How the run's library was injected, from its environment. */
enum hint_injection {
	HINT_INJECT_NONE,      /* no library injected */
	HINT_INJECT_DYLD,      /* DYLD_INSERT_LIBRARIES: macOS */
	HINT_INJECT_LD,        /* LD_PRELOAD: Linux (and other ELF systems) */
};

enum hint_injection hint_injection_of(const char *env_json);

/*
 * Appends "likely causes: …" to out, after what stderr itself says (ld.so
 * refusing the preload, the Vulkan shim disabling itself), each part
 * "; "-separated from what out already holds.
 */
void hint_unverified(struct buf *out, const char *env_json,
		     const struct caps *c, const char *const *markers,
		     size_t nmarkers, const char *err, size_t len);

#endif
