#ifndef MLXLM_H
#define MLXLM_H

/*
 * MLX-LM benchmark output: the JSON written by the published harness
 * (schema_version 1: samples[] with prompt_tps and generation_tps per
 * repetition, configuration with prompt_tokens and generation_tokens) and
 * the stdout of `mlx_lm.benchmark` ("Trial N:  prompt_tps=…,
 * generation_tps=…, peak_memory=…, total_time=…"). Both become two rows
 * shaped like llama-bench's: ppN from the prompt rates and tgN from the
 * generation rates, one sample per repetition.
 */

#include <stddef.h>

struct lb_output;

/* 0, or -1 with error() naming the file and the sample. */
int mlx_parse(const char *data, size_t len, const char *name,
	      struct lb_output *out);

#endif
