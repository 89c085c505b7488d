/* Fingerprint probe parsing (recorded macOS outputs) and identities. */
#include "test.h"
#include "evidence/fingerprint.h"
#include "base/json.h"
#include "base/proc.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static cJSON *
probe(const char *file, cJSON **warnings)
{
	struct fingerprint fp = FINGERPRINT_INIT;
	struct buf b = BUF_INIT;
	char *json, **w = NULL;
	size_t nw = 0, i;
	cJSON *o;

	CHECK(buf_read_file(&b, file) == 0);
	fingerprint_from_probe(&fp, b.buf, b.len, &w, &nw);
	json = fingerprint_json(&fp);
	o = cJSON_Parse(json);
	*warnings = cJSON_CreateArray();
	for (i = 0; i < nw; i++)
		cJSON_AddItemToArray(*warnings, cJSON_CreateString(w[i]));
	free(json);
	strv_free(w);
	fingerprint_release(&fp);
	buf_release(&b);
	return o;
}

/* Probe text → fingerprint JSON and the warnings as one JSON array. */
static void
parse_text(const char *text, char **json, char **warnings)
{
	struct fingerprint fp = FINGERPRINT_INIT;
	struct buf b = BUF_INIT;
	char **w = NULL;
	size_t nw = 0, i;

	fingerprint_from_probe(&fp, text, strlen(text), &w, &nw);
	*json = fingerprint_json(&fp);
	buf_addch(&b, '[');
	for (i = 0; i < nw; i++) {
		if (i)
			buf_addch(&b, ',');
		json_quote(&b, w[i]);
	}
	buf_addch(&b, ']');
	*warnings = buf_detach(&b, NULL);
	strv_free(w);
	fingerprint_release(&fp);
}

static int
identity(const char *json, char id[65], char base[65])
{
	struct fingerprint fp = FINGERPRINT_INIT;

	if (fingerprint_from_text(&fp, json, NULL) < 0)
		return -1;
	fingerprint_identity(&fp, id, base);
	fingerprint_release(&fp);
	return 0;
}

static const char *
s(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsString(v) ? v->valuestring : "(none)";
}

