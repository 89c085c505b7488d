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

/*
 * A capability probe's verdict: probe_out is its stdout (JSON, e.g. the
 * shim's metal-capabilities), expect_json an object mapping dotted paths
 * ("supportsFamily.1009", "shim.status") to the JSON value each must
 * have. Returns 1 when every path has its value, 0 when one differs or is
 * missing, -1 when the output is not JSON; detail (a struct buf *) says
 * what was found or what differed.
 */
int caps_check_probe(const char *probe_out, size_t len,
		     const char *expect_json, struct buf *detail);

/* caps_json with the probe's parsed output added as "probe" (malloc'd). */
char *caps_with_probe(const char *caps_json, const char *probe_out,
		      size_t len);

#endif
