#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "evidence/store.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

static int upgrade_main(int argc, char **argv, struct cmd_ctx *ctx);

const struct command cmd_upgrade = {
	.name = "upgrade",
	.fn = upgrade_main,
	.summary = "upgrade a store of an earlier shimbench to this schema",
	.synopsis = "",
	.description =
		"Migrates the store (--db) in place, in one transaction, to the\n"
		"schema this shimbench writes; nothing stored is changed or lost.\n"
		"Commands that only read (report, compare, history, sessions, gate,\n"
		"reproduce, export) read an earlier store without it, through an\n"
		"upgraded copy in memory, and say so; writing commands (import,\n"
		"run, calibrate) upgrade it as they open it.\n",
	.epilogue = "exit: 0 upgraded or already current, 3 no store, not a "
		"shimbench store, or a\nnewer schema than this shimbench knows\n",
	.max_args = 0,
};

static int
upgrade_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char **args = NULL;
	size_t nargs;
	struct store *s = NULL;
	int rc, from, to;

	rc = cmd_parse(ctx, argc, argv, NULL, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	free(args);
	if (cmd_open_existing_store(ctx, &s) < 0) {
		store_close(s);
		return EXIT_ENV;
	}
	from = store_schema_found(s);
	to = store_schema_version(s);
	store_close(s);
	if (from == to)
		printf("store '%s' has schema version %d: current, nothing to "
		       "do\n", ctx->db_path, to);
	else
		printf("store '%s' upgraded from schema version %d to %d\n",
		       ctx->db_path, from, to);
	return EXIT_OK;
}
