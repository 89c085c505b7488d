#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *shimbench_version = SHIMBENCH_VERSION;

static const struct command *const commands[] = {
	&cmd_doctor,
	&cmd_run,
	&cmd_export,
	&cmd_sessions,
	&cmd_import,
	&cmd_inspect,
	&cmd_report,
	&cmd_compare,
	&cmd_gate,
	&cmd_history,
	&cmd_calibrate,
	&cmd_reproduce,
	&cmd_models,
	&cmd_shim,
	&cmd_upgrade,
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
		fprintf(fp, "  %-12s %s\n", commands[i]->name,
			commands[i]->summary);
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
find_in(const struct command *const *list, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n && list[i]; i++) {
		const char *sp = strrchr(list[i]->name, ' ');
		if (!strcmp(sp ? sp + 1 : list[i]->name, name))
			return list[i];
	}
	return NULL;
}

/* The name in list that a mistyped name most likely meant, or NULL. */
static const char *
closest_command(const struct command *const *list, size_t n, const char *name)
{
	const char **names, *hint;
	size_t i, count = 0;

	while (count < n && list[count])   /* n may be (size_t)-1: to NULL */
		count++;
	names = xcalloc(count + 1, sizeof(char *));
	for (i = 0; i < count; i++) {
		const char *sp = strrchr(list[i]->name, ' ');

		names[i] = sp ? sp + 1 : list[i]->name;
	}
	hint = closest_word(name, names, i);
	free(names);
	return hint;
}

/* "unknown command 'X'" with "did you mean 'Y'?" when one is near. */
static void
unknown_command(const struct command *const *list, size_t n,
		const char *what, const char *name)
{
	const char *hint = closest_command(list, n, name);

	if (hint)
		fprintf(stderr, "error: unknown %s '%s' (did you mean '%s'?)\n",
			what, name, hint);
	else
		fprintf(stderr, "error: unknown %s '%s'\n", what, name);
}

/* The full --help text of a command. */
static void
cmd_usage(const struct command *c, struct buf *out)
{
	size_t i;

	if (c->subs) {
		for (i = 0; c->subs[i]; i++)
			buf_addf(out, "%s shimbench %s %s\n", i ? "      " :
				 "usage:", c->subs[i]->name,
				 c->subs[i]->synopsis ? c->subs[i]->synopsis : "");
	} else {
		buf_addf(out, "usage: shimbench %s %s\n", c->name,
			 c->synopsis ? c->synopsis : "");
	}
	if (c->description)
		buf_addf(out, "\n%s", c->description);
	if (c->subs) {
		buf_addf(out, "\nsubcommands (shimbench %s SUBCOMMAND --help "
			 "for the options of each):\n", c->name);
		for (i = 0; c->subs[i]; i++) {
			const char *sp = strrchr(c->subs[i]->name, ' ');
			buf_addf(out, "  %-10s %s\n", sp ? sp + 1 : c->subs[i]->name,
				 c->subs[i]->summary);
		}
	}
	if (c->opts && c->opts[0].name) {
		buf_adds(out, "\noptions:\n");
		opt_help(c->opts, out);
	}
	if (c->epilogue)
		buf_addf(out, "\n%s", c->epilogue);
}

int
cmd_usage_error(const struct cmd_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee 'shimbench %s --help'\n", ctx->cmd->name);
	return EXIT_USAGE;
}

static int
print_help(const struct command *c)
{
	struct buf b = BUF_INIT;

	cmd_usage(c, &b);
	fwrite(b.buf, 1, b.len, stdout);
	buf_release(&b);
	return 1;
}

int
cmd_parse(struct cmd_ctx *ctx, int argc, char **argv, void *opts,
	  const char ***args, size_t *nargs)
{
	static const struct opt none[] = { OPT_END };
	const struct command *c = ctx->cmd;
	int rc;

	rc = opt_parse(c->opts ? c->opts : none, argc, argv, opts, args, nargs);
	if (rc == 1) {
		free(*args);
		*args = NULL;
		return print_help(c);
	}
	if (rc == 0 && (int)*nargs < c->min_args) {
		rc = error("%s", *nargs ? "too few arguments" :
			   "missing arguments");
	} else if (rc == 0 && c->max_args >= 0 && (int)*nargs > c->max_args) {
		rc = error("unexpected argument '%s'", (*args)[c->max_args]);
	}
	if (rc < 0) {
		fprintf(stderr, "usage: shimbench %s %s\nsee 'shimbench %s "
			"--help'\n", c->name, c->synopsis ? c->synopsis : "",
			c->name);
		free(*args);
		*args = NULL;
		*nargs = 0;
		if (c->opts)
			opt_release(c->opts, opts);
		return -1;
	}
	return 0;
}

