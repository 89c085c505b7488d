/* llama-bench output parsing across versions, truncation and bad rows. */
#include "test.h"
#include "evidence/llamabench.h"
#include "base/util.h"

#include <math.h>

#define FIX "bench/t/fixtures/llama-bench/"

static int
parse_file(const char *name, struct lb_output *out)
{
	struct buf b = BUF_INIT;
	int rc;

	if (buf_read_file(&b, name) < 0)
		return -99;
	error_silent++;
	rc = lb_parse(b.buf, b.len, name, out);
	error_silent--;
	buf_release(&b);
	return rc;
}

static void
test_gen2024(void)
{
	struct lb_output o;

	CHECK(parse_file(FIX "gen2024.json", &o) == 0);
	CHECK(o.n == 2);
	CHECK(!o.incomplete);
	CHECK_STR(o.format, "json");
	if (o.n == 2) {
		CHECK_STR(o.rows[0].test, "pp512");
		CHECK_STR(o.rows[1].test, "tg128");
		CHECK_STR(o.rows[0].backends, "Metal,BLAS");
		CHECK_STR(o.rows[0].flash_attn, "off");
		CHECK(o.rows[0].n_samples == 5);
		CHECK(o.rows[0].n_depth == 0);
		CHECK(o.rows[0].model_n_params == 393216);
		/* unknown fields survive in the raw row */
		CHECK(strstr(o.rows[0].raw_json, "\"use_mmap\":true") != NULL);
	}
	lb_output_release(&o);
}

static void
test_evidence_era(void)
{
	struct lb_output o;

	CHECK(parse_file(FIX "gen2026-evidence.json", &o) == 0);
	CHECK(o.n == 2);
	if (o.n == 2) {
		CHECK_STR(o.rows[0].backends, "MTL,BLAS");
		CHECK_STR(o.rows[0].flash_attn, "auto");
		CHECK(o.rows[0].build_number == 10167);
		CHECK(o.rows[1].model_size == 667078656);
		CHECK(o.rows[1].samples_ns[0] > 0);
		CHECK(strstr(o.rows[0].raw_json, "\"load_mode\":\"mmap\""));
	}
	lb_output_release(&o);
}

static void
test_current_jsonl(void)
{
	struct lb_output o;

	CHECK(parse_file(FIX "gen-current.jsonl", &o) == 0);
	CHECK(o.n == 3);
	CHECK_STR(o.format, "jsonl");
	CHECK(!o.incomplete);
	if (o.n == 3) {
		CHECK_STR(o.rows[2].test, "pp64+tg16 @ d256");
		CHECK_STR(o.rows[0].flash_attn, "off");
		CHECK(strstr(o.rows[0].raw_json, "\"lazy_mode\":\"auto\""));
		CHECK(strstr(o.rows[0].raw_json, "\"repack\":true"));
	}
	lb_output_release(&o);
}

static void
test_truncated(void)
{
	struct lb_output o;

	CHECK(parse_file(FIX "truncated.json", &o) == 0);
	CHECK(o.n == 2);
	CHECK(o.incomplete);
	lb_output_release(&o);
	CHECK(parse_file(FIX "truncated.jsonl", &o) == 0);
	CHECK(o.n == 1);
	CHECK(o.incomplete);
	lb_output_release(&o);
	CHECK(parse_file(FIX "died-first-row.json", &o) == 0);
	CHECK(o.n == 0);
	CHECK(o.incomplete);
	lb_output_release(&o);
	CHECK(lb_parse("", 0, "empty", &o) == 0);
	CHECK(o.incomplete && o.n == 0);
	lb_output_release(&o);
	/* the upstream variant that skips failed rows but closes the array */
	CHECK(lb_parse("[\n\n]\n", 5, "closed", &o) == 0);
	CHECK(!o.incomplete && o.n == 0);
	lb_output_release(&o);
}

static void
test_rejects(void)
{
	static const char *const bad[] = {
		FIX "bad-lengths.json", FIX "bad-inconsistent.json",
		FIX "bad-negative.json", FIX "bad-nonfinite.json",
		FIX "garbage.txt",
	};
	struct lb_output o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(parse_file(bad[i], &o) == -1);
		lb_output_release(&o);
	}
	/* the error names the file and the row */
	parse_file(FIX "bad-lengths.json", &o);
	lb_output_release(&o);
	CHECK(strstr(error_last(), "bad-lengths.json") != NULL);
	CHECK(strstr(error_last(), "row 2") != NULL);
	parse_file(FIX "bad-negative.json", &o);
	lb_output_release(&o);
	CHECK(strstr(error_last(), "samples_ns[2]") != NULL);
}

static void
test_slow_samples(void)
{
	struct lb_output o;
	size_t i;

	/* multi-second samples: llama-bench's own stddev_ns overflows;
	 * the samples themselves must come through intact */
	CHECK(parse_file(FIX "slow-overflow.json", &o) == 0);
	CHECK(o.n == 1);
	if (o.n == 1) {
		CHECK(o.rows[0].n_samples == 10);
		for (i = 0; i < o.rows[0].n_samples; i++)
			CHECK(o.rows[0].samples_ns[i] > 3000000000LL);
		CHECK_NEAR(o.rows[0].samples_ts[0],
			   1e9 * 128 / 3512619343.0, 1e-3);
	}
	lb_output_release(&o);
}

static void
test_test_names(void)
{
	char name[64];

	lb_test_name(512, 0, 0, name, sizeof(name));
	CHECK_STR(name, "pp512");
	lb_test_name(0, 128, 0, name, sizeof(name));
	CHECK_STR(name, "tg128");
	lb_test_name(512, 128, 0, name, sizeof(name));
	CHECK_STR(name, "pp512+tg128");
	lb_test_name(0, 128, 4096, name, sizeof(name));
	CHECK_STR(name, "tg128 @ d4096");
}

static const struct test_case tests[] = {
	{ "parses 2024-era output (backend booleans, bool flash_attn)", test_gen2024 },
	{ "parses the evidence builds' output", test_evidence_era },
	{ "parses current jsonl with lazy_mode and repack", test_current_jsonl },
	{ "recovers complete rows of truncated output", test_truncated },
	{ "rejects bad rows naming file and row", test_rejects },
	{ "keeps multi-second samples exact", test_slow_samples },
	{ "names tests like llama-bench", test_test_names },
};

TEST_MAIN(tests)
