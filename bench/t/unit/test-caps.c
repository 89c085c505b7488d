/* stderr capability markers and injection verification. */
#include "test.h"
#include "evidence/caps.h"
#include "base/files.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static cJSON *
parse(const char *text)
{
	char *json = caps_parse(text, strlen(text));
	cJSON *o = cJSON_Parse(json);

	free(json);
	return o;
}

static double
num(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(o, a), b);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *
str(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(o, a), b);
	return cJSON_IsString(v) ? v->valuestring : "(none)";
}

static int
flag(const cJSON *o, const char *b)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metal"), b);
	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

static const char shim_stderr[] =
	"2026-08-09 12:41:47.024 llama-bench[2738:54808] [LumeMetalCapabilities] "
	"Enabled for llama-bench (appleFamilyMax=1009 maxThreadgroupMemory=65536)\n"
	"ggml_metal_device_init: tensor API disabled for pre-M5 and pre-A19 devices\n"
	"ggml_metal_library_init: using embedded metal library\n"
	"ggml_metal_device_init: GPU name:   MTL0 (Apple Paravirtual device)\n"
	"ggml_metal_device_init: GPU family: MTLGPUFamilyApple9  (1009)\n"
	"ggml_metal_device_init: GPU family: MTLGPUFamilyCommon3 (3003)\n"
	"ggml_metal_device_init: simdgroup reduction   = true\n"
	"ggml_metal_device_init: simdgroup matrix mul. = true\n"
	"ggml_metal_device_init: has unified memory    = true\n"
	"ggml_metal_device_init: has bfloat            = true\n"
	"ggml_metal_device_init: has tensor            = false\n"
	"ggml_metal_device_init: use residency sets    = true\n"
	"ggml_metal_device_init: use shared buffers    = true\n"
	"ggml_metal_device_init: recommendedMaxWorkingSetSize  = 11453.25 MB\n";

static void
test_metal_and_shim(void)
{
	cJSON *o = parse(shim_stderr);

	CHECK_STR(str(o, "metal", "gpu_name"), "MTL0");
	CHECK_STR(str(o, "metal", "device"), "Apple Paravirtual device");
	CHECK(num(o, "metal", "apple_family") == 1009);
	CHECK(num(o, "metal", "common_family") == 3003);
	CHECK(num(o, "metal", "metal_family") == -1);
	CHECK(flag(o, "simdgroup_reduction") == 1);
	CHECK(flag(o, "simdgroup_matrix_mul") == 1);
	CHECK(flag(o, "has_bfloat") == 1);
	CHECK(flag(o, "has_tensor") == 0);
	CHECK(flag(o, "use_residency_sets") == 1);
	CHECK_NEAR(num(o, "metal", "recommended_max_working_set_mb"), 11453.25,
		   1e-9);
	CHECK_STR(str(o, "shim", "process"), "llama-bench");
	CHECK(num(o, "shim", "appleFamilyMax") == 1009);
	CHECK(num(o, "shim", "maxThreadgroupMemory") == 65536);
	cJSON_Delete(o);
}

static void
test_shim_without_prefix_and_failures(void)
{
	cJSON *o = parse("[LumeMetalCapabilities] Enabled for python "
			 "(appleFamilyMax=1007 maxThreadgroupMemory=32768 "
			 "recommendedMaxWorkingSetSize=1073741824)\n"
			 "[LumeMetalCapabilities] Capability hook installation "
			 "was incomplete\n");
	const cJSON *msgs;

	CHECK_STR(str(o, "shim", "process"), "python");
	CHECK(num(o, "shim", "recommendedMaxWorkingSetSize") == 1073741824.0);
	msgs = cJSON_GetObjectItem(o, "shim_messages");
	CHECK(cJSON_GetArraySize(msgs) == 1);
	cJSON_Delete(o);
}

