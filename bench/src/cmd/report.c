#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/ablation.h"
#include "analysis/html.h"
#include "analysis/plot.h"
#include "analysis/provenance.h"
#include "analysis/render.h"
#include "analysis/report.h"
#include "analysis/table.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct report_opts {
	const char *format, *select, *output, *plot_dir;
	int png, pool, wide, ablation;
};

#define RO struct report_opts
static const struct opt report_opts[] = {
	OPT_C("format", 'f', RO, format, "F", "md|csv|json|html",
	      "md (aligned GitHub Markdown, default), csv (the published "
	      "results.csv columns), json, or html (a self-contained page "
	      "with the tables and the charts as inline SVG, drawn by gnuplot "
	      "when installed)"),
	OPT_S("select", 's', RO, select, "SEL",
	      "key=value[,key=value...] over session, variant, target, model, "
	      "role, test, os_build, the llama-bench fields (flash_attn, "
	      "n_threads, backend, ...), fingerprint keys, and include=... "
	      "(default: everything stored that counts)"),
	OPT_S("output", 'o', RO, output, "FILE",
	      "write to FILE (e.g. reports/report.md) instead of standard "
	      "output"),
	OPT_S("plot", 0, RO, plot_dir, "DIR",
	      "also draw the charts with gnuplot into DIR: throughput.svg "
	      "(median t/s per role, min-max bars, log scale), speedup.svg "
	      "(shim / stock with its 95 % bootstrap interval, 1x line), "
	      "percent.svg (percent of bare metal, 100 % line) and "
	      "history-N.svg (a workload measured in two sessions or more, "
	      "change points marked)"),
	OPT_F("png", 0, RO, png, "with --plot: PNG files too"),
	OPT_F("pool", 0, RO, pool, "one median per workload and variant over "
	      "all the sessions selected (default: a workload a variant "
	      "measured in several sessions is one row per session)"),
	OPT_F("wide", 0, RO, wide, "md: every column, the min-max spread "
	      "columns too (default: what fits 160 characters)"),
	OPT_F("ablation", 0, RO, ablation,
	      "only the capability ablation table (a plan's \"ablate\"): "
	      "what taking each capability away costs, in % of bare, with "
	      "its 95 % interval, in the --format given (html: the table)"),
	OPT_END
};

static int report_main(int argc, char **argv, struct cmd_ctx *ctx);

const struct command cmd_report = {
	.name = "report",
	.fn = report_main,
	.summary = "speedup and percent-of-bare-metal tables",
	.synopsis = "[--format md|csv|json|html] [--select SEL] [--pool]\n"
		"                         [--wide] [-o FILE] [--plot DIR [--png]] "
		"[--ablation]",
	.description =
		"Per workload (model x test x configuration: rows that differ in any\n"
		"llama-bench field that changes the measurement are never pooled;\n"
		"the fields that vary are columns): the median of all samples_ts per role\n"
		"(bare, stock, shim; host and guest where a target is a VM) with\n"
		"min-max and sample count, the speedup (shim / stock), shim / bare\n"
		"and stock / bare percent. Variants with other roles are listed\n"
		"beside them; runs whose injection was not verified are excluded\n"
		"and listed apart. md, json and html end with the provenance: the\n"
		"sessions (label, kind, status, tampered, warnings), the targets'\n"
		"hardware, OS version and build, llama.cpp build, llama-bench and\n"
		"shim SHA-256, the models' SHA-256, and when the runs were measured.\n"
		"Tampered imports, failed, interrupted or unfinished sessions and runs\n"
		"that did not end ok are left out unless the selection includes them\n"
		"(include=tampered+partial+failed+interrupted+unfinished or all); the\n"
		"Warnings say what was left out, what counts although it would be, and\n"
		"outliers (docs/statistics.md). Beside the speeds, each variant's\n"
		"capability facts (what ggml reported: fp16, int dot, matrix cores,\n"
		"family...) and, for a plan with \"ablate\", the capability ablation\n"
		"table: cost in % of bare per capability taken away.\n"
		"\n"
		"Sessions are kept apart: a workload that one variant measured in\n"
		"several sessions (a study and a rerun, two OS builds) is one row per\n"
		"session, named [session N]; --pool takes one median of them all.\n"
		"Rows follow the study's order (the plan's or the mapping's).\n",
	.opts = report_opts,
	.epilogue = "exit: 0 reported, 2 usage (an unknown selection key), 3 no "
		"store, nothing matched the selection, or --ablation and no "
		"ablation runs in it\n",
	.max_args = 0,
};

