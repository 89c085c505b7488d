/* stderr capability markers and injection verification. */
#include "test.h"
#include "evidence/caps.h"
#include "base/files.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

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

/* caps_suspect() of facts as the store keeps them. */
static int
suspect_of(const char *json, struct buf *why)
{
	struct caps c;
	int ret;

	caps_from_json(json, &c);
	ret = caps_suspect(&c, why);
	caps_release(&c);
	return ret;
}

/* Stored facts with a probe's output added, as the store keeps them. */
static char *
with_probe(const char *json, const char *probe, size_t len)
{
	struct caps c;
	char *ret;

	caps_from_json(json, &c);
	caps_add_probe(&c, probe, len);
	ret = caps_to_json(&c);
	caps_release(&c);
	return ret;
}

/* caps_describe() of facts as the store keeps them. */
static void
describe(const char *json, struct buf *out)
{
	struct caps c;

	caps_from_json(json, &c);
	caps_describe(&c, out);
	caps_release(&c);
}

static cJSON *
parse(const char *text)
{
	char *json = caps_json_of(text, strlen(text));
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
	/* the likely causes are evidence/hints.c's (test-hints): they
	 * depend on the platform and the backend, which caps_verify does
	 * not know */
	CHECK(strstr(d.buf, "SIP") == NULL);
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
	const char *f = "evidence/cua-lume-2026-08-09-m1-ultra/"
			"tiny-stock-minimal.stderr";
	cJSON *o;
	char *json;

	/* shipped with the project (evidence/): absent is a failure */
	CHECK(file_exists(f));
	CHECK(buf_read_file(&b, f) == 0);
	json = caps_json_of(b.buf, b.len);
	o = cJSON_Parse(json);
	CHECK(num(o, "metal", "apple_family") == 1005);
	CHECK(flag(o, "simdgroup_matrix_mul") == 0);
	CHECK(cJSON_GetObjectItem(o, "shim") == NULL);
	cJSON_Delete(o);
	free(json);
	buf_release(&b);
}

/* caps_json_of() of a C string. */
static char *
parse_text(const char *text)
{
	return caps_json_of(text, strlen(text));
}

/* The summary value of key as compact JSON ("(absent)" when missing). */
static char *
summary(const char *text, const char *key)
{
	cJSON *o = parse(text);
	const cJSON *v = cJSON_GetObjectItem(o, key);
	char *s = v ? cJSON_PrintUnformatted(v) : NULL;
	char *ret = xstrdup(s ? s : "(absent)");

	free(s);
	cJSON_Delete(o);
	return ret;
}

#define CHECK_SUMMARY(text, key, want) do { \
	char *got_ = summary((text), (key)); \
	CHECK_STR(got_, (want)); \
	free(got_); \
} while (0)

static void
test_banner_forms(void)
{
	static const char *const banners[] = {
		/* NSLog, as the published evidence has it */
		"2026-08-09 18:20:01.123 llama-bench[1234:5678] "
		"[LumeMetalCapabilities] Enabled for llama-bench "
		"(appleFamilyMax=1009 maxThreadgroupMemory=65536)\n",
		/* bare (our shim, stderr of a LaunchAgent) */
		"[LumeMetalCapabilities] Enabled for llama-bench "
		"(appleFamilyMax=1009 maxThreadgroupMemory=65536)\n",
		/* a publisher's sanitised prefix, CRLF line ends */
		"<date> llama-bench[<pid>:<tid>] [LumeMetalCapabilities] "
		"Enabled for llama-bench (appleFamilyMax=1009 "
		"maxThreadgroupMemory=65536)\r\n",
		"YYYY-MM-DD HH:MM:SS.mmm llama-bench[PID:TID] "
		"[LumeMetalCapabilities] Enabled for llama-bench "
		"(appleFamilyMax=1009 maxThreadgroupMemory=65536)\n",
		/* colour escapes of a terminal capture */
		"\033[2m2026-08-09 18:20:01.123 llama-bench[1:2]\033[0m "
		"[LumeMetalCapabilities] Enabled for llama-bench "
		"(appleFamilyMax=1009 maxThreadgroupMemory=65536)\033[0m\n",
	};
	static const char *const want[] = {
		"[LumeMetalCapabilities] Enabled for",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(banners); i++) {
		cJSON *o = parse(banners[i]);
		struct buf d = BUF_INIT;

		CHECK_STR(str(o, "shim", "process"), "llama-bench");
		CHECK(num(o, "shim", "appleFamilyMax") == 1009);
		CHECK(num(o, "shim", "maxThreadgroupMemory") == 65536);
		CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "shim_marker")));
		CHECK(caps_verify(banners[i], strlen(banners[i]), want, 1, &d) == 1);
		buf_release(&d);
		cJSON_Delete(o);
	}
	/* ours, refusing a bad configuration: a message, no marker */
	CHECK_SUMMARY("[LumeMetalCapabilities] Disabled for llama-bench: "
		      "LUME_METAL_APPLE_FAMILY_MAX='1009x' is not an unsigned "
		      "number; leaving stock capabilities unchanged\n",
		      "shim_marker", "false");
	CHECK_SUMMARY("2026-08-09 18:20:01.123 llama-bench[1:2] "
		      "[LumeMetalCapabilities] Required device methods are "
		      "unavailable; leaving stock capabilities unchanged\n",
		      "shim_messages", "[\"Required device methods are "
		      "unavailable; leaving stock capabilities unchanged\"]");
}

