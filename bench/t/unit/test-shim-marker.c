/*
 * The harness recognises what the shim really prints. The fixtures are
 * the shim library's own stderr, recorded on Linux from a fake-device
 * process named llama-bench (make -C shim fixtures; t5003 checks they
 * are still current).
 */
#include "evidence/caps.h"
#include "test.h"
#include "base/util.h"

#include <stdlib.h>

#define FIX "bench/t/fixtures/"

/* The facts of a stderr text as the store keeps them (caller frees). */
static char *
caps_json_of(const char *text, size_t len)
{
	struct caps c;
	char *json;

	caps_read(text, len, &c);
	json = caps_to_json(&c);
	caps_release(&c);
	return json;
}

static const char *const shim_marker[] = {
	"[LumeMetalCapabilities] Enabled for",
};

static void
test_enabled_line(void)
{
	struct buf err = BUF_INIT, detail = BUF_INIT;
	char *json;

	CHECK(buf_read_file(&err, FIX "shim-marker.stderr") == 0);
	CHECK_STR(err.buf, "[LumeMetalCapabilities] Enabled for llama-bench "
		  "(appleFamilyMax=1009 maxThreadgroupMemory=32768)\n");
	json = caps_json_of(err.buf, err.len);
	CHECK(strstr(json, "\"process\":\"llama-bench\"") != NULL);
	CHECK(strstr(json, "\"appleFamilyMax\":1009") != NULL);
	CHECK(strstr(json, "\"maxThreadgroupMemory\":32768") != NULL);
	CHECK(!strstr(json, "shim_messages"));
	CHECK(caps_missing_markers(err.buf, err.len, shim_marker, 1, NULL) == 0);
	CHECK(caps_verify(err.buf, err.len, shim_marker, 1, &detail) == 1);
	free(json);
	buf_release(&err);
	buf_release(&detail);
}

static void
test_refusal_line(void)
{
	struct buf err = BUF_INIT, detail = BUF_INIT;
	char *json;

	CHECK(buf_read_file(&err, FIX "shim-refusal.stderr") == 0);
	json = caps_json_of(err.buf, err.len);
	CHECK(strstr(json, "\"shim_messages\"") != NULL);
	CHECK(strstr(json, "LUME_METAL_APPLE_FAMILY_MAX='1009x' is not an "
		     "unsigned number") != NULL);
	CHECK(!strstr(json, "\"shim\":"));
	CHECK(caps_verify(err.buf, err.len, shim_marker, 1, &detail) == 0);
	CHECK(strstr(detail.buf, "missing marker") != NULL);
	free(json);
	buf_release(&err);
	buf_release(&detail);
}

static const struct test_case tests[] = {
	{ "shim Enabled line parsed and verified", test_enabled_line },
	{ "shim refusal line is a message, not verified", test_refusal_line },
};

TEST_MAIN(tests)