int
cmd_dispatch(int argc, char **argv, struct cmd_ctx *ctx)
{
	const struct command *c = ctx->cmd, *sub;

	if (argc < 2)
		return cmd_usage_error(ctx, "missing subcommand");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		print_help(c);
		return EXIT_OK;
	}
	sub = find_in(c->subs, (size_t)-1, argv[1]);
	if (!sub) {
		const char *hint = closest_command(c->subs, (size_t)-1, argv[1]);

		if (hint)
			return cmd_usage_error(ctx, "unknown subcommand '%s' (did "
					       "you mean '%s'?)", argv[1], hint);
		return cmd_usage_error(ctx, "unknown subcommand '%s'", argv[1]);
	}
	ctx->cmd = sub;
	return sub->fn(argc - 1, argv + 1, ctx);
}

/* Why there is no store at the --db path: a directory, or nothing. */
static int
no_store(const struct cmd_ctx *ctx)
{
	if (dir_exists(ctx->db_path))
		return error("'%s' is a directory, not a store: --db names the "
			     "store's file (e.g. '%s/shimbench.db')",
			     ctx->db_path, ctx->db_path);
	return error("no store at '%s'; run `shimbench import` or "
		     "`shimbench run` first (or give --db)", ctx->db_path);
}

int
cmd_open_existing_store(const struct cmd_ctx *ctx, struct store **s)
{
	*s = NULL;
	if (!file_exists(ctx->db_path))
		return no_store(ctx);
	return store_open(s, ctx->db_path);
}

int
cmd_open_store_readonly(const struct cmd_ctx *ctx, struct store **s)
{
	*s = NULL;
	if (!file_exists(ctx->db_path))
		return no_store(ctx);
	if (store_open_readonly(s, ctx->db_path) < 0)
		return -1;
	if (store_verify(*s) < 0) {
		store_close(*s);
		*s = NULL;
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	const struct command *cmd;
	int i;

	/* Results on a terminal never carry escape sequences from labels. */
	stdout = term_guard(stdout);
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
			static const char *const global[] = {
				"--db", "--quiet", "--version", "--help",
			};
			const char *hint = closest_word(a, global,
							ARRAY_SIZE(global));

			if (hint)
				fprintf(stderr, "error: unknown option '%s' (did "
					"you mean '%s'?)\n", a, hint);
			else
				fprintf(stderr, "error: unknown option '%s'\n", a);
			print_main_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		print_main_usage(stderr);
		return EXIT_USAGE;
	}
	/* SQLite would make these a temporary or in-memory store: whatever
	 * a command stored would be lost at exit. */
	if (!*ctx.db_path || !strcmp(ctx.db_path, ":memory:")) {
		fprintf(stderr, "error: --db '%s' is not a file; what is stored "
			"there is lost at exit (give a file path; ./:memory: "
			"for a file of that name)\n", ctx.db_path);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help")) {
		if (i + 1 >= argc) {
			print_main_usage(stdout);
			return EXIT_OK;
		}
		cmd = find_in(commands, ARRAY_SIZE(commands), argv[i + 1]);
		if (!cmd) {
			unknown_command(commands, ARRAY_SIZE(commands), "command",
					argv[i + 1]);
			return EXIT_USAGE;
		}
		print_help(cmd);
		return EXIT_OK;
	}
	cmd = find_in(commands, ARRAY_SIZE(commands), argv[i]);
	if (!cmd) {
		unknown_command(commands, ARRAY_SIZE(commands), "command",
				argv[i]);
		fputs("see 'shimbench --help'\n", stderr);
		return EXIT_USAGE;
	}
	ctx.cmd = cmd;
	return cmd->fn(argc - i, argv + i, &ctx);
}