static void
test_metal_init_2024(void)
{
	static const char log[] =
		"ggml_metal_init: allocating\n"
		"ggml_metal_init: found device: Apple M2 Ultra\n"
		"ggml_metal_init: picking default device: Apple M2 Ultra\n"
		"ggml_metal_init: using embedded metal library\n"
		"ggml_metal_init: GPU name:   Apple M2 Ultra\n"
		"ggml_metal_init: GPU family: MTLGPUFamilyApple8  (1008)\n"
		"ggml_metal_init: GPU family: MTLGPUFamilyCommon3 (3003)\n"
		"ggml_metal_init: GPU family: MTLGPUFamilyMetal3  (5001)\n"
		"ggml_metal_init: simdgroup reduction support   = true\n"
		"ggml_metal_init: simdgroup matrix mul. support = true\n"
		"ggml_metal_init: hasUnifiedMemory              = true\n"
		"ggml_metal_init: has bfloat                    = true\n"
		"ggml_metal_init: use bfloat                    = false\n"
		"ggml_metal_init: recommendedMaxWorkingSetSize  = 154618.82 MB\n";
	cJSON *o = parse(log);

	CHECK_STR(str(o, "metal", "device"), "Apple M2 Ultra");
	CHECK(num(o, "metal", "metal_family") == 5001);
	CHECK(flag(o, "use_bfloat") == 0);
	CHECK(flag(o, "has_unified_memory") == 1);
	CHECK(flag(o, "paravirtual") == 0);
	CHECK_NEAR(num(o, "metal", "recommended_max_working_set_mb"),
		   154618.82, 1e-9);
	cJSON_Delete(o);
	CHECK_SUMMARY(log, "backend", "\"metal\"");
	CHECK_SUMMARY(log, "devices", "[\"Apple M2 Ultra\"]");
	CHECK_SUMMARY(log, "gpu_family", "\"MTLGPUFamilyApple8\"");
	CHECK_SUMMARY(log, "simdgroup_reduction", "true");
	CHECK_SUMMARY(log, "bfloat", "true");
	CHECK_SUMMARY(log, "unified_memory", "true");
	CHECK_SUMMARY(log, "paravirtual", "false");
	CHECK_SUMMARY(log, "suspect_profile", "(absent)");
}

static char *
evidence_caps(const char *name)
{
	struct buf b = BUF_INIT;
	char *path = xstrfmt("evidence/%s", name), *json;

	CHECK(buf_read_file(&b, path) == 0);
	json = caps_json_of(b.buf ? b.buf : "", b.len);
	buf_release(&b);
	free(path);
	return json;
}

static void
test_summary_evidence(void)
{
	char *shim = evidence_caps("cua-lume-2026-08-09-m1-ultra/"
				   "tiny-safe-shim-10x-final.stderr");
	char *stock = evidence_caps("cua-lume-2026-08-10-m1-ultra-gemma4/"
				    "gemma4-stock-10x.stderr");
	char *host = evidence_caps("cua-lume-2026-08-09-m1-ultra/"
				   "tiny-host-minimal.stderr");

	CHECK(strstr(shim, "\"backend\":\"metal\",\"devices\":[\"Apple "
		     "Paravirtual device\"],\"gpu_family\":\"MTLGPUFamilyApple9\","
		     "\"simdgroup_reduction\":true,\"simdgroup_matrix_mul\":true,"
		     "\"bfloat\":true,\"unified_memory\":true,\"paravirtual\":true,"
		     "\"shim_marker\":true}") != NULL);
	CHECK(strstr(stock, "\"gpu_family\":\"MTLGPUFamilyApple5\","
		     "\"simdgroup_reduction\":false,\"simdgroup_matrix_mul\":false,"
		     "\"bfloat\":false") != NULL);
	CHECK(strstr(stock, "\"paravirtual\":true,\"shim_marker\":false}") != NULL);
	CHECK(strstr(host, "\"devices\":[\"Apple M1 Ultra\"],\"gpu_family\":"
		     "\"MTLGPUFamilyApple7\"") != NULL);
	CHECK(strstr(host, "\"paravirtual\":false") != NULL);
	CHECK(!suspect_of(shim, NULL) && !suspect_of(stock, NULL) &&
	      !suspect_of(host, NULL));
	free(shim);
	free(stock);
	free(host);
}

