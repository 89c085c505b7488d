#ifndef EVIDENCE_CAPSREAD_H
#define EVIDENCE_CAPSREAD_H

/*
 * Inside the capability readers (capslines.c, capsgpu.c, caps.c,
 * capsjson.c, capsverify.c); nothing else includes this.
 */

#include "evidence/caps.h"

#include <stddef.h>

/* GPU family numbers are below this in magnitude (others are no family). */
#define CAPS_FAMILY_LIMIT 1000000000L

/* The state of one caps_read(). */
struct caps_state {
	struct caps *c;
	/* which backend the next "  Device N:" lines belong to: the one
	 * the last "found N <KIND> devices" line named (CAPS_NBACKENDS:
	 * none yet) */
	enum caps_backend gpu_ctx;
	/* SYCL device table: after "found N SYCL devices", the columns of
	 * the header row that has "ID" and "Name" */
	int sycl_table, sycl_rows;
	int sycl_name, sycl_type, sycl_mem;
	size_t sycl_ncells;
};

/*
 * One kind of stderr line: 1 when line (NUL-terminated, escapes removed,
 * writable) was its own and was read, 0 when not.
 */
typedef int caps_line_fn(struct caps_state *st, char *line);

/* The GPU backends' lines (capsgpu.c). */
caps_line_fn caps_cuda_found, caps_cuda_failed, caps_cuda_flag,
	caps_gpu_device, caps_vulkan_line, caps_list_device, caps_sycl_line;

/* Shared helpers (caps.c). */
char *caps_trim(char *s);
int caps_starts(const char *s, const char *prefix);
/* Records that backend b showed (first appearance keeps its place). */
void caps_note_backend(struct caps *c, enum caps_backend b);
/*
 * ggml's spelling of a backend (buffer names, load_backend:, "found N
 * KIND devices": "CUDA", "ROCm", "HIP", "MTL", …) as ours; CAPS_NBACKENDS
 * for what is no backend of its own (BLAS, RPC) or unknown.
 */
enum caps_backend caps_backend_of(const char *name, size_t len);
/* The GPU block of backend b (CUDA, ROCm, MUSA, Vulkan, SYCL), or NULL. */
struct caps_gpu *caps_gpu_of(struct caps *c, enum caps_backend b);
/* A device with every value unknown. */
void caps_device_init(struct caps_device *d, long index);
/* A new device at the end of g's list, as caps_device_init() makes it. */
struct caps_device *caps_device_new(struct caps_gpu *g, long index);
/*
 * Keeps g's last device unless one with the same index and name is there
 * already (the same init block printed again by a later run): then the
 * last one is dropped.
 */
void caps_device_settle(struct caps_gpu *g);
/* Sets key in a key=value list: replaced in place when there, else added. */
struct caps_kv *caps_kv_set(struct caps_kv **kv, size_t *n, const char *key);
void caps_kv_text(struct caps_kv *kv, const char *text);
void caps_kv_num(struct caps_kv *kv, double v);
void caps_kv_bool(struct caps_kv *kv, int v);
/* Removes key from a key=value list if it is there. */
void caps_kv_remove(struct caps_kv **kv, size_t *n, const char *key);
/* Replaces *dst by a copy of s. */
void caps_set_str(char **dst, const char *s);

/* Computes c->sum from the facts (caps.c). */
void caps_summarise(struct caps *c);
/* "MTLGPUFamilyApple9" for 1009 (caller frees). */
char *caps_family_name(long family);
/* Sets what the suspect profile reads of p->output (capsjson.c). */
void caps_probe_facts(struct caps_probe *p);
/* Appends the reasons the probe claims beyond any Apple GPU (caps.c). */
void caps_probe_suspect(const struct caps_probe *p, struct buf *why);

#endif
