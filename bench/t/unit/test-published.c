/* The published figures: the shipped file loads; bad files are refused. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "analysis/published.h"
#include "base/files.h"
#include "base/util.h"

#include <stdlib.h>
#include <unistd.h>

static void
test_shipped_figures(void)
{
	struct published p;
	size_t i, found = 0;

	CHECK(published_load("evidence/published/figures.json", &p) == 0);
	CHECK(p.n > 0);
	CHECK(p.tol_median_rel == 0.10 && p.tol_percent_abs == 5.0);
	for (i = 0; i < p.n; i++) {
		if (strcmp(p.f[i].test, "pp512") ||
		    strcmp(p.f[i].field, "guest_ratio") ||
		    p.f[i].value != 11.08)
			continue;
		found++;
		/* published with two decimals */
		CHECK(p.f[i].decimals == 2);
		CHECK(p.f[i].kind == PUB_RATIO);
	}
	CHECK(found == 1);
	published_release(&p);
}

static void
test_refused(void)
{
	static const struct { const char *text, *err; } bad[] = {
		{ "{\"studies\": []} x", "(byte 15)" },
		{ "[]", "not a JSON object" },
		{ "{\"studies\": [{\"name\": \"s\", \"model\": \"m\", "
		  "\"runtime\": \"r\", \"figures\": [{\"test\": \"pp512\", "
		  "\"stock\": 1e999}]}]}", "'stock' is not a number" },
		{ "{\"studies\": [{\"name\": \"s\", \"model\": \"m\", "
		  "\"runtime\": \"r\", \"figures\": [{\"stock\": 1}]}]}",
		  "a figure needs 'test'" },
	};
	char dir[] = "/tmp/shimbench-published.XXXXXX";
	struct published p;
	size_t i;
	char *path;

	CHECK(mkdtemp(dir) != NULL);
	path = xstrfmt("%s/figures.json", dir);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(write_file_atomic(path, bad[i].text,
					strlen(bad[i].text)) == 0);
		error_silent++;
		CHECK(published_load(path, &p) == -1);
		error_silent--;
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		if (!strstr(error_last(), bad[i].err))
			printf("  %s\n", error_last());
		published_release(&p);
	}
	unlink(path);
	rmdir(dir);
	free(path);
}

static const struct test_case tests[] = {
	{ "the shipped figures load with their precision", test_shipped_figures },
	{ "bad figure files are refused, naming what is wrong", test_refused },
};

TEST_MAIN(tests)