static void
test_suspect(void)
{
	char *hooked = evidence_caps("cua-lume-2026-08-09-m1-ultra/"
				     "tiny-hooked-minimal.stderr");
	char *mlx = evidence_caps("cua-lume-2026-08-09-m1-ultra/"
				  "mlx-broad-profile-failure.stderr");
	struct buf why = BUF_INIT;
	char *apple10, *apple11, *wide;

	CHECK(suspect_of(hooked, &why) == 1);
	CHECK(strstr(why.buf, "MTLGPUFamilyApple21 is beyond any Apple GPU "
		     "(highest: Apple10)") == why.buf);
	buf_reset(&why);
	CHECK(suspect_of(mlx, &why) == 1);
	CHECK(strstr(why.buf, "familyMax=5001") != NULL);
	/* the highest real family is fine; one above is not */
	apple10 = parse_text("ggml_metal_device_init: GPU family: "
			     "MTLGPUFamilyApple10  (1010)\n");
	CHECK(suspect_of(apple10, NULL) == 0);
	apple11 = parse_text("ggml_metal_device_init: GPU family: "
			     "MTLGPUFamilyApple11  (1011)\n");
	buf_reset(&why);
	CHECK(suspect_of(apple11, &why) == 1);
	CHECK_STR(why.buf, "MTLGPUFamilyApple11 is beyond any Apple GPU "
		  "(highest: Apple10)");
	wide = parse_text("[LumeMetalCapabilities] Enabled for x "
			  "(appleFamilyMax=1999 maxThreadgroupMemory=65536)\n");
	buf_reset(&why);
	CHECK(suspect_of(wide, &why) == 1);
	CHECK(strstr(why.buf, "appleFamilyMax=1999") != NULL);
	CHECK(suspect_of("not json", NULL) == 0 && suspect_of(NULL, NULL) == 0);
	free(hooked);
	free(mlx);
	free(apple10);
	free(apple11);
	free(wide);
	buf_release(&why);
}

static void
test_cuda_forms(void)
{
	static const char old[] =
		"ggml_init_cublas: GGML_CUDA_FORCE_MMQ:   no\n"
		"ggml_init_cublas: CUDA_USE_TENSOR_CORES: yes\n"
		"ggml_init_cublas: found 2 CUDA devices:\n"
		"  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6\n"
		"  Device 1: NVIDIA GeForce RTX 4090, compute capability 8.9\n";
	static const char vram[] =
		"ggml_cuda_init: found 1 CUDA devices (Total VRAM: 32109 MiB):\n"
		"  Device 0: NVIDIA GeForce RTX 5090, compute capability 12.0, "
		"VMM: yes, VRAM: 32109 MiB\n";
	static const char failed[] =
		"ggml_cuda_init: failed to initialize CUDA: no CUDA-capable "
		"device is detected\n";
	cJSON *o = parse(vram), *f = parse(failed);

	CHECK_SUMMARY(old, "backend", "\"cuda\"");
	CHECK_SUMMARY(old, "devices", "[\"NVIDIA GeForce RTX 3090\","
		      "\"NVIDIA GeForce RTX 4090\"]");
	CHECK_SUMMARY(old, "compute_capability", "[\"8.6\",\"8.9\"]");
	CHECK_SUMMARY(vram, "compute_capability", "\"12.0\"");
	CHECK_SUMMARY(vram, "vram_mib", "32109");
	CHECK(num(o, "cuda", "total_vram_mib") == 32109);
	CHECK_SUMMARY(failed, "backend", "\"cuda\"");
	CHECK_SUMMARY(failed, "devices", "[]");
	CHECK_STR(str(f, "cuda", "error"), "no CUDA-capable device is detected");
	cJSON_Delete(o);
	cJSON_Delete(f);
}

/*
 * Issue 20's lines, as real logs print them: a 2026 ROCm APU whose name
 * is empty (a public ROCm 7.2 Vega 8 log, 2026-05-14), the device list
 * of 2025-26 builds (llama-cli --list-devices, as a public setup guide
 * quotes it), January 2024's "ggml_vulkan: Using" line and Metal's
 * "has residency sets" (ggml-metal, 2025).
 */
static void
test_issue20_lines(void)
{
	static const char rocm[] =
		"ggml_cuda_init: found 1 ROCm devices (Total VRAM: 65536 MiB):\n"
		"  Device 0: , gfx900:xnack- (0x900), VMM: no, Wave Size: 64, "
		"VRAM: 65536 MiB\n";
	static const char list[] =
		"Available devices:\n"
		"  CUDA0: NVIDIA GeForce RTX 3060 Ti (7840 MiB, 7668 MiB free)\n";
	static const char vk2024[] =
		"ggml_vulkan: Using AMD Radeon RX 7900 XTX | fp16: 1 | "
		"warp size: 64\n";
	static const char metal[] =
		"ggml_metal_init: has residency sets    = true\n"
		"ggml_metal_init: use residency sets    = false\n";
	cJSON *o = parse(rocm), *v, *m;
	const cJSON *d;

	d = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o,
		"rocm"), "devices"), 0);
	CHECK(d != NULL);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "gfx")),
		  "gfx900:xnack-");
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(d, "wave_size")) == 64);
	CHECK_SUMMARY(rocm, "backend", "\"rocm\"");
	CHECK_SUMMARY(rocm, "vram_mib", "65536");
	CHECK_SUMMARY(list, "backend", "\"cuda\"");
	CHECK_SUMMARY(list, "vram_mib", "7840");
	CHECK_SUMMARY(list, "devices", "[\"NVIDIA GeForce RTX 3060 Ti\"]");
	CHECK_SUMMARY(vk2024, "backend", "\"vulkan\"");
	CHECK_SUMMARY(vk2024, "devices", "[\"AMD Radeon RX 7900 XTX\"]");
	v = parse(vk2024);
	d = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v,
		"vulkan"), "devices"), 0);
	/* as printed (text), like the other Vulkan forms */
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "fp16")), "1");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "warp size")),
		  "64");
	m = parse(metal);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "metal"),
					       "has_residency_sets")));
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "metal"),
						"use_residency_sets")));
	/* no device list line: no memory figures, no closing parenthesis */
	CHECK_SUMMARY("  CUDA0: NVIDIA GeForce RTX 3060 Ti\n", "devices",
		      "(absent)");
	CHECK_SUMMARY("  CUDA0: x (7840 MiB)\n", "devices", "(absent)");
	cJSON_Delete(o);
	cJSON_Delete(v);
	cJSON_Delete(m);
}

