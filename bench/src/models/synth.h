#ifndef SYNTH_H
#define SYNTH_H

/*
 * Deterministic synthetic GGUF models: the tensor set and metadata of a
 * known architecture and shape, filled with pseudo-random weights from an
 * integer PRNG (splitmix64) and serialized explicitly little-endian, so
 * the same shape, type and seed give the same bytes on every machine.
 * No real tokenizer: tokenizer.ggml.model = "no_vocab" plus
 * <arch>.vocab_size, which llama.cpp fills with dummy tokens.
 */

#include <stddef.h>
#include <stdint.h>

struct synth_shape {
	const char *name;          /* "tiny", "tinyllama-1.1b", ... */
	const char *arch;          /* "llama" or "gemma3" */
	const char *summary;
	uint32_t n_vocab, n_ctx, n_embd, n_layer;
	uint32_t n_head, n_head_kv, head_dim, n_ff;
	float rms_eps, rope_base;
	uint32_t sliding_window;   /* gemma3 only; 0 = none */
	int tied_output;           /* no output.weight (gemma3) */
};

/* The shape named name, or NULL. */
const struct synth_shape *synth_shape_find(const char *name);
/* The table of shapes, *n entries. */
const struct synth_shape *synth_shapes(size_t *n);

/*
 * Parameter count and tensor-data bytes the shape has at that type (what
 * llama-bench reports as model_n_params / model_size).
 */
void synth_expect(const struct synth_shape *s, int ggml_type,
		  uint64_t *n_params, uint64_t *model_size);

/*
 * Writes the model to path (through path.tmp.PID and rename), streaming:
 * memory use is a few MB whatever the shape. ggml_type is GGML_F32,
 * GGML_F16 or GGML_Q8_0 for the 2-D weights; norms are always F32.
 * progress, when non-zero, prints a percentage line to stderr.
 * Returns 0, or -1 after error().
 */
int synth_write(const char *path, const struct synth_shape *s, int ggml_type,
		uint64_t seed, int progress);

#endif
