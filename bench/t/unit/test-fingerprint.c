/* Fingerprint probe parsing (recorded macOS outputs) and identities. */
#include "test.h"
#include "evidence/fingerprint.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static cJSON *
probe(const char *file, cJSON **warnings)
{
	struct buf b = BUF_INIT;
	char *json = NULL, *w = NULL;
	cJSON *o;

	CHECK(buf_read_file(&b, file) == 0);
	CHECK(fingerprint_parse(b.buf, b.len, &json, &w) == 0);
	o = cJSON_Parse(json);
	*warnings = cJSON_Parse(w);
	free(json);
	free(w);
	buf_release(&b);
	return o;
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

	CHECK(fingerprint_identity("{\"hw_model\":\"Mac13,2\",\"os_build\":\"25F84\",\"load1\":0.3}", a, ab) == 0);
	/* load is not a stable key */
	CHECK(fingerprint_identity("{\"hw_model\":\"Mac13,2\",\"os_build\":\"25F84\",\"load1\":3.0}", b, bb) == 0);
	CHECK_STR(a, b);
	/* an OS update changes the identity but not the base identity */
	CHECK(fingerprint_identity("{\"hw_model\":\"Mac13,2\",\"os_build\":\"25G76\"}", c, cb) == 0);
	CHECK(strcmp(a, c) != 0);
	CHECK_STR(ab, cb);
	error_silent++;
	CHECK(fingerprint_identity("[1]", c, cb) == -1);
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

	CHECK(fingerprint_parse(text, strlen(text), &json, &w) == 0);
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

	CHECK(fingerprint_parse(text, strlen(text), &json, &w) == 0);
	for (p = json; (p = strstr(p, "\"thermal\"")); p++)
		count++;
	CHECK(count == 1);
	CHECK(strstr(json, "\"thermal\":\"warning\"") != NULL);
	CHECK(strstr(w, "CPU_Speed_Limit") != NULL);
	free(json);
	free(w);
}

static const struct test_case tests[] = {
	{ "macOS guest probe output", test_macos_guest },
	{ "macOS host: thermal limit, load and llama process warnings", test_macos_host_warnings },
	{ "identity keeps stable keys; base identity ignores the OS", test_identity },
	{ "Linux probe output", test_linux_probe_runs },
	{ "two thermal warnings give one thermal key", test_one_thermal_key },
};

TEST_MAIN(tests)
