/* llama-bench output parsing across versions, truncation and bad rows. */
#include "test.h"
#include "evidence/llamabench.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

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

/*
 * A llama-bench row (tg128, 2 samples) with key set to value (added when
 * it is not one of the row's keys; left out when value is NULL), and
 * the same for key2.
 */
static char *
row_with2(const char *key, const char *value, const char *key2,
	  const char *value2)
{
	static const char *const kv[][2] = {
		{ "build_commit", "\"ee3d1b54c\"" }, { "build_number", "10167" },
		{ "model_size", "667078656" }, { "model_n_params", "1100048384" },
		{ "n_threads", "8" }, { "n_gpu_layers", "-1" },
		{ "n_depth", "0" }, { "test_time", "\"2026-08-09T18:16:13Z\"" },
		{ "n_prompt", "0" }, { "n_gen", "128" }, { "avg_ts", "320.3" },
		{ "samples_ns", "[400000000, 399250950]" },
		{ "samples_ts", "[320, 320.6]" },
	};
	struct buf b = BUF_INIT;
	size_t i;
	int found = 0, found2 = 0;

	for (i = 0; i < ARRAY_SIZE(kv); i++) {
		const char *v = kv[i][1];

		if (key && !strcmp(key, kv[i][0])) {
			found = 1;
			v = value;
		} else if (key2 && !strcmp(key2, kv[i][0])) {
			found2 = 1;
			v = value2;
		}
		if (v)
			buf_addf(&b, "%s\"%s\": %s", b.len ? ", " : "{",
				 kv[i][0], v);
	}
	if (key && !found && value)
		buf_addf(&b, ", \"%s\": %s", key, value);
	if (key2 && !found2 && value2)
		buf_addf(&b, ", \"%s\": %s", key2, value2);
	buf_addch(&b, '}');
	return buf_detach(&b, NULL);
}

static char *
row_with(const char *key, const char *value)
{
	return row_with2(key, value, NULL, NULL);
}

static int
parse_text(const char *text, struct lb_output *out)
{
	int rc;

	error_silent++;
	rc = lb_parse(text, strlen(text), "t.json", out);
	error_silent--;
	return rc;
}

static void
test_long_samples_linear(void)
{
	/* ~2 MB of samples: quadratic indexing took 89 s for this */
	struct buf b = BUF_INIT;
	struct lb_output o;
	size_t i, n = 150000;
	clock_t t0;
	int rc;

	buf_adds(&b, "[\n{\"n_prompt\": 0, \"n_gen\": 128, \"samples_ns\": [");
	for (i = 0; i < n; i++)
		buf_addf(&b, "%s%zu", i ? "," : "", 400000000 + i % 1000);
	buf_adds(&b, "], \"samples_ts\": [");
	for (i = 0; i < n; i++)
		buf_addf(&b, "%s%.6g", i ? "," : "",
			 1e9 * 128 / (400000000.0 + (double)(i % 1000)));
	buf_adds(&b, "]}\n]\n");
	CHECK(b.len > 2000000);
	t0 = clock();
	rc = lb_parse(b.buf, b.len, "long.json", &o);
	CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
	CHECK(rc == 0);
	CHECK(o.n == 1);
	if (o.n == 1) {
		CHECK(o.rows[0].n_samples == n);
		CHECK(o.rows[0].samples_ns[n - 1] ==
		      (int64_t)(400000000 + (n - 1) % 1000));
	}
	lb_output_release(&o);
	buf_release(&b);
}

static void
test_sample_ranges(void)
{
	static const struct { const char *ns, *err; } bad[] = {
		/* beyond int64: was stored as -9.2e18 */
		{ "[10000000000000000000]", "samples_ns[0] is 1e+19" },
		{ "[400000000, 9223372036854775808]", "samples_ns[1]" },
		{ "[1e999]", "samples_ns[0] is inf" },
		{ "[-400000000]", "samples_ns[0] is -400000000" },
		{ "[0]", "samples_ns[0] is 0" },
		{ "[400000000.5]", "samples_ns[0] is 400000000.5" },
		{ "[\"400000000\"]", "samples_ns[0] is a string" },
	};
	struct lb_output o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		/* no samples_ts: they would not match */
		char *r = row_with2("samples_ns", bad[i].ns, "samples_ts", NULL);
		char *text = xstrfmt("[\n%s\n]\n", r);

		CHECK(parse_text(text, &o) == -1);
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		CHECK(strstr(error_last(), "'t.json' row 1") != NULL);
		if (!strstr(error_last(), bad[i].err))
			printf("  %s: %s\n", bad[i].ns, error_last());
		lb_output_release(&o);
		free(text);
		free(r);
	}
}

