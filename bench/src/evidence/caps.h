#ifndef CAPS_H
#define CAPS_H

/*
 * Capability facts: what ggml and the capability shim reported about the
 * devices of a llama-bench process, read from its stderr (or from any log
 * a user pastes) into struct caps once, at the edge. Every decision
 * (verification, suspect profiles, what people are shown) reads the
 * struct; JSON is only how the store and bundles keep it
 * (caps_to_json(), caps_from_json()).
 *
 * The lines read (capslines.c, capsgpu.c; one row each in a table of line
 * readers): the ggml Metal device lines of every generation
 * (ggml_metal_init 2023-24, ggml_metal_device_init 2025-26), the shim's
 * "[LumeMetalCapabilities] Enabled for" line (bare or after NSLog's
 * "DATE TIME PROC[PID:TID] " prefix), the CUDA, ROCm/HIP and MUSA device
 * lines of ggml_cuda_init, both Vulkan device line forms, SYCL device
 * tables, the buffer names of -v runs, load_backend: lines and dyld's
 * "terminating because inserted dylib" failure. A capability probe's
 * output (the shim's metal-capabilities), as JSON or as key=value lines,
 * joins them (capsverify.c).
 */

#include <limits.h>
#include <stddef.h>

struct buf;
struct json;

/*
 * The highest Apple GPU family any Apple GPU reports: MTLGPUFamilyApple10
 * (1010; A19 and M5, the devices for which ggml prints "tensor API
 * disabled for pre-M5 and pre-A19 devices"). A reported family above it
 * can only come from a capability profile that claims more than any
 * hardware has (the published shim's superseded broad profile made ggml
 * print MTLGPUFamilyApple21). Raise it when Apple ships a newer family.
 */
#define CAPS_APPLE_FAMILY_HIGHEST 1010

/* A number the log did not print (long members); doubles use NAN. */
#define CAPS_NONE LONG_MIN
/* Flags (signed char members): 1, 0, or CAPS_UNKNOWN when not printed. */
#define CAPS_UNKNOWN (-1)

/* The backends, as the real-output corpus names them. */
enum caps_backend {
	CAPS_METAL,
	CAPS_CUDA,
	CAPS_ROCM,
	CAPS_MUSA,
	CAPS_VULKAN,
	CAPS_SYCL,
	CAPS_CANN,
	CAPS_OPENCL,
	CAPS_CPU,
	CAPS_NBACKENDS
};

/* "metal", "cuda", "rocm", …, "cpu" (static text). */
const char *caps_backend_name(enum caps_backend b);

/* A key=value a tool printed that no member names, kept as printed. */
struct caps_kv {
	char *key;
	enum { CAPS_KV_TEXT, CAPS_KV_NUM, CAPS_KV_BOOL } kind;
	char *text;             /* CAPS_KV_TEXT */
	double num;             /* CAPS_KV_NUM */
	int flag;               /* CAPS_KV_BOOL */
};

/* One device of a CUDA, ROCm, MUSA, Vulkan or SYCL init block. */
struct caps_device {
	long index;
	char *name;             /* as printed (Vulkan: with the driver) */
	/* Vulkan: "NAME (DRIVER) | uma: 0 | fp16: 1 | …" */
	char *device;           /* the name without the driver; NULL */
	char *driver;           /* NULL when none is printed */
	long uma, fp16, bf16, int_dot;  /* as printed: 0 or 1 */
	long warp_size, shared_memory;
	char *matrix_cores;     /* "KHR_coopmat", "none"; NULL */
	/* CUDA, ROCm, MUSA: "NAME, compute capability 9.0, VMM: yes, …" */
	double compute_capability;   /* major * 10 + minor; NAN */
	char *gfx;              /* ROCm: "gfx1100"; NULL */
	signed char vmm;
	long wave_size, vram_mib;
	/* SYCL device table */
	char *type, *global_mem;
	/* Vulkan fields no member names, or whose value is not a whole
	 * number, as printed */
	struct caps_kv *extra;
	size_t nextra;
};

/* A GPU backend's init block (ggml_cuda_init, ggml_vulkan, ggml-sycl). */
struct caps_gpu {
	int present;            /* the block showed (devices may be none) */
	long count;             /* "found N … devices" */
	long total_vram_mib;
	char *error;            /* "failed to initialize CUDA: …"; NULL */
	struct caps_device *dev;
	size_t ndev;
};

/* ggml's Metal device lines. */
struct caps_metal {
	int present;
	char *device;           /* "Apple M1 Ultra", "Apple Paravirtual
				   device" */
	char *gpu_name;         /* "MTL0" (2026), else the device */
	long index;
	signed char paravirtual;     /* the device of a VM guest */
	/* the highest of each kind printed (1009 for MTLGPUFamilyApple9) */
	long apple_family, common_family, metal_family, mac_family;
	signed char simdgroup_reduction, simdgroup_matrix_mul;
	signed char has_unified_memory, has_bfloat, use_bfloat, has_tensor;
	signed char use_residency_sets, use_shared_buffers;
	signed char has_residency_sets;   /* "has residency sets = true" */
	signed char tensor_api;      /* 0: "tensor API disabled" */
	double recommended_max_working_set_mb;
	char *library;               /* "embedded" */
	double library_load_s, residency_keep_alive_s;
};

/* The shim's "Enabled for PROCESS (key=value …)" line. */
struct caps_shim {
	int present;
	char *line;             /* the line, trimmed */
	char *process;
	struct caps_kv *params; /* appleFamilyMax=1009 …, in order */
	size_t nparams;
};

