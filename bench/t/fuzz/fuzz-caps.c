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

/* The JSON of c, read back and written again (caller frees). */
static char *
again(const char *json)
{
	struct caps back;
	char *out;

	if (!json || json[0] != '{' || caps_from_json(json, &back) < 0)
		__builtin_trap();
	out = caps_to_json(&back);
	caps_release(&back);
	return out;
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
	struct json *a, *b;
	struct caps c;
	char *j1, *j2, *j3;

	caps_read(text, size, &c);
	caps_verify(text, size, markers, 3, &detail);
	buf_reset(&detail);
	caps_missing_markers(text, size, markers, 3, &detail);
	buf_reset(&detail);
	caps_check_probe(text, size, "{\"supportsFamily.1009\": true, "
			 "\"shim.status\": \"installed\"}", &detail);
	/* the store's JSON reads back as the same facts (the same JSON
	 * value: bytes that are not UTF-8 were written as U+FFFD) */
	j1 = caps_to_json(&c);
	j2 = again(j1);
	a = json_parse(j1, strlen(j1), NULL);
	b = json_parse(j2, strlen(j2), NULL);
	if (!a || !b || !json_equal(a, b))
		__builtin_trap();
	json_free(a);
	json_free(b);
	free(j1);
	free(j2);
	/* with a probe (its output may repeat a key): stable once read */
	caps_add_probe(&c, text, size);
	caps_suspect(&c, &detail);
	caps_describe(&c, &detail);
	j1 = caps_to_json(&c);
	j2 = again(j1);
	j3 = again(j2);
	if (strcmp(j2, j3))
		__builtin_trap();
	free(j1);
	free(j2);
	free(j3);
	caps_release(&c);
	buf_release(&detail);
	return 0;
}
