#define _XOPEN_SOURCE 700
#include "base/proc.h"
#include "test.h"
#include "base/files.h"
#include "base/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The fixture child, built by the Makefile from bench/t/helpers/. */
static const char *
child_path(void)
{
	static char path[4096];
	const char *build = getenv("SHIMBENCH_BUILD");

	if (!path[0])
		snprintf(path, sizeof(path), "%s/t/helpers/proc-child",
			 build && *build ? build : "build");
	return path;
}

static char tmpdir[] = "/tmp/test-proc.XXXXXX";

static const char *
tmp_path(const char *name)
{
	static char path[8][4200];
	static int next;
	char *p = path[next++ % 8];

	if (!strcmp(tmpdir + strlen(tmpdir) - 6, "XXXXXX") && !mkdtemp(tmpdir))
		abort();
	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	return p;
}

static void
nap(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Checks that a spew file holds lines tag000000000 .. tag(n-1) in order. */
static int
spew_file_ok(const char *path, char tag, unsigned long n)
{
	FILE *fp = fopen(path, "r");
	char line[64], want[64];
	unsigned long i = 0;
	int ok = 1;

	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		snprintf(want, sizeof(want), "%c%09lu\n", tag, i++);
		if (strcmp(line, want)) {
			ok = 0;
			break;
		}
	}
	fclose(fp);
	return ok && i == n;
}

static void
test_spew_both_streams(void)
{
	const unsigned long bytes = 6ul << 20; /* 6 MiB on each stream */
	const unsigned long lines = bytes / 11;
	char arg[32];
	const char *argv[] = { child_path(), "spew", arg, NULL };
	struct proc p = PROC_INIT;
	struct stat st;

	snprintf(arg, sizeof(arg), "%lu", bytes);
	p.argv = argv;
	p.timeout = 60;
	p.mem_cap = 64 * 1024;
	p.stdout_path = tmp_path("spew.out");
	p.stderr_path = tmp_path("spew.err");
	CHECK(proc_run(&p) == 0);
	CHECK(p.status == 0);
	CHECK(!p.timed_out);
	CHECK(p.out_bytes == lines * 11);
	CHECK(p.err_bytes == lines * 11);
	CHECK(stat(p.stdout_path, &st) == 0 && (unsigned long)st.st_size == lines * 11);
	CHECK(stat(p.stderr_path, &st) == 0 && (unsigned long)st.st_size == lines * 11);
	CHECK(spew_file_ok(p.stdout_path, 'o', lines));
	CHECK(spew_file_ok(p.stderr_path, 'e', lines));
	CHECK(p.out.len == 64 * 1024 && p.out_truncated);
	CHECK(p.err.len == 64 * 1024 && p.err_truncated);
	CHECK(!strncmp(p.out.buf, "o000000000\no000000001\n", 22));
	CHECK(!strncmp(p.err.buf, "e000000000\ne000000001\n", 22));
	CHECK(strlen(p.out.buf) == p.out.len);
	proc_release(&p);
}

static void
test_small_output_not_truncated(void)
{
	const char *argv[] = { child_path(), "spew", "110", NULL };
	struct proc p = PROC_INIT;

	p.argv = argv;
	CHECK(proc_run(&p) == 0);
	CHECK(p.out.len == 110 && !p.out_truncated);
	CHECK(p.err.len == 110 && !p.err_truncated);
	CHECK(!strcmp(p.out.buf + 99, "o000000009\n"));
	proc_release(&p);
}

static void
test_exit_codes(void)
{
	static const int codes[] = { 0, 1, 2, 3, 42, 255 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		char arg[16];
		const char *argv[] = { child_path(), "exit", arg, NULL };
		struct proc p = PROC_INIT;
		struct buf d = BUF_INIT;
		char want[32];

		snprintf(arg, sizeof(arg), "%d", codes[i]);
		snprintf(want, sizeof(want), "exit %d", codes[i]);
		p.argv = argv;
		CHECK(proc_run(&p) == 0);
		CHECK(p.exit_code == codes[i]);
		CHECK(p.status == codes[i]);
		CHECK(p.signo == 0 && !p.timed_out && !p.exec_errno);
		proc_describe(&p, &d);
		CHECK_STR(d.buf, want);
		buf_release(&d);
		proc_release(&p);
	}
}