static void
test_rocm(void)
{
	static const char log[] =
		"ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no\n"
		"ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: no\n"
		"ggml_cuda_init: found 2 ROCm devices (Total VRAM: 49136 MiB):\n"
		"  Device 0: AMD Radeon RX 7900 XTX, gfx1100 (0x1100), VMM: no, "
		"Wave Size: 32, VRAM: 24560 MiB\n"
		"  Device 1: AMD Radeon RX 7900 XTX, gfx1100 (0x1100), VMM: no, "
		"Wave Size: 32, VRAM: 24576 MiB\n";
	/* 2024 HIP builds printed a compute capability for AMD cards */
	static const char old[] =
		"ggml_cuda_init: found 1 ROCm devices:\n"
		"  Device 0: AMD Radeon RX 6800 XT, compute capability 10.3, VMM: no\n";
	cJSON *o = parse(log);
	const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItem(
		cJSON_GetObjectItem(o, "rocm"), "devices"), 1);

	CHECK(cJSON_GetObjectItem(o, "cuda") == NULL);
	CHECK(num(o, "rocm", "count") == 2);
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(d, "wave_size")) == 32);
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(d, "vmm")));
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(o,
		"ggml_cuda_flags"), "GGML_CUDA_FORCE_MMQ")));
	CHECK_SUMMARY(log, "backend", "\"rocm\"");
	CHECK_SUMMARY(log, "gfx", "\"gfx1100\"");
	CHECK_SUMMARY(log, "vram_mib", "[24560,24576]");
	CHECK_SUMMARY(log, "compute_capability", "(absent)");
	CHECK_SUMMARY(old, "backend", "\"rocm\"");
	CHECK_SUMMARY(old, "compute_capability", "\"10.3\"");
	CHECK_SUMMARY("ggml_cuda_init: failed to initialize ROCm: no "
		      "ROCm-capable device is detected\n", "backend", "\"rocm\"");
	/* not device lines: no colon after the index, no name */
	CHECK_SUMMARY("  Device 0 NVIDIA H200, compute capability 9.0\n",
		      "devices", "(absent)");
	CHECK_SUMMARY("Device 7, gfx1100\n", "devices", "(absent)");
	CHECK_SUMMARY("  Device 0:, compute capability 9.0\n", "devices",
		      "(absent)");
	/* a partial paste without the found line: gfx says ROCm */
	CHECK_SUMMARY("  Device 0: Radeon 8060S Graphics, gfx1151 (0x1151), "
		      "VMM: no, Wave Size: 32\n", "backend", "\"rocm\"");
	cJSON_Delete(o);
}

static void
test_vulkan_forms(void)
{
	static const char two[] =
		"ggml_vulkan: Found 2 Vulkan devices:\n"
		"ggml_vulkan: 0 = AMD Radeon RX 7900 XTX (RADV NAVI31) (radv) | "
		"uma: 0 | fp16: 1 | warp size: 64 | matrix cores: KHR_coopmat\n"
		"ggml_vulkan: 1 = AMD Radeon Graphics (RADV GFX1036) (radv) | "
		"uma: 1 | fp16: 1 | warp size: 64 | matrix cores: none\n";
	static const char old[] =
		"ggml_vulkan: Found 1 Vulkan devices:\n"
		"Vulkan0: NVIDIA GeForce RTX 3090 | uma: 0 | fp16: 1 | warp size: 32\n";
	static const char old_driver[] =
		"> Vulkan0: AMD Radeon RX 7900 XTX (RADV NAVI31) (radv) | uma: 0 "
		"| fp16: 1 | warp size: 64\n";
	static const char old_known[] =
		"Vulkan0: Radeon 8060S Graphics (AMD open-source driver) | uma: 1 "
		"| fp16: 1 | warp size: 64\n";
	cJSON *o = parse(two);
	const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItem(
		cJSON_GetObjectItem(o, "vulkan"), "devices"), 0);

	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "driver")), "radv");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "device")),
		  "AMD Radeon RX 7900 XTX (RADV NAVI31)");
	CHECK_SUMMARY(two, "devices", "[\"AMD Radeon RX 7900 XTX (RADV NAVI31)\","
		      "\"AMD Radeon Graphics (RADV GFX1036)\"]");
	CHECK_SUMMARY(two, "unified_memory", "[false,true]");
	CHECK_SUMMARY(old, "backend", "\"vulkan\"");
	CHECK_SUMMARY(old, "devices", "[\"NVIDIA GeForce RTX 3090\"]");
	CHECK_SUMMARY(old, "unified_memory", "false");
	CHECK_SUMMARY(old_driver, "devices",
		      "[\"AMD Radeon RX 7900 XTX (RADV NAVI31)\"]");
	CHECK_SUMMARY(old_known, "devices", "[\"Radeon 8060S Graphics\"]");
	CHECK_SUMMARY("ggml_vulkan: No devices found.\n", "devices", "[]");
	CHECK_SUMMARY("ggml_vulkan: No devices found.\n", "backend", "\"vulkan\"");
	cJSON_Delete(o);
}

