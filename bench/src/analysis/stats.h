#ifndef ANALYSIS_STATS_H
#define ANALYSIS_STATS_H

/*
 * Robust statistics over samples (tokens per second). Spreads always come
 * from the samples, never from llama-bench's stddev_ns.
 */

#include <stddef.h>

struct summary {
	size_t n;
	double median;  /* the published convention */
	double min, max;
	double mad;     /* median absolute deviation (unscaled) */
	double mean;
	double cv;      /* sample standard deviation / mean */
};

/* Summarises x[0..n) (not modified); all fields 0 when n == 0. */
void stats_summary(const double *x, size_t n, struct summary *out);
/* Median of x[0..n) (not modified); NAN when n == 0. */
double stats_median(const double *x, size_t n);
/* Linear-interpolated quantile q in [0,1] of sorted[0..n). */
double stats_quantile_sorted(const double *sorted, size_t n, double q);
/*
 * The k-th smallest (0-based) of x[0..n), which it reorders (x[k] holds
 * it afterwards, smaller values before, larger after): expected O(n),
 * at worst O(n log n). NAN when k >= n.
 */
double stats_select(double *x, size_t n, size_t k);
/* Median of x[0..n) by selection (x reordered); NAN when n == 0. */
double stats_median_inplace(double *x, size_t n);
/* Sorts x in place, ascending. Without a NaN the order of a stable
 * comparison sort, -0 and +0 kept as they come (an insertion sort up to
 * 16 values, a radix sort from 256); qsort otherwise. */
void stats_sort(double *x, size_t n);

/*
 * The relative variance of the median of n samples whose CV is cv, for
 * normal noise: pi/2 * cv^2 / n (the median's asymptotic efficiency).
 */
double stats_median_var(double cv, double n);

/* The median absolute deviation of x[0..n) (unscaled; x not modified),
 * its median in *median when not NULL; NAN when n == 0. */
double stats_mad(const double *x, size_t n, double *median);

/*
 * Distributions. The standard normal CDF (from erfc, accurate far into
 * the tails) and its inverse (relative error below 1e-9). Student's t
 * with df degrees of freedom (any real df > 0; df = INFINITY, or above
 * STATS_T_NORMAL, is the normal): its CDF from the regularized
 * incomplete beta function (relative error about 1e-12) and its inverse
 * (the CDF inverted to 1e-12). NAN for a NaN argument or df <= 0.
 */
#define STATS_T_NORMAL 1e7
double stats_norm_cdf(double z);
double stats_norm_quantile(double p);
double stats_t_cdf(double t, double df);
double stats_t_quantile(double p, double df);
/* The regularized incomplete beta function I_x(a, b), a, b > 0. */
double stats_incbeta(double x, double a, double b);

#endif
