/* MLX-LM benchmark output: the harness JSON and mlx_lm.benchmark stdout. */
#include "test.h"
#include "evidence/llamabench.h"
#include "evidence/mlxlm.h"
#include "analysis/stats.h"
#include "base/files.h"
#include "base/util.h"

#include <stdlib.h>

static int
parse_text(const char *text, struct lb_output *o)
{
	int rc;

	error_silent++;
	rc = mlx_parse(text, strlen(text), "inline", o);
	error_silent--;
	return rc;
}

static void
test_benchmark_stdout(void)
{
	struct buf b = BUF_INIT;
	struct lb_output o;

	CHECK(buf_read_file(&b, "bench/t/fixtures/mlx/benchmark-stdout.txt") == 0);
	CHECK(mlx_parse(b.buf, b.len, "stdout", &o) == 0);
	CHECK(o.n == 2);
	if (o.n == 2) {
		CHECK_STR(o.rows[0].test, "pp512");
		CHECK_STR(o.rows[1].test, "tg128");
		CHECK(o.rows[0].n_samples == 3);
		CHECK_NEAR(o.rows[0].samples_ts[1], 1662.48, 1e-9);
		CHECK_NEAR(stats_median(o.rows[1].samples_ts, 3), 171.9, 1e-9);
		CHECK_STR(o.rows[0].backends, "MLX");
	}
	lb_output_release(&o);
	buf_release(&b);
}

/*
 * Real mlx_lm.benchmark output of each published generation
 * (fixtures/mlx/README.md): with total_time and without it, both with
 * batch_size in the Timing line; medians read off the files by hand.
 */
