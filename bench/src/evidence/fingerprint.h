#ifndef FINGERPRINT_H
#define FINGERPRINT_H

/*
 * Environment fingerprints: the facts about a target at session time
 * (hardware, OS version and build, VM flag, GPU, llama.cpp build, shim
 * hash…). In the process a fingerprint is a struct fingerprint, made once
 * at the edge: from the probe's output (fingerprint_from_probe()) or from
 * stored or bundled JSON (fingerprint_from_json*()). It is written back
 * as JSON only through fingerprint_json() (base/json's writer).
 *
 * The facts keep their order and their JSON types, so the text written
 * for a fingerprint read from JSON is the text it was read from (as
 * base/json prints it): stores and bundles round-trip byte for byte and
 * the identities never move. Decisions read the typed members below,
 * never the text.
 *
 * The identity is a SHA-256 over the stable keys only, so two sessions on
 * the same machine and software share it; the base identity leaves out
 * the OS version and build (the OS-update gate pairs on it).
 *
 * Ownership: a struct fingerprint owns its facts; fingerprint_release()
 * frees them. The typed members point into the facts and are refreshed
 * by every function that changes them.
 */

#include <stddef.h>

struct json;

enum fp_type {
	FP_NULL,
	FP_STR,
	FP_NUM,
	FP_BOOL,
	FP_JSON,          /* an array or an object, kept as parsed */
};

struct fp_fact {
	char *key;
	enum fp_type type;
	char *str;        /* FP_STR */
	double num;       /* FP_NUM */
	int b;            /* FP_BOOL */
	struct json *json;/* FP_JSON (owned) */
};

enum fp_os {
	FP_OS_UNKNOWN,    /* no os_name */
	FP_OS_MACOS,      /* os_name "macOS" */
	FP_OS_OTHER,      /* another OS (a Linux distribution's NAME) */
};

struct fingerprint {
	struct fp_fact *facts;     /* in recorded order: the JSON object */
	size_t nfacts;

	/* Typed members: the fact of each normalised key, NULL when absent. */
	const struct fp_fact *os_name, *os_version, *os_build, *os_pretty,
		*kernel, *arch, *hw_model, *cpu_model, *cpu_cores,
		*memory_bytes, *is_vm_fact, *gpu, *gpu_cores, *sip, *thermal,
		*cpu_governor, *load1, *pvg_unrestricted, *llama_build,
		*llama_bench_path, *llama_bench_sha256, *shim_sha256,
		*mlx_lm_path, *vm_image, *lume_version, *tart_version;
	/* Derived once from them. */
	enum fp_os os;
	int is_vm;                 /* 1 (1, true, "1", "true", "yes"), 0, -1 absent */
};

#define FINGERPRINT_INIT { 0 }

void fingerprint_release(struct fingerprint *fp);
/* dst becomes a copy of src (dst's old facts are not freed). */
void fingerprint_copy(struct fingerprint *dst, const struct fingerprint *src);

/*
 * Stored or bundled JSON: obj must be an object (facts of any JSON type,
 * kept as they are). 0, or -1 after error("WHAT: …") (what may be NULL:
 * "fingerprint").
 */
int fingerprint_from_json(struct fingerprint *fp, const struct json *obj,
			  const char *what);
/* The same from JSON text (NULL: "{}"). */
int fingerprint_from_text(struct fingerprint *fp, const char *text,
			  const char *what);

/* The fingerprint as a compact JSON object (malloc'd). */
char *fingerprint_json(const struct fingerprint *fp);

/* Writes both hex identities of fp (65 bytes each). */
void fingerprint_identity(const struct fingerprint *fp, char identity[65],
			  char base_identity[65]);

/* Sets key to a string value; replaced or new, the key goes last. */
void fingerprint_set(struct fingerprint *fp, const char *key,
		     const char *value);

/*
 * The probe: POSIX sh scripts run on the target through its transport.
 * They print source.key=value lines and tolerate missing commands. The
 * base probe always runs (os., linux., sysctl., sw_vers., csrutil.,
 * pmset., sp., pvg., load., proc.); the GPU probe (gpu.: nvidia-smi,
 * vulkaninfo) only where a plan's backend uses a GPU on a Linux target,
 * its lines appended to the base probe's before parsing. A Mac's GPU
 * (system_profiler) is in the base probe: Metal and MLX always use it.
 */
extern const char fingerprint_probe_script[];
extern const char fingerprint_gpu_probe_script[];

/*
 * The base probe's lines for this machine when it runs Linux, read in
 * this process (fingerprint-here.c: the same files and lines as the
 * snippet, without a shell), appended to out. 0, or -1 when this machine
 * needs the snippet (not Linux); nothing is appended then.
 */
struct buf;
int fingerprint_probe_here(struct buf *out);

/*
 * Turns probe output into a fingerprint (normalised keys: os_name,
 * os_version, os_build, kernel, hw_model, cpu_model, cpu_cores,
 * memory_bytes, is_vm, gpu, gpu_cores, sip, thermal, cpu_governor, load1,
 * pvg_unrestricted, llama_processes…) and pre-flight warnings (thermal or
 * performance warning, load average above 0.5 per core, another llama
 * process running), appended to *warnings (n of them; a NULL-terminated
 * vector, strv_free()).
 */
void fingerprint_from_probe(struct fingerprint *fp, const char *probe_output,
			    size_t len, char ***warnings, size_t *nwarnings);

/*
 * Adds the GPU probe's answer to fp: "gpu" from nvidia-smi, else from
 * vulkaninfo (the first device). Returns 1 when it set "gpu", 0 when the
 * output names no GPU or fp has one already.
 */
int fingerprint_add_gpu_probe(struct fingerprint *fp, const char *probe_output,
			      size_t len);

#endif