static void
test_signal_death(void)
{
	const char *argv[] = { child_path(), "segv", NULL };
	struct proc p = PROC_INIT;
	struct buf d = BUF_INIT;

	p.argv = argv;
	CHECK(proc_run(&p) == 0);
	CHECK(p.signo == SIGSEGV);
	CHECK(p.status == 128 + SIGSEGV);
	CHECK(p.exit_code == -1);
	CHECK(!p.timed_out);
	proc_describe(&p, &d);
	CHECK(!strncmp(d.buf, "killed by signal 11", 19));
	buf_release(&d);
	proc_release(&p);
}

static void
test_timeout_sigterm(void)
{
	const char *argv[] = { child_path(), "hang", NULL };
	struct proc p = PROC_INIT;
	struct buf d = BUF_INIT;

	p.argv = argv;
	p.timeout = 0.3;
	p.grace = 2;
	CHECK(proc_run(&p) == 0);
	CHECK(p.timed_out);
	CHECK(p.signo == SIGTERM);
	CHECK(p.status == 128 + SIGTERM);
	CHECK(p.wall >= 0.3 && p.wall < 1.5);
	proc_describe(&p, &d);
	CHECK_STR(d.buf, "timed out after 0.3 s");
	buf_release(&d);
	proc_release(&p);
}

static void
test_timeout_sigkill_after_grace(void)
{
	const char *argv[] = { child_path(), "hang-ignore-term", NULL };
	struct proc p = PROC_INIT;

	p.argv = argv;
	p.timeout = 0.5;
	p.grace = 0.4;
	CHECK(proc_run(&p) == 0);
	CHECK(p.timed_out);
	CHECK(p.signo == SIGKILL);
	CHECK(p.status == 128 + SIGKILL);
	CHECK(p.wall >= 0.9 && p.wall < 3);
	CHECK_STR(p.out.buf, "ignoring SIGTERM\n");
	proc_release(&p);
}

static int
process_gone(pid_t pid)
{
	char path[64], state = 0;
	FILE *fp;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	/* Dead but not yet reaped by init (containers) counts as gone. */
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fp = fopen(path, "r");
	if (fp) {
		if (fscanf(fp, "%*d %*s %c", &state) != 1)
			state = 0;
		fclose(fp);
	}
	return state == 'Z';
}

static void
test_timeout_kills_group(void)
{
	const char *pidfile = tmp_path("grandchild.pid");
	const char *argv[] = { child_path(), "spawn-hang", pidfile, NULL };
	struct proc p = PROC_INIT;
	struct buf b = BUF_INIT;
	long gc = 0;
	int i, gone = 0;

	p.argv = argv;
	p.timeout = 0.5;
	p.grace = 1;
	CHECK(proc_run(&p) == 0);
	CHECK(p.timed_out && p.signo == SIGTERM);
	CHECK(p.wall < 2.5);
	CHECK(buf_read_file(&b, pidfile) == 0);
	CHECK(parse_long(strtok(b.buf, "\n"), &gc) == 0 && gc > 1);
	for (i = 0; gc > 1 && i < 100 && !gone; i++) {
		gone = process_gone((pid_t)gc);
		if (!gone)
			nap(0.02);
	}
	CHECK(gone);
	buf_release(&b);
	proc_release(&p);
}

static void
test_env_set_unset(void)
{
	const char *argv[] = { child_path(), "env", "SB_SET", "SB_UNSET",
			       "SB_KEEP", "SB_OVER", NULL };
	const char *set[] = { "SB_SET=a b=c", "SB_OVER=first",
			      "SB_OVER=second", NULL };
	const char *unset[] = { "SB_UNSET", NULL };
	struct proc p = PROC_INIT;

	setenv("SB_UNSET", "present", 1);
	setenv("SB_KEEP", "kept", 1);
	setenv("SB_OVER", "parent", 1);
	p.argv = argv;
	p.env_set = set;
	p.env_unset = unset;
	CHECK(proc_run(&p) == 0);
	CHECK_STR(p.out.buf, "SB_SET=a b=c\nSB_UNSET unset\nSB_KEEP=kept\n"
		  "SB_OVER=second\n");
	/* The parent's environment is untouched. */
	CHECK_STR(getenv("SB_UNSET"), "present");
	CHECK_STR(getenv("SB_OVER"), "parent");
	unsetenv("SB_UNSET");
	unsetenv("SB_KEEP");
	unsetenv("SB_OVER");
	proc_release(&p);
}

