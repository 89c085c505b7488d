#ifndef REPORT_H
#define REPORT_H

/*
 * The report: per workload (model x runtime x test), the median of all
 * samples_ts per role (bare-metal, stock, shim) with min-max and sample
 * count, the guest speedup (shim / stock), shim / bare-metal and
 * stock / bare-metal percent; other variants beside them; runs whose
 * injection was not verified listed apart and never in the figures.
 */

#include <stddef.h>
#include "analysis/stats.h"

struct store;
struct selection;
struct buf;

struct rep_cell {
	char *variant;          /* variant names joined with "+" */
	char *role;
	double *ts;
	size_t n;
	int runs;
	size_t *run_n;          /* samples of each run, in ts order */
	struct summary sum;     /* sum.n == 0: no data */
};

struct rep_workload {
	char *model, *label, *runtime, *test;
	struct rep_cell host, stock, shim;
	struct rep_cell *others;
	size_t nothers;
	int tampered;           /* data from a tampered import */
};

struct rep_excluded {
	long long session, run;
	char *variant, *workload, *reason;
};

struct provenance;

struct report {
	struct rep_workload *w;
	size_t n;
	struct rep_excluded *ex;
	size_t nex;
	struct provenance *prov;    /* who and what was measured (owned) */
};

int report_build(struct store *s, const struct selection *sel,
		 struct report *out);
void report_release(struct report *r);

/* Looks a workload up by model name (or label) and test; NULL if none. */
const struct rep_workload *report_find(const struct report *r,
				       const char *model, const char *test);


/* "llama.cpp", or "MLX-LM" for mlx-lm: runtimes as tables name them. */
const char *report_runtime_display(const char *runtime);
/* "LABEL (RUNTIME)[ [tampered]]" (caller frees). */
char *report_workload_name(const struct rep_workload *w);
/* a / b of the medians; NAN when a side is missing. */
double report_ratio(const struct rep_cell *a, const struct rep_cell *b);

/* Ratios: NAN when a side is missing. */
double report_guest_ratio(const struct rep_workload *w);
double report_shim_to_host(const struct rep_workload *w);
double report_stock_to_host(const struct rep_workload *w);

#endif
