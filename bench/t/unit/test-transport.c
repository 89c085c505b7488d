/*
 * Transports: the table resolves names, each row builds exactly the argv
 * its tool documents (one shell's quoting, streams merged or not), and
 * names a tool would take for options are refused when the plan loads.
 */
#include "test.h"
#include "run/plan.h"
#include "run/transport.h"
#include "run/transports.h"
#include "base/util.h"

#include <stdlib.h>

/* A plan with one target whose JSON members are TARGET. */
static int
load(const char *target, struct plan *p)
{
	char *text = xstrfmt("{\"models\": [{\"name\": \"m\", \"path\": "
			     "\"m.gguf\"}], \"targets\": {\"t\": {%s}}, "
			     "\"variants\": [{\"name\": \"v\", \"target\": "
			     "\"t\"}]}", target);
	int rc;

	error_silent++;
	rc = plan_parse(text, strlen(text), "p.json", NULL, p);
	error_silent--;
	free(text);
	return rc;
}

/* argv joined with '|' for comparisons. */
static char *
joined(char **v)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; v && v[i]; i++) {
		if (i)
			buf_addch(&b, '|');
		buf_adds(&b, v[i]);
	}
	return buf_detach(&b, NULL);
}

static void
test_table(void)
{
	static const char *const names[] = { "local", "ssh", "lume", "tart" };
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const struct transport *tp = transport_find(names[i]);

		CHECK(tp != NULL && !strcmp(tp->name, names[i]));
		CHECK(tp && tp->check && tp->wrap);
		/* remote rows say how to reach the far side and check it */
		CHECK(tp && (!tp->remote || (tp->program && tp->program_fix &&
					     tp->address)));
		CHECK(tp && tp->unreachable_fix);
	}
	CHECK(transport_find("utm") == NULL);
	CHECK(transport_find(NULL) == NULL);
	CHECK(transport_local.remote == 0 && transport_ssh.remote);
	/* VMs only where there is a VM; default users where the images
	 * have them */
	CHECK(transport_lume.vm_state && transport_tart.vm_state);
	CHECK(!transport_ssh.vm_state && !transport_local.vm_state);
	CHECK_STR(transport_lume.default_user, "lume");
	CHECK_STR(transport_tart.default_user, "admin");
	CHECK(transport_ssh.default_user == NULL);
	transport_names(&b);
	CHECK_STR(b.buf, "local, ssh, lume or tart");
	buf_release(&b);
}

