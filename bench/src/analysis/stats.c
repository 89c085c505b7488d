#define _POSIX_C_SOURCE 200809L
#include "analysis/stats.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void
stats_sort(double *x, size_t n)
{
	qsort(x, n, sizeof(double), cmp_double);
}

double
stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	double pos, frac;
	size_t lo;

	if (n == 0)
		return NAN;
	if (q <= 0)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	pos = q * (double)(n - 1);
	lo = (size_t)pos;
	frac = pos - (double)lo;
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

static void
swap2(double *x, size_t i, size_t j)
{
	double t = x[i];

	x[i] = x[j];
	x[j] = t;
}

/*
 * Quickselect with a median-of-three pivot and a three-way partition
 * (many equal values, as in bootstrap resamples, cost nothing extra);
 * after 2 log2(n) + 8 rounds without convergence the rest is sorted, so
 * the worst case stays O(n log n).
 */
double
stats_select(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, budget = 8;

	if (n == 0 || k >= n)
		return NAN;
	for (size_t m = n; m > 1; m >>= 1)
		budget += 2;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, lt = lo, gt = hi, i = lo;
		double p;

		if (budget-- == 0) {
			stats_sort(x + lo, hi - lo + 1);
			break;
		}
		if (x[mid] < x[lo])
			swap2(x, mid, lo);
		if (x[hi] < x[lo])
			swap2(x, hi, lo);
		if (x[hi] < x[mid])
			swap2(x, hi, mid);
		p = x[mid];
		while (i <= gt) {
			if (x[i] < p)
				swap2(x, lt++, i++);
			else if (x[i] > p)
				swap2(x, i, gt--);
			else
				i++;
		}
		/* x[lo, lt) < p, x[lt, gt] == p, x(gt, hi] > p */
		if (k < lt)
			hi = lt - 1;
		else if (k > gt)
			lo = gt + 1;
		else
			return p;
	}
	return x[k];
}

double
stats_median_inplace(double *x, size_t n)
{
	double hi, lo;
	size_t i;

	if (n == 0)
		return NAN;
	hi = stats_select(x, n, n / 2);
	if (n % 2)
		return hi;
	lo = x[0];                 /* the largest of the lower half */
	for (i = 1; i < n / 2; i++)
		if (x[i] > lo)
			lo = x[i];
	return lo / 2 + hi / 2;
}

double
stats_median_var(double cv, double n)
{
	return acos(-1.0) / 2 * cv * cv / n;
}

double
stats_median(const double *x, size_t n)
{
	double *c, m;

	if (n == 0)
		return NAN;
	c = xmalloc(n * sizeof(double));
	memcpy(c, x, n * sizeof(double));
	m = stats_median_inplace(c, n);
	free(c);
	return m;
}

/*
 * Mean and sample standard deviation of x[0..n). Plain sums first; when
 * they overflow (samples near DBL_MAX), again over x / max|x|, which
 * cannot, so a spread is never NaN for finite samples.
 */
static void
mean_sd(const double *x, size_t n, double *mean, double *sd)
{
	double sum = 0, ss = 0, scale = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += x[i];
	*mean = sum / (double)n;
	for (i = 0; i < n; i++)
		ss += (x[i] - *mean) * (x[i] - *mean);
	*sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	if (isfinite(*mean) && isfinite(*sd))
		return;
	for (i = 0; i < n; i++)
		if (fabs(x[i]) > scale)
			scale = fabs(x[i]);
	if (!isfinite(scale) || scale == 0)
		return;     /* an infinite or NaN sample: nothing to rescue */
	sum = ss = 0;
	for (i = 0; i < n; i++)
		sum += x[i] / scale;
	sum /= (double)n;
	for (i = 0; i < n; i++)
		ss += (x[i] / scale - sum) * (x[i] / scale - sum);
	*mean = sum * scale;
	*sd = n > 1 ? sqrt(ss / (double)(n - 1)) * scale : 0;
}

void
stats_summary(const double *x, size_t n, struct summary *out)
{
	double *dev, sd;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	out->n = n;
	out->median = stats_median(x, n);
	out->min = out->max = x[0];
	for (i = 0; i < n; i++) {
		if (x[i] < out->min)
			out->min = x[i];
		if (x[i] > out->max)
			out->max = x[i];
	}
	mean_sd(x, n, &out->mean, &sd);
	out->cv = n > 1 && out->mean != 0 ? sd / out->mean : 0;
	dev = xmalloc(n * sizeof(double));
	for (i = 0; i < n; i++)
		dev[i] = fabs(x[i] - out->median);
	out->mad = stats_median(dev, n);
	free(dev);
}

double
stats_mad(const double *x, size_t n, double *median)
{
	double *d, m, mad;
	size_t i;

	if (!n) {
		if (median)
			*median = NAN;
		return NAN;
	}
	d = xmalloc(n * sizeof(double));
	memcpy(d, x, n * sizeof(double));
	m = stats_median_inplace(d, n);
	for (i = 0; i < n; i++)
		d[i] = fabs(x[i] - m);
	mad = stats_median_inplace(d, n);
	free(d);
	if (median)
		*median = m;
	return mad;
}
