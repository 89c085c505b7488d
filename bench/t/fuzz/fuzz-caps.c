/*
 * A llama-bench process's stderr: capability markers (caps_parse), marker
 * verification (caps_verify) and, with the input as a probe's output, the
 * probe check (caps_check_probe).
 */
#include "fuzz.h"
#include "evidence/caps.h"
#include "base/util.h"

#include <stdlib.h>

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
	static const char *const markers[] = {
		"[LumeMetalCapabilities] Enabled for",
		"GPU family: MTLGPUFamilyApple9",
		"simdgroup matrix mul. = true",
	};
	const char *text = (const char *)data;
	struct buf detail = BUF_INIT;
	char *caps, *with;

	caps = caps_parse(text, size);
	if (!caps || caps[0] != '{')
		__builtin_trap();
	caps_verify(text, size, markers, 3, &detail);
	buf_reset(&detail);
	caps_missing_markers(text, size, markers, 3, &detail);
	buf_reset(&detail);
	caps_check_probe(text, size, "{\"supportsFamily.1009\": true, "
			 "\"shim.status\": \"installed\"}", &detail);
	with = caps_with_probe(caps, text, size);
	free(with);
	free(caps);
	buf_release(&detail);
	return 0;
}
