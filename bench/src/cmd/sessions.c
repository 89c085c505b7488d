#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/render.h"
#include "evidence/store.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

const char usage_sessions[] =
	"usage: shimbench sessions [--format md|csv|json]\n"
	"\n"
	"Lists the stored sessions, newest last: id, kind (run or import),\n"
	"start time, status, label or source, the number of runs, how many\n"
	"of them were not injection-verified, the targets' OS builds, and\n"
	"whether an import was flagged as tampered. Session ids are what\n"
	"`report --select session=N`, `compare`, `gate` and `export` take.\n";

static int
cmd_sessions_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const cols[] = {
		"session#", "kind", "started", "status", "label", "runs#",
		"unverified#", "os_builds", "tampered",
	};
	const char *format = "md";
	struct store_session *ss = NULL;
	struct store *s = NULL;
	struct buf out = BUF_INIT;
	struct table t;
	size_t n = 0, i;
	int c, ret = EXIT_OK;

	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'h': return cmd_help(usage_sessions);
		default:
			return cmd_usage_error_name("sessions", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error_name("sessions", "unexpected argument '%s'",
				       argv[optind]);
	if (strcmp(format, "md") && strcmp(format, "csv") &&
	    strcmp(format, "json"))
		return cmd_usage_error_name("sessions", "unknown format '%s' (md, "
				       "csv or json)", format);
	if (cmd_open_existing_store(ctx, &s) < 0 ||
	    store_sessions_list(s, &ss, &n) < 0) {
		store_close(s);
		return EXIT_ENV;
	}
	table_init(&t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < n; i++) {
		char id[24], runs[24], unv[24];
		const char *row[ARRAY_SIZE(cols)];

		snprintf(id, sizeof(id), "%lld", (long long)ss[i].id);
		snprintf(runs, sizeof(runs), "%ld", ss[i].runs);
		snprintf(unv, sizeof(unv), "%ld", ss[i].unverified);
		row[0] = id;
		row[1] = ss[i].kind;
		row[2] = ss[i].started_at;
		row[3] = ss[i].status;
		row[4] = ss[i].label;
		row[5] = runs;
		row[6] = unv;
		row[7] = ss[i].os_builds;
		row[8] = ss[i].tampered ? "yes" : "";
		table_add_row(&t, row);
	}
	table_render(&t, format, &out);
	fwrite(out.buf, 1, out.len, stdout);
	table_release(&t);
	buf_release(&out);
	store_sessions_free(ss, n);
	store_close(s);
	return ret;
}

LEGACY_COMMAND(sessions, "list the stored sessions", cmd_sessions_main, usage_sessions);
