#ifndef ANALYSIS_HTML_H
#define ANALYSIS_HTML_H

/*
 * The report as one self-contained HTML page: the provenance warnings
 * first, the tables, the charts as inline SVG drawn by gnuplot (plot.h:
 * throughput, speedup, percent of bare metal, and the history charts of
 * h), and the provenance section (provenance.h); a note says so when
 * gnuplot is not installed.
 */

struct report;
struct plot_histories;
struct buf;

/*
 * Appends the page to out; h may be NULL (no history charts). 0 (a chart
 * that fails is noted on the page).
 */
int html_report(const struct report *r, const struct plot_histories *h,
		struct buf *out);

#endif
