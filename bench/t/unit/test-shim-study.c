/*
 * bench/plans/shim-study.json against recorded outputs, through
 * derive_verification() directly: the shim variant's own markers and
 * probe expectations, the published evidence's stderr (a run of the
 * published dylib) and the probe recordings of bench/t/fixtures/
 * metal-probe (ours recorded, the published probe's written from its
 * documented output, see the README there). Needs no llama-bench;
 * t5100 runs the same plan end to end. Run from the repository root.
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "evidence/derive.h"
#include "evidence/runrec.h"
#include "run/plan.h"
#include "base/json.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define EV "evidence/cua-lume-2026-08-09-m1-ultra/"
#define PF "bench/t/fixtures/metal-probe/"

static struct plan plan;
static const struct plan_variant *shim;

static const struct plan_variant *
shim_variant(void)
{
	size_t i;

	if (shim)
		return shim;
	if (plan_load("bench/plans/shim-study.json", NULL, &plan) < 0)
		return NULL;
	for (i = 0; i < plan.nvariants; i++)
		if (!strcmp(plan.variants[i].role, "shim"))
			shim = &plan.variants[i];
	return shim;
}

static char *
slurp(const char *path)
{
	struct buf b = BUF_INIT;

	CHECK(buf_read_file(&b, path) == 0);
	return buf_detach(&b, NULL);
}

/*
 * The verification of a run of the plan's shim variant whose stderr is
 * err (text) and whose probe printed probe (text); *detail gets the
 * detail (the caller frees).
 */
static char *
verify(const char *err, const char *probe, char **detail)
{
	const struct plan_variant *v = shim_variant();
	struct run_data rd;
	struct buf ex = BUF_INIT;
	struct jw w;
	char *ret;
	size_t i;

	memset(&rd, 0, sizeof(rd));
	jw_init(&w, &ex, 0);
	jw_array(&w);
	for (i = 0; v && i < v->nexpect; i++)
		jw_str(&w, v->expect[i]);
	jw_end(&w);
	rd.r.expect_json = buf_detach(&ex, NULL);
	rd.r.probe_expect_json = v && v->probe_expect ?
		xstrdup(v->probe_expect) : NULL;
	rd.r.stderr_text = rec_blob_dup(err, strlen(err));
	if (probe)
		rd.r.probe_text = rec_blob_dup(probe, strlen(probe));
	CHECK(derive_verification(&rd) == 0);
	ret = xstrdup(rd.r.verification ? rd.r.verification : "(none)");
	*detail = xstrdup(rd.r.verification_detail ?
			  rd.r.verification_detail : "");
	rec_release(runrec_fields, runrec_nfields, &rd.r);
	return ret;
}

static void
expect_verdict(const char *stderr_path, const char *stderr_text,
	       const char *probe_path, const char *want, const char *in_detail)
{
	char *err = stderr_text ? xstrdup(stderr_text) : slurp(stderr_path);
	char *probe = probe_path ? slurp(probe_path) : NULL;
	char *detail, *got = verify(err, probe, &detail);

	if (strcmp(got, want) || !strstr(detail, in_detail)) {
		printf("  %s + %s: %s (%s)\n", stderr_path ? stderr_path :
		       "(composed stderr)", probe_path ? probe_path : "no probe",
		       got, detail);
		CHECK(0);
	}
	free(err);
	free(probe);
	free(detail);
	free(got);
}

static void
test_plan_shape(void)
{
	const struct plan_variant *v = shim_variant();
	struct json *ex;

	CHECK(v != NULL);
	if (!v)
		return;
	/* Cua's guide runs the probe as `metal-capabilities 1009` */
	CHECK(v->probe_argv && v->probe_argv[1] &&
	      !strcmp(v->probe_argv[1], "1009") && !v->probe_argv[2]);
	ex = json_parse(v->probe_expect, strlen(v->probe_expect), "expect");
	/* keys the published probe prints; nothing only our JSON has */
	CHECK(json_size(ex) == 2);
	CHECK(json_bool(json_get(ex, "supports_family")) == 1);
	CHECK(json_num(json_get(ex, "family")) == 1009);
	json_free(ex);
	CHECK(v->nexpect == 3);
	CHECK(v->inject_sha256 && !strcmp(v->inject_sha256,
		"515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31"));
}

