#ifndef PLOT_H
#define PLOT_H

/*
 * Charts of a report and of history, drawn by gnuplot (an external
 * program). gnuplot runs in a private temporary directory on files with
 * fixed names (data.dat, script.gp, chart.out): every label, model name,
 * OS build or date reaches it only as a quoted string in the data file,
 * never in its command language; the script holds fixed text and numbers
 * formatted here. Every label names the runtime ("TinyLlama 1.1B Q4_K_M
 * (llama.cpp) pp512").
 */

#include <stddef.h>
#include <stdint.h>

struct report;
struct rep_cell;
struct buf;
struct store;
struct selection;
struct workload_series;
struct cp_change;

/*
 * The charts of a report, each drawn only when the report has data for it:
 *   "throughput"  median t/s per role (bare-metal, stock, shim), min-max
 *                 bars, log scale
 *   "speedup"     guest speedup shim / stock with its 95 % bootstrap
 *                 interval and a 1x line
 *   "percent"     stock and shim as percent of bare metal with their 95 %
 *                 intervals and a 100 % line
 */
extern const char *const plot_charts[];

/* Returned by the drawing functions when gnuplot is not installed. */
#define PLOT_NO_GNUPLOT (-2)

/*
 * Draws chart `chart` of r with gnuplot terminal `term` ("svg" or "png")
 * and appends the file's bytes to out. Returns 0; 1 when the report has
 * nothing to draw for that chart (out unchanged); -1 after error();
 * PLOT_NO_GNUPLOT when gnuplot is not installed.
 */
int plot_chart(const struct report *r, const char *chart, const char *term,
	       struct buf *out);

/*
 * The ratio of the medians num / den with its 95 % interval: the
 * analysis layer's comparison (compare.h cmp_compute: a hierarchical
 * bootstrap over the cells' runs as processes, seed 1, 2000 draws; one
 * process on a side uses the within-process CV as the process effect).
 * 0, or -1 when a side has no samples or a non-positive median.
 */
int plot_ratio_ci(const struct rep_cell *num, const struct rep_cell *den,
		  double *ratio, double *lo, double *hi);

/*
 * History: one line per series (analysis/workload.h workload_series,
 * one point per session: the median of its samples, min-max bars), the
 * x axis the sessions of all lines in store order (labelled "#ID DATE"),
 * each point labelled with its OS build where it changes, and each
 * change point (analysis/workload.h workload_changepoints) marked
 * with a dashed line before the session that starts the new segment and
 * the shift in percent.
 */
struct plot_history_line {
	const struct workload_series *sr;
	const char *runtime;         /* "llama.cpp", "mlx-lm"; NULL unknown */
	const struct cp_change *cp;  /* its change points, by point index */
	size_t ncp;
	const char *const *measured; /* per point: when it was measured
					(runs.started_at); NULL: not shown */
};
/* 0 drawn; 1 nothing to draw (no points); -1 after error();
 * PLOT_NO_GNUPLOT. */
int plot_history(const struct plot_history_line *lines, size_t n,
		 const char *term, struct buf *out);

/*
 * The history charts of a report's selection: one per workload (model,
 * runtime, test) that some series measured in two sessions or more,
 * with its series as lines and their change points (p <= 0.05:
 * history's default). Titles name the workload.
 */
#define PLOT_HISTORY_P 0.05
struct plot_hist_chart {
	char *title;                 /* "LABEL (RUNTIME) TEST" */
	struct workload_series *sr;
	size_t ns;
	struct cp_change **cp;       /* per series */
	size_t *ncp;
	char ***measured;            /* per series, per point ("" unknown) */
	char *runtime;
};
struct plot_histories {
	struct plot_hist_chart *c;
	size_t n;
};
/* Loads them (sel NULL: everything); 0, or -1 after error(). */
int plot_histories_load(struct store *s, const struct selection *sel,
			struct plot_histories *out);
/* Draws chart i as plot_history() does. */
int plot_histories_draw(const struct plot_histories *h, size_t i,
			const char *term, struct buf *out);
void plot_histories_release(struct plot_histories *h);

/*
 * Writes every chart that has data into dir (created) as CHART.svg (and
 * CHART.png when png is set), the history charts (h may be NULL) as
 * history-N.svg; names the files written in `written`, one per line.
 * 0, -1 after error(), PLOT_NO_GNUPLOT when gnuplot is missing.
 */
int plot_report(const struct report *r, const struct plot_histories *h,
		const char *dir, int png, struct buf *written);

#endif