/* The fixture child's absolute path (child_path() may be relative). */
static char *
child_abs_path(void)
{
	char cwd[4096];

	if (child_path()[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return xstrdup(child_path());
	return xstrfmt("%s/%s", cwd, child_path());
}

static void
test_env_path_lookup(void)
{
	/* execvp finds a bare name on PATH; the child's PATH decides. */
	char *dir = child_abs_path(), *set_path;
	const char *argv[] = { "proc-child", "exit", "7", NULL };
	const char *set[] = { NULL, NULL };
	struct proc p = PROC_INIT;

	*strrchr(dir, '/') = '\0';
	set_path = xstrfmt("PATH=/nonexistent:%s", dir);
	set[0] = set_path;
	p.argv = argv;
	p.env_set = set;
	CHECK(proc_run(&p) == 0);
	CHECK(p.status == 7);
	proc_release(&p);
	free(set_path);
	free(dir);
}

static void
test_path_empty_entry(void)
{
	/* an empty PATH entry is the current directory, for proc as for
	 * path_search() (doctor and run agree on what is found) */
	char *dir = child_abs_path();
	const char *argv[] = { "proc-child", "exit", "9", NULL };
	const char *set[] = { "PATH=/nonexistent:", NULL };
	struct proc p = PROC_INIT;

	*strrchr(dir, '/') = '\0';
	p.argv = argv;
	p.env_set = set;
	p.cwd = dir;
	CHECK(proc_run(&p) == 0);
	CHECK(p.status == 9);
	proc_release(&p);
	free(dir);
}

static void
test_script_without_shebang(void)
{
	/* execvp runs a file without "#!" with /bin/sh; so does proc */
	const char *path = tmp_path("no-shebang");
	const char *argv[] = { path, "a b", NULL };
	struct proc p = PROC_INIT;

	CHECK(write_file_atomic(path, "echo \"[$1]\"\n", 12) == 0);
	chmod(path, 0755);
	p.argv = argv;
	CHECK(proc_run(&p) == 0);
	CHECK(p.status == 0);
	CHECK_STR(p.out.buf, "[a b]\n");
	proc_release(&p);
}

static void
test_cwd(void)
{
	const char *dir = tmp_path("work dir");
	char *prog = child_abs_path(), *want;
	const char *argv[] = { prog, "cwd", NULL };
	char abs[4096];
	struct proc p = PROC_INIT;

	CHECK(mkdir(dir, 0777) == 0);
	p.argv = argv;
	p.cwd = dir;
	CHECK(proc_run(&p) == 0);
	CHECK(realpath(dir, abs) != NULL);
	want = xstrfmt("%s\n", abs);
	CHECK_STR(p.out.buf, want);
	proc_release(&p);
	free(want);
	free(prog);
}

static void
test_bad_cwd(void)
{
	const char *argv[] = { child_path(), "cwd", NULL };
	struct proc p = PROC_INIT;

	p.argv = argv;
	p.cwd = tmp_path("no such dir");
	error_silent++;
	CHECK(proc_run(&p) == -1);
	error_silent--;
	CHECK(p.exec_errno == ENOENT);
	CHECK_STR(p.exec_stage, "chdir");
	CHECK(p.status == 127);
	CHECK(strstr(error_last(), "no such dir") != NULL);
	proc_release(&p);
}

static void
test_stdin_is_devnull(void)
{
	const char *argv[] = { child_path(), "stdin", NULL };
	struct proc p = PROC_INIT;

	p.argv = argv;
	p.timeout = 10;
	CHECK(proc_run(&p) == 0);
	CHECK_STR(p.out.buf, "devnull\nread 0\n");
	CHECK(!p.timed_out);
	proc_release(&p);
}

static void
test_missing_program(void)
{
	static const char *names[] = { "shimbench-no-such-program-x7",
				       "/nonexistent/dir/prog" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const char *argv[] = { names[i], "arg", NULL };
		struct proc p = PROC_INIT;
		struct buf d = BUF_INIT;

		p.argv = argv;
		p.stdout_path = tmp_path("missing.out");
		error_silent++;
		CHECK(proc_run(&p) == -1);
		error_silent--;
		CHECK(p.exec_errno == ENOENT);
		CHECK_STR(p.exec_stage, "exec");
		CHECK(p.status == 127);
		CHECK(strstr(error_last(), names[i]) != NULL);
		proc_describe(&p, &d);
		CHECK(!strncmp(d.buf, "cannot exec: ", 13));
		buf_release(&d);
		proc_release(&p);
	}
}

static void
test_not_executable(void)
{
	const char *path = tmp_path("not-exec");
	const char *argv[] = { path, NULL };
	struct proc p = PROC_INIT;

	CHECK(write_file_atomic(path, "#!/bin/sh\n", 10) == 0);
	chmod(path, 0644);
	p.argv = argv;
	error_silent++;
	CHECK(proc_run(&p) == -1);
	error_silent--;
	CHECK(p.exec_errno == EACCES);
	CHECK(p.status == 126);
	proc_release(&p);
}

static void
test_args_verbatim(void)
{
	const char *argv[] = { child_path(), "args", "two words",
			       "'single'", "\"double\"", "$(touch /tmp/x)",
			       "`id`", "", "*", "a\\b", "semi;colon|pipe",
			       "new\nline", NULL };
	struct proc p = PROC_INIT;

	p.argv = argv;
	CHECK(proc_run(&p) == 0);
	CHECK_STR(p.out.buf,
		  "<two words>\n<'single'>\n<\"double\">\n<$(touch /tmp/x)>\n"
		  "<`id`>\n<>\n<*>\n<a\\b>\n<semi;colon|pipe>\n<new\nline>\n");
	proc_release(&p);
}

static void
test_own_process_group(void)
{
	const char *argv[] = { child_path(), "pgrp", NULL };
	struct proc p = PROC_INIT;

	p.argv = argv;
	CHECK(proc_run(&p) == 0);
	CHECK_STR(p.out.buf, "leader\n");
	proc_release(&p);
}

static void
test_unwritable_output(void)
{
	const char *argv[] = { child_path(), "exit", "0", NULL };
	struct proc p = PROC_INIT;

	p.argv = argv;
	p.stdout_path = tmp_path("no-dir/out");
	error_silent++;
	CHECK(proc_run(&p) == -1);
	error_silent--;
	CHECK(p.exec_errno == 0);
	CHECK(strstr(error_last(), "no-dir/out") != NULL);
	proc_release(&p);
}

static void
test_interrupt_stops_child(void)
{
	const char *ready = tmp_path("ready");
	const char *argv[] = { child_path(), "ready-hang", ready, NULL };
	struct proc p = PROC_INIT;
	pid_t killer;
	int i, st;

	CHECK(proc_catch_interrupts() == 0);
	proc_clear_interrupt();
	p.argv = argv;
	p.timeout = 20;
	p.grace = 1;
	CHECK(proc_start(&p) == 0);
	for (i = 0; i < 500 && !file_exists(ready); i++)
		nap(0.01);
	CHECK(file_exists(ready));
	/* A separate process interrupts us while proc_finish() waits. */
	killer = fork();
	if (killer == 0) {
		nap(0.2);
		kill(getppid(), SIGINT);
		_exit(0);
	}
	CHECK(proc_finish(&p) == 0);
	CHECK(p.interrupted);
	CHECK(!p.timed_out);
	CHECK(p.signo == SIGTERM);
	CHECK(p.wall < 5);
	CHECK(proc_interrupted() == SIGINT);
	waitpid(killer, &st, 0);
	proc_clear_interrupt();
	CHECK(proc_interrupted() == 0);
	proc_release(&p);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

static void
cleanup_tmp(void)
{
	const char *argv[] = { "rm", "-rf", tmpdir, NULL };
	struct proc p = PROC_INIT;

	if (strcmp(tmpdir + strlen(tmpdir) - 6, "XXXXXX")) {
		p.argv = argv;
		proc_run(&p);
		proc_release(&p);
	}
}

static void
test_cleanup(void)
{
	cleanup_tmp();
	CHECK(!dir_exists(tmpdir));
}

static const struct test_case tests[] = {
	{ "spew 6 MiB on both streams", test_spew_both_streams },
	{ "small output not truncated", test_small_output_not_truncated },
	{ "exit codes", test_exit_codes },
	{ "death by SIGSEGV", test_signal_death },
	{ "timeout sends SIGTERM", test_timeout_sigterm },
	{ "SIGKILL after grace", test_timeout_sigkill_after_grace },
	{ "timeout kills the group", test_timeout_kills_group },
	{ "env set and unset", test_env_set_unset },
	{ "PATH lookup uses the child's PATH", test_env_path_lookup },
	{ "an empty PATH entry is the current directory", test_path_empty_entry },
	{ "a script without #! runs through sh", test_script_without_shebang },
	{ "cwd", test_cwd },
	{ "bad cwd", test_bad_cwd },
	{ "stdin is /dev/null", test_stdin_is_devnull },
	{ "missing program", test_missing_program },
	{ "not executable", test_not_executable },
	{ "arguments verbatim", test_args_verbatim },
	{ "own process group", test_own_process_group },
	{ "unwritable output file", test_unwritable_output },
	{ "interrupt stops the child", test_interrupt_stops_child },
	{ "cleanup", test_cleanup },
};

TEST_MAIN(tests)
