/* MLX-LM output (the harness's JSON, mlx_lm.benchmark's text): mlx_parse(). */
#include "fuzz.h"
#include "evidence/llamabench.h"
#include "evidence/mlxlm.h"
#include "base/util.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	error_silent = 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_output out = { 0 };

	mlx_parse((const char *)data, size, "fuzz.json", &out);
	lb_output_release(&out);
	return 0;
}
