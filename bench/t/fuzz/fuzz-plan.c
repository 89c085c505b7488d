/* Benchmark plans (JSON): plan_parse(). */
#include "fuzz.h"
#include "run/plan.h"
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
	struct plan p = { 0 };

	plan_parse((const char *)data, size, "plan.json", NULL, &p);
	plan_free(&p);
	return 0;
}
