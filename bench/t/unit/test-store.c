/* The SQLite store, selections, statistics and table rendering. */
#include "test.h"
#include "evidence/llamabench.h"
#include "analysis/table.h"
#include "base/json.h"
#include "analysis/stats.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <stdlib.h>
#include <unistd.h>

static char dbpath[256];

static struct store *
fresh(void)
{
	struct store *s;

	snprintf(dbpath, sizeof(dbpath), "/tmp/shimbench-unit-%ld.db",
		 (long)getpid());
	unlink(dbpath);
	CHECK(store_open(&s, dbpath) == 0);
	return s;
}

static void
done(struct store *s)
{
	char p[300];

	store_close(s);
	unlink(dbpath);
	snprintf(p, sizeof(p), "%s-wal", dbpath);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", dbpath);
	unlink(p);
}

static int64_t
add_run(struct store *s, int64_t sid, const char *variant, const char *role,
	const double *ts, size_t n)
{
	struct run_rec r = { 0 };
	struct lb_row row = { 0 };
	int64_t rid = 0;

	/* literals: the record is never released */
	r.session_id = sid;
	r.variant = (char *)variant;
	r.role = (char *)role;
	r.model = (char *)"tiny";
	r.status = (char *)"ok";
	r.exit_code = 0;
	row.n_prompt = 64;
	row.raw_json = "{}";
	strcpy(row.test, "pp64");
	row.n_samples = n;
	row.samples_ts = (double *)ts;
	CHECK(store_begin(s) == 0);
	CHECK(store_run_add(s, &r, &rid) == 0);
	CHECK(store_result_add(s, rid, 0, &row, NULL) == 0);
	CHECK(store_commit(s) == 0);
	return rid;
}

static void
test_store_roundtrip(void)
{
	static const double a[] = { 10, 12, 11 }, b[] = { 20, 22 };
	struct session_rec sr = { 0 };
	struct selection sel;
	struct store_result *rows;
	struct store *s = fresh();
	int64_t sid, env, found;
	size_t n;

	CHECK(store_schema_version(s) >= 2);
	sr.kind = (char *)"run";
	sr.started_at = (char *)"2026-12-02T00:00:00Z";
	sr.status = (char *)"ok";
	sr.content_hash = (char *)"abc";
	CHECK(store_session_add(s, &sr, &sid) == 0);
	CHECK(store_environment_add(s, sid, "here",
				    "{\"os_build\":\"25F84\",\"cpu\":\"x\"}",
				    "id1", "base1", &env) == 0);
	add_run(s, sid, "plain", "stock", a, 3);
	add_run(s, sid, "shimmed", "shim", b, 2);
	CHECK(store_count(s, "runs") == 2);
	CHECK(store_count(s, "samples") == 5);
	CHECK(store_count(s, "no_such_table") == -1);
	CHECK(store_session_find_hash(s, "abc", &found) == 1 && found == sid);
	CHECK(store_session_find_hash(s, "zzz", &found) == 0);

	CHECK(selection_parse("variant=shimmed", &sel) == 0);
	CHECK(store_query_results(s, &sel, &rows, &n) == 0);
	CHECK(n == 1);
	if (n == 1) {
		CHECK_STR(rows[0].role, "shim");
		CHECK(rows[0].n == 2 && rows[0].ts[1] == 22);
	}
	store_results_free(rows, n);
	selection_free(&sel);

	/* a value with SQL in it is data, never SQL */
	CHECK(selection_parse("variant=x' OR '1'='1", &sel) == 0);
	CHECK(store_query_results(s, &sel, &rows, &n) == 0);
	CHECK(n == 0);
	store_results_free(rows, n);
	selection_free(&sel);

	error_silent++;
	CHECK(selection_parse("variant", &sel) == -1);
	CHECK(selection_parse("va riant=x", &sel) == -1);
	error_silent--;
	done(s);
}

