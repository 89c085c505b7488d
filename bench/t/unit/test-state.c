/* Run, session and verification states: one name table each. */
#include "test.h"
#include "evidence/state.h"
#include "base/util.h"

static void
test_names_round_trip(void)
{
	static const struct { int s; const char *name; } runs[] = {
		{ RUN_STATE_OK, "ok" }, { RUN_STATE_FAILED, "failed" },
		{ RUN_STATE_INCOMPLETE, "incomplete" },
		{ RUN_STATE_TIMEOUT, "timeout" }, { RUN_STATE_CRASHED, "crashed" },
		{ RUN_STATE_INTERRUPTED, "interrupted" },
	}, sessions[] = {
		{ SESSION_STATE_RUNNING, "running" },
		{ SESSION_STATE_IMPORTING, "importing" },
		{ SESSION_STATE_OK, "ok" }, { SESSION_STATE_FAILED, "failed" },
		{ SESSION_STATE_INTERRUPTED, "interrupted" },
	}, verifs[] = {
		{ VERIFY_NOT_REQUIRED, "not-required" },
		{ VERIFY_VERIFIED, "verified" }, { VERIFY_UNVERIFIED, "unverified" },
	};
	size_t i;

	/* the names are the strings existing stores and bundles hold */
	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		CHECK_STR(run_state_name(runs[i].s), runs[i].name);
		CHECK(run_state_of(runs[i].name) == runs[i].s);
	}
	for (i = 0; i < ARRAY_SIZE(sessions); i++) {
		CHECK_STR(session_state_name(sessions[i].s), sessions[i].name);
		CHECK(session_state_of(sessions[i].name) == sessions[i].s);
	}
	for (i = 0; i < ARRAY_SIZE(verifs); i++) {
		CHECK_STR(verify_state_name(verifs[i].s), verifs[i].name);
		CHECK(verify_state_of(verifs[i].name) == verifs[i].s);
	}
}

static void
test_unknown(void)
{
	static const char *const bad[] = { "", "OK", "ok ", "fmiled",
					   "verified\n", "banana" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(run_state_of(bad[i]) == -1);
		CHECK(session_state_of(bad[i]) == -1);
		CHECK(verify_state_of(bad[i]) == -1);
	}
	CHECK(run_state_of(NULL) == -1);
	CHECK(verify_state_of(NULL) == -1);
	CHECK_STR(run_state_name((enum run_state)99), "invalid");
	/* "exited" is the process's outcome before it is settled: never a
	 * stored name, so messages do not offer it */
	CHECK_STR(run_state_names(),
		  "ok, failed, incomplete, timeout, crashed, interrupted");
	CHECK_STR(session_state_names(),
		  "running, importing, ok, failed, interrupted");
	/* shown for a running session whose process is gone, never stored */
	CHECK_STR(session_state_name(SESSION_STATE_ABANDONED), "abandoned");
}

/* Roles: the three, free names unlike them, and misspellings refused. */
static void
test_roles(void)
{
	static const char *const ok[] = {
		"bare-metal", "stock", "shim", "other", "mlx-lm", "superseded",
		"ggml-switches", "vulkan-off",
	};
	static const char *const bad[] = {
		"", "Bare-Metal", "bare_metal", "BAREMETAL", "bare metal",
		"Stock", "STOCK", "stok", "stocks", "Shim", "shm", "shimm",
		"bare-metl",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++)
		CHECK(role_misspelt(ok[i]) == 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(role_misspelt(bad[i]) == 1);
	CHECK_STR(role_names(), "bare-metal, stock, shim");
}

static const struct test_case tests[] = {
	{ "names and states round-trip", test_names_round_trip },
	{ "unknown names are no state", test_unknown },
	{ "roles, free names, misspelt roles", test_roles },
};

TEST_MAIN(tests)
