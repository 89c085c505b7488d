#ifndef ANALYSIS_HTML_H
#define ANALYSIS_HTML_H

/*
 * The report as one self-contained HTML page: the tables, and the charts
 * as inline SVG drawn by gnuplot (plot.h); a note says so when gnuplot is
 * not installed.
 */

struct report;
struct buf;

/* Appends the page to out; 0 (a chart that fails is noted on the page). */
int html_report(const struct report *r, struct buf *out);

#endif
