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

/* ---- text formats: md, csv, sql, and output among other lines ------------- */

static int
parse_named(const char *text, size_t len, struct lb_output *out)
{
	int rc;

	error_silent++;
	rc = lb_parse(text, len, "t.txt", out);
	error_silent--;
	return rc;
}

static void
test_real_text_formats(void)
{
	static const char *const files[] = { FIX "gen-current.md",
					     FIX "gen-current.csv",
					     FIX "gen-current.sql" };
	static const char *const fmts[] = { "md", "csv", "sql" };
	struct lb_output o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		CHECK(parse_file(files[i], &o) == 0);
		CHECK_STR(o.format, fmts[i]);
		CHECK(o.n == 4);
		CHECK(!o.incomplete);
		CHECK(o.configs == 1);
		if (o.n == 4) {
			CHECK_STR(o.rows[2].test, "pp16 @ d16");
			CHECK(o.rows[3].n_gen == 4 && o.rows[3].n_depth == 16);
			CHECK_STR(o.rows[0].build_commit, "Debian");
			CHECK(o.rows[0].build_number == 11669);
			CHECK_STR(o.rows[0].backends, "CPU");
			/* a table gives a mean and a deviation, never samples */
			CHECK(o.rows[0].n_samples == 0);
			CHECK(o.rows[0].samples_ts == NULL);
			CHECK_STR(o.rows[0].spread_source, "table");
			CHECK(o.rows[0].avg_ts > 0 && o.rows[0].stddev_ts > 0);
			CHECK(o.rows[0].n_threads == 2);
		}
		lb_output_release(&o);
	}
	/* the machine formats keep their types; the table its numbers */
	CHECK(parse_file(FIX "gen-current.sql", &o) == 0);
	if (o.n == 4) {
		CHECK(o.rows[0].model_size == 5248000);
		CHECK_STR(o.rows[0].flash_attn, "auto");
		CHECK(strstr(o.rows[0].raw_json, "\"load_mode\":\"auto\""));
	}
	lb_output_release(&o);
	CHECK(parse_file(FIX "gen-current.md", &o) == 0);
	if (o.n == 4) {
		CHECK_NEAR(o.rows[3].avg_ts, 7191.48, 1e-9);
		CHECK_NEAR(o.rows[3].stddev_ts, 562.04, 1e-9);
		CHECK(o.rows[3].model_size == -1);
	}
	lb_output_release(&o);
	/* json rows keep their samples and say so */
	CHECK(parse_file(FIX "gen2024.json", &o) == 0);
	if (o.n)
		CHECK_STR(o.rows[0].spread_source, "samples");
	lb_output_release(&o);
}

static void
test_captured_with_stderr(void)
{
	struct lb_output o;

	/* -o json 2>&1 --progress: a progress line glued to "  }" */
	CHECK(parse_file(FIX "gen-current-2to1.txt", &o) == 0);
	CHECK_STR(o.format, "json");
	CHECK(o.n == 2 && !o.incomplete && o.mixed);
	CHECK(o.log_lines > 20);
	if (o.n == 2)
		CHECK(o.rows[1].n_samples == 3);
	lb_output_release(&o);
	/* -o md -v 2>&1: hundreds of log lines, one table */
	CHECK(parse_file(FIX "gen-current-md-verbose.txt", &o) == 0);
	CHECK_STR(o.format, "md");
	CHECK(o.n == 2 && !o.incomplete);
	CHECK(o.n_ignored >= 1);
	lb_output_release(&o);
}

