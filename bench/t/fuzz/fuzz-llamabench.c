/* llama-bench output (-o json arrays and -o jsonl lines): lb_parse(). */
#include "fuzz.h"
#include "evidence/llamabench.h"
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
	size_t i;

	if (lb_parse((const char *)data, size, "fuzz.jsonl", &out) == 0) {
		/* what a stored row must be */
		for (i = 0; i < out.n; i++)
			if (!out.rows[i].raw_json || !out.rows[i].test[0] ||
			    (out.rows[i].n_samples && !out.rows[i].samples_ts))
				__builtin_trap();
	}
	lb_output_release(&out);
	return 0;
}
