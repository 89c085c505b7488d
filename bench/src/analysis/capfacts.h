#ifndef ANALYSIS_CAPFACTS_H
#define ANALYSIS_CAPFACTS_H

/*
 * The capability facts of one process in words, for the reports: what
 * its backend reported (ggml's Vulkan device line: fp16, bf16, int dot,
 * matrix cores, shared memory, warp size; its Metal lines: GPU family,
 * simdgroup reduction and matrix multiplication, bfloat; CUDA's compute
 * capability; ROCm's gfx) and the capability shim's marker, so a speed is
 * never shown apart from what the process was told it could do. The
 * report fills each cell's facts from its stored runs (report.h).
 */

struct caps;

/* The facts of one process as one line (caller frees; "" none). */
char *capfacts_describe(const struct caps *c);
/* The shim marker's parameters, "key=value ..." (caller frees), or NULL
 * when the process printed no marker. */
char *capfacts_shim_config(const struct caps *c);

#endif