static void
test_store_reopen_and_cache(void)
{
	struct store *s = fresh();
	char sha[65];

	CHECK(store_hash_cache_get(s, 1, 2, 3, 4, 6, sha) == 0);
	CHECK(store_hash_cache_put(s, 1, 2, 3, 4, 6, "/m", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef") == 0);
	CHECK(store_hash_cache_get(s, 1, 2, 3, 4, 6, sha) == 1);
	CHECK(store_hash_cache_get(s, 1, 2, 3, 5, 6, sha) == 0);
	/* the same mtime with another ctime: edited in place, mtime restored */
	CHECK(store_hash_cache_get(s, 1, 2, 3, 4, 7, sha) == 0);
	store_close(s);
	/* reopening migrates nothing and keeps the data */
	CHECK(store_open(&s, dbpath) == 0);
	CHECK(store_hash_cache_get(s, 1, 2, 3, 4, 6, sha) == 1);
	done(s);
}

static void
test_store_rejects_non_db(void)
{
	const char *p = "/tmp/shimbench-unit-notdb";
	struct store *s = NULL;

	write_file_atomic(p, "this is not sqlite, just text padding......",
			  44);
	error_silent++;
	CHECK(store_open(&s, p) == -1);
	error_silent--;
	CHECK(s == NULL);
	unlink(p);
}

static void
test_stats(void)
{
	static const double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 };
	struct summary sm;

	CHECK(stats_median(odd, 3) == 3);
	CHECK(stats_median(even, 4) == 2.5);
	stats_summary(even, 4, &sm);
	CHECK(sm.n == 4 && sm.min == 1 && sm.max == 4);
	CHECK(sm.mad == 1);
	stats_summary(NULL, 0, &sm);
	CHECK(sm.n == 0);
}

static void
test_render(void)
{
	static const char *const cols[] = { "name", "value#" };
	static const char *const r1[] = { "a,b \"q\"", "1.5" };
	static const char *const r2[] = { "pipe|x", "" };
	struct table t;
	struct buf b = BUF_INIT;
	char n[32];

	table_init(&t, 2, cols);
	table_add_row(&t, r1);
	table_add_row(&t, r2);
	table_render_csv(&t, &b);
	CHECK_STR(b.buf, "name,value\n\"a,b \"\"q\"\"\",1.5\npipe|x,\n");
	buf_reset(&b);
	table_render_json(&t, &b);
	CHECK(strstr(b.buf, "\"value\": 1.5") != NULL);
	CHECK(strstr(b.buf, "\"value\": null") != NULL);
	CHECK(strstr(b.buf, "a,b \\\"q\\\"") != NULL);
	buf_reset(&b);
	{
		/* numeric cells that are not JSON numbers as written: a sign
		 * ("+0.0025"), no digit before the point, no value ("–"),
		 * and a name that is not UTF-8 */
		static const char *const r3[] = { "bad \xff", "+0.0025" };
		static const char *const r4[] = { "x", ".5" };
		static const char *const r5[] = { "y", "–" };
		struct table u;
		struct json *v;

		table_init(&u, 2, cols);
		table_add_row(&u, r3);
		table_add_row(&u, r4);
		table_add_row(&u, r5);
		table_add_row(&u, r1);
		table_render_json(&u, &b);
		v = json_parse(b.buf, b.len, "table");
		CHECK(v != NULL && json_size(v) == 4);
		CHECK(json_num(json_get(json_at(v, 0), "value")) == 0.0025);
		CHECK_STR(json_get_str(json_at(v, 0), "name"), "bad \xef\xbf\xbd");
		CHECK(json_num(json_get(json_at(v, 1), "value")) == 0.5);
		CHECK_STR(json_get_str(json_at(v, 2), "value"), "–");
		CHECK(strstr(b.buf, "\"value\": 1.5\n") != NULL);  /* as written */
		json_free(v);
		table_release(&u);
		buf_reset(&b);
	}
	table_render_md(&t, &b);
	CHECK(strstr(b.buf, "pipe\\|x") != NULL);
	CHECK(strstr(b.buf, "---: |") != NULL);
	buf_reset(&b);
	table_render_html(&t, &b);
	CHECK(strstr(b.buf, "<th>value</th>") != NULL);
	CHECK(strstr(b.buf, "<td>a,b &quot;q&quot;</td><td class=\"num\">1.5</td>") != NULL);
	buf_reset(&b);
	html_escape(&b, "<a href='x'>&</a>");
	CHECK_STR(b.buf, "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;");
	buf_release(&b);
	table_release(&t);
	fmt_num(n, sizeof(n), 431.8625, 6);
	CHECK_STR(n, "431.8625");
	fmt_num(n, sizeof(n), 4786.70, 6);
	CHECK_STR(n, "4786.7");
	fmt_num(n, sizeof(n), 12.0, 6);
	CHECK_STR(n, "12");
}

static const struct test_case tests[] = {
	{ "store round trip with bound selections", test_store_roundtrip },
	{ "store reopen and the hash cache", test_store_reopen_and_cache },
	{ "store refuses a file that is not a database", test_store_rejects_non_db },
	{ "median, MAD and summary", test_stats },
	{ "markdown, csv and json tables", test_render },
};

TEST_MAIN(tests)
