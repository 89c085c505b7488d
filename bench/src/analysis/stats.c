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
	stats_sort(c, n);
	m = n % 2 ? c[n / 2] : c[n / 2 - 1] / 2 + c[n / 2] / 2;
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
