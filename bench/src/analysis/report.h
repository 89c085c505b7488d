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

struct report {
	struct rep_workload *w;
	size_t n;
	struct rep_excluded *ex;
	size_t nex;
};

int report_build(struct store *s, const struct selection *sel,
		 struct report *out);
void report_release(struct report *r);

/* Looks a workload up by model name (or label) and test; NULL if none. */
const struct rep_workload *report_find(const struct report *r,
				       const char *model, const char *test);

/* format: "md", "csv" (the published results.csv columns) or "json". */
int report_render(const struct report *r, const char *format,
		  struct buf *out);

/* Ratios: NAN when a side is missing. */
double report_guest_ratio(const struct rep_workload *w);
double report_shim_to_host(const struct rep_workload *w);
double report_stock_to_host(const struct rep_workload *w);

#endif