static void
test_sycl_tables(void)
{
	static const char t2025[] =
		"Running with Environment Variables:\n"
		"  GGML_SYCL_DEBUG: 0\n"
		"found 2 SYCL devices:\n"
		"|  |                   |                                       |       |Max    |        |Max  |Global |                     |\n"
		"|  |                   |                                       |       |compute|Max work|sub  |mem    |                     |\n"
		"|ID|        Device Type|                                   Name|Version|units  |group   |group|size   |       Driver version|\n"
		"|--|-------------------|---------------------------------------|-------|-------|--------|-----|-------|---------------------|\n"
		"| 0| [level_zero:gpu:0]|                Intel Arc B580 Graphics|   20.1|    160|    1024|   32| 12168M|         1.6.32567+18|\n"
		"| 1|     [opencl:gpu:0]|                Intel Arc B580 Graphics|   3.0|    160|    1024|   32| 12168M|       24.52.32224.5|\n"
		"SYCL Optimization Feature:\n"
		"| model | size |\n"
		"| 7 | 3 |\n";
	static const char t2024[] =
		"[SYCL] call ggml_init_sycl\n"
		"ggml_init_sycl: GGML_SYCL_F16: no\n"
		"found 1 SYCL devices:\n"
		"Part1:\n"
		"|ID|        Device Type| Ver|                Name|Global mem size|\n"
		"|--|-------------------|----|--------------------|---------------|\n"
		"| 0| [level_zero:gpu:0]| 1.3|  Intel Arc Graphics|         14934M|\n"
		"\n"
		"Part2:\n"
		"|ID|Max compute units|Max work group|Max subgroup| Driver version|\n"
		"|--|-----------------|--------------|------------|---------------|\n"
		"| 0|              128|          1024|          32|   1.3.29735+27|\n";
	cJSON *o = parse(t2025);
	const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItem(
		cJSON_GetObjectItem(o, "sycl"), "devices"), 1);

	CHECK(num(o, "sycl", "count") == 2);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "type")),
		  "[opencl:gpu:0]");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(d, "global_mem")),
		  "12168M");
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(
		cJSON_GetObjectItem(o, "sycl"), "devices")) == 2);
	CHECK_SUMMARY(t2025, "backend", "\"sycl\"");
	CHECK_SUMMARY(t2025, "devices", "[\"Intel Arc B580 Graphics\","
		      "\"Intel Arc B580 Graphics\"]");
	CHECK_SUMMARY(t2024, "devices", "[\"Intel Arc Graphics\"]");
	CHECK_SUMMARY(t2024, "backend", "\"sycl\"");
	cJSON_Delete(o);
}

static void
test_buffers_and_cpu(void)
{
	CHECK_SUMMARY("load_tensors:        CUDA0 model buffer size = 3577.56 MiB\n"
		      "load_tensors:   CPU_Mapped model buffer size =   70.31 MiB\n",
		      "backend", "\"cuda\"");
	CHECK_SUMMARY("llama_kv_cache_init:      SYCL0 KV buffer size =  2048.00 MiB\n",
		      "backend", "\"sycl\"");
	CHECK_SUMMARY("load_tensors: MTL0_Mapped model buffer size = 636.18 MiB\n",
		      "backend", "\"metal\"");
	CHECK_SUMMARY("load_tensors:   CPU_Mapped model buffer size = 636.18 MiB\n",
		      "backend", "\"cpu\"");
	CHECK_SUMMARY("load_backend: loaded CPU backend from "
		      "/app/libggml-cpu-haswell.so\n", "backend", "\"cpu\"");
	CHECK_SUMMARY("load_backend: loaded RPC backend from /app/libggml-rpc.so\n"
		      "load_backend: loaded CUDA backend from /app/libggml-cuda.so\n"
		      "load_backend: loaded CPU backend from /app/libggml-cpu.so\n",
		      "backend", "\"cuda\"");
	/* a CPU-only build prints nothing on stderr */
	CHECK_SUMMARY("", "backend", "(absent)");
	CHECK_SUMMARY("", "shim_marker", "false");
	/* tables are results, not log lines */
	CHECK_SUMMARY("| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | pp512 "
		      "| 1.00 ± 0.00 |\n", "backend", "(absent)");
}

