/*
 * A llama-bench process's stderr: capability facts (caps_read), marker
 * verification (caps_verify) and, with the input as a probe's output, the
 * probe check (caps_check_probe) and caps_add_probe(); the facts' JSON
 * must read back (caps_from_json) as the same facts.
 */
#include "fuzz.h"
#include "evidence/caps.h"
#include "base/json.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

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
	struct caps c, back;
	struct json *a, *b;
	char *json, *again;

	caps_read(text, size, &c);
	caps_verify(text, size, markers, 3, &detail);
	buf_reset(&detail);
	caps_missing_markers(text, size, markers, 3, &detail);
	buf_reset(&detail);
	caps_check_probe(text, size, "{\"supportsFamily.1009\": true, "
			 "\"shim.status\": \"installed\"}", &detail);
	caps_add_probe(&c, text, size);
	caps_suspect(&c, &detail);
	caps_describe(&c, &detail);
	/* the store's JSON reads back as the same facts (the same JSON
	 * value: bytes that are not UTF-8 were written as U+FFFD) */
	json = caps_to_json(&c);
	if (!json || json[0] != '{' || caps_from_json(json, &back) < 0)
		__builtin_trap();
	again = caps_to_json(&back);
	a = json_parse(json, strlen(json), NULL);
	b = json_parse(again, strlen(again), NULL);
	if (!a || !b || !json_equal(a, b))
		__builtin_trap();
	json_free(a);
	json_free(b);
	free(json);
	free(again);
	caps_release(&c);
	caps_release(&back);
	buf_release(&detail);
	return 0;
}
