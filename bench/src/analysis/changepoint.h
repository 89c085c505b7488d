#ifndef ANALYSIS_CHANGEPOINT_H
#define ANALYSIS_CHANGEPOINT_H

/*
 * Change points in a series by E-divisive means: Matteson and James,
 * "A Nonparametric Approach for Multiple Change Point Analysis of
 * Multivariate Data", JASA 109(505), 2014 (the method of R's ecp and of
 * Hunter/Apache Otava), with alpha = 1 and the paper's permutation test.
 * Bisection: the best split of a segment is kept when a permutation test
 * says it is significant, then both halves are searched again.
 *
 * Cost: the statistic of every split of a segment of n points takes
 * O(n log n) (running sums of distances, a Fenwick tree over ranks), so
 * a permutation test of P permutations takes O(P n log n); it stops as
 * soon as the p-value is certain to exceed p_max, which for a segment
 * without a change is after a few dozen permutations. A series of 1,000
 * sessions takes well under a second (bench/BENCHMARKS.md).
 */

#include <stddef.h>
#include <stdint.h>

struct cp_change {
	size_t index;    /* first point of the new segment */
	double p;        /* permutation p-value */
	double before, after;  /* medians of the adjacent segments */
};

/*
 * Finds change points of x[0..n): splits leave at least min_size points
 * on each side; a split is accepted when p <= p_max over perms seeded
 * permutations. *out (caller frees) gets them sorted by index.
 */
void cp_edivisive(const double *x, size_t n, size_t min_size, double p_max,
		  int perms, uint64_t seed, struct cp_change **out,
		  size_t *nout);

/*
 * The best split of x[0..n) with at least min_size points on each side:
 * its statistic (weighted energy distance), *at the first point of the
 * right part (0 when there is none). Exposed for tests.
 */
double cp_best_split(const double *x, size_t n, size_t min_size, size_t *at);

#endif