static void
test_pasted_tables(void)
{
	static const char quoted[] =
		"> $ llama-bench -m x.gguf\r\n"
		"> | model | size | params | backend | ngl | test | t/s |\r\n"
		"> | --- | ---: | ---: | --- | --: | ---: | ---: |\r\n"
		"> get_memory_info: [warning] ext_intel_free_memory\r\n"
		"> | \x1b[1mllama 7B Q4_0\x1b[0m | 3.56 GiB | 6.74 B | CUDA | 99 |"
		" pp 512 | 4035.47 \xC2\xB1 157.68 |\r\n"
		"> | llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | tg 128 |"
		" 127.43 _ 0.18 |\r\n"
		">\r\n"
		"> build: 32d9f7d9 (1786)\r\n";
	static const char headerless[] =
		"load_tensors: offloaded 62/62 layers to GPU\n"
		"| deepseek2 671B Q2_K - Medium   | 211.03 GiB |   671.03 B |"
		" ROCm,RPC   |  99 |           pp512 |         35.23 \xC2\xB1"
		" 0.13 |\n"
		"\nbuild: 9a963895 (6110)\n";
	static const char above[] =
		"`build: 9c699074c (8664)`\n\n"
		"model | size | params | backend | threads | test | t/s\n"
		"-- | -- | -- | -- | -- | -- | --\n"
		"llama 1B | 636 MiB | 1.10 B | CPU | 12 | pp512 | 194.05 \xC2\xB1"
		" 0.65\n";
	struct lb_output o;

	CHECK(parse_named(quoted, sizeof(quoted) - 1, &o) == 0);
	CHECK_STR(o.format, "md");
	CHECK(o.n == 2 && !o.incomplete && o.mixed);
	if (o.n == 2) {
		CHECK_STR(o.rows[0].model_type, "llama 7B Q4_0");
		CHECK_STR(o.rows[0].test, "pp512");
		CHECK_STR(o.rows[0].test_label, "pp 512");
		CHECK_NEAR(o.rows[1].stddev_ts, 0.18, 1e-12);
		CHECK_STR(o.rows[1].build_commit, "32d9f7d9");
		CHECK(o.rows[1].n_gpu_layers == 99);
	}
	lb_output_release(&o);
	CHECK(parse_named(headerless, sizeof(headerless) - 1, &o) == 0);
	CHECK(o.n == 1);
	if (o.n == 1) {
		CHECK_STR(o.rows[0].backends, "ROCm,RPC");
		/* the unnamed middle column is not guessed to be ngl */
		CHECK(o.rows[0].n_gpu_layers == -1);
		CHECK(o.rows[0].build_number == 6110);
	}
	lb_output_release(&o);
	CHECK(parse_named(above, sizeof(above) - 1, &o) == 0);
	CHECK(o.n == 1 && o.tables_without_build == 0);
	if (o.n == 1) {
		CHECK_STR(o.rows[0].build_commit, "9c699074c");
		CHECK(o.rows[0].n_threads == 12);
	}
	lb_output_release(&o);
}

/* A text cut after each of its bytes from `from`: never an error. */
static void
check_text_cuts(const char *path, size_t from, size_t rows)
{
	struct buf b = BUF_INIT;
	struct lb_output o;
	size_t k, last = 0, bad = 0;

	if (buf_read_file(&b, path) < 0) {
		CHECK(0);
		return;
	}
	for (k = from; k <= b.len; k++) {
		int rc = parse_named(b.buf, k, &o);

		if (rc != 0 || o.n < last) {
			if (!bad++)
				printf("  %s cut at %zu: rc %d, %zu rows: %s\n",
				       path, k, rc, o.n, error_last());
		}
		last = o.n;
		lb_output_release(&o);
	}
	CHECK(bad == 0);
	CHECK(last == rows);
	buf_release(&b);
}

static void
test_text_cut_anywhere(void)
{
	struct buf b = BUF_INIT;
	struct lb_output o;
	char *sep;

	/* from the end of the header and separator lines on */
	buf_read_file(&b, FIX "gen-current.md");
	sep = strchr(strchr(b.buf, '\n') + 1, '\n');
	check_text_cuts(FIX "gen-current.md", (size_t)(sep - b.buf) + 1, 4);
	buf_release(&b);
	buf_read_file(&b, FIX "gen-current.csv");
	check_text_cuts(FIX "gen-current.csv",
			(size_t)(strchr(b.buf, '\n') - b.buf) + 1, 4);
	buf_release(&b);
	check_text_cuts(FIX "gen-current.sql", 20, 4);
	buf_read_file(&b, FIX "gen-current-2to1.txt");
	check_text_cuts(FIX "gen-current-2to1.txt",
			(size_t)(strchr(b.buf, '\n') - b.buf) + 1, 2);
	buf_release(&b);
	/* a header and no row: the run died before its first test */
	{
		static const char hdr[] =
			"| model | size | backend | test | t/s |\n"
			"| --- | --- | --- | --- | --- |\n";

		CHECK(parse_named(hdr, sizeof(hdr) - 1, &o) == 0);
	}
	CHECK(o.n == 0 && o.incomplete);
	lb_output_release(&o);
	/* a crash after complete rows: rows kept, the run incomplete */
	buf_read_file(&b, FIX "gen-current.md");
	buf_adds(&b, "/lib64/libggml-base.so.0(ggml_abort+0x11f) [0x7f30]\n");
	CHECK(parse_named(b.buf, b.len, &o) == 0);
	CHECK(o.n == 4 && o.incomplete && o.crashed);
	lb_output_release(&o);
	buf_release(&b);
}

