/* The one table of llama-bench fields (evidence/lbfields.h) and what the
 * readers, the store and the SQL export take from it. */
#include "test.h"
#include "evidence/lbfields.h"
#include "evidence/lbread.h"
#include "base/json.h"
#include "evidence/llamabench.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/util.h"

#include <stdlib.h>
#include <unistd.h>

static void
test_table(void)
{
	size_t i, j;

	for (i = 0; i < lb_nfields; i++) {
		const struct lb_field *f = &lb_fields[i];

		CHECK(lb_field_find(f->name) == f);
		if (f->md)
			CHECK(lb_field_find(f->md) == f);
		for (j = i + 1; j < lb_nfields; j++) {
			const struct lb_field *g = &lb_fields[j];

			CHECK(strcmp(f->name, g->name));
			CHECK(!f->md || strcmp(f->md, g->name));
			CHECK(!g->md || strcmp(g->md, f->name));
			CHECK(!f->md || !g->md || strcmp(f->md, g->md));
		}
	}
	CHECK(lb_field_known("n_gpu_layers") && lb_field_known("ngl"));
	CHECK(lb_field_known("t/s") && lb_field_known("mul_mat_q"));
	CHECK(!lb_field_known("median"));            /* MLX-LM's */
	CHECK(!lb_field_known("no_such_field"));
	CHECK(lb_field_kind("n_threads") == LB_INT);
	CHECK(lb_field_kind("threads") == LB_TEXT);  /* a markdown name */
	CHECK(lb_field_kind("flash_attn") == LB_FLAG);
	CHECK(lb_field_kind("avg_ts") == LB_REAL);
	CHECK(lb_field_kind("median") == LB_TEXT);
	CHECK(lb_field_of_test("n_prompt") && lb_field_of_test("t/s") &&
	      lb_field_of_test("samples_ts") && lb_field_of_test("test"));
	CHECK(!lb_field_of_test("model_type") && !lb_field_of_test("n_batch"));
	CHECK(lb_field_in_config("n_batch", 1) &&
	      lb_field_in_config("fork_field", 0) &&
	      lb_field_in_config("fork_field", 1));
	CHECK(!lb_field_in_config("size", 0) &&
	      !lb_field_in_config("cpu_info", 0) &&
	      !lb_field_in_config("runtime.platform", 0));
	/* gpu_info (driver and device names) is configuration, per host */
	CHECK(lb_field_in_config("gpu_info", 0) && lb_field_per_host("gpu_info"));
	CHECK(!lb_field_per_host("devices") && !lb_field_per_host("n_threads"));
	/* unknown numeric fields named as statistics or durations are
	 * measurements (a fork's avg_ttft_ms), their text namesakes not */
	CHECK(!lb_field_in_config("avg_ttft_ms", 1) &&
	      !lb_field_in_config("stddev_e2e_ms", 1) &&
	      !lb_field_in_config("p99_itl_ms", 1) &&
	      !lb_field_in_config("ttft_s", 1));
	CHECK(lb_field_in_config("avg_ttft_ms", 0) &&
	      lb_field_in_config("max_tokens", 1) &&
	      lb_field_in_config("n_seqs", 1));
	/* the rule never takes a configuration field of the table */
	{
		size_t i;

		for (i = 0; i < lb_nfields; i++)
			if (lb_fields[i].role == LB_CONFIG)
				CHECK(!lb_field_measurement_name(lb_fields[i].name));
	}
	CHECK(lb_field_same("fa", "flash_attn") && lb_field_same("ngl", "ngl"));
	CHECK(!lb_field_same("fa", "ngl") && !lb_field_same("x", "y"));
}

/*
 * The store's configuration trigger is generated from the table: a row
 * keeps exactly its configuration fields, whatever the format's names.
 */
