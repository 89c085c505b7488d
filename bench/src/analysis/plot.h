#ifndef PLOT_H
#define PLOT_H

/*
 * Charts of a report, drawn by gnuplot (an external program). gnuplot
 * runs in a private temporary directory on files with fixed names, so no
 * user-supplied name or label ever reaches its command language.
 */

struct report;
struct buf;

/* The charts: "throughput" (median t/s per role, min-max bars, log
 * scale) and "speedup" (shim / stock per workload). */
extern const char *const plot_charts[];

/*
 * Draws chart `chart` of r with gnuplot terminal `term` ("svg" or "png")
 * and appends the file's bytes to out. Returns 0; 1 when the report has
 * nothing to draw for that chart (out unchanged); -1 after error(); -2
 * when gnuplot is not installed.
 */
int plot_chart(const struct report *r, const char *chart, const char *term,
	       struct buf *out);

/*
 * Writes every chart that has data into dir (created) as CHART.svg (and
 * CHART.png when png is set); names the files written in `written`,
 * one per line. 0, -1 after error(), -2 when gnuplot is missing.
 */
int plot_report(const struct report *r, const char *dir, int png,
		struct buf *written);

#endif