static void
test_text_refused(void)
{
	static const struct { const char *text, *err; } bad[] = {
		/* what the fake garbage llama-bench prints */
		{ "Segmentation fault? no: just garbage on stdout\n"
		  "| model | size |\n", "not llama-bench output" },
		{ "hello\nworld\n", "not llama-bench output" },
		{ "usage: llama-bench [options]\n", "not llama-bench output" },
		{ "| model | backend | test | t/s |\n| --- | --- | --- | --- |\n"
		  "| m | CPU | pp512 | 12.0 \xC2\xB1 0.1 | extra |\n"
		  "| m | CPU | tg128 | 1.0 \xC2\xB1 0.1 |\n",
		  "line 3: a table row with 5 cells" },
		{ "| model | backend | test | t/s |\n| --- | --- | --- | --- |\n"
		  "| m | CPU | pp512 | 12.0 |\n", "line 3: t/s is '12.0'" },
		{ "| model | backend | test | t/s |\n| --- | --- | --- | --- |\n"
		  "| m | CPU | pp512 | nan \xC2\xB1 0.1 |\n", "line 3: t/s" },
		{ "| model | backend | test | t/s |\n| --- | --- | --- | --- |\n"
		  "| m | CPU | xx512 | 1 \xC2\xB1 0.1 |\n",
		  "'xx512' is not a llama-bench test name" },
		{ "| model | ngl | test | t/s |\n| --- | --- | --- | --- |\n"
		  "| m | 0x63 | pp512 | 1 \xC2\xB1 0.1 |\n",
		  "column 'ngl' is '0x63', not an integer" },
		{ "build_commit,n_prompt,n_gen,test_time,avg_ns,avg_ts,stddev_ts\n"
		  "\"abc\",\"0x200\",\"0\",\"t\",\"1\",\"1.0\",\"0.1\"\n",
		  "line 2: n_prompt is '0x200', not an integer" },
		{ "build_commit,n_prompt,n_gen,test_time,avg_ns,avg_ts,stddev_ts\n"
		  "\"abc\",\"512\",\"0\",\"t\",\"1\",\"1.0\"\n\n",
		  "line 2: a CSV row with" },
		{ "build_commit,n_prompt,n_gen,test_time,avg_ns,avg_ts,stddev_ts\n"
		  "\"abc\",\"0\",\"0\",\"t\",\"1\",\"1.0\",\"0.1\"\n",
		  "n_prompt and n_gen are both 0" },
		{ "INSERT INTO test (n_prompt, n_gen, avg_ts) VALUES ('512', "
		  "'0', '1.5') garbage;\nmore\n", "line 1: not an INSERT" },
		{ "ggml_cuda_init: found 1 CUDA devices:\n{\"n_prompt\": 512}\n",
		  "line 2: not a llama-bench row: no n_gen" },
		{ "ggml_cuda_init: found 1 CUDA devices:\n{\"n_prompt\": 512, "
		  "\"n_gen\": 0, \"samples_ts\": [1]} trailing\n",
		  "line 2: text after the JSON object" },
		{ "log: x\n[\n  {\"n_prompt\": 1, garbage\n]\n",
		  "line 3: not valid JSON at column" },
		/* the same results in two formats: -o md -oe json, 2>&1 */
		{ "| model | test | t/s |\n| --- | --- | --- |\n"
		  "| m | pp512 | 1 \xC2\xB1 0 |\n"
		  "{\"n_prompt\": 512, \"n_gen\": 0, \"samples_ts\": [1]}\n",
		  "would be counted twice" },
	};
	struct lb_output o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int rc = parse_named(bad[i].text, strlen(bad[i].text), &o);

		CHECK(rc == -1);
		CHECK(strstr(error_last(), "'t.txt'") != NULL);
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		if (rc != -1 || !strstr(error_last(), bad[i].err))
			printf("  %zu: rc %d: %s\n", i, rc, error_last());
		lb_output_release(&o);
	}
}

