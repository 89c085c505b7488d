#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/changepoint.h"
#include "analysis/table.h"
#include "analysis/workload.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct history_opts {
	const char *select, *format, *output;
	double p;
	int wide;
};

#define HO struct history_opts
static const struct opt history_opts[] = {
	OPT_S("select", 's', HO, select, "SEL",
	      "key=value[,key=value...] (default: everything)"),
	OPT_D("p", 0, HO, p, "P", 0, 1,
	      "significance of a change (default 0.05; 0 < P < 1)"),
	OPT_C("format", 'f', HO, format, "F", "md|csv|json",
	      "md (default), csv or json"),
	OPT_S("output", 'o', HO, output, "FILE",
	      "write to FILE instead of standard output"),
	OPT_F("wide", 0, HO, wide, "md: every column, however wide"),
	OPT_END
};

static int history_main(int argc, char **argv, struct cmd_ctx *ctx);

const struct command cmd_history = {
	.name = "history",
	.fn = history_main,
	.summary = "a workload's series across OS builds with change points",
	.synopsis = "[--select SEL] [--format md|csv|json]\n"
		"                         [--p P] [-o FILE]",
	.description =
		"The series of each workload per variant, configuration and\n"
		"fingerprint (target, variant, model, test, the llama-bench fields\n"
		"that change the measurement, and the fingerprint without OS version\n"
		"and build), one point per session in order of measurement (the runs'\n"
		"own dates, llama-bench's test_time when a run has none; never the\n"
		"date of an import) with its OS build, median tokens/s and samples.\n"
		"Change points: binary segmentation over the sessions with a t test\n"
		"on the session means of the processes' log medians, the variance of\n"
		"a session never below what the processes imply, the largest over the\n"
		"splits against its own null (docs/statistics.md; its power in\n"
		"bench/BENCHMARKS.md); the\n"
		"session that introduced each change is marked with the shift. Steps\n"
		"in one direction that a straight ramp explains better are one drift,\n"
		"marked where it starts, with the sessions it spans.\n",
	.opts = history_opts,
	.epilogue = "exit: 0 shown, 2 usage (an unknown selection key), 3 no "
		"store or nothing matched the selection\n",
	.max_args = 0,
};

static const char *const history_cols[] = {
	"series", "session#", "measured", "os_build", "median#", "samples#",
	"processes#", "change",
};

/* The rows of series j: its points, each change marked where it starts. */
static void
series_rows(struct table *t, const struct workload_history *h, size_t j)
{
	const struct workload_series *sr = &h->sr[j];
	const struct cp_change *cp = h->cp[j];
	size_t k, q;

	for (k = 0; k < sr->np; k++) {
		char sess[32], m[32], n[32], np[32], change[160] = "";
		const char *row[ARRAY_SIZE(history_cols)];

		for (q = 0; q < h->ncp[j]; q++)
			if (cp[q].index == k && cp[q].drift)
				snprintf(change, sizeof(change),
					 "drift %+.1f%% over sessions %lld-%lld "
					 "(%zu sessions; p %.3g; median %.4g -> %.4g)",
					 (cp[q].after / cp[q].before - 1) * 100,
					 (long long)sr->p[cp[q].index].session,
					 (long long)sr->p[cp[q].end].session,
					 cp[q].end - cp[q].index + 1, cp[q].p,
					 cp[q].before, cp[q].after);
			else if (cp[q].index == k)
				snprintf(change, sizeof(change),
					 "change %+.1f%% (p %.3g; median %.4g -> %.4g)",
					 (cp[q].after / cp[q].before - 1) * 100,
					 cp[q].p, cp[q].before, cp[q].after);
		snprintf(sess, sizeof(sess), "%lld", (long long)sr->p[k].session);
		fmt_num(m, sizeof(m), h->median[j][k], 2);
		snprintf(n, sizeof(n), "%zu", sr->p[k].n);
		snprintf(np, sizeof(np), "%zu", sr->p[k].nproc);
		row[0] = sr->key;
		row[1] = sess;
		row[2] = sr->p[k].started;
		row[3] = sr->p[k].os_build;
		row[4] = m;
		row[5] = n;
		row[6] = np;
		row[7] = change;
		table_add_row(t, row);
	}
}

static int
history_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct history_opts o = { .format = "md", .p = 0.05 };
	const char **args = NULL;
	size_t nargs, j;
	struct store *s = NULL;
	struct workload_history h = { 0 };
	struct selection sel;
	struct table t;
	struct buf out = BUF_INIT;
	int ret = EXIT_OK, rc;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	free(args);
	if (o.wide)
		table_md_width(0);
	if (o.p <= 0 || o.p >= 1)
		return cmd_usage_error(ctx, "bad --p '%g' (0 < P < 1)", o.p);
	if (selection_parse(o.select, &sel) < 0)
		return EXIT_USAGE;
	if (cmd_open_store_readonly(ctx, &s) < 0) {
		store_close(s);
		selection_free(&sel);
		return EXIT_ENV;
	}
	rc = workload_history(s, &sel, o.p, &h);
	selection_free(&sel);
	if (rc < 0) {
		workload_history_release(&h);
		store_close(s);
		return rc == RC_USAGE ? EXIT_USAGE : EXIT_ENV;
	}
	table_init(&t, ARRAY_SIZE(history_cols), history_cols);
	table_wide_only(&t, "samples");
	table_wide_only(&t, "processes");
	for (j = 0; j < h.ns; j++)
		series_rows(&t, &h, j);
	if (table_render(&t, o.format, &out) < 0) {
		ret = EXIT_USAGE;
		goto cleanup;
	}
	if (!strcmp(o.format, "md") && (*h.left_out || *h.included)) {
		buf_adds(&out, "\nWarnings:\n\n");
		if (*h.left_out)
			buf_addf(&out, "- left out by default: %s\n", h.left_out);
		if (*h.included)
			buf_addf(&out, "- counts what the defaults leave out, "
				 "because the selection asks for it: %s\n",
				 h.included);
	} else {
		if (*h.left_out)
			warning("left out by default: %s", h.left_out);
		if (*h.included)
			warning("counts what the defaults leave out, because "
				"the selection asks for it: %s", h.included);
	}
	if (o.output && write_file_atomic(o.output, out.buf, out.len) < 0)
		ret = EXIT_ENV;
	else if (!o.output)
		fwrite(out.buf, 1, out.len, stdout);
cleanup:
	table_release(&t);
	workload_history_release(&h);
	buf_release(&out);
	store_close(s);
	return ret;
}
