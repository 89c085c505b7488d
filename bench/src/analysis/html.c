#define _POSIX_C_SOURCE 200809L
#include "analysis/html.h"
#include "analysis/plot.h"
#include "analysis/render.h"
#include "analysis/report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A self-contained HTML page: the tables, and the charts as inline SVG
 * when gnuplot is installed (a note says so when it is not).
 */
int
html_report(const struct report *r, struct buf *out)
{
	struct table t;
	char now[21];
	size_t i, c;
	int charts = 0;

	utc_now(now);
	buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
		 "<meta charset=\"utf-8\">\n<title>shimbench report</title>\n"
		 "<style>\nbody{font-family:sans-serif;margin:2em;color:#222}\n"
		 "table{border-collapse:collapse;margin:1em 0}\n"
		 "th,td{border:1px solid #bbb;padding:4px 8px}\n"
		 "th{background:#eee}\ntd.num{text-align:right;"
		 "font-variant-numeric:tabular-nums}\n"
		 ".note{color:#555}\n.chart svg{max-width:100%;height:auto}\n"
		 "</style>\n</head>\n<body>\n<h1>shimbench report</h1>\n");
	buf_addf(out, "<p class=\"note\">Generated %s by shimbench %s. ",
		 now, SHIMBENCH_VERSION);
	html_escape(out, report_values_note);
	buf_adds(out, "</p>\n<h2>Speedup and percent of bare metal</h2>\n");
	report_headline_table(r, &t);
	if (t.nrows)
		table_render_html(&t, out);
	else
		buf_adds(out, "<p>No bare-metal, stock or shim runs selected.</p>\n");
	table_release(&t);
	buf_adds(out, "<h2>Charts</h2>\n");
	for (c = 0; plot_charts[c]; c++) {
		struct buf svg = BUF_INIT;
		int rc = plot_chart(r, plot_charts[c], "svg", &svg);
		const char *start = strstr(svg.buf, "<svg");

		if (rc == -2) {
			buf_adds(out, "<p class=\"note\">Charts need gnuplot, "
				 "which is not installed.</p>\n");
			buf_release(&svg);
			break;
		}
		if (rc == 0 && start) {
			buf_addf(out, "<div class=\"chart\" id=\"chart-%s\">\n",
				 plot_charts[c]);
			buf_adds(out, start);
			buf_adds(out, "</div>\n");
			charts++;
		} else if (rc < 0) {
			buf_adds(out, "<p class=\"note\">A chart failed: ");
			html_escape(out, error_last());
			buf_adds(out, "</p>\n");
		}
		buf_release(&svg);
	}
	if (!charts)
		buf_adds(out, "<p class=\"note\">Nothing to chart.</p>\n");
	report_others_table(r, &t);
	if (t.nrows) {
		buf_adds(out, "<h2>Other variants</h2>\n");
		table_render_html(&t, out);
	}
	table_release(&t);
	if (r->nex) {
		buf_adds(out, "<h2>Excluded: injection not verified</h2>\n<ul>\n");
		for (i = 0; i < r->nex; i++) {
			char *line = xstrfmt("session %lld run %lld, variant "
					     "'%s', %s: %s", r->ex[i].session,
					     r->ex[i].run, r->ex[i].variant,
					     r->ex[i].workload, r->ex[i].reason);
			buf_adds(out, "<li>");
			html_escape(out, line);
			buf_adds(out, "</li>\n");
			free(line);
		}
		buf_adds(out, "</ul>\n");
	}
	buf_adds(out, "</body>\n</html>\n");
	return 0;
}