static void
test_hostile_text(void)
{
	static const char nul_row[] =
		"| model | test | t/s |\n| --- | --- | --- |\n"
		"| m\0x | pp512 | 1 \xC2\xB1 0 |\n";
	static const char nul_log[] =
		"ggml_vulkan: Found 1 Vulkan devices:\n\0\0\0binary\n";
	struct buf b = BUF_INIT;
	struct lb_output o;
	size_t i;
	clock_t t0;

	CHECK(parse_named(nul_row, sizeof(nul_row) - 1, &o) == -1);
	CHECK(strstr(error_last(), "line 3: a NUL byte") != NULL);
	lb_output_release(&o);
	CHECK(parse_named(nul_log, sizeof(nul_log) - 1, &o) == 0);
	CHECK_STR(o.format, "log");
	CHECK(o.n == 0 && o.n_ignored == 2);
	lb_output_release(&o);
	/* 16 MB on one line, no newline */
	for (i = 0; i < (16u << 20); i++)
		buf_addch(&b, "ab| "[i % 4]);
	t0 = clock();
	CHECK(parse_named(b.buf, b.len, &o) == -1);
	CHECK(strstr(error_last(), "not llama-bench output") != NULL);
	lb_output_release(&o);
	/* 100000 table rows: linear, configurations counted n log n */
	buf_reset(&b);
	buf_adds(&b, "| model | threads | test | t/s |\n| - | - | - | - |\n");
	for (i = 0; i < 100000; i++)
		buf_addf(&b, "| m | %zu | pp512 | 1.5 \xC2\xB1 0.1 |\n", i % 7);
	CHECK(parse_named(b.buf, b.len, &o) == 0);
	CHECK(o.n == 100000 && o.configs == 7);
	CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 20.0);
	lb_output_release(&o);
	buf_release(&b);
}

static void
test_log_only(void)
{
	static const char killed[] =
		"ggml_cuda_init: found 1 ROCm devices:\n"
		"  Device 0: AMD Radeon 8060S Graphics, gfx1151 (0x1151)\n"
		"\xE2\x9C\x96 [rocm] model failed (exit 137)\n";
	static const char fine[] =
		"ggml_vulkan: Found 1 Vulkan devices:\n"
		"ggml_vulkan: 0 = X (radv) | uma: 1 | fp16: 1\n";
	struct lb_output o;

	CHECK(parse_named(killed, sizeof(killed) - 1, &o) == 0);
	CHECK_STR(o.format, "log");
	CHECK(o.n == 0 && o.crashed && o.incomplete);
	lb_output_release(&o);
	CHECK(parse_named(fine, sizeof(fine) - 1, &o) == 0);
	CHECK(o.n == 0 && !o.incomplete && o.log_lines == 2);
	lb_output_release(&o);
	/* a log that starts with '[' is not a JSON array */
	CHECK(parse_file("bench/t/fixtures/shim-marker.stderr", &o) == 0);
	CHECK_STR(o.format, "log");
	lb_output_release(&o);
}

static void
test_test_parse(void)
{
	static const struct { const char *s; long p, g, d; } good[] = {
		{ "pp512", 512, 0, 0 }, { "tg128", 0, 128, 0 },
		{ "pp 512", 512, 0, 0 }, { "tg 128", 0, 128, 0 },
		{ "pp4096+tg128", 4096, 128, 0 },
		{ "pp2048 @ d32768", 2048, 0, 32768 },
		{ "tg32 @ d32768", 0, 32, 32768 }, { "pp512@d1024", 512, 0, 1024 },
	};
	static const char *const badv[] = {
		"", "pp", "pp0", "tg", "xx512", "pp512+", "pp512+pp1",
		"pp512 @", "pp512 @ d", "pp512 x", "pp99999999999", "512",
	};
	long p, g, d;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		CHECK(lb_test_parse(good[i].s, &p, &g, &d) == 0);
		CHECK(p == good[i].p && g == good[i].g && d == good[i].d);
	}
	for (i = 0; i < ARRAY_SIZE(badv); i++)
		CHECK(lb_test_parse(badv[i], &p, &g, &d) == -1);
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
	{ "reads the real md, csv and sql output", test_real_text_formats },
	{ "reads output captured together with stderr", test_captured_with_stderr },
	{ "reads pasted tables: quoted, CRLF, headerless, build above", test_pasted_tables },
	{ "keeps the complete rows of text cut at any byte", test_text_cut_anywhere },
	{ "refuses malformed text output naming the line", test_text_refused },
	{ "NUL bytes, a 16 MB line, 100000 rows", test_hostile_text },
	{ "log lines without output: a failed run, not garbage", test_log_only },
	{ "reads test names of every generation", test_test_parse },
};

TEST_MAIN(tests)