static void
test_cuda_vulkan_backends_dyld(void)
{
	cJSON *o = parse(
		"ggml_cuda_init: found 1 CUDA devices (Total VRAM: 143771 MiB):\n"
		"  Device 0: NVIDIA H200, compute capability 9.0, VMM: yes, VRAM: 143771 MiB\n"
		"ggml_vulkan: Found 1 Vulkan devices:\n"
		"ggml_vulkan: 0 = NVIDIA H200 (NVIDIA) | uma: 0 | fp16: 1 | bf16: 1 | "
		"warp size: 32 | shared memory: 49152 | int dot: 1 | matrix cores: NV_coopmat2\n"
		"load_backend: loaded CPU backend from /opt/x/libggml-cpu-haswell.so\n"
		"dyld[4185]: terminating because inserted dylib '/x/Lume-arm64.dylib' "
		"could not be loaded: (mach-o file, but is an incompatible "
		"architecture (have 'arm64', need 'arm64e'))\n");
	const cJSON *d;

	CHECK(num(o, "cuda", "count") == 1);
	d = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "cuda"),
						   "devices"), 0);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "name")),
		  "NVIDIA H200");
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(d, "compute_capability")) == 90);
	CHECK(num(o, "vulkan", "count") == 1);
	d = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "vulkan"),
						   "devices"), 0);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "name")),
		  "NVIDIA H200 (NVIDIA)");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "matrix cores")),
		  "NV_coopmat2");
	d = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "backends_loaded"), 0);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "name")), "CPU");
	CHECK_STR(str(o, "dyld_insert_failure", "path"), "/x/Lume-arm64.dylib");
	CHECK(strstr(str(o, "dyld_insert_failure", "reason"), "arm64e") != NULL);
	cJSON_Delete(o);
}

static void
test_verify(void)
{
	static const char *const want[] = {
		"[LumeMetalCapabilities] Enabled for",
		"GPU family: MTLGPUFamilyApple9",
		"simdgroup matrix mul. = true",
	};
	static const char stock[] =
		"ggml_metal_device_init: GPU family: MTLGPUFamilyApple5  (1005)\n"
		"ggml_metal_device_init: simdgroup matrix mul. = false\n";
	static const char dyld[] =
		"dyld[1]: terminating because inserted dylib '/s.dylib' could "
		"not be loaded: tried: '/s.dylib' (no such file)\n";
	struct buf d = BUF_INIT;

	CHECK(caps_verify(shim_stderr, strlen(shim_stderr), want, 3, &d) == 1);
	buf_reset(&d);
	CHECK(caps_verify(stock, strlen(stock), want, 3, &d) == 0);
	CHECK(strstr(d.buf, "MTLGPUFamilyApple9") != NULL);
	CHECK(strstr(d.buf, "SIP") != NULL);
	CHECK(caps_missing_markers(stock, strlen(stock), want, 3, NULL) == 3);
	buf_reset(&d);
	CHECK(caps_verify(dyld, strlen(dyld), want, 0, &d) == 0);
	CHECK(strstr(d.buf, "dyld refused the inserted library") != NULL);
	buf_release(&d);
}

static void
test_shared_evidence(void)
{
	struct buf b = BUF_INIT;
	const char *f = "../shared/evidence/cua-lume-2026-08-09-m1-ultra/"
			"tiny-stock-minimal.stderr";
	cJSON *o;
	char *json;

	if (!file_exists(f)) {
		printf("SKIP shared evidence absent\n");
		return;
	}
	CHECK(buf_read_file(&b, f) == 0);
	json = caps_parse(b.buf, b.len);
	o = cJSON_Parse(json);
	CHECK(num(o, "metal", "apple_family") == 1005);
	CHECK(flag(o, "simdgroup_matrix_mul") == 0);
	CHECK(cJSON_GetObjectItem(o, "shim") == NULL);
	cJSON_Delete(o);
	free(json);
	buf_release(&b);
}

static const struct test_case tests[] = {
	{ "metal device lines and the shim marker", test_metal_and_shim },
	{ "shim line without NSLog prefix, shim failure lines", test_shim_without_prefix_and_failures },
	{ "cuda, vulkan, load_backend and dyld lines", test_cuda_vulkan_backends_dyld },
	{ "injection verification", test_verify },
	{ "stock guest stderr from the shared evidence", test_shared_evidence },
};

TEST_MAIN(tests)