static void
test_wrap(void)
{
	static const char *const argv[] = { "/opt/llama bench", "-p", "it's",
					    NULL };
	static const char *const set[] = { "DYLD_INSERT_LIBRARIES=/a b.dylib",
					   NULL };
	static const char *const unset[] = { "LD_PRELOAD", NULL };
	/* transport_watched(): the command in the background, ended when
	 * the stdin we hold closes */
#define WATCH_A "exec 3<&0; ("
#define WATCH_B ") </dev/null 3<&- & c=$!; { cat >/dev/null; " \
	"kill -TERM $c; sleep 1; kill -KILL $c; } <&3 >/dev/null 2>&1 & " \
	"w=$!; exec 3<&-; wait $c; s=$?; kill $w 2>/dev/null; exit $s"
	static const struct {
		const char *target, *argv;
		int hold;
		int merged;
		const char *env;
	} cases[] = {
		{ "\"transport\": \"local\"",
		  "/opt/llama bench|-p|it's", 0, 0, "DYLD_INSERT_LIBRARIES=/a b.dylib" },
		{ "\"transport\": \"ssh\", \"host\": \"mac\", \"user\": \"me\", "
		  "\"port\": 2222, \"ssh_options\": [\"-i\", \"k\"]",
		  "ssh|-o|BatchMode=yes|-T|-i|k|-p|2222|-l|me|--|mac|"
		  WATCH_A "unset 'LD_PRELOAD'; DYLD_INSERT_LIBRARIES='/a b.dylib' "
		  "exec '/opt/llama bench' '-p' 'it'\\''s'" WATCH_B, 1, 0, "" },
		/* -i: tart attaches our stdin, which the watcher reads */
		{ "\"transport\": \"tart\", \"vm\": \"runner\"",
		  "tart|exec|-i|--|runner|/bin/sh|-c|"
		  WATCH_A "unset 'LD_PRELOAD'; DYLD_INSERT_LIBRARIES='/a b.dylib' "
		  "exec '/opt/llama bench' '-p' 'it'\\''s'" WATCH_B, 1, 0, "" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct transport_cmd tc;
		struct plan p;
		char *got, *env;

		CHECK(load(cases[i].target, &p) == 0);
		if (p.ntargets != 1)
			continue;
		CHECK(transport_wrap(&p.targets[0], argv, set, unset, &tc) == 0);
		got = joined(tc.argv);
		env = joined(tc.env_set);
		CHECK_STR(got, cases[i].argv);
		CHECK_STR(env, cases[i].env);
		CHECK(tc.merged == cases[i].merged);
		CHECK(tc.hold_stdin == cases[i].hold);
		free(got);
		free(env);
		transport_cmd_free(&tc);
		plan_free(&p);
	}
	/* lume: options before the VM, the whole command one argument that
	 * writes both streams to files and prints them split by the
	 * separator; lume's log lines kept off stdout */
	{
		struct transport_cmd tc;
		struct plan p;
		char *env;

		CHECK(load("\"transport\": \"lume\", \"vm\": \"tahoe\", "
			   "\"user\": \"lume\"", &p) == 0);
		CHECK(transport_wrap(&p.targets[0], argv, set, unset, &tc) == 0);
		CHECK_STR(tc.argv[0], "lume");
		CHECK_STR(tc.argv[1], "ssh");
		CHECK_STR(tc.argv[2], "-u");
		CHECK_STR(tc.argv[4], "-t");
		CHECK_STR(tc.argv[5], "0");
		CHECK_STR(tc.argv[6], "--");
		CHECK_STR(tc.argv[7], "tahoe");
		CHECK(tc.argv[8] && !tc.argv[9]);
		CHECK(strstr(tc.argv[8], "DYLD_INSERT_LIBRARIES='/a b.dylib' "
			     "exec '/opt/llama bench'") != NULL);
		CHECK(strstr(tc.argv[8], TRANSPORT_SEPARATOR) != NULL);
		CHECK(tc.merged == 1);
		CHECK(tc.hold_stdin == 0);
		env = joined(tc.env_set);
		CHECK_STR(env, "LUME_LOG_LEVEL=error");
		free(env);
		transport_cmd_free(&tc);
		plan_free(&p);
	}
}

static void
test_refused(void)
{
	static const struct { const char *target, *err; } bad[] = {
		{ "\"transport\": \"utm\"",
		  "'targets.t.transport' is 'utm'; expected local, ssh, lume or tart" },
		{ "\"transport\": \"ssh\"", "'targets.t' uses ssh and needs 'host'" },
		{ "\"transport\": \"lume\"", "'targets.t' uses lume and needs 'vm'" },
		{ "\"transport\": \"tart\"", "'targets.t' uses tart and needs 'vm'" },
		{ "\"transport\": \"lume\", \"vm\": \"-oProxyCommand=x\"",
		  "'targets.t.vm' is '-oProxyCommand=x': a name starting with '-'" },
		{ "\"transport\": \"tart\", \"vm\": \"--help\"",
		  "'targets.t.vm' is '--help'" },
		{ "\"transport\": \"ssh\", \"host\": \"-oProxyCommand=touch x\"",
		  "'targets.t.host' is '-oProxyCommand=touch x'" },
		{ "\"transport\": \"ssh\", \"host\": \"h\", \"user\": \"-x\"",
		  "'targets.t.user' is '-x'" },
		{ "\"transport\": \"lume\", \"vm\": \"a\\nb\"",
		  "'targets.t.vm' holds a control character" },
		{ "\"transport\": \"tart\", \"vm\": \"a\\u001b[2Jb\"",
		  "'targets.t.vm' holds a control character" },
		{ "\"transport\": \"ssh\", \"host\": \"h\\u007f\"",
		  "'targets.t.host' holds a control character" },
	};
	struct plan p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(load(bad[i].target, &p) == -1);
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		if (!strstr(error_last(), bad[i].err))
			printf("  %s: %s\n", bad[i].target, error_last());
	}
	/* a variable a remote shell cannot set or unset: refused there */
	CHECK(load("\"transport\": \"tart\", \"vm\": \"ok-vm.1\"", &p) == 0);
	{
		static const char *const argv[] = { "x", NULL };
		static const char *const set[] = { "A-B=1", NULL };
		static const char *const unset[] = { "X;rm", NULL };
		struct transport_cmd tc;

		error_silent++;
		CHECK(transport_wrap(&p.targets[0], argv, set, NULL, &tc) == -1);
		CHECK(strstr(error_last(), "cannot be set in a remote shell") != NULL);
		CHECK(transport_wrap(&p.targets[0], argv, NULL, unset, &tc) == -1);
		CHECK(strstr(error_last(), "cannot be unset in a remote shell") != NULL);
		error_silent--;
	}
	plan_free(&p);
}

static void
test_same_machine(void)
{
	static const char text[] =
		"{\"models\": [{\"name\": \"m\", \"path\": \"m\"}], \"targets\": {"
		"\"a\": {}, \"b\": {\"transport\": \"local\"},"
		"\"c\": {\"transport\": \"ssh\", \"host\": \"h\"},"
		"\"d\": {\"transport\": \"ssh\", \"host\": \"h\"},"
		"\"e\": {\"transport\": \"ssh\", \"host\": \"h\", \"port\": 2},"
		"\"f\": {\"transport\": \"ssh\", \"host\": \"h\", \"ssh_options\": [\"-4\"]},"
		"\"g\": {\"transport\": \"lume\", \"vm\": \"h\"},"
		"\"h\": {\"transport\": \"tart\", \"vm\": \"h\"}},"
		"\"variants\": [{\"name\": \"v\", \"target\": \"a\"}]}";
	/* which pairs share a probe: a=b, c=d; nothing else */
	static const char *const same[] = { "ab", "cd" };
	struct plan p;
	size_t i, j, k;

	CHECK(plan_parse(text, strlen(text), "p", NULL, &p) == 0);
	for (i = 0; i < p.ntargets; i++)
		for (j = 0; j < p.ntargets; j++) {
			int want = i == j;
			char pair[3] = { p.targets[i].name[0],
					 p.targets[j].name[0], 0 };

			for (k = 0; k < ARRAY_SIZE(same); k++)
				want |= (pair[0] == same[k][0] &&
					 pair[1] == same[k][1]) ||
					(pair[0] == same[k][1] &&
					 pair[1] == same[k][0]);
			CHECK(transport_same_machine(&p.targets[i],
						     &p.targets[j]) == want);
		}
	plan_free(&p);
}

static const struct test_case tests[] = {
	{ "the table: one row per transport", test_table },
	{ "each row's argv, quoting and streams", test_wrap },
	{ "unknown transports, missing keys, option-like names refused", test_refused },
	{ "targets reaching the same machine the same way", test_same_machine },
};

TEST_MAIN(tests)