/* A capability probe's output (caps_add_probe()). */
struct caps_probe {
	int present;
	int understood;         /* 0: neither JSON nor key=value lines */
	struct json *output;    /* the output as an object (or, not
				   understood, a string saying so) */
	/* what the suspect profile reads of it; NAN, CAPS_UNKNOWN absent */
	double highest_family_apple;   /* JSON: highestFamily.apple */
	double highest_apple_family;   /* lines: highest_apple_family= */
	double family;                 /* the family asked about */
	signed char supports_family;
};

/*
 * The summary, in the vocabulary of the real-output corpus
 * (bench/t/fixtures/real/README.md). Computed from the facts by
 * caps_read(); read back as stored by caps_from_json(). Per-device lists
 * are serialized as one value when every device agrees.
 */
struct caps_summary {
	/* "backend": in order of appearance, "cpu" only when nothing else */
	enum caps_backend backend[CAPS_NBACKENDS];
	size_t nbackends;
	/* "devices": names without Vulkan driver suffixes, the same index
	 * and name counted once; has_devices with none: none were found */
	int has_devices;
	char **devices;
	size_t ndevices;
	long gpu_family;        /* "MTLGPUFamilyAppleN" as 1000 + N */
	signed char simdgroup_reduction, simdgroup_matrix_mul, bfloat;
	signed char *unified_memory;    /* per device: Metal's flag, uma */
	size_t nunified;
	char **compute_capability;      /* per device: "8.6" */
	size_t ncc;
	double *vram_mib;               /* per device */
	size_t nvram;
	char **gfx;                     /* per device: "gfx1151" */
	size_t ngfx;
	signed char paravirtual;
	signed char shim_marker;        /* the shim's Enabled line is there */
	char *suspect_profile;  /* why the capabilities claimed are beyond
				   any Apple GPU; NULL */
};

struct caps {
	struct caps_metal metal;
	struct caps_shim shim;
	char **shim_messages;   /* what else the shim said */
	size_t nshim_messages;
	struct caps_gpu cuda, rocm, musa, vulkan, sycl;
	struct caps_kv *cuda_flags;     /* "GGML_CUDA_FORCE_MMQ: no" */
	size_t ncuda_flags;
	struct { char *name, *path; } *loaded;   /* load_backend: lines */
	size_t nloaded;
	struct {
		int present;
		char *line, *path, *reason;
	} dyld;                 /* dyld refused the inserted library */
	/* backends in the order they first show */
	enum caps_backend order[CAPS_NBACKENDS];
	size_t norder;
	struct caps_summary sum;
	struct caps_probe probe;
};

/* An empty struct caps (nothing known); release with caps_release(). */
void caps_init(struct caps *c);
void caps_release(struct caps *c);

/* Reads the facts of a stderr text into c (initialised here). Never fails. */
void caps_read(const char *text, size_t len, struct caps *c);

/*
 * The facts as a compact JSON object (caller frees), as the store and
 * bundles keep them: the details per source ("metal", "shim",
 * "shim_messages", "cuda", "rocm", "musa", "ggml_cuda_flags", "vulkan",
 * "sycl", "backends_loaded", "dyld_insert_failure"), then the summary
 * ("backend", "devices", "gpu_family", "simdgroup_reduction",
 * "simdgroup_matrix_mul", "bfloat", "unified_memory",
 * "compute_capability", "vram_mib", "gfx", "paravirtual", "shim_marker",
 * "suspect_profile"), then "probe"; each absent when nothing of it is
 * known. Written through base/json.
 */
char *caps_to_json(const struct caps *c);

/*
 * Reads what caps_to_json() wrote (or an older shimbench) into c
 * (initialised here); keys it does not know are skipped. 0, or -1 when
 * json is NULL or not a JSON object (c is then empty); nothing printed.
 */
int caps_from_json(const char *json, struct caps *c);

/*
 * Adds a capability probe's output (either form the shim's
 * metal-capabilities prints) as c->probe, and extends the summary's
 * suspect profile by what the probe claims.
 */
void caps_add_probe(struct caps *c, const char *probe_out, size_t len);

/*
 * Whether c claims a capability profile beyond any Apple GPU: 1, with the
 * reason appended to why (may be NULL); 0 when not.
 */
int caps_suspect(const struct caps *c, struct buf *why);

/*
 * One line for people: backend, devices, GPU family and flags, the
 * shim's marker and a suspect profile ("" when c holds nothing). Appends
 * to out.
 */
void caps_describe(const struct caps *c, struct buf *out);

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
 * A capability probe's verdict: probe_out is its stdout, in either form
 * the shim's metal-capabilities prints: a JSON object (ours, --json) or
 * key=value lines (the published probe's `metal-capabilities 1009`:
 * device=, family=, supports_family=, max_threadgroup_memory=; ours by
 * default). Lines before a JSON object and lines that are not key=value
 * (a log line) are skipped. expect_json (a plan's expectation) is an
 * object mapping keys to the value each must have: a key of the output
 * ("supports_family") or a dotted path into it ("supportsFamily.1009",
 * "shim.status"). key=value values are typed (true/false, numbers, else
 * strings), and a string expectation also matches the value's text.
 * Returns 1 when every key has its value, 0 when one differs or is
 * missing, -1 when the output is in neither form; detail (a struct buf *)
 * says what was found or what differed.
 */
int caps_check_probe(const char *probe_out, size_t len,
		     const char *expect_json, struct buf *detail);

#endif