static const char cua_probe_shim[] =
	"device=Apple Paravirtual device\n"
	"family=1009\n"
	"supports_family=true\n"
	"max_threadgroup_memory=65536\n";

static void
test_probe_forms(void)
{
	static const char cua_stock[] =
		"device=Apple Paravirtual device\n"
		"family=1009\n"
		"supports_family=false\n"
		"max_threadgroup_memory=32768\n";
	static const char ours_json[] =
		"{\"device\": \"Apple Paravirtual device\", \"supportsFamily\": "
		"{\"1009\": true}, \"shim\": {\"loaded\": true, \"status\": "
		"\"installed\"}}\n";
	/* a banner before the output (the probe's own stderr merged in) */
	static const char banner_then_kv[] =
		"2026-08-09 18:20:01.123 metal-capabilities[7:8] "
		"[LumeMetalCapabilities] Enabled for metal-capabilities "
		"(appleFamilyMax=1009 maxThreadgroupMemory=65536)\n"
		"device=Apple Paravirtual device\r\n"
		"family=1009\r\n"
		"supports_family=true\r\n"
		"max_threadgroup_memory=65536\r\n";
	static const char banner_then_json[] =
		"[LumeMetalCapabilities] Enabled for metal-capabilities "
		"(appleFamilyMax=1009 maxThreadgroupMemory=65536)\n"
		"{\"supportsFamily\": {\"1009\": true}}\n";
	const char *kv_expect = "{\"supports_family\": true, \"family\": 1009}";
	struct buf d = BUF_INIT;
	char *c;

	CHECK(caps_check_probe(cua_probe_shim, strlen(cua_probe_shim),
			       kv_expect, &d) == 1);
	CHECK_STR(d.buf, "probe: supports_family = true, family = 1009");
	buf_reset(&d);
	CHECK(caps_check_probe(cua_stock, strlen(cua_stock), kv_expect, &d) == 0);
	CHECK_STR(d.buf, "probe: supports_family is false, expected true, "
		  "family = 1009");
	buf_reset(&d);
	/* a string expectation matches the value's text */
	CHECK(caps_check_probe(cua_probe_shim, strlen(cua_probe_shim),
			       "{\"max_threadgroup_memory\": \"65536\", "
			       "\"device\": \"Apple Paravirtual device\"}", &d) == 1);
	buf_reset(&d);
	CHECK(caps_check_probe(cua_probe_shim, strlen(cua_probe_shim),
			       "{\"max_threadgroup_memory\": 65536}", &d) == 1);
	buf_reset(&d);
	CHECK(caps_check_probe(cua_probe_shim, strlen(cua_probe_shim),
			       "{\"shim.status\": \"installed\"}", &d) == 0);
	CHECK_STR(d.buf, "probe: shim.status is missing, expected \"installed\"");
	buf_reset(&d);
	CHECK(caps_check_probe(ours_json, strlen(ours_json),
			       "{\"supportsFamily.1009\": true, "
			       "\"shim.status\": \"installed\"}", &d) == 1);
	buf_reset(&d);
	/* JSON is typed: "true" is not true there */
	CHECK(caps_check_probe(ours_json, strlen(ours_json),
			       "{\"supportsFamily.1009\": \"true\"}", &d) == 0);
	buf_reset(&d);
	CHECK(caps_check_probe(banner_then_kv, strlen(banner_then_kv),
			       kv_expect, &d) == 1);
	buf_reset(&d);
	CHECK(caps_check_probe(banner_then_json, strlen(banner_then_json),
			       "{\"supportsFamily.1009\": true}", &d) == 1);
	buf_reset(&d);
	CHECK(caps_check_probe("error: no metal device\n", 23, kv_expect, &d) == -1);
	CHECK(strstr(d.buf, "neither a JSON object nor key=value lines") != NULL);
	buf_reset(&d);
	CHECK(caps_check_probe("", 0, kv_expect, &d) == -1);
	buf_release(&d);
	c = with_probe("{}", cua_probe_shim, strlen(cua_probe_shim));
	CHECK_STR(c, "{\"probe\":{\"device\":\"Apple Paravirtual device\","
		  "\"family\":1009,\"supports_family\":true,"
		  "\"max_threadgroup_memory\":65536}}");
	free(c);
	c = with_probe("{}", "garbage", 7);
	CHECK_STR(c, "{\"probe\":\"(neither JSON nor key=value lines)\"}");
	free(c);
}