static void
test_benchmark_generations(void)
{
	static const struct {
		const char *file, *pp, *tg;
		double pp_median, tg_median, first_pp;
	} t[] = {
		{ "goniz-mlx-vulkan-qwen3-0.6b-bf16-total-time.txt", "pp4096",
		  "tg128", 2303.616, 33.633, 2306.928 },
		{ "mlxlm-0.31.1-qwen35-4b-no-total-time.txt", "pp1024", "tg64",
		  359.376, 38.759, 361.322 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		struct buf b = BUF_INIT;
		struct lb_output o;
		char *path = xstrfmt("bench/t/fixtures/mlx/%s", t[i].file);

		CHECK(buf_read_file(&b, path) == 0);
		CHECK(mlx_parse(b.buf, b.len, t[i].file, &o) == 0);
		CHECK(o.n == 2);
		if (o.n == 2) {
			CHECK_STR(o.rows[0].test, t[i].pp);
			CHECK_STR(o.rows[1].test, t[i].tg);
			CHECK(o.rows[0].n_samples == 5 && o.rows[1].n_samples == 5);
			CHECK_NEAR(o.rows[0].samples_ts[0], t[i].first_pp, 1e-9);
			CHECK_NEAR(stats_median(o.rows[0].samples_ts, 5),
				   t[i].pp_median, 1e-9);
			CHECK_NEAR(stats_median(o.rows[1].samples_ts, 5),
				   t[i].tg_median, 1e-9);
			CHECK(strstr(o.rows[0].raw_json, "\"batch_size\":1") != NULL);
		}
		lb_output_release(&o);
		buf_release(&b);
		free(path);
	}
}

/* Trial lines of forks and of batched runs; what is refused and why. */
static void
test_trial_forms(void)
{
	struct lb_output o;

	/* a fork's extra key, a batch of 4, no Timing batch_size (read: 1) */
	CHECK(parse_text("Timing with prompt_tokens=64, generation_tokens=8, "
			 "batch_size=4.\nTrial 1:  prompt_tps=10.000, "
			 "generation_tps=2.000, generation_tps_wall=1.900, "
			 "peak_memory=0.4, total_time=1.2\n", &o) == 0);
	CHECK(o.n == 2 && strstr(o.rows[0].raw_json, "\"batch_size\":4"));
	CHECK(o.n == 2 && o.rows[1].samples_ts[0] == 2.0);
	lb_output_release(&o);
	CHECK(parse_text("Timing with prompt_tokens=64, generation_tokens=8.\n"
			 "Trial 1:  prompt_tps=10.0, generation_tps=2.0, "
			 "peak_memory=0.4\n", &o) == 0);
	CHECK(o.n == 2 && strstr(o.rows[0].raw_json, "\"batch_size\":1"));
	lb_output_release(&o);
	/* a trial without a generation rate: refused, naming the line */
	CHECK(parse_text("Timing with prompt_tokens=64, generation_tokens=8.\n"
			 "Trial 1:  prompt_tps=10.0, peak_memory=0.4\n", &o) < 0);
	CHECK(strstr(error_last(), "line 2: a trial without generation_tps"));
	lb_output_release(&o);
	/* no Timing line: the counts are unknown */
	CHECK(parse_text("Trial 1:  prompt_tps=10.0, generation_tps=2.0\n",
			 &o) < 0);
	CHECK(strstr(error_last(), "no 'Timing with prompt_tokens=P"));
	lb_output_release(&o);
}

static void
test_harness_json(void)
{
	static const char json[] =
		"{\"schema_version\":1,\"runtime\":{\"mlx_lm\":\"0.31.3\"},"
		"\"model\":{\"id\":\"mlx-community/x\"},"
		"\"configuration\":{\"prompt_tokens\":256,\"generation_tokens\":64},"
		"\"samples\":[{\"prompt_tps\":10.5,\"generation_tps\":2.5},"
		"{\"prompt_tps\":11.5,\"generation_tps\":3.5}]}";
	struct lb_output o;

	CHECK(parse_text(json, &o) == 0);
	CHECK(o.n == 2);
	if (o.n == 2) {
		CHECK_STR(o.rows[0].test, "pp256");
		CHECK_STR(o.rows[1].test, "tg64");
		CHECK_STR(o.rows[0].build_commit, "mlx-lm 0.31.3");
		CHECK_STR(o.rows[0].model_type, "mlx-community/x");
		CHECK(o.rows[1].samples_ts[1] == 3.5);
		CHECK(strstr(o.rows[0].raw_json, "\"samples\"") == NULL);
	}
	lb_output_release(&o);
}

static void
test_rejects(void)
{
	struct lb_output o;

	CHECK(parse_text("{\"configuration\":{\"prompt_tokens\":1,"
			 "\"generation_tokens\":1},\"samples\":[{\"prompt_tps\":-1,"
			 "\"generation_tps\":1}]}", &o) == -1);
	CHECK(strstr(error_last(), "sample 1") != NULL);
	lb_output_release(&o);
	CHECK(parse_text("{\"samples\":[]}", &o) == -1);
	lb_output_release(&o);
	CHECK(parse_text("Running warmup..\nnothing else\n", &o) == -1);
	lb_output_release(&o);
	CHECK(parse_text("Timing with prompt_tokens=512, generation_tokens=128, "
			 "batch_size=1.\nTrial 1:  prompt_tps=nan, generation_tps=1.0,"
			 " peak_memory=1.0, total_time=1.0\n", &o) == -1);
	lb_output_release(&o);
}

static void
test_shared_evidence(void)
{
	/* the evidence ships in the project (run from the repository root) */
	const char *f = "evidence/cua-lume-2026-08-09-m1-ultra/"
			"mlx-stock-10x.json";
	struct buf b = BUF_INIT;
	struct lb_output o = { 0 };

	CHECK(file_exists(f));
	if (buf_read_file(&b, f) < 0)
		return;
	CHECK(mlx_parse(b.buf, b.len, f, &o) == 0);
	CHECK(o.n == 2);
	if (o.n == 2) {
		CHECK(o.rows[0].n_samples == 10);
		/* the published stock-guest medians */
		CHECK_NEAR(stats_median(o.rows[0].samples_ts, 10), 1656.5539, 5e-5);
		CHECK_NEAR(stats_median(o.rows[1].samples_ts, 10), 172.0882, 5e-5);
	}
	lb_output_release(&o);
	buf_release(&b);
}

static void
test_ranges_and_trailing_text(void)
{
	static const char *const bad[] = {
		/* token counts: whole numbers that fit (1e300 was cast) */
		"{\"configuration\":{\"prompt_tokens\":1e300,"
		"\"generation_tokens\":1},\"samples\":[{\"prompt_tps\":1,"
		"\"generation_tps\":1}]}",
		"{\"configuration\":{\"prompt_tokens\":1.5,"
		"\"generation_tokens\":1},\"samples\":[{\"prompt_tps\":1,"
		"\"generation_tps\":1}]}",
		"{\"configuration\":{\"prompt_tokens\":\"512\","
		"\"generation_tokens\":1},\"samples\":[{\"prompt_tps\":1,"
		"\"generation_tps\":1}]}",
		/* a rate that overflows to infinity */
		"{\"configuration\":{\"prompt_tokens\":1,"
		"\"generation_tokens\":1},\"samples\":[{\"prompt_tps\":1e999,"
		"\"generation_tps\":1}]}",
		/* text after the object */
		"{\"configuration\":{\"prompt_tokens\":1,"
		"\"generation_tokens\":1},\"samples\":[{\"prompt_tps\":1,"
		"\"generation_tps\":1}]} garbage",
	};
	struct lb_output o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(parse_text(bad[i], &o) == -1);
		CHECK(strstr(error_last(), "'inline'") != NULL);
		lb_output_release(&o);
	}
	CHECK(strstr(error_last(), "at byte 108") != NULL);
	/* the same object without the garbage is fine */
	CHECK(parse_text("{\"configuration\":{\"prompt_tokens\":1,"
			 "\"generation_tokens\":1},\"samples\":[{\"prompt_tps\":"
			 "1,\"generation_tps\":1}]}\n", &o) == 0);
	CHECK(o.n == 2);
	lb_output_release(&o);
}

static const struct test_case tests[] = {
	{ "mlx_lm.benchmark stdout", test_benchmark_stdout },
	{ "mlx_lm.benchmark: real output with and without total_time",
	  test_benchmark_generations },
	{ "mlx_lm.benchmark: forks' keys, batches, refusals", test_trial_forms },
	{ "the published harness's JSON", test_harness_json },
	{ "bad MLX-LM output is refused, naming the sample", test_rejects },
	{ "the shared MLX-LM evidence gives the published medians", test_shared_evidence },
	{ "token counts are range-checked, trailing text refused", test_ranges_and_trailing_text },
};

TEST_MAIN(tests)