static void
test_config_trigger(void)
{
	char path[256];
	struct store *s;
	struct session_rec sr = { 0 };
	struct run_rec r = { 0 };
	struct lb_row row = { 0 };
	struct selection sel;
	struct store_result *rows = NULL;
	int64_t sid, rid;
	size_t n = 0;

	snprintf(path, sizeof(path), "/tmp/shimbench-lbfields-%ld.db",
		 (long)getpid());
	unlink(path);
	CHECK(store_open(&s, path) == 0);
	sr.kind = (char *)"import";
	sr.started_at = (char *)"2026-12-02T00:00:00Z";
	sr.status = (char *)"ok";
	CHECK(store_session_add(s, &sr, &sid) == 0);
	r.session_id = sid;
	r.variant = r.role = (char *)"stock";
	r.model = (char *)"tiny";
	r.status = (char *)"ok";
	CHECK(store_run_add(s, &r, &rid) == 0);
	row.n_prompt = 64;
	strcpy(row.test, "pp64");
	/* json names, markdown names and MLX-LM's harness fields at once */
	row.raw_json = (char *)"{\"build_commit\":\"abc\",\"cpu_info\":\"x\","
		"\"model_type\":\"llama\",\"size\":\"1 GiB\",\"n_threads\":4,"
		"\"ngl\":99,\"n_prompt\":64,\"test\":\"pp64\",\"t/s\":\"1 ± 0\","
		"\"samples_ts\":[1],\"median\":1,\"runtime\":{\"platform\":\"m\","
		"\"version\":\"0.3\"},\"fork_field\":7,\"gpu_info\":\"g (RADV)\","
		"\"avg_ttft_ms\":12.5,\"samples_e2e_ms\":[1,2],"
		"\"avg_mode\":\"fast\",\"repack\":true}";
	CHECK(store_result_add(s, rid, 0, &row, NULL) == 0);
	CHECK(selection_parse("", &sel) == 0);
	CHECK(store_query_results(s, &sel, &rows, &n) == 0 && n == 1);
	if (n == 1)
		/* gpu_info kept, the fork's numeric measurements dropped
		 * (its text field kept), a boolean as 1, the markdown name
		 * ngl under its json name */
		CHECK_STR(rows[0].config->canon, "avg_mode=fast\n"
			  "build_commit=abc\n"
			  "fork_field=7\ngpu_info=g (RADV)\n"
			  "n_gpu_layers=99\nn_threads=4\n"
			  "repack=1\nruntime.version=0.3\n");
	store_results_free(rows, n);
	selection_free(&sel);
	store_close(s);
	unlink(path);
}

/* One spelling at the reader: md names, csv cells and json booleans. */
static void
test_normalised(void)
{
	static const struct { const char *in, *out; } t[] = {
		/* a markdown row: names and numbers; rounded size stays */
		{ "{\"model\":\"llama 7B\",\"size\":\"3.56 GiB\",\"threads\":\"8\","
		  "\"fa\":\"1\",\"backend\":\"CPU\",\"test\":\"pp512\"}",
		  "{\"model_type\":\"llama 7B\",\"size\":\"3.56 GiB\","
		  "\"n_threads\":8,\"flash_attn\":1,\"backends\":\"CPU\","
		  "\"test\":\"pp512\"}" },
		/* json booleans and csv 0/1 alike; -1 (auto) kept */
		{ "{\"cpu_strict\":false,\"repack\":true,\"flash_attn\":-1}",
		  "{\"cpu_strict\":0,\"repack\":1,\"flash_attn\":-1}" },
		{ "{\"cpu_strict\":\"0\",\"no_host\":\"false\",\"poll\":50}",
		  "{\"cpu_strict\":0,\"no_host\":0,\"poll\":50}" },
		/* a json name already there: the markdown one is kept as is */
		{ "{\"n_threads\":4,\"threads\":\"4\",\"fork\":\"x\"}",
		  "{\"n_threads\":4,\"threads\":\"4\",\"fork\":\"x\"}" },
	};
	size_t i, end;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		struct json *o = json_parse_prefix(t[i].in, strlen(t[i].in), &end);
		struct json *n = lb_normalised(o);
		char *text = json_print(n, 0);

		CHECK_STR(text, t[i].out);
		free(text);
		json_free(n);
		json_free(o);
	}
}

int
main(void)
{
	static const struct test_case tests[] = {
		{ "one table of llama-bench fields", test_table },
		{ "the configuration trigger follows the table",
		  test_config_trigger },
		{ "one spelling of every row at the reader", test_normalised },
	};

	return test_main(tests, ARRAY_SIZE(tests));
}