static double
n(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void
test_macos_guest(void)
{
	cJSON *w, *o = probe("bench/t/fixtures/probe/macos-guest.txt", &w);

	CHECK_STR(s(o, "os_name"), "macOS");
	CHECK_STR(s(o, "os_version"), "26.5.2");
	CHECK_STR(s(o, "os_build"), "25F84");
	CHECK_STR(s(o, "hw_model"), "VirtualMac2,1");
	CHECK_STR(s(o, "cpu_model"), "Apple M1 Ultra (Virtual)");
	CHECK(n(o, "cpu_cores") == 8);
	CHECK(n(o, "memory_bytes") == 17179869184.0);
	CHECK(n(o, "is_vm") == 1);
	CHECK_STR(s(o, "sip"), "disabled");
	CHECK_STR(s(o, "thermal"), "nominal");
	/* system_profiler is empty in a VM: no GPU keys, no guess */
	CHECK(cJSON_GetObjectItem(o, "gpu_cores") == NULL);
	CHECK(cJSON_GetObjectItem(o, "pvg_unrestricted") == NULL);
	CHECK(cJSON_GetArraySize(w) == 0);
	cJSON_Delete(o);
	cJSON_Delete(w);
}

static void
test_macos_host_warnings(void)
{
	cJSON *w, *o = probe("bench/t/fixtures/probe/macos-host-throttled.txt",
			     &w);
	char *all = cJSON_PrintUnformatted(w);

	CHECK(n(o, "is_vm") == 0);
	CHECK(n(o, "gpu_cores") == 48);
	CHECK(n(o, "pvg_unrestricted") == 1);
	CHECK_STR(s(o, "sip"), "enabled");
	CHECK_STR(s(o, "thermal"), "warning");
	CHECK(strstr(all, "CPU_Speed_Limit") != NULL);
	CHECK(strstr(all, "load average 12.10") != NULL);
	CHECK(strstr(all, "1 other llama process running") != NULL);
	free(all);
	cJSON_Delete(o);
	cJSON_Delete(w);
}

static void
test_identity(void)
{
	char a[65], ab[65], b[65], bb[65], c[65], cb[65];

	CHECK(identity("{\"hw_model\":\"Mac13,2\",\"os_build\":\"25F84\",\"load1\":0.3}", a, ab) == 0);
	/* load is not a stable key */
	CHECK(identity("{\"hw_model\":\"Mac13,2\",\"os_build\":\"25F84\",\"load1\":3.0}", b, bb) == 0);
	CHECK_STR(a, b);
	/* an OS update changes the identity but not the base identity */
	CHECK(identity("{\"hw_model\":\"Mac13,2\",\"os_build\":\"25G76\"}", c, cb) == 0);
	CHECK(strcmp(a, c) != 0);
	CHECK_STR(ab, cb);
	error_silent++;
	CHECK(identity("[1]", c, cb) == -1);
	error_silent--;
}

static void
test_linux_probe_runs(void)
{
	char *json = NULL, *w = NULL;
	static const char text[] =
		"os.uname_s=Linux\nlinux.os_name=Debian GNU/Linux\n"
		"linux.os_version=12\nos.uname_r=6.1.0\n"
		"linux.cpu_cores=2\nlinux.mem_kb=1024\n"
		"linux.hypervisor=0\nload.avg=0.1 0.2 0.3\nproc.llama=0\n";

	parse_text(text, &json, &w);
	CHECK(strstr(json, "\"os_build\":\"6.1.0\"") != NULL);
	CHECK(strstr(json, "\"memory_bytes\":1048576") != NULL);
	CHECK_STR(w, "[]");
	free(json);
	free(w);
}

static void
test_one_thermal_key(void)
{
	/* two warnings: still one "thermal" key (two made the fingerprint
	 * an object with a duplicate key, which strict readers refuse) */
	static const char text[] =
		"os.uname_s=Darwin\nsysctl.hw.ncpu=8\n"
		"pmset.therm=A thermal warning level has been recorded\n"
		"pmset.therm=CPU_Speed_Limit \t= 70\n";
	char *json = NULL, *w = NULL, *p;
	int count = 0;

	parse_text(text, &json, &w);
	for (p = json; (p = strstr(p, "\"thermal\"")); p++)
		count++;
	CHECK(count == 1);
	CHECK(strstr(json, "\"thermal\":\"warning\"") != NULL);
	CHECK(strstr(w, "CPU_Speed_Limit") != NULL);
	free(json);
	free(w);
}

/*
 * Stored JSON → struct → JSON is the text it came from (as base/json
 * prints it), whatever the types and order of the facts, and the
 * identities of the published evidence stay what they were.
 */
static void
test_round_trip_and_published_identity(void)
{
	static const struct {
		const char *json, *id, *base;
	} cases[] = {
		/* the host and guest of the published evidence (2026-08-09) */
		{ "{\"hw_model\":\"Mac13,2\",\"cpu_model\":\"Apple M1 Ultra\",\"cpu_cores\":20,\"memory_bytes\":137438953472,\"gpu\":\"Apple M1 Ultra\",\"gpu_cores\":48,\"os_name\":\"macOS\",\"os_version\":\"26.6.1\",\"os_build\":\"25G76\",\"is_vm\":0,\"llama_build\":\"b10167 (ee3d1b54c)\",\"llama_bench_sha256\":\"28faa552714d0d8150b1daa4e991181d62084c88e25afe9d49d08351794f0da7\"}",
		  "175f099e64f55d4e616cc6529f3578faeba848b67aabab54a5d6de0bce8bacff",
		  "ca277bfe5cf5375450e9786632f57afe7e61e2d33c8b1ed475dd9d1cc7bcecd7" },
		{ "{\"hw_model\":\"VirtualMac2,1\",\"cpu_model\":\"Apple M1 Ultra (Virtual)\",\"cpu_cores\":8,\"memory_bytes\":17179869184,\"gpu\":\"Apple Paravirtual device\",\"os_name\":\"macOS\",\"os_version\":\"26.5.2\",\"os_build\":\"25F84\",\"is_vm\":1,\"sip\":\"disabled\",\"vm_image\":\"ghcr.io/trycua/macos-tahoe-cua:latest\",\"lume_version\":\"0.5.1\",\"llama_build\":\"b10167 (ee3d1b54c)\",\"llama_bench_sha256\":\"28faa552714d0d8150b1daa4e991181d62084c88e25afe9d49d08351794f0da7\",\"shim_sha256\":\"515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31\"}",
		  "9c9bd39c0640c38ed8b6fbf3ccb4fa812587d2e20eaf6e820afc5f8147b8c2ba",
		  "3a94523050852eaf70bf54605844b505249235efd31d6522adfab35226e4c16e" },
		/* any type, any order, nested values, escapes: kept */
		{ "{\"z\":null,\"cpu_cores\":\"20\",\"is_vm\":true,\"load1\":0.25,\"list\":[1,\"a\",{\"b\":false}],\"gpu\":\"A \\\"q\\\" \\u0001\"}",
		  NULL, NULL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fingerprint fp = FINGERPRINT_INIT;
		struct json *j = json_parse(cases[i].json,
					    strlen(cases[i].json), "t");
		char *printed = json_print(j, 0), *back, id[65], base[65];

		CHECK(fingerprint_from_json(&fp, j, NULL) == 0);
		back = fingerprint_json(&fp);
		CHECK_STR(back, printed);
		if (cases[i].id) {
			CHECK_STR(back, cases[i].json);
			fingerprint_identity(&fp, id, base);
			CHECK_STR(id, cases[i].id);
			CHECK_STR(base, cases[i].base);
		}
		free(back);
		free(printed);
		json_free(j);
		fingerprint_release(&fp);
	}
}

/* The typed members decisions read. */
static void
test_typed_members(void)
{
	struct fingerprint fp = FINGERPRINT_INIT, copy;
	char *json;

	CHECK(fingerprint_from_text(&fp, "{\"os_name\":\"macOS\",\"is_vm\":1,"
				    "\"gpu\":\"Apple M1 Ultra\"}", NULL) == 0);
	CHECK(fp.os == FP_OS_MACOS);
	CHECK(fp.is_vm == 1);
	CHECK(fp.gpu && fp.gpu->type == FP_STR);
	CHECK(fp.llama_build == NULL);
	/* set: replaced or new, the key goes last, members follow */
	fingerprint_set(&fp, "llama_build", "b1 (x)");
	fingerprint_set(&fp, "os_name", "Debian GNU/Linux");
	CHECK(fp.os == FP_OS_OTHER);
	CHECK(fp.llama_build && !strcmp(fp.llama_build->str, "b1 (x)"));
	json = fingerprint_json(&fp);
	CHECK_STR(json, "{\"is_vm\":1,\"gpu\":\"Apple M1 Ultra\","
		  "\"llama_build\":\"b1 (x)\",\"os_name\":\"Debian GNU/Linux\"}");
	free(json);
	fingerprint_copy(&copy, &fp);
	fingerprint_release(&fp);
	CHECK(copy.is_vm == 1 && copy.os == FP_OS_OTHER);
	CHECK(copy.gpu && !strcmp(copy.gpu->str, "Apple M1 Ultra"));
	fingerprint_release(&copy);
	/* "true", "yes", true are a VM; 0, false, "no" are not; absent unknown */
	CHECK(fingerprint_from_text(&fp, "{\"is_vm\":\"yes\"}", NULL) == 0);
	CHECK(fp.is_vm == 1 && fp.os == FP_OS_UNKNOWN);
	fingerprint_release(&fp);
	CHECK(fingerprint_from_text(&fp, "{\"is_vm\":false}", NULL) == 0);
	CHECK(fp.is_vm == 0);
	fingerprint_release(&fp);
	CHECK(fingerprint_from_text(&fp, "{}", NULL) == 0);
	CHECK(fp.is_vm == -1);
	fingerprint_release(&fp);
	/* stored text that is not an object is refused, not guessed */
	error_silent++;
	CHECK(fingerprint_from_text(&fp, "[1]", NULL) == -1);
	CHECK(fingerprint_from_text(&fp, "garbage", NULL) == -1);
	error_silent--;
	fingerprint_release(&fp);
}

/* The GPU probe: NVIDIA first, else the first Vulkan device; once. */
static void
test_gpu_probe(void)
{
	static const char base[] =
		"os.uname_s=Linux\nlinux.os_name=Debian GNU/Linux\n"
		"linux.cpu_cores=2\n";
	struct fingerprint fp = FINGERPRINT_INIT;
	char **w = NULL;
	size_t nw = 0;
	char *json;

	fingerprint_from_probe(&fp, base, strlen(base), &w, &nw);
	CHECK(fp.gpu == NULL);
	CHECK(fingerprint_add_gpu_probe(&fp, "", 0) == 0);
	{
		static const char vk[] = "gpu.vulkan=llvmpipe (LLVM 15)\n"
			"gpu.vulkan=second\n";

		CHECK(fingerprint_add_gpu_probe(&fp, vk, strlen(vk)) == 1);
	}
	CHECK(fp.gpu && !strcmp(fp.gpu->str, "llvmpipe (LLVM 15)"));
	/* it has one now: a later answer changes nothing */
	{
		static const char nv[] = "gpu.nvidia=NVIDIA H200, 570\n";

		CHECK(fingerprint_add_gpu_probe(&fp, nv, strlen(nv)) == 0);
	}
	fingerprint_release(&fp);
	/* in one probe with the base lines: NVIDIA wins, at its old place */
	{
		static const char both[] =
			"os.uname_s=Linux\nlinux.os_name=Debian GNU/Linux\n"
			"linux.governor=performance\n"
			"gpu.vulkan=NVIDIA H200\ngpu.nvidia=NVIDIA H200, 570.1\n"
			"load.avg=0.1 0.2 0.3\n";

		fingerprint_from_probe(&fp, both, strlen(both), &w, &nw);
		json = fingerprint_json(&fp);
		CHECK(strstr(json, "\"cpu_governor\":\"performance\","
			     "\"gpu\":\"NVIDIA H200, 570.1\",\"load1\"") != NULL);
		free(json);
		fingerprint_release(&fp);
	}
	strv_free(w);
}

/* Lines of probe output without the ones that change from one call to
 * the next (the load, other llama processes coming and going). */
static char *
stable_lines(const char *text)
{
	struct buf b = BUF_INIT;
	const char *p = text, *nl;

	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (strncmp(p, "load.avg=", 9) && strncmp(p, "proc.llama=", 11)) {
			buf_add(&b, p, (size_t)(nl - p));
			buf_addch(&b, '\n');
		}
		if (!*nl)
			break;
	}
	return buf_detach(&b, NULL);
}

/*
 * On Linux the base probe of a local target is read in the process; it
 * must say exactly what the shell snippet says on this machine.
 */
static void
test_probe_here_matches_snippet(void)
{
	const char *argv[] = { "/bin/sh", "-c", fingerprint_probe_script, NULL };
	struct buf here = BUF_INIT;
	struct proc p = PROC_INIT;
	char *a, *b, **w = NULL;
	size_t nw = 0;
	struct fingerprint fa = FINGERPRINT_INIT, fb = FINGERPRINT_INIT;
	const struct fp_fact *f;

	if (fingerprint_probe_here(&here) < 0) {
		printf("  SKIP: not Linux, the shell probe is the only one\n");
		CHECK(here.len == 0);
		return;
	}
	p.argv = argv;
	p.timeout = 60;
	CHECK(proc_run(&p) == 0 && p.status == 0);
	a = stable_lines(here.buf);
	b = stable_lines(p.out.buf);
	CHECK_STR(a, b);
	/* both parse to the same facts but the moving ones */
	fingerprint_from_probe(&fa, here.buf, here.len, &w, &nw);
	fingerprint_from_probe(&fb, p.out.buf, p.out.len, &w, &nw);
	fingerprint_set(&fa, "load1", "x");
	fingerprint_set(&fb, "load1", "x");
	fingerprint_set(&fa, "llama_processes", "x");
	fingerprint_set(&fb, "llama_processes", "x");
	free(a);
	free(b);
	a = fingerprint_json(&fa);
	b = fingerprint_json(&fb);
	CHECK_STR(a, b);
	/* and the moving ones are there, as numbers */
	CHECK(strstr(here.buf, "\nload.avg=") != NULL);
	CHECK(strstr(here.buf, "\nproc.llama=") != NULL);
	fingerprint_release(&fa);
	fingerprint_from_probe(&fa, here.buf, here.len, &w, &nw);
	f = fa.load1;
	CHECK(f && f->type == FP_NUM && f->num >= 0);
	CHECK(fa.os == FP_OS_OTHER && fa.cpu_cores && fa.cpu_cores->num >= 1);
	free(a);
	free(b);
	strv_free(w);
	fingerprint_release(&fa);
	fingerprint_release(&fb);
	proc_release(&p);
	buf_release(&here);
}

static const struct test_case tests[] = {
	{ "macOS guest probe output", test_macos_guest },
	{ "macOS host: thermal limit, load and llama process warnings", test_macos_host_warnings },
	{ "identity keeps stable keys; base identity ignores the OS", test_identity },
	{ "Linux probe output", test_linux_probe_runs },
	{ "two thermal warnings give one thermal key", test_one_thermal_key },
	{ "stored JSON round-trips; the published identities stay", test_round_trip_and_published_identity },
	{ "typed members, set and copy", test_typed_members },
	{ "the GPU probe: NVIDIA first, else Vulkan, once", test_gpu_probe },
	{ "the in-process probe says what the shell snippet says", test_probe_here_matches_snippet },
};

TEST_MAIN(tests)