static void
test_probe_suspect(void)
{
	static const char kv1021[] =
		"device=Apple Paravirtual device\nfamily=1021\n"
		"supports_family=true\nmax_threadgroup_memory=65536\n";
	static const char kv1021_no[] =
		"device=Apple M1 Ultra\nfamily=1021\n"
		"supports_family=false\nmax_threadgroup_memory=32768\n";
	static const char json1020[] =
		"{\"highestFamily\": {\"apple\": 1020}}";
	static const char ours20[] =
		"family=1009\nsupports_family=true\nhighest_apple_family=1020\n";
	struct buf why = BUF_INIT;
	char *c;

	c = with_probe("{\"shim_marker\":true}", kv1021, strlen(kv1021));
	CHECK(suspect_of(c, &why) == 1);
	CHECK_STR(why.buf, "the probe reports MTLGPUFamilyApple21, beyond any "
		  "Apple GPU (highest: Apple10)");
	free(c);
	c = with_probe("{}", kv1021_no, strlen(kv1021_no));
	CHECK(suspect_of(c, NULL) == 0);
	free(c);
	c = with_probe("{}", json1020, strlen(json1020));
	CHECK(suspect_of(c, NULL) == 1);
	free(c);
	c = with_probe("{}", cua_probe_shim, strlen(cua_probe_shim));
	CHECK(suspect_of(c, NULL) == 0);
	free(c);
	c = with_probe("{}", ours20, strlen(ours20));
	buf_reset(&why);
	CHECK(suspect_of(c, &why) == 1);
	CHECK(strstr(why.buf, "MTLGPUFamilyApple20") != NULL);
	free(c);
	buf_release(&why);
}

static void
test_describe(void)
{
	char *c = caps_json_of(shim_stderr, strlen(shim_stderr));
	struct buf d = BUF_INIT;

	describe(c, &d);
	CHECK_STR(d.buf, "metal; Apple Paravirtual device (paravirtual); "
		  "MTLGPUFamilyApple9; simdgroup reduction yes; simdgroup "
		  "matrix mul. yes; bfloat yes; unified memory yes; shim "
		  "enabled for llama-bench (appleFamilyMax=1009)");
	free(c);
	buf_reset(&d);
	describe("{}", &d);
	CHECK_STR(d.buf, "");
	describe(NULL, &d);
	describe("[1]", &d);
	CHECK_STR(d.buf, "");
	c = parse_text("ggml_cuda_init: found 1 ROCm devices (Total VRAM: "
		       "126976 MiB):\n  Device 0: AMD Radeon 8060S Graphics, "
		       "gfx1151 (0x1151), VMM: no, Wave Size: 32, VRAM: 126976 "
		       "MiB\n");
	describe(c, &d);
	CHECK_STR(d.buf, "rocm; AMD Radeon 8060S Graphics; gfx1151; VRAM MiB "
		  "126976; no shim marker");
	free(c);
	buf_release(&d);
}

/* The facts as a struct: typed, per device, read once from the lines. */
static void
test_struct_facts(void)
{
	static const char log[] =
		"ggml_vulkan: Found 1 Vulkan devices:\n"
		"ggml_vulkan: 0 = NVIDIA H200 (NVIDIA) | uma: 0 | fp16: 1 | bf16: 1 | "
		"warp size: 32 | shared memory: 49152 | int dot: 1 | matrix cores: "
		"NV_coopmat2\n"
		"ggml_cuda_init: found 1 CUDA devices (Total VRAM: 143771 MiB):\n"
		"  Device 0: NVIDIA H200, compute capability 9.0, VMM: yes, VRAM: "
		"143771 MiB\n";
	struct caps c;
	const struct caps_device *v, *d;

	caps_read(log, strlen(log), &c);
	CHECK(c.vulkan.present && c.vulkan.count == 1 && c.vulkan.ndev == 1);
	v = &c.vulkan.dev[0];
	CHECK_STR(v->name, "NVIDIA H200 (NVIDIA)");
	CHECK_STR(v->device, "NVIDIA H200");
	CHECK_STR(v->driver, "NVIDIA");
	CHECK(v->uma == 0 && v->fp16 == 1 && v->bf16 == 1 && v->int_dot == 1);
	CHECK(v->warp_size == 32 && v->shared_memory == 49152);
	CHECK_STR(v->matrix_cores, "NV_coopmat2");
	CHECK(v->nextra == 0);
	CHECK(c.cuda.present && c.cuda.total_vram_mib == 143771);
	d = &c.cuda.dev[0];
	CHECK(d->compute_capability == 90 && d->vmm == 1 && d->vram_mib == 143771);
	CHECK(c.norder == 2 && c.order[0] == CAPS_VULKAN && c.order[1] == CAPS_CUDA);
	CHECK(c.sum.nbackends == 2 && c.sum.backend[1] == CAPS_CUDA);
	/* the same device by index and name counts once */
	CHECK(c.sum.ndevices == 1 && !strcmp(c.sum.devices[0], "NVIDIA H200"));
	CHECK(c.sum.ncc == 1 && !strcmp(c.sum.compute_capability[0], "9.0"));
	CHECK(c.sum.nunified == 1 && c.sum.unified_memory[0] == 0);
	CHECK(c.sum.shim_marker == 0 && c.sum.gpu_family == CAPS_NONE);
	caps_release(&c);
	caps_read(shim_stderr, strlen(shim_stderr), &c);
	CHECK(c.metal.present && c.metal.apple_family == 1009);
	CHECK(c.metal.common_family == 3003 && c.metal.metal_family == CAPS_NONE);
	CHECK(c.metal.simdgroup_matrix_mul == 1 && c.metal.has_tensor == 0);
	CHECK(c.metal.use_bfloat == CAPS_UNKNOWN && c.metal.paravirtual == 1);
	CHECK(c.shim.present && c.shim.nparams == 2);
	CHECK_STR(c.shim.params[0].key, "appleFamilyMax");
	CHECK(c.shim.params[0].kind == CAPS_KV_NUM && c.shim.params[0].num == 1009);
	CHECK(c.sum.gpu_family == 1009 && c.sum.shim_marker == 1);
	CHECK(!caps_suspect(&c, NULL));
	caps_release(&c);
	/* a field printed twice: the later counts, as text when not a number */
	{
		static const char twice[] =
			"ggml_vulkan: 0 = X (radv) | uma: 1 | uma: yes\n";
		caps_read(twice, strlen(twice), &c);
	}
	v = &c.vulkan.dev[0];
	CHECK(v->uma == CAPS_NONE && v->nextra == 1);
	CHECK_STR(v->extra[0].key, "uma");
	CHECK_STR(v->extra[0].text, "yes");
	CHECK(c.sum.nunified == 1 && c.sum.unified_memory[0] == 1);
	caps_release(&c);
}