static void
test_published_dylib_and_probe(void)
{
	expect_verdict(EV "tiny-safe-shim-10x-final.stderr", NULL,
		       PF "cua-shim-1009.txt", "verified",
		       "probe: family = 1009, supports_family = true");
	expect_verdict("evidence/cua-lume-2026-08-10-m1-ultra-gemma4/"
		       "gemma4-safe-shim-10x.stderr", NULL,
		       PF "cua-shim-1009.txt", "verified", "found '");
}

static void
test_our_probe_both_forms(void)
{
	expect_verdict(EV "tiny-safe-shim-10x-final.stderr", NULL,
		       PF "ours-shim-1009.txt", "verified",
		       "supports_family = true");
	expect_verdict(EV "tiny-safe-shim-10x-final.stderr", NULL,
		       PF "ours-shim-1009.json", "verified",
		       "supports_family = true");
}

/*
 * Our shim's recorded banner (bench/t/fixtures/shim-marker.stderr, from
 * the GNU-runtime build) in place of the published one's, before
 * llama.cpp's lines of the published run: the plan verifies our shim's
 * marker too.
 */
static void
test_our_marker(void)
{
	char *ours = slurp("bench/t/fixtures/shim-marker.stderr");
	char *theirs = slurp(EV "tiny-safe-shim-10x-final.stderr");
	char *ggml = strchr(theirs, '\n');
	char *both = xstrfmt("%s%s", ours, ggml ? ggml + 1 : "");

	CHECK(strstr(theirs, "[LumeMetalCapabilities]") < ggml);
	CHECK(strstr(ggml, "[LumeMetalCapabilities]") == NULL);
	expect_verdict(NULL, both, PF "ours-shim-1009.txt", "verified", "found");
	free(ours);
	free(theirs);
	free(both);
}

static void
test_never_a_shim_result(void)
{
	/* injection pruned: stock llama.cpp lines, the probe's stock answer */
	expect_verdict(EV "tiny-stock-minimal.stderr", NULL,
		       PF "cua-stock-1009.txt", "unverified",
		       "supports_family is false, expected true");
	expect_verdict(EV "tiny-stock-minimal.stderr", NULL,
		       PF "ours-stock-1009.txt", "unverified", "missing markers");
	/* the probe saw the shim, llama-bench did not (a hardened binary) */
	expect_verdict(EV "tiny-stock-minimal.stderr", NULL,
		       PF "cua-shim-1009.txt", "unverified", "missing markers");
	/* llama-bench saw it, the probe's answer was never recorded */
	expect_verdict(EV "tiny-safe-shim-10x-final.stderr", NULL, NULL,
		       "unverified", "probe: no probe output recorded");
	/* the broad profile */
	expect_verdict(EV "tiny-hooked-minimal.stderr", NULL,
		       PF "cua-shim-1009.txt", "unverified",
		       "suspect profile: MTLGPUFamilyApple21 is beyond any "
		       "Apple GPU (highest: Apple10)");
	/* the shim refused its configuration */
	expect_verdict("bench/t/fixtures/shim-refusal.stderr", NULL,
		       PF "ours-stock-1009.txt", "unverified", "missing markers");
}

static void
cleanup(void)
{
	if (shim)
		plan_free(&plan);
	shim = NULL;
}

static const struct test_case tests[] = {
	{ "the plan asks what the published probe answers", test_plan_shape },
	{ "the published dylib and probe: verified", test_published_dylib_and_probe },
	{ "our probe, key=value and --json: verified", test_our_probe_both_forms },
	{ "our shim's recorded marker: verified", test_our_marker },
	{ "pruned, half-injected, suspect, refused: never verified", test_never_a_shim_result },
	{ "(release the plan)", cleanup },
};

TEST_MAIN(tests)
