#define _POSIX_C_SOURCE 200809L
#include "evidence/bundle.h"
#include "cmd/cmd.h"
#include "evidence/store.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>

const char usage_export[] =
	"usage: shimbench export SESSION DIR\n"
	"\n"
	"Writes stored session SESSION as an evidence bundle into DIR:\n"
	"bundle.json, the raw llama-bench output and stderr of every run,\n"
	"results.csv, README.md with the tables, and SHA256SUMS over every\n"
	"other file. `shimbench import DIR` reads it back.\n";

static int
cmd_export_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct store *s = NULL;
	long sid;
	int c, ret = EXIT_OK;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return cmd_help(usage_export);
		return cmd_usage_error_name("export", "unknown option '%s'",
				       argv[optind - 1]);
	}
	if (argc - optind != 2)
		return cmd_usage_error_name("export", "give SESSION and DIR");
	if (parse_long(argv[optind], &sid) < 0 || sid <= 0)
		return cmd_usage_error_name("export", "'%s' is not a session number",
				       argv[optind]);
	if (cmd_open_existing_store(ctx, &s) < 0)
		return EXIT_ENV;
	if (bundle_export(s, sid, argv[optind + 1]) < 0)
		ret = EXIT_ENV;
	else if (!ctx->quiet)
		printf("exported session %ld to '%s'\n", sid, argv[optind + 1]);
	store_close(s);
	return ret;
}

LEGACY_COMMAND(export, "write a stored session as an evidence bundle", cmd_export_main, usage_export);
