#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/render.h"
#include "analysis/report.h"
#include "evidence/bundle.h"
#include "evidence/runrec.h"
#include "evidence/store.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * The report of one session, built once and rendered twice (README.md and
 * results.csv), then the bundle. md_out, when not NULL, gets the Markdown
 * tables for the caller to print.
 */
int
cmd_write_bundle(struct store *s, int64_t sid, const char *dir,
		 unsigned flags, struct buf *md_out)
{
	struct session_data d;
	struct selection sel = { 0 };
	struct report rep = { 0 };
	struct buf md = BUF_INIT, csv = BUF_INIT;
	struct bundle_tables t;
	char spec[48];
	int ret = -1;

	if (store_session_load(s, sid, &d) < 0)
		return -1;
	snprintf(spec, sizeof(spec), "session=%lld", (long long)sid);
	if (selection_parse(spec, &sel) < 0 || report_build(s, &sel, &rep) < 0)
		goto cleanup;
	report_render(&rep, "md", &md);
	report_render(&rep, "csv", &csv);
	t.readme_md = md.buf;
	t.results_csv = csv.buf;
	if (bundle_write(dir, &d, &t, flags) < 0)
		goto cleanup;
	if (md_out)
		buf_add(md_out, md.buf, md.len);
	ret = 0;
cleanup:
	session_data_release(&d);
	selection_free(&sel);
	report_release(&rep);
	buf_release(&md);
	buf_release(&csv);
	return ret;
}

struct export_opts {
	int force;
};

#define EO struct export_opts
static const struct opt export_opts[] = {
	OPT_F("force", 0, EO, force,
	      "write into DIR even when it is not empty (files of the same "
	      "names are replaced; others stay and are not listed)"),
	OPT_END
};
#undef EO

static int
export_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct export_opts o = { 0 };
	struct store *s = NULL;
	const char **args = NULL;
	size_t nargs;
	long sid;
	int rc, ret = EXIT_OK;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (parse_long(args[0], &sid) < 0 || sid <= 0) {
		ret = cmd_usage_error(ctx, "'%s' is not a session number",
				      args[0]);
		goto cleanup;
	}
	if (cmd_open_store_readonly(ctx, &s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	if (cmd_write_bundle(s, sid, args[1], o.force ? BUNDLE_FORCE : 0,
			     NULL) < 0)
		ret = EXIT_ENV;
	else if (!ctx->quiet)
		printf("exported session %ld to '%s'\n", sid, args[1]);
cleanup:
	store_close(s);
	free(args);
	return ret;
}

const struct command cmd_export = {
	.name = "export",
	.fn = export_main,
	.summary = "write a stored session as an evidence bundle",
	.synopsis = "[--force] SESSION DIR",
	.description =
		"Writes stored session SESSION as an evidence bundle into DIR (new\n"
		"or empty): bundle.json, the raw llama-bench output and stderr of\n"
		"every run, results.csv, README.md with the tables, and SHA256SUMS\n"
		"over every other file, written last. `shimbench import DIR` reads\n"
		"it back: into an empty store it gives the same report and session\n"
		"facts. A stored output that does not match its recorded SHA-256 is\n"
		"never written (exit 3).\n",
	.opts = export_opts,
	.min_args = 2,
	.max_args = 2,
};