/* What the store keeps reads back as the same facts, also in old orders. */
static void
test_json_both_ways(void)
{
	/* as shimbench stored it before the struct: details in log order */
	static const char stored[] =
		"{\"shim\":{\"line\":\"[LumeMetalCapabilities] Enabled for x "
		"(appleFamilyMax=1021)\",\"process\":\"x\",\"appleFamilyMax\":1021},"
		"\"metal\":{\"gpu_name\":\"MTL0\",\"device\":\"Apple Paravirtual "
		"device\",\"index\":0,\"paravirtual\":true,\"apple_family\":1021},"
		"\"backend\":\"metal\",\"devices\":[\"Apple Paravirtual device\"],"
		"\"gpu_family\":\"MTLGPUFamilyApple21\",\"paravirtual\":true,"
		"\"shim_marker\":true,\"suspect_profile\":\"MTLGPUFamilyApple21 is "
		"beyond any Apple GPU (highest: Apple10)\"}";
	struct caps c, back;
	struct buf d = BUF_INIT;
	char *a, *b;

	CHECK(caps_from_json(stored, &c) == 0);
	CHECK(c.metal.apple_family == 1021 && c.shim.present);
	CHECK(c.sum.gpu_family == 1021 && c.sum.nbackends == 1);
	CHECK(caps_suspect(&c, &d) == 1);
	CHECK(strstr(d.buf, "MTLGPUFamilyApple21") != NULL);
	buf_reset(&d);
	caps_describe(&c, &d);
	CHECK_STR(d.buf, "metal; Apple Paravirtual device (paravirtual); "
		  "MTLGPUFamilyApple21; shim enabled for x (appleFamilyMax=1021); "
		  "SUSPECT PROFILE: MTLGPUFamilyApple21 is beyond any Apple GPU "
		  "(highest: Apple10)");
	a = caps_to_json(&c);
	CHECK(caps_from_json(a, &back) == 0);
	b = caps_to_json(&back);
	CHECK_STR(a, b);
	free(a);
	free(b);
	caps_release(&c);
	caps_release(&back);
	/* not an object: nothing known, and said so */
	CHECK(caps_from_json("[1]", &c) == -1);
	a = caps_to_json(&c);
	CHECK_STR(a, "{}");
	free(a);
	caps_release(&c);
	CHECK(caps_from_json(NULL, &c) == -1);
	caps_release(&c);
	buf_release(&d);
}

static const struct test_case tests[] = {
	{ "metal device lines and the shim marker", test_metal_and_shim },
	{ "shim line without NSLog prefix, shim failure lines", test_shim_without_prefix_and_failures },
	{ "cuda, vulkan, load_backend and dyld lines", test_cuda_vulkan_backends_dyld },
	{ "injection verification", test_verify },
	{ "stock guest stderr from the shipped evidence", test_shared_evidence },
	{ "shim banners: NSLog prefix, sanitised prefix, CRLF, colour", test_banner_forms },
	{ "metal: 2023-24 ggml_metal_init block, bare metal", test_metal_init_2024 },
	{ "summary of the shipped shim, stock and host runs", test_summary_evidence },
	{ "suspect profile: Apple21 and the broad shim profile", test_suspect },
	{ "cuda: 2023 ggml_init_cublas, 2025 VRAM, init failure", test_cuda_forms },
	{ "rocm: found N ROCm devices, gfx, VRAM, failure", test_rocm },
	{ "issue 20: empty ROCm names, the device list, 2024 Vulkan, residency",
	  test_issue20_lines },
	{ "vulkan: N = NAME (DRIVER) and the older VulkanN: form", test_vulkan_forms },
	{ "sycl: the 2024 Part1/Part2 and 2025 device tables", test_sycl_tables },
	{ "buffer names of -v runs; cpu only when alone", test_buffers_and_cpu },
	{ "probe: JSON and key=value output, expectations", test_probe_forms },
	{ "probe: what it claims joins the suspect profile", test_probe_suspect },
	{ "caps_describe: one line for people", test_describe },
	{ "struct caps: typed facts per device, read once", test_struct_facts },
	{ "struct caps as JSON both ways, an older stored order", test_json_both_ways },
};

TEST_MAIN(tests)
