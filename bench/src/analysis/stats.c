#define _POSIX_C_SOURCE 200809L
#include "analysis/stats.h"
#include "base/util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Below this many values qsort beats the radix sort's eight passes;
 * up to SORT_INSERTION_MAX an insertion sort beats qsort's calls. */
#define RADIX_MIN 256
#define SORT_INSERTION_MAX 16

/*
 * The radix key of x: unsigned order equals the order of the doubles
 * (the sign bit flipped for positives, every bit for negatives); -0 has
 * the key of +0, as cmp_double() takes them as equal.
 */
static uint64_t
radix_key(double x)
{
	uint64_t u;

	memcpy(&u, &x, sizeof(u));
	if (u == UINT64_C(1) << 63)
		u = 0;
	return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

/*
 * Least-significant-byte radix sort of x[0..n), no NaN among them: one
 * pass counts all eight bytes, then a stable pass per byte that varies.
 * Stable, so the result is the one of a stable sort by cmp_double(),
 * -0 and +0 included (they keep their order).
 */
static void
radix_sort(double *x, size_t n)
{
	size_t (*h)[256] = xcalloc(8, sizeof(*h));
	double *tmp = xmalloc(n * sizeof(double)), *src = x, *dst = tmp, *t;
	size_t i, sum, c;
	int b;

	for (i = 0; i < n; i++) {
		uint64_t k = radix_key(x[i]);

		for (b = 0; b < 8; b++)
			h[b][(k >> (8 * b)) & 255]++;
	}
	for (b = 0; b < 8; b++) {
		unsigned sh = 8 * (unsigned)b;

		if (h[b][(radix_key(src[0]) >> sh) & 255] == n)
			continue;          /* every value has this byte */
		for (c = 0, sum = 0; c < 256; c++) {
			size_t here = h[b][c];

			h[b][c] = sum;
			sum += here;
		}
		for (i = 0; i < n; i++)
			dst[h[b][(radix_key(src[i]) >> sh) & 255]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != x)
		memcpy(x, src, n * sizeof(double));
	free(tmp);
	free(h);
}

/*
 * qsort with cmp_double() for arrays with a NaN (whose order
 * cmp_double() leaves undefined) and of 17 to 255 values, an insertion
 * sort for fewer, the radix sort for more: the
 * same values in the same order as a stable qsort (issue 17: sorting
 * 300,000 samples a side was a tenth of compare).
 */
void
stats_sort(double *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (isnan(x[i])) {
			xqsort(x, n, sizeof(double), cmp_double);
			return;
		}
	if (n <= SORT_INSERTION_MAX) {
		/* stable, as the radix sort (each process's 10 samples) */
		size_t j;

		for (i = 1; i < n; i++) {
			double v = x[i];

			for (j = i; j > 0 && v < x[j - 1]; j--)
				x[j] = x[j - 1];
			x[j] = v;
		}
	} else if (n < RADIX_MIN) {
		xqsort(x, n, sizeof(double), cmp_double);
	} else {
		radix_sort(x, n);
	}
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
/* Below this many values an insertion sort selects faster (the
 * medians of 10 samples of each of 30,000 processes, issue 17). */
#define SELECT_SORT_MAX 16

double
stats_select(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, budget = 8;

	if (n == 0 || k >= n)
		return NAN;
	if (n <= SELECT_SORT_MAX) {
		/* the same order statistic (a zero's sign aside: -0 and +0
		 * are equal, either may be the one returned) */
		size_t i, j;

		for (i = 1; i < n; i++) {
			double v = x[i];

			for (j = i; j > 0 && v < x[j - 1]; j--)
				x[j] = x[j - 1];
			x[j] = v;
		}
		return x[k];
	}
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

/* ---- distributions ---- */

#define SQRT2 1.41421356237309504880

double
stats_norm_cdf(double z)
{
	return 0.5 * erfc(-z / SQRT2);
}

/*
 * Inverse of the standard normal CDF: Acklam's rational approximation
 * (relative error < 1.2e-9), refined by one Halley step.
 */
double
stats_norm_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
		-2.759285104469687e+02, 1.383577518672690e+02,
		-3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
		-1.556989798598866e+02, 6.680131188771972e+01,
		-1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
		-2.400758277161838e+00, -2.549732539343734e+00,
		4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
		2.445134137142996e+00, 3.754408661907416e+00 };
	double q, r, x, e, u;

	if (isnan(p))
		return NAN;
	if (p <= 0)
		return -INFINITY;
	if (p >= 1)
		return INFINITY;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p > 1 - 0.02425) {
		q = sqrt(-2 * log(1 - p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	}
	e = stats_norm_cdf(x) - p;
	u = e * sqrt(2 * acos(-1.0)) * exp(x * x / 2);   /* sqrt(2 pi) */
	return x - u / (1 + x * u / 2);
}

/*
 * The continued fraction of I_x(a, b) (the form that converges for
 * x < (a + 1) / (a + b + 2)), evaluated by the modified Lentz method.
 */
static double
incbeta_cf(double x, double a, double b)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), f;
	int m;

	d = fabs(d) < tiny ? tiny : d;
	d = 1 / d;
	f = d;
	for (m = 1; m <= 10000; m++) {
		double m2 = 2.0 * m, num, delta;

		/* the even step, then the odd one */
		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		f *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		delta = d * c;
		f *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	return f;
}

double
stats_incbeta(double x, double a, double b)
{
	double front;

	if (isnan(x) || !(a > 0) || !(b > 0))
		return NAN;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
		    b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * incbeta_cf(x, a, b) / a;
	return 1 - front * incbeta_cf(1 - x, b, a) / b;
}

double
stats_t_cdf(double t, double df)
{
	double tail;

	if (isnan(t) || isnan(df) || !(df > 0))
		return NAN;
	if (df > STATS_T_NORMAL)
		return stats_norm_cdf(t);
	if (isinf(t))
		return t > 0 ? 1 : 0;
	/* P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2); for large
	 * t^2 the argument is formed without cancellation */
	tail = stats_incbeta(df / (df + t * t), df / 2, 0.5) / 2;
	return t > 0 ? 1 - tail : tail;
}

/*
 * Bisection on the CDF between brackets found by doubling, then
 * Newton steps on the density while they stay inside: the quantile to
 * about 1e-12 relative in t, for any df.
 */
double
stats_t_quantile(double p, double df)
{
	double lo, hi, x;
	int i;

	if (isnan(p) || isnan(df) || !(df > 0))
		return NAN;
	if (df > STATS_T_NORMAL)
		return stats_norm_quantile(p);
	if (p <= 0)
		return -INFINITY;
	if (p >= 1)
		return INFINITY;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	if (p == 0.5)
		return 0;
	lo = 0;
	hi = fmax(1, stats_norm_quantile(p));
	while (stats_t_cdf(hi, df) < p && hi < 1e300)
		hi *= 2;
	x = hi;
	for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double c = stats_t_cdf(x, df), dens, nx;

		if (c < p)
			lo = x;
		else
			hi = x;
		dens = exp(lgamma((df + 1) / 2) - lgamma(df / 2) -
			   0.5 * log(df * acos(-1.0)) -
			   (df + 1) / 2 * log1p(x * x / df));
		nx = dens > 0 ? x - (c - p) / dens : NAN;
		x = nx > lo && nx < hi ? nx : lo / 2 + hi / 2;
	}
	return x;
}