static int
report_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct report_opts o = { .format = "md" };
	const char **args = NULL;
	size_t nargs, i;
	struct selection sel = { 0 };
	struct report rep = { 0 };
	struct plot_histories hist = { 0 };
	struct buf out = BUF_INIT;
	struct store *s = NULL;
	int ret = EXIT_OK, rc;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	free(args);
	if (o.png && !o.plot_dir)
		return cmd_usage_error(ctx, "--png goes with --plot DIR");
	if (o.wide)
		table_md_width(0);
	if (selection_parse(o.select, &sel) < 0)
		return EXIT_USAGE;
	if (cmd_open_store_readonly(ctx, &s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	rc = report_build_pooled(s, &sel, o.pool, &rep);
	if (rc < 0) {
		ret = rc == RC_USAGE ? EXIT_USAGE : EXIT_ENV;
		goto cleanup;
	}
	if (!rep.n && !rep.nex) {
		error("%s", rep.nothing ? rep.nothing :
		      "nothing matched the selection");
		ret = EXIT_ENV;
		goto cleanup;
	}
	if ((!strcmp(o.format, "html") || o.plot_dir) &&
	    plot_histories_load(s, &sel, &hist) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	if (o.ablation) {
		if (!ablation_present(&rep)) {
			error("no ablation runs in the selection (variants of "
			      "role 'ablation', from a plan's \"ablate\")");
			ret = EXIT_ENV;
			goto cleanup;
		}
		if (ablation_render(&rep, o.format, &out) < 0) {
			ret = EXIT_USAGE;
			goto cleanup;
		}
	} else if (!strcmp(o.format, "html")) {
		html_report(&rep, &hist, &out);
	} else if (report_render(&rep, o.format, &out) < 0) {
		ret = EXIT_USAGE;
		goto cleanup;
	}
	/* csv has no room for the provenance: its warnings go to stderr */
	for (i = 0; !strcmp(o.format, "csv") && rep.prov &&
	     i < rep.prov->nwarnings; i++)
		warning("%s", rep.prov->warnings[i]);
	for (i = 0; !strcmp(o.format, "csv") && i < rep.warn.n; i++)
		warning("%s", rep.warn.v[i]);
	if (o.output) {
		if (write_file_atomic(o.output, out.buf, out.len) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
		if (!ctx->quiet && strcmp(o.output, "-"))
			fprintf(stderr, "wrote '%s'\n", o.output);
	} else {
		fwrite(out.buf, 1, out.len, stdout);
	}
	if (o.plot_dir) {
		struct buf written = BUF_INIT;

		rc = plot_report(&rep, &hist, o.plot_dir, o.png, &written);
		if (rc == PLOT_NO_GNUPLOT) {
			error("--plot needs gnuplot, which is not on PATH "
			      "(install gnuplot-nox, or brew install gnuplot)");
			ret = EXIT_ENV;
		} else if (rc < 0) {
			ret = EXIT_ENV;
		} else if (!ctx->quiet) {
			fprintf(stderr, "%s", written.len ? written.buf :
				"nothing to chart\n");
		}
		buf_release(&written);
	}
	if (rep.n == 0) {
		error("%s", rep.nothing ? rep.nothing :
		      "nothing matched the selection");
		ret = EXIT_ENV;
	}
cleanup:
	plot_histories_release(&hist);
	report_release(&rep);
	selection_free(&sel);
	buf_release(&out);
	store_close(s);
	return ret;
}
