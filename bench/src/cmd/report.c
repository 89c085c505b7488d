#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "evidence/store.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_report[] =
	"usage: shimbench report [--format md|csv|json|html] [--select SEL]\n"
	"                        [-o FILE] [--plot DIR [--png]]\n"
	"\n"
	"Per workload (model x test): the median of all samples_ts per role\n"
	"(bare-metal host, stock guest, shim guest) with min-max and sample\n"
	"count, the guest speedup (shim / stock), shim / bare-metal and\n"
	"stock / bare-metal percent. Variants with other roles are listed\n"
	"beside them; runs whose injection was not verified are excluded\n"
	"and listed apart.\n"
	"\n"
	"  --format F     md (aligned GitHub Markdown, default), csv (the\n"
	"                 published results.csv columns), json, or html (a\n"
	"                 self-contained page with the tables and the charts\n"
	"                 as inline SVG, drawn by gnuplot when installed)\n"
	"  --select SEL   key=value[,key=value...] over session, variant,\n"
	"                 target, model, role, test, os_build, ... (default:\n"
	"                 everything stored)\n"
	"  -o FILE        write to FILE (e.g. reports/report.md) instead of\n"
	"                 standard output\n"
	"  --plot DIR     also draw the charts with gnuplot into DIR:\n"
	"                 throughput.svg (median t/s per role, min-max bars,\n"
	"                 log scale) and speedup.svg (shim / stock);\n"
	"                 --png adds PNG files\n";

int
cmd_report(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "select", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "plot", required_argument, NULL, 'p' },
		{ "png", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "md", *select = NULL, *output = NULL;
	const char *plot_dir = NULL;
	int png = 0;
	struct selection sel = { 0 };
	struct report rep = { 0 };
	struct buf out = BUF_INIT;
	struct store *s = NULL;
	int c, ret = EXIT_OK;

	while ((c = getopt_long(argc, argv, "f:s:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 's': select = optarg; break;
		case 'o': output = optarg; break;
		case 'p': plot_dir = optarg; break;
		case 'P': png = 1; break;
		case 'h': return cmd_help(usage_report);
		default:
			return cmd_usage_error("report", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error("report", "unexpected argument '%s'",
				       argv[optind]);
	if (strcmp(format, "md") && strcmp(format, "csv") &&
	    strcmp(format, "json") && strcmp(format, "html"))
		return cmd_usage_error("report", "unknown format '%s' (md, "
				       "csv, json or html)", format);
	if (png && !plot_dir)
		return cmd_usage_error("report", "--png goes with --plot DIR");
	if (selection_parse(select, &sel) < 0)
		return EXIT_USAGE;
	if (cmd_open_existing_store(ctx, &s) < 0 ||
	    report_build(s, &sel, &rep) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	report_render(&rep, format, &out);
	if (output) {
		if (write_file_atomic(output, out.buf, out.len) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
		if (!ctx->quiet)
			fprintf(stderr, "wrote '%s'\n", output);
	} else {
		fwrite(out.buf, 1, out.len, stdout);
	}
	if (plot_dir) {
		struct buf written = BUF_INIT;
		int rc = plot_report(&rep, plot_dir, png, &written);

		if (rc == -2) {
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
	if (rep.n == 0 && !ctx->quiet)
		fprintf(stderr, "note: nothing matched the selection\n");
cleanup:
	report_release(&rep);
	selection_free(&sel);
	buf_release(&out);
	store_close(s);
	return ret;
}
