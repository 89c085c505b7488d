/*
 * Writes a synthetic llama model of a chosen size for the calibration
 * figures: the "tiny" shape with n_embd, n_layer and n_ff given, so two
 * models whose sizes differ by a known fraction produce a real slowdown
 * (generation is memory-bound). Built and run by calib-data.sh:
 *   synth-sized OUT N_EMBD N_LAYER N_FF
 */
#include "models/synth.h"
#include "models/gguf.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	struct synth_shape s = *synth_shape_find("tiny");
	uint64_t np, size;

	if (argc != 5) {
		fputs("usage: synth-sized OUT N_EMBD N_LAYER N_FF\n", stderr);
		return 2;
	}
	s.name = "sized";
	s.n_embd = (uint32_t)atol(argv[2]);
	s.n_layer = (uint32_t)atol(argv[3]);
	s.n_ff = (uint32_t)atol(argv[4]);
	s.head_dim = s.n_embd / s.n_head;
	synth_expect(&s, GGML_F16, &np, &size);
	if (synth_write(argv[1], &s, GGML_F16, 0, 0) < 0)
		return 3;
	printf("%s n_params %llu model_size %llu\n", argv[1],
	       (unsigned long long)np, (unsigned long long)size);
	return 0;
}
