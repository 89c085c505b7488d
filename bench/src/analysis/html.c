#define _POSIX_C_SOURCE 200809L
#include "analysis/html.h"
#include "analysis/ablation.h"
#include "analysis/captable.h"
#include "analysis/plot.h"
#include "analysis/provenance.h"
#include "analysis/render.h"
#include "analysis/table.h"
#include "analysis/report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const chart_titles[] = {
	"Throughput per role",
	"Speedup (shim ÷ stock) with its 95 % interval",
	"Percent of bare metal with 95 % intervals",
};

/*
 * One chart: the SVG inline under a heading, or a note. Returns 1 when
 * drawn, 0 when there was nothing to draw or it failed,
 * PLOT_NO_GNUPLOT when gnuplot is missing.
 */
static int
chart(struct buf *out, const char *id, const char *title, int rc,
      const struct buf *svg)
{
	const char *start = strstr(svg->buf, "<svg");

	if (rc == PLOT_NO_GNUPLOT)
		return PLOT_NO_GNUPLOT;
	if (rc == 0 && start) {
		buf_adds(out, "<div class=\"chart\" id=\"chart-");
		html_escape(out, id);
		buf_adds(out, "\">\n<h3>");
		html_escape(out, title);
		buf_adds(out, "</h3>\n");
		buf_adds(out, start);
		buf_adds(out, "</div>\n");
		return 1;
	}
	if (rc < 0) {
		buf_adds(out, "<p class=\"note\">A chart failed (");
		html_escape(out, title);
		buf_adds(out, "): ");
		html_escape(out, error_last());
		buf_adds(out, "</p>\n");
	}
	return 0;
}

/* The charts; the number drawn, PLOT_NO_GNUPLOT when gnuplot is missing. */
static int
charts(const struct report *r, const struct plot_histories *h,
       struct buf *out)
{
	size_t c;
	int n = 0, rc;

	for (c = 0; plot_charts[c]; c++) {
		struct buf svg = BUF_INIT;

		rc = plot_chart(r, plot_charts[c], "svg", &svg);
		rc = chart(out, plot_charts[c], c < ARRAY_SIZE(chart_titles) ?
			   chart_titles[c] : plot_charts[c], rc, &svg);
		buf_release(&svg);
		if (rc == PLOT_NO_GNUPLOT)
			return PLOT_NO_GNUPLOT;
		n += rc;
	}
	for (c = 0; h && c < h->n; c++) {
		struct buf svg = BUF_INIT;
		char id[48], *title;

		snprintf(id, sizeof(id), "history-%zu", c + 1);
		title = xstrfmt("History: %s", h->c[c].title);
		rc = plot_histories_draw(h, c, "svg", &svg);
		rc = chart(out, id, title, rc, &svg);
		free(title);
		buf_release(&svg);
		if (rc == PLOT_NO_GNUPLOT)
			return PLOT_NO_GNUPLOT;
		n += rc;
	}
	return n;
}

int
html_report(const struct report *r, const struct plot_histories *h,
	    struct buf *out)
{
	struct table t;
	char now[21], *said;
	size_t i;
	int n;

	utc_now(now);
	buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
		 "<meta charset=\"utf-8\">\n<title>shimbench report</title>\n"
		 "<style>\nbody{font-family:sans-serif;margin:2em;color:#222}\n"
		 "table{border-collapse:collapse;margin:1em 0}\n"
		 "th,td{border:1px solid #bbb;padding:4px 8px}\n"
		 "th{background:#eee}\ntd.num{text-align:right;"
		 "font-variant-numeric:tabular-nums}\n"
		 ".note{color:#555}\n.chart svg{max-width:100%;height:auto}\n"
		 ".warnings{background:#fff3cd;border:1px solid #c9a227;"
		 "padding:0.5em 2em}\n"
		 ".provenance td{overflow-wrap:anywhere}\n"
		 "</style>\n</head>\n<body>\n<h1>shimbench report</h1>\n");
	buf_addf(out, "<p class=\"note\">Generated %s by shimbench %s. ",
		 now, SHIMBENCH_VERSION);
	html_escape(out, report_values_note);
	buf_adds(out, " Who and what was measured: <a href=\"#provenance\">"
		 "provenance</a>.</p>\n");
	/* what the numbers must not be read without, before the numbers */
	if ((r->prov && r->prov->nwarnings) || r->warn.n) {
		buf_adds(out, "<ul class=\"warnings\" id=\"warnings\">\n");
		for (i = 0; r->prov && i < r->prov->nwarnings; i++) {
			buf_adds(out, "<li><strong>Warning:</strong> ");
			html_escape(out, r->prov->warnings[i]);
			buf_adds(out, "</li>\n");
		}
		for (i = 0; i < r->warn.n; i++) {
			buf_adds(out, "<li><strong>Warning:</strong> ");
			html_escape(out, r->warn.v[i]);
			buf_adds(out, "</li>\n");
		}
		buf_adds(out, "</ul>\n");
	}
	buf_adds(out, "<h2>Speedup and percent of bare metal</h2>\n");
	said = report_headline_sentence(r);
	if (*said) {
		buf_adds(out, "<p class=\"headline\"><strong>");
		html_escape(out, said);
		buf_adds(out, "</strong></p>\n");
	}
	free(said);
	report_headline_table(r, &t);
	if (t.nrows)
		table_render_html(&t, out);
	else
		buf_adds(out, "<p>No bare-metal, stock or shim runs selected.</p>\n");
	table_release(&t);
	said = report_no_host_note(r);
	if (*said) {
		buf_adds(out, "<p class=\"note\" id=\"no-host\">");
		html_escape(out, said);
		buf_adds(out, "</p>\n");
	}
	free(said);
	buf_adds(out, "<h2>Charts</h2>\n");
	n = charts(r, h, out);
	if (n == PLOT_NO_GNUPLOT)
		buf_adds(out, "<p class=\"note\">Charts need gnuplot, which is "
			 "not installed.</p>\n");
	else if (n == 0)
		buf_adds(out, "<p class=\"note\">Nothing to chart.</p>\n");
	if (n >= 0 && h && !h->n)
		buf_adds(out, "<p class=\"note\">No history chart: no workload "
			 "was measured in two sessions or more.</p>\n");
	report_others_table(r, &t);
	if (t.nrows) {
		buf_adds(out, "<h2>Other variants</h2>\n");
		table_render_html(&t, out);
	}
	table_release(&t);
	if (ablation_present(r)) {
		buf_adds(out, "<h2 id=\"ablation\">Capability ablation: cost in "
			 "% of bare</h2>\n");
		ablation_render(r, "html", out);
	}
	capfacts_table(r, &t);
	if (t.nrows) {
		buf_adds(out, "<h2>Capabilities each variant reported</h2>\n");
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
	provenance_render_html(r->prov, NULL, "provenance", out);
	buf_adds(out, "</body>\n</html>\n");
	return 0;
}
