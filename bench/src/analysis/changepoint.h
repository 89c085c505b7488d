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
	size_t index;    /* first point of the new segment (a drift: the
			    first point that left the old level) */
	double p;        /* permutation p-value (a drift: its steps' least) */
	double before, after;  /* medians of the adjacent segments */
	int drift;       /* 1: a gradual drift, index to end */
	size_t end;      /* a drift: the point where it reaches the new level */
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

/*
 * Change points in a series of sessions whose samples come in processes
 * (what `history` uses). Each process is reduced to the log of its
 * median, each session to the mean of its processes. Binary segmentation
 * over session boundaries: in a segment of n >= 3 sessions, each split
 * (at least one session a side) is scored by the t of the difference of
 * the two sides' mean session values, whose variance per session is the
 * scatter of the session values about their side's mean (n - 2 degrees
 * of freedom), never less than the pooled between-process variance
 * divided by the processes per session (a session holds that much noise
 * whatever the scatter shows). The best split's |t| is tested against
 * the maximum |t| over all splits of n independent normal values (1999
 * seeded draws: the exact null of the unfloored statistic, conservative
 * for the floored one); at p <= p_max the split is kept and both sides
 * are searched again. Sessions without a positive median take no part.
 *
 * Drifts: a gradual change is found by the segmentation as one to three
 * steps in the same direction. Each run of consecutive changes in one
 * direction is tested against a ramp: a level, a straight line over
 * sessions s..e, another level (both knots chosen by least squares
 * within CP_DRIFT_REACH sessions of the steps, the ramp covering them).
 * It is reported as one drift (drift = 1, index s + 1 to end e) when the
 * ramp spans at least CP_DRIFT_MIN_SPAN sessions, fits no worse than the
 * steps found, and beats the best single step by more than the 95 %
 * point of chi-square with one degree of freedom in units of the
 * session variance (the residual scatter about the ramp, never below
 * what the processes imply). An abrupt step fits a ramp of width one,
 * which is no drift.
 * Power and false alarms: bench/BENCHMARKS.md, docs/statistics.md.
 */
#define CP_DRIFT_MIN_SPAN 3
#define CP_DRIFT_REACH 100
struct cp_session {
	const double *x;        /* all samples, process after process */
	size_t n;
	const size_t *plen;     /* samples of each process */
	size_t nproc;
};
/* *out (caller frees), sorted by index (of ss); before/after: medians of
 * the session medians of the adjacent segments. */
void cp_sessions(const struct cp_session *ss, size_t n, double p_max,
		 struct cp_change **out, size_t *nout);

#endif
