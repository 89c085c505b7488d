#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "evidence/store.h"
#include "base/util.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *shimbench_version = SHIMBENCH_VERSION;

static const struct command commands[] = {
	{ "doctor", cmd_doctor, "what is installed, found and reachable; how to fix the rest", usage_doctor },
	{ "run", cmd_run, "run a plan: llama-bench per variant, verified and stored", usage_run },
	{ "export", cmd_export, "write a stored session as an evidence bundle", usage_export },
	{ "sessions", cmd_sessions, "list the stored sessions", usage_sessions },
	{ "import", cmd_import, "ingest evidence bundles or raw llama-bench files", usage_import },
	{ "report", cmd_report, "speedup and percent-of-bare-metal tables", usage_report },
	{ "compare", cmd_compare, "per-workload ratio with bootstrap CI, p-value and verdict", usage_compare },
	{ "gate", cmd_gate, "CI verdict: regression, pass or inconclusive, JUnit and Markdown", usage_gate },
	{ "history", cmd_history, "a workload's series across OS builds with change points", usage_history },
	{ "calibrate", cmd_calibrate, "noise floor of a target from A/A processes; false-alarm and power trials", usage_calibrate },
	{ "reproduce", cmd_reproduce, "compare stored runs with the published figures", usage_reproduce },
	{ "models", cmd_models, "GGUF facts, synthetic models, manifest verification, hashing", usage_models },
	{ "shim", cmd_shim, "a LaunchAgent that runs one server with the capability shim", usage_shim },
};

static void
print_main_usage(FILE *fp)
{
	size_t i;

	fprintf(fp,
		"usage: shimbench [--db PATH] [--quiet] COMMAND [ARGS...]\n"
		"       shimbench --version | --help | help COMMAND\n"
		"\n"
		"Benchmarks llama-bench on bare metal, in a stock macOS guest\n"
		"and in a guest with the Metal capability shim; stores every\n"
		"run in SQLite and reports speedups.\n"
		"\n"
		"commands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(fp, "  %-12s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(fp,
		"\n"
		"global options:\n"
		"  --db PATH    SQLite store (default $SHIMBENCH_DB or ./shimbench.db)\n"
		"  --quiet      print results only, no progress\n"
		"\n"
		"exit codes: 0 ok, 1 a check failed, 2 usage, 3 environment or\n"
		"tool failure, 4 inconclusive\n");
}

static const struct command *
find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

void
cmd_getopt_reset(void)
{
	optind = 1;
	opterr = 0;
#if defined(__APPLE__) || defined(__FreeBSD__)
	optreset = 1;
#endif
}

int
cmd_open_existing_store(const struct cmd_ctx *ctx, struct store **s)
{
	*s = NULL;
	if (!file_exists(ctx->db_path))
		return error("no store at '%s'; run `shimbench import` or "
			     "`shimbench run` first (or give --db)",
			     ctx->db_path);
	return store_open(s, ctx->db_path);
}

int
cmd_help(const char *usage)
{
	fputs(usage, stdout);
	return EXIT_OK;
}

int
cmd_usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee 'shimbench %s --help'\n", name);
	return EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	const struct command *cmd;
	int i;

	ctx.db_path = getenv("SHIMBENCH_DB");
	if (!ctx.db_path || !*ctx.db_path)
		ctx.db_path = "shimbench.db";

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--version")) {
			printf("shimbench %s\n", shimbench_version);
			return EXIT_OK;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			print_main_usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			ctx.quiet = 1;
		} else if (!strcmp(a, "--db")) {
			if (++i >= argc) {
				fputs("error: --db needs a path\n", stderr);
				return EXIT_USAGE;
			}
			ctx.db_path = argv[i];
		} else if (!strncmp(a, "--db=", 5)) {
			ctx.db_path = a + 5;
		} else {
			fprintf(stderr, "error: unknown option '%s'\n", a);
			print_main_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		print_main_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help")) {
		if (i + 1 >= argc) {
			print_main_usage(stdout);
			return EXIT_OK;
		}
		cmd = find_command(argv[i + 1]);
		if (!cmd) {
			fprintf(stderr, "error: unknown command '%s'\n",
				argv[i + 1]);
			return EXIT_USAGE;
		}
		return cmd_help(cmd->usage);
	}
	cmd = find_command(argv[i]);
	if (!cmd) {
		fprintf(stderr, "error: unknown command '%s'\n"
			"see 'shimbench --help'\n", argv[i]);
		return EXIT_USAGE;
	}
	cmd_getopt_reset();
	return cmd->fn(argc - i, argv + i, &ctx);
}