static void
test_integer_fields(void)
{
	static const struct { const char *key, *value, *err; } bad[] = {
		{ "n_prompt", "\"0x200\"", "n_prompt must be an integer" },
		{ "n_prompt", "\"512\"", "n_prompt must be an integer" },
		{ "n_prompt", "true", "n_prompt must be an integer" },
		{ "n_prompt", "512.5", "n_prompt must be an integer" },
		{ "n_prompt", "-512", "n_prompt must be an integer" },
		{ "n_prompt", "1e30", "n_prompt must be an integer" },
		{ "n_gen", "\"128\"", "n_gen must be an integer" },
		{ "n_depth", "\"0\"", "n_depth must be an integer" },
		{ "n_threads", "\"8\"", "n_threads must be an integer" },
		{ "build_number", "1e10", "build_number must be an integer" },
		{ "model_size", "-5", "model_size must be an integer" },
		{ "model_n_params", "\"1100048384\"", "model_n_params must be" },
	};
	struct lb_output o;
	size_t i;
	char *r, *text;

	/* the row itself parses */
	r = row_with(NULL, NULL);
	CHECK(parse_text(r, &o) == 0 && o.n == 1);
	lb_output_release(&o);
	free(r);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		r = row_with(bad[i].key, bad[i].value);
		CHECK(parse_text(r, &o) == -1);
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		CHECK(strstr(error_last(), "'t.json' row 1") != NULL);
		if (!strstr(error_last(), bad[i].err))
			printf("  %s: %s\n", bad[i].value, error_last());
		lb_output_release(&o);
		free(r);
	}
	/* a key twice: which one would count? */
	r = row_with(NULL, NULL);
	text = xstrfmt("{\"n_gen\": 16, %s", r + 1);
	CHECK(parse_text(text, &o) == -1);
	CHECK(strstr(error_last(), "key 'n_gen' appears twice") != NULL);
	lb_output_release(&o);
	free(text);
	free(r);
}

static void
test_garbage_is_not_a_run(void)
{
	char *r = row_with(NULL, NULL);
	char *bad[] = {
		xstrdup("[garbage"),
		xstrdup("["),
		xstrdup("[ "),
		xstrdup("[{\"n_prompt\": 0"),  /* cut, but no header line */
		xstrfmt("[\n%s\n]\ntrailing", r),
		xstrfmt("[\n%s\n]\n]", r),
		xstrfmt("[\n%s\n]\n[\n", r),
		xstrfmt("[\n%s,\n  garbage", r),
		xstrfmt("[\n%s,\n  {\"n_prompt\": 0, #}", r),
		xstrfmt("[\n%s,\n  \"cut string", r),
		xstrfmt("[\n%s,\n  12", r),
		xstrdup("{}"),
		xstrdup("{\"a\": 1}"),
		xstrdup("{\"n_prompt\": 512, \"n_gen\": 0}"),
		xstrdup("{\"n_prompt\": 0, \"n_gen\": 0, \"samples_ts\": []}"),
		xstrdup("{\n  \"n_prompt\": 512\n}\n"),
		xstrfmt("%s trailing\n", r),
		xstrfmt("%s\n{\"n_prompt\": 0, garbage", r),
		xstrfmt("%s\n[1, 2", r),
		xstrdup("[\n{}\n]\n"),
		xstrdup("[\n[]\n]\n"),
		xstrdup("[\n\"\\ud800\"\n]\n"),
	};
	struct lb_output o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int rc = parse_text(bad[i], &o);

		CHECK(rc == -1);
		CHECK(strstr(error_last(), "'t.json'") != NULL);
		CHECK(strstr(error_last(), "byte ") != NULL ||
		      strstr(error_last(), "row ") != NULL);
		if (rc != -1)
			printf("  accepted: %s\n", bad[i]);
		lb_output_release(&o);
		free(bad[i]);
	}
	/* the byte is the first one that cannot be there */
	parse_text("[\n  garbage\n", &o);
	lb_output_release(&o);
	CHECK(strstr(error_last(), "unexpected 'g' at byte 4") != NULL);
	free(r);
}

/* The fixture cut after each of its bytes: rows kept, never an error. */
static void
check_every_cut(const char *path, size_t header)
{
	struct buf b = BUF_INIT;
	struct lb_output o;
	size_t k, last = 0, bad = 0;

	if (buf_read_file(&b, path) < 0) {
		CHECK(0);
		return;
	}
	for (k = header; k <= b.len; k++) {
		int rc;

		error_silent++;
		rc = lb_parse(b.buf, k, path, &o);
		error_silent--;
		if (rc != 0 || o.n < last || (k < b.len - 2 && !o.incomplete &&
					      o.format[0] == 'j' &&
					      o.format[4] == '\0')) {
			if (!bad++)
				printf("  cut at %zu: rc %d, %zu rows: %s\n", k,
				       rc, o.n, error_last());
		}
		last = o.n;
		lb_output_release(&o);
	}
	CHECK(bad == 0);
	CHECK(last >= 2);
	buf_release(&b);
}

static void
test_cut_anywhere(void)
{
	/* "[\n" is llama-bench's header: a cut before its newline is not
	 * llama-bench output */
	check_every_cut(FIX "gen2026-evidence.json", 2);
	check_every_cut(FIX "gen2024.json", 2);
	check_every_cut(FIX "gen-current.jsonl", 0);
}

static const struct test_case tests[] = {
	{ "parses 2024-era output (backend booleans, bool flash_attn)", test_gen2024 },
	{ "parses the evidence builds' output", test_evidence_era },
	{ "parses current jsonl with lazy_mode and repack", test_current_jsonl },
	{ "recovers complete rows of truncated output", test_truncated },
	{ "rejects bad rows naming file and row", test_rejects },
	{ "keeps multi-second samples exact", test_slow_samples },
	{ "names tests like llama-bench", test_test_names },
	{ "reads a 2 MB samples array in linear time", test_long_samples_linear },
	{ "refuses samples beyond int64, negative, fractional", test_sample_ranges },
	{ "refuses strings and non-integers in integer fields", test_integer_fields },
	{ "refuses garbage instead of storing an empty run", test_garbage_is_not_a_run },
	{ "keeps the complete rows of output cut at any byte", test_cut_anywhere },
};

TEST_MAIN(tests)
