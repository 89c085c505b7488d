/* Selections (evidence/selection.h): parsed once into typed terms, built
 * and changed as structs, and one rule of what counts, which the store's
 * query and the C rule apply alike. */
#include "test.h"
#include "evidence/llamabench.h"
#include "evidence/runrec.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/util.h"

#include <stdlib.h>
#include <unistd.h>

static void
test_parse(void)
{
	struct selection sel;
	char *t;

	CHECK(selection_parse("session=latest~2,variant=shim,fa=1,"
			      "status=incomplete,os_name=macOS", &sel) == 0);
	CHECK(sel.n == 5);
	if (sel.n == 5) {
		CHECK(sel.t[0].key == SEL_KEY_SESSION && sel.t[0].latest == 2);
		CHECK(sel.t[1].key == SEL_KEY_VARIANT && sel.t[1].latest == -1);
		CHECK_STR(sel.t[1].value, "shim");
		CHECK(sel.t[2].key == SEL_KEY_OTHER);
		CHECK_STR(sel.t[2].name, "fa");
		CHECK(sel.t[3].key == SEL_KEY_STATUS);
		CHECK(sel.t[4].key == SEL_KEY_OTHER);
	}
	CHECK(sel.include == SEL_PARTIAL);        /* said by status= */
	CHECK_STR(sel.text, "session=latest~2,variant=shim,fa=1,"
		  "status=incomplete,os_name=macOS");
	selection_free(&sel);

	CHECK(selection_parse("include=failed+tampered,session=3", &sel) == 0);
	CHECK(sel.n == 1 && sel.t[0].latest == -1);
	CHECK(sel.include == (SEL_FAILED | SEL_TAMPERED));
	t = selection_text(&sel);
	CHECK_STR(t, "session=3,include=tampered+failed");
	free(t);
	CHECK_STR(sel.text, "include=failed+tampered,session=3");  /* as given */
	selection_free(&sel);

	CHECK(selection_parse("session_status=running", &sel) == 0);
	CHECK(sel.include == SEL_UNFINISHED);
	selection_free(&sel);
	CHECK(selection_parse("all", &sel) == 0 && sel.n == 0 && !sel.include);
	CHECK_STR(sel.text, "all");
	selection_free(&sel);
	CHECK(selection_parse(NULL, &sel) == 0 && sel.n == 0);
	selection_free(&sel);

	error_silent++;
	CHECK(selection_parse("variant", &sel) == -1 && sel.n == 0 &&
	      !sel.text);
	CHECK(selection_parse("=x", &sel) == -1);
	CHECK(selection_parse("a-b=x", &sel) == -1);
	CHECK(selection_parse("include=everything", &sel) == -1);
	CHECK(selection_parse("include=", &sel) == -1);
	error_silent--;
	CHECK(strstr(error_last(), "include=''") != NULL);
}

static void
test_build(void)
{
	struct selection a, b = { 0 };

	CHECK(selection_parse("session=latest,variant=shim,os_build=25A1,"
			      "include=partial", &a) == 0);
	selection_copy(&b, &a);
	selection_drop(&b, SEL_KEY_OS_BUILD);
	selection_drop(&b, SEL_KEY_VARIANT);
	CHECK(b.n == 1 && b.t[0].latest == 0 && b.include == SEL_PARTIAL);
	CHECK_STR(b.text, "session=latest,include=partial");
	selection_add(&b, "fa", "on");
	CHECK(b.n == 2 && b.t[1].key == SEL_KEY_OTHER);
	selection_set_include(&b, SEL_ALL);
	CHECK_STR(b.text, "session=latest,fa=on,include=all");
	/* the copy is deep: the original is untouched */
	CHECK(a.n == 3);
	CHECK_STR(a.t[2].value, "25A1");
	selection_free(&a);
	selection_free(&b);
	CHECK(selection_value_matches("true", "1") &&
	      selection_value_matches("off", "false") &&
	      selection_value_matches("pp512", "pp512") &&
	      !selection_value_matches("1", "2"));
	CHECK_STR(selection_key_name(SEL_KEY_BASE_IDENTITY), "base_identity");
}

/* Every session status x tampered x run status x include: what the
 * store's query counts is what selection_counts() says. */
static void
test_one_rule(void)
{
	static const char *const sstat[] = { "ok", "failed", "interrupted",
					     "running", "importing", "odd" };
	static const char *const rstat[] = { "ok", "incomplete" };
	static const double ts[] = { 1, 2 };
	char path[256];
	struct store *s;
	size_t i, j, k, n;
	unsigned inc;
	int64_t sid[ARRAY_SIZE(sstat)][2][2];

	snprintf(path, sizeof(path), "/tmp/shimbench-selection-%ld.db",
		 (long)getpid());
	unlink(path);
	CHECK(store_open(&s, path) == 0);
	CHECK(store_begin(s) == 0);
	for (i = 0; i < ARRAY_SIZE(sstat); i++)
		for (j = 0; j < 2; j++)
			for (k = 0; k < 2; k++) {
				struct session_rec sr = { 0 };
				struct run_rec r = { 0 };
				struct lb_row row = { 0 };
				int64_t rid;

				sr.kind = (char *)"import";
				sr.started_at = (char *)"2026-12-02T00:00:00Z";
				sr.status = (char *)sstat[i];
				sr.tampered = (int64_t)j;
				CHECK(store_session_add(s, &sr, &sid[i][j][k]) == 0);
				r.session_id = sid[i][j][k];
				r.variant = r.role = (char *)"stock";
				r.model = (char *)"tiny";
				r.status = (char *)rstat[k];
				CHECK(store_run_add(s, &r, &rid) == 0);
				row.n_prompt = 64;
				row.raw_json = (char *)"{}";
				strcpy(row.test, "pp64");
				row.n_samples = 2;
				row.samples_ts = (double *)ts;
				CHECK(store_result_add(s, rid, 0, &row, NULL) == 0);
			}
	CHECK(store_commit(s) == 0);
	for (inc = 0; inc <= SEL_ALL; inc++) {
		struct selection sel = { 0 };
		struct store_result *rows = NULL;
		size_t want = 0;

		sel.include = inc;
		for (i = 0; i < ARRAY_SIZE(sstat); i++)
			for (j = 0; j < 2; j++)
				for (k = 0; k < 2; k++)
					want += (size_t)selection_counts(
						inc, sstat[i], (int)j, rstat[k]);
		CHECK(store_query_results(s, &sel, &rows, &n) == 0);
		CHECK(n == want);
		for (i = 0; i < n; i++)
			CHECK(selection_counts(inc, rows[i].session_status,
					       rows[i].session_tampered,
					       rows[i].run_status));
		store_results_free(rows, n);
	}
	/* nothing counts a status no include= names */
	CHECK(selection_needs("odd", 0, "ok") & SEL_NEVER);
	CHECK(!selection_counts(SEL_ALL, "odd", 0, "ok"));
	CHECK(selection_needs("failed", 1, "incomplete") ==
	      (SEL_FAILED | SEL_TAMPERED | SEL_PARTIAL));
	store_close(s);
	unlink(path);
}

int
main(void)
{
	static const struct test_case tests[] = {
		{ "selections parse into typed terms", test_parse },
		{ "selections are built and changed as structs", test_build },
		{ "one rule of what counts: store and C agree", test_one_rule },
	};

	return test_main(tests, ARRAY_SIZE(tests));
}
