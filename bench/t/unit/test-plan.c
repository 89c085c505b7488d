/* Plans: the shipped ones load; numbers are range-checked; keys once. */
#include "test.h"
#include "run/plan.h"
#include "base/util.h"

#include <stdlib.h>

/* A small valid plan with FIELD spliced in at the top level. */
static char *
plan_with(const char *field)
{
	return xstrfmt("{%s%s\"models\": [{\"name\": \"m\", \"path\": "
		       "\"m.gguf\"}], \"targets\": {\"here\": {\"transport\": "
		       "\"local\"}}, \"variants\": [{\"name\": \"v\", "
		       "\"target\": \"here\"}]}", field, *field ? ", " : "");
}

static int
parse(const char *text, struct plan *p)
{
	int rc;

	error_silent++;
	rc = plan_parse(text, strlen(text), "p.json", NULL, p);
	error_silent--;
	return rc;
}

static void
test_shipped_plans(void)
{
	struct plan p;

	CHECK(plan_load("bench/plans/default.json", NULL, &p) == 0);
	CHECK(p.processes == 3 && p.timeout == 600 && p.interleaved);
	CHECK(p.json && p.json[0] == '{');
	plan_free(&p);
	CHECK(plan_load("bench/plans/shim-study.json", NULL, &p) == 0);
	plan_free(&p);
}

static void
test_values(void)
{
	struct plan p;
	char *text = plan_with("\"seed\": 42, \"timeout\": 1.5, "
			       "\"processes\": 7, \"order\": \"grouped\"");

	CHECK(parse(text, &p) == 0);
	CHECK(p.seed == 42 && p.seed_given);
	CHECK(p.timeout == 1.5 && p.processes == 7 && !p.interleaved);
	CHECK(p.nmodels == 1 && p.ntargets == 1 && p.nvariants == 1);
	plan_free(&p);
	free(text);
}

static void
test_refused(void)
{
	static const struct { const char *field, *err; } bad[] = {
		{ "\"timeout\": 1e999", "'timeout' must be a positive number" },
		{ "\"timeout\": 0", "'timeout' must be a positive number" },
		{ "\"processes\": 1e300", "'processes' must be between 1 and" },
		{ "\"processes\": 1.5", "'processes' must be an integer" },
		{ "\"processes\": \"3\"", "'processes' must be an integer" },
		{ "\"seed\": 1e300", "'seed' must be a non-negative integer" },
		{ "\"seed\": -1", "'seed' must be a non-negative integer" },
		{ "\"name\": \"a\", \"name\": \"b\"", "key 'name' appears twice" },
	};
	struct plan p;
	size_t i;
	char *text;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		text = plan_with(bad[i].field);
		CHECK(parse(text, &p) == -1);
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		if (!strstr(error_last(), bad[i].err))
			printf("  %s: %s\n", bad[i].field, error_last());
		free(text);
	}
	/* a target's port and timeout, a variant's keys */
	CHECK(parse("{\"models\": [{\"name\": \"m\", \"path\": \"m\"}], "
		    "\"targets\": {\"t\": {\"transport\": \"ssh\", \"host\": "
		    "\"h\", \"port\": 1e300}}, \"variants\": [{\"name\": \"v\", "
		    "\"target\": \"t\"}]}", &p) == -1);
	CHECK(strstr(error_last(), "'targets.t.port' must be a port") != NULL);
	CHECK(parse("{\"models\": [{\"name\": \"m\", \"path\": \"m\"}], "
		    "\"targets\": {\"t\": {\"timeout\": 1e999}}, \"variants\": "
		    "[{\"name\": \"v\", \"target\": \"t\"}]}", &p) == -1);
	CHECK(strstr(error_last(), "'targets.t.timeout' must be") != NULL);
	CHECK(parse("{\"models\": [{\"name\": \"m\", \"path\": \"m\"}], "
		    "\"targets\": {\"t\": {}}, \"variants\": [{\"name\": \"v\", "
		    "\"target\": \"t\", \"env\": {\"A\": \"1\", \"A\": \"2\"}}]}",
		    &p) == -1);
	CHECK(strstr(error_last(), "key 'A' appears twice") != NULL);
	/* text after the plan names its byte */
	text = plan_with("");
	{
		char *more = xstrfmt("%s x", text);

		CHECK(parse(more, &p) == -1);
		free(more);
	}
	CHECK(strstr(error_last(), "'p.json'") != NULL);
	CHECK(strstr(error_last(), "byte") != NULL);
	free(text);
}

static const struct test_case tests[] = {
	{ "the shipped plans load", test_shipped_plans },
	{ "values are read", test_values },
	{ "out-of-range numbers and keys given twice are refused", test_refused },
};

TEST_MAIN(tests)
