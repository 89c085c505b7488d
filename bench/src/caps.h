#ifndef CAPS_H
#define CAPS_H

/*
 * Capability markers in a llama-bench process's stderr: ggml Metal device
 * init lines, the capability shim's "[LumeMetalCapabilities] Enabled for"
 * line, ggml CUDA and Vulkan device lines, load_backend: lines and dyld's
 * "terminating because inserted dylib" failure.
 */

#include <stddef.h>

/*
 * Returns a compact JSON object describing what was found (malloc'd, the
 * caller frees). Keys: "metal", "shim", "shim_messages", "cuda",
 * "vulkan", "backends_loaded", "dyld_insert_failure"; absent when not
 * seen. Never fails.
 */
char *caps_parse(const char *text, size_t len);

/*
 * Looks for each marker (a substring of one stderr line) in text.
 * Returns the number of markers missing; their texts are appended to
 * `missing` (a struct buf *, "; "-separated) when not NULL.
 */
struct buf;
int caps_missing_markers(const char *text, size_t len,
			 const char *const *markers, size_t n,
			 struct buf *missing);



/*
 * Injection verification: returns 1 when every expected marker is in
 * text, 0 otherwise, writing into detail (struct buf *) what was missing
 * and the likely causes; a dyld "terminating because inserted dylib"
 * line is reported as such.
 */
int caps_verify(const char *text, size_t len, const char *const *markers,
		size_t n, struct buf *detail);
#endif
