/*
 * Every header of the statistics layer compiles when included twice and
 * on its own (each one brings what its declarations need).
 */
#include "analysis/stats.h"
#include "analysis/stats.h"
#include "analysis/compare.h"
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/gate.h"
#include "analysis/workload.h"
#include "analysis/workload.h"
#include "analysis/changepoint.h"
#include "analysis/changepoint.h"
#include "test.h"

static void
test_twice(void)
{
	struct cmp_opts o = CMP_OPTS_INIT;
	struct gate_decision d = { 0 };
	struct workload w = { 0 };
	struct cp_change c = { 0 };
	struct summary s = { 0 };

	CHECK(o.boot == 2000 && d.need_k == 0 && w.name == NULL &&
	      c.index == 0 && s.n == 0);
	CHECK(GATE_CALIB_KS == 3);
}

static const struct test_case tests[] = {
	{ "headers included twice", test_twice },
};

TEST_MAIN(tests)
