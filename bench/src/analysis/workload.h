#ifndef ANALYSIS_WORKLOAD_H
#define ANALYSIS_WORKLOAD_H

/*
 * From a selection to the samples the statistics work on: a selection's
 * store rows (workload_load), the workloads two selections share, each
 * with its baseline and candidate processes (workload_match), the
 * groups of one selection that calibration measures (workload_groups),
 * and the series of sessions that history searches for change points
 * (workload_series). The statistics themselves (analysis/compare.h)
 * never see the store.
 *
 * Only rows of runs with status "ok" and at least one sample count;
 * each run is one llama-bench process.
 */

#include "analysis/compare.h"

#include <stddef.h>
#include <stdint.h>

struct store;
struct store_result;

/*
 * Parses a selection (key=value[,key=value...]; NULL selects everything)
 * and loads its rows into *rows (*n of them; free with
 * store_results_free()). 0, or -1 after error().
 */
int workload_load(struct store *s, const char *selection,
		  struct store_result **rows, size_t *n);

/*
 * A workload present in a baseline and a candidate selection, paired by
 * (model, test), and also by (target, variant) when both selections
 * hold the same several variants (a session against itself).
 */
struct workload {
	char *target, *variant, *model, *model_label, *test;
	char *name;                  /* "model test" or "variant: model test" */
	char *identity_a, *identity_b;
	char *os_build_a, *os_build_b;
	int64_t session_a, session_b;
	struct cmp_side a, b;
};

/*
 * Fills *out with the workloads present on both sides (*n of them, in
 * baseline order) and counts in *only_a / *only_b those present on one
 * side only. Returns 0, or -1 after error() when a selection mixes
 * variants that cannot be paired. Free with workloads_free().
 */
int workload_match(const struct store_result *ra, size_t na,
		   const struct store_result *rb, size_t nb,
		   struct workload **out, size_t *n,
		   size_t *only_a, size_t *only_b);
void workloads_free(struct workload *w, size_t n);

/*
 * The calibrated process effect (between-process CV) for a workload:
 * the candidate's fingerprint identity first, then the baseline's; -1
 * when neither was calibrated (or the lookup failed).
 */
double workload_calibrated(struct store *s, const struct workload *w);

/*
 * The processes of one configuration for calibration: rows grouped by
 * fingerprint identity, target, model and test (in order of first
 * appearance); a run contributes its first row of a test only.
 */
struct workload_group {
	char *identity, *target, *model, *test;
	int64_t session;             /* of the first row */
	struct cmp_side side;
};
/* Groups rows[0..n) into *out (*ng of them; free with workload_groups_free). */
void workload_groups(const struct store_result *rows, size_t n,
		     struct workload_group **out, size_t *ng);
void workload_groups_free(struct workload_group *g, size_t n);

/*
 * Adds to *side every usable row of rows[0..n) of the given model and
 * test, one process per row (a candidate for calibrate --power).
 */
void workload_side_of(const struct store_result *rows, size_t n,
		      const char *model, const char *test,
		      struct cmp_side *side);

/*
 * History: one series per target, variant, model, test and fingerprint
 * without OS version and build; one point per session, in store order,
 * holding all the session's samples of that series.
 */
struct workload_point {
	int64_t session;
	char *started, *os_build;
	double *x;
	size_t n;
};
struct workload_series {
	char *key;                   /* "target/variant model test [base]" */
	char *base;                  /* base identity, or NULL */
	struct workload_point *p;
	size_t np;
};
/*
 * Builds the series of rows[0..n) into *out (*ns of them). Reads the
 * base identity of each row's environment from s. Free with
 * workload_series_free().
 */
void workload_series(struct store *s, const struct store_result *rows,
		     size_t n, struct workload_series **out, size_t *ns);
void workload_series_free(struct workload_series *sr, size_t n);

/*
 * compare: the workloads two selections share, each compared (b against
 * a) with o and the workload's calibrated process effect. ok[i] is 0
 * when workload i could not be compared (error() said why). Returns 0;
 * -1 after error() when the store fails or nothing is comparable; -2
 * after error() when a selection mixes variants that cannot be paired.
 * Release with workload_comparison_release() whatever the return.
 */
struct workload_comparison {
	struct workload *w;
	struct cmp_result *r;
	int *ok;
	size_t n, only_a, only_b;
};
int workload_compare(struct store *s, const char *a, const char *b,
		     const struct cmp_opts *o, struct workload_comparison *out);
void workload_comparison_release(struct workload_comparison *c);

/*
 * history: the series of a selection, the median of each point, and the
 * change points of each series (analysis/changepoint.h: E-divisive
 * means over the point medians, at least one point per side, level p,
 * 999 permutations seeded with seed). 0, or -1 after error(); release
 * with workload_history_release() whatever the return.
 */
struct cp_change;
struct workload_history {
	struct workload_series *sr;
	size_t ns;
	double **median;             /* median[j][k]: point k of series j */
	struct cp_change **cp;       /* the change points of series j */
	size_t *ncp;
};
int workload_history(struct store *s, const char *selection, double p,
		     uint64_t seed, struct workload_history *h);
void workload_history_release(struct workload_history *h);

#endif
