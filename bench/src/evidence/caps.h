#ifndef CAPS_H
#define CAPS_H

/*
 * Capability facts in a llama-bench process's stderr (or in any log a
 * user pastes): the ggml Metal device lines of every generation
 * (ggml_metal_init 2023-24, ggml_metal_device_init 2025-26), the
 * capability shim's "[LumeMetalCapabilities] Enabled for" line (bare or
 * after NSLog's "DATE TIME PROC[PID:TID] " prefix), the CUDA, ROCm/HIP
 * and MUSA device lines of ggml_cuda_init, both Vulkan device line forms,
 * SYCL device tables, the buffer names of -v runs, load_backend: lines
 * and dyld's "terminating because inserted dylib" failure; and the output
 * of a capability probe (the shim's metal-capabilities), as JSON or as
 * key=value lines.
 */

#include <stddef.h>

struct buf;

/*
 * The highest Apple GPU family any Apple GPU reports: MTLGPUFamilyApple10
 * (1010; A19 and M5, the devices for which ggml prints "tensor API
 * disabled for pre-M5 and pre-A19 devices"). A reported family above it
 * can only come from a capability profile that claims more than any
 * hardware has (the published shim's superseded broad profile made ggml
 * print MTLGPUFamilyApple21). Raise it when Apple ships a newer family.
 */
#define CAPS_APPLE_FAMILY_HIGHEST 1010

/*
 * Returns a compact JSON object describing what was found (malloc'd, the
 * caller frees). Never fails. Two kinds of keys, each absent when the
 * text shows nothing of it:
 *
 * The summary, in the vocabulary of the real-output corpus
 * (bench/t/fixtures/real/README.md): "backend" ("metal", "cuda", "rocm",
 * "musa", "vulkan", "sycl", "cann", "opencl" or "cpu"; a list in order
 * of appearance when several show; "cpu" only when nothing else does), "devices" (names as
 * printed, without Vulkan driver suffixes; the same index and name seen
 * again, by another backend or a later run, counts once; an empty list
 * when the log says no device was found), "gpu_family"
 * ("MTLGPUFamilyAppleN", the highest seen), "simdgroup_reduction",
 * "simdgroup_matrix_mul", "bfloat", "unified_memory" (Metal's flag or
 * Vulkan's uma), "compute_capability" ("8.6"), "vram_mib", "gfx"
 * ("gfx1151"), "shim_marker" (always present: whether the shim's Enabled
 * line is there), "paravirtual" (Metal device of a VM guest) and
 * "suspect_profile" (why the capabilities claimed are beyond any Apple
 * GPU). Per-device values are one value when every device agrees, else a
 * list in device order.
 *
 * The details, per source: "metal", "shim", "shim_messages", "cuda",
 * "rocm", "musa", "ggml_cuda_flags", "vulkan", "sycl",
 * "backends_loaded", "dyld_insert_failure".
 */
char *caps_parse(const char *text, size_t len);

/*
 * Looks for each marker (a substring of one stderr line) in text.
 * Returns the number of markers missing; their texts are appended to
 * `missing` (a struct buf *, "; "-separated) when not NULL.
 */
int caps_missing_markers(const char *text, size_t len,
			 const char *const *markers, size_t n,
			 struct buf *missing);

/*
 * Injection verification: returns 1 when every expected marker is in
 * text, 0 otherwise, writing into detail (struct buf *) what was missing
 * (evidence/hints.h gives the likely causes); a dyld "terminating because
 * inserted dylib" line is reported as such.
 */
int caps_verify(const char *text, size_t len, const char *const *markers,
		size_t n, struct buf *detail);

/*
 * Whether caps_json (caps_parse() or caps_with_probe() output) claims a
 * capability profile beyond any Apple GPU: 1, with the reason appended
 * to why (may be NULL); 0 when not, or when caps_json is not an object.
 */
int caps_suspect(const char *caps_json, struct buf *why);

/*
 * A capability probe's verdict: probe_out is its stdout, in either form
 * the shim's metal-capabilities prints: a JSON object (ours, --json) or
 * key=value lines (the published probe's `metal-capabilities 1009`:
 * device=, family=, supports_family=, max_threadgroup_memory=; ours by
 * default). Lines before a JSON object and lines that are not key=value
 * (a log line) are skipped. expect_json is an object mapping keys to
 * the value each must have: a key of the output ("supports_family") or
 * a dotted path into it ("supportsFamily.1009", "shim.status").
 * key=value values are typed (true/false, numbers, else strings), and a
 * string expectation also matches the value's text. Returns 1 when
 * every key has its value, 0 when one differs or is missing, -1 when the
 * output is in neither form; detail (a struct buf *) says what was found
 * or what differed.
 */
int caps_check_probe(const char *probe_out, size_t len,
		     const char *expect_json, struct buf *detail);

/*
 * caps_json with the probe's parsed output added as "probe" (either
 * form, as a JSON object) and the summary's "suspect_profile" extended
 * by what the probe claims (malloc'd).
 */
char *caps_with_probe(const char *caps_json, const char *probe_out,
		      size_t len);

/*
 * One line for people: backend, devices, GPU family and flags, the
 * shim's marker and a suspect profile, from caps_json ("" when it holds
 * nothing). Appends to out.
 */
void caps_describe(const char *caps_json, struct buf *out);

#endif
