/* The one table of llama-bench fields (evidence/lbfields.h) and what the
 * readers, the store and the SQL export take from it. */
#include "test.h"
#include "evidence/lbfields.h"
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
		"\"version\":\"0.3\"},\"fork_field\":7}";
	CHECK(store_result_add(s, rid, 0, &row, NULL) == 0);
	CHECK(selection_parse("", &sel) == 0);
	CHECK(store_query_results(s, &sel, &rows, &n) == 0 && n == 1);
	if (n == 1)
		CHECK_STR(rows[0].config->canon, "build_commit=abc\n"
			  "fork_field=7\nn_threads=4\nngl=99\n"
			  "runtime.version=0.3\n");
	store_results_free(rows, n);
	selection_free(&sel);
	store_close(s);
	unlink(path);
}

int
main(void)
{
	static const struct test_case tests[] = {
		{ "one table of llama-bench fields", test_table },
		{ "the configuration trigger follows the table",
		  test_config_trigger },
	};

	return test_main(tests, ARRAY_SIZE(tests));
}
