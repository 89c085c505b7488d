/*
 * derive_verification(): a run's verification from its stderr, probe
 * output and expectations, with the shipped evidence's stderr files.
 * Run from the repository root.
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "evidence/derive.h"
#include "evidence/runrec.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define EV "evidence/cua-lume-2026-08-09-m1-ultra/"

static const char markers[] =
	"[\"[LumeMetalCapabilities] Enabled for\", "
	"\"GPU family: MTLGPUFamilyApple9\", \"simdgroup matrix mul. = true\"]";

/* A run of stderr file err (and probe text) with expectations. */
static void
run_of(struct run_data *rd, const char *err, const char *probe,
       const char *expect, const char *probe_expect)
{
	struct buf b = BUF_INIT;

	memset(rd, 0, sizeof(*rd));
	if (err) {
		CHECK(buf_read_file(&b, err) == 0);
		rd->r.stderr_text = rec_blob_dup(b.buf ? b.buf : "", b.len);
	}
	if (probe)
		rd->r.probe_text = rec_blob_dup(probe, strlen(probe));
	rd->r.expect_json = expect ? xstrdup(expect) : NULL;
	rd->r.probe_expect_json = probe_expect ? xstrdup(probe_expect) : NULL;
	buf_release(&b);
}

static void
release(struct run_data *rd)
{
	rec_release(runrec_fields, runrec_nfields, &rd->r);
}

static void
test_suspect_is_never_verified(void)
{
	struct run_data rd;

	/* the superseded broad profile: its marker is there, Apple21 too */
	run_of(&rd, EV "tiny-hooked-minimal.stderr", NULL,
	       "[\"[LumeMetalCapabilities] Enabled for\"]", NULL);
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "unverified");
	CHECK(strstr(rd.r.verification_detail, "suspect profile: "
		     "MTLGPUFamilyApple21 is beyond any Apple GPU (highest: "
		     "Apple10)") == rd.r.verification_detail);
	CHECK(strstr(rd.r.verification_detail, "found '[LumeMetalCapabilities] "
		     "Enabled for'") != NULL);
	CHECK(strstr(rd.r.capabilities_json, "\"suspect_profile\":") != NULL);
	release(&rd);
	/* expecting nothing: not-required, and it says why it is suspect */
	run_of(&rd, EV "tiny-hooked-minimal.stderr", NULL, NULL, NULL);
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "not-required");
	CHECK(rd.r.verification_detail && strstr(rd.r.verification_detail,
		"suspect profile: MTLGPUFamilyApple21") == rd.r.verification_detail);
	release(&rd);
	/* a probe that claims Apple21 makes a marker-verified run suspect */
	run_of(&rd, EV "tiny-safe-shim-10x-final.stderr",
	       "device=Apple Paravirtual device\nfamily=1021\n"
	       "supports_family=true\nmax_threadgroup_memory=65536\n",
	       markers, "{\"supports_family\": true}");
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "unverified");
	CHECK(strstr(rd.r.verification_detail, "the probe reports "
		     "MTLGPUFamilyApple21") != NULL);
	release(&rd);
}

static void
test_published_runs(void)
{
	struct run_data rd;

	run_of(&rd, EV "tiny-safe-shim-10x-final.stderr", NULL, markers, NULL);
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "verified");
	CHECK_STR(rd.r.verification_detail, "found '[LumeMetalCapabilities] "
		  "Enabled for', 'GPU family: MTLGPUFamilyApple9', 'simdgroup "
		  "matrix mul. = true'");
	release(&rd);
	run_of(&rd, EV "tiny-stock-minimal.stderr", NULL, markers, NULL);
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "unverified");
	CHECK(strstr(rd.r.verification_detail, "missing markers") != NULL);
	release(&rd);
	run_of(&rd, EV "tiny-host-minimal.stderr", NULL, NULL, NULL);
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "not-required");
	CHECK(rd.r.verification_detail == NULL);
	release(&rd);
}

static void
test_probe_only(void)
{
	struct run_data rd;

	run_of(&rd, NULL, "{\"supportsFamily\": {\"1009\": true}}", NULL,
	       "{\"supportsFamily.1009\": true}");
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "verified");
	CHECK_STR(rd.r.verification_detail, "probe: supportsFamily.1009 = true");
	release(&rd);
	run_of(&rd, NULL, NULL, NULL, "{\"supports_family\": true}");
	CHECK(derive_verification(&rd) == 0);
	CHECK_STR(rd.r.verification, "unverified");
	CHECK_STR(rd.r.verification_detail, "probe: no probe output recorded");
	release(&rd);
}

static const struct test_case tests[] = {
	{ "a suspect profile is never verified", test_suspect_is_never_verified },
	{ "the published shim, stock and host runs", test_published_runs },
	{ "probe expectations alone", test_probe_only },
};

TEST_MAIN(tests)
