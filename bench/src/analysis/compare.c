#define _POSIX_C_SOURCE 200809L
#include "analysis/compare.h"
#include "analysis/stats.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SQRT2 1.41421356237309504880

void
cmp_side_add(struct cmp_side *s, int64_t run_id, const double *x, size_t n)
{
	s->len = xrealloc(s->len, (s->nproc + 1) * sizeof(*s->len));
	s->x = xrealloc(s->x, (s->nproc + 1) * sizeof(*s->x));
	s->run_id = xrealloc(s->run_id, (s->nproc + 1) * sizeof(*s->run_id));
	s->x[s->nproc] = xmalloc((n ? n : 1) * sizeof(double));
	if (n)
		memcpy(s->x[s->nproc], x, n * sizeof(double));
	s->len[s->nproc] = n;
	s->run_id[s->nproc] = run_id;
	s->nproc++;
}

void
cmp_side_release(struct cmp_side *s)
{
	size_t i;

	for (i = 0; i < s->nproc; i++)
		free(s->x[i]);
	free(s->x);
	free(s->len);
	free(s->run_id);
	memset(s, 0, sizeof(*s));
}

size_t
cmp_side_samples(const struct cmp_side *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nproc; i++)
		n += s->len[i];
	return n;
}

/* All samples of a side in one array (caller frees). */
static double *
side_pool(const struct cmp_side *s, size_t *n)
{
	double *p;
	size_t i, k = 0;

	*n = cmp_side_samples(s);
	p = xmalloc((*n ? *n : 1) * sizeof(double));
	for (i = 0; i < s->nproc; i++) {
		memcpy(p + k, s->x[i], s->len[i] * sizeof(double));
		k += s->len[i];
	}
	return p;
}

const char *
cmp_noise_name(enum cmp_noise_source s)
{
	switch (s) {
	case NOISE_PAIRED: return "paired";
	case NOISE_OBSERVED: return "observed";
	case NOISE_CALIBRATED: return "calibrated";
	case NOISE_ASSUMED: return "assumed";
	}
	return "?";
}

double
cmp_norm_cdf(double z)
{
	return 0.5 * erfc(-z / SQRT2);
}

/*
 * Inverse of the standard normal CDF: Acklam's rational approximation
 * (relative error < 1.2e-9), refined by one Halley step.
 */
double
cmp_norm_quantile(double p)
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
	e = cmp_norm_cdf(x) - p;
	u = e * sqrt(2 * acos(-1.0)) * exp(x * x / 2);   /* sqrt(2 pi) */
	return x - u / (1 + x * u / 2);
}

struct ranked { double v; int side; };

static int
ranked_cmp(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->v, y = ((const struct ranked *)b)->v;

	return (x > y) - (x < y);
}

/*
 * P(U <= u) of the Mann–Whitney statistic for samples of m and n values
 * without ties, exactly: the number of orderings with U <= u over all
 * C(m+n, m), counted by the recurrence f(m, n; u) = f(m-1, n; u-n) +
 * f(m, n-1; u) (Mann and Whitney 1947), row by row for n' = 1..n, in
 * place, only for U <= u. Counts reach C(100, 50) ~ 1e29 for 50 + 50
 * values: doubles hold them to 16 digits.
 */
static double
mwu_exact_cdf(size_t m, size_t n, size_t u)
{
	size_t w = u + 1, mi, ni, k;
	double *f = xcalloc((m + 1) * w, sizeof(double)), sum = 0, total = 1;

	for (mi = 0; mi <= m; mi++)
		f[mi * w] = 1;          /* n' = 0: U = 0 in one way */
	for (ni = 1; ni <= n; ni++)
		for (mi = 1; mi <= m; mi++)
			for (k = u; k >= ni && k <= u; k--)
				f[mi * w + k] += f[(mi - 1) * w + k - ni];
	for (k = 0; k <= u; k++)
		sum += f[m * w + k];
	for (k = 1; k <= m; k++)      /* C(m+n, m) */
		total = total * (double)(n + k) / (double)k;
	free(f);
	return sum / total;
}

/*
 * Two-sided Mann–Whitney U p-value. Without ties and with at most
 * CMP_MWU_EXACT values on each side, the exact distribution of U
 * (2 P(U <= min(u, mn - u)), at most 1); otherwise the normal
 * approximation with the tie correction of the variance and a
 * continuity correction, its tail from erfc() so that it stays accurate
 * far out. Never 0: a p below CMP_P_MIN is CMP_P_MIN. 1 when either side
 * is empty or every value ties; NAN when a sample is NaN.
 */
double
cmp_mwu_p(const double *a, size_t na, const double *b, size_t nb)
{
	struct ranked *all;
	size_t n = na + nb, i, j;
	double rb = 0, ties = 0, u, mu, var, z, p;

	if (!na || !nb)
		return 1;
	all = xmalloc(n * sizeof(*all));
	for (i = 0; i < na; i++)
		all[i] = (struct ranked){ a[i], 0 };
	for (i = 0; i < nb; i++)
		all[na + i] = (struct ranked){ b[i], 1 };
	for (i = 0; i < n; i++)
		if (isnan(all[i].v)) {
			free(all);
			return NAN;
		}
	qsort(all, n, sizeof(*all), ranked_cmp);
	for (i = 0; i < n; i = j) {
		double t, rank;

		for (j = i + 1; j < n && all[j].v == all[i].v; j++)
			;
		t = (double)(j - i);
		rank = (double)(i + j + 1) / 2;   /* mean of ranks i+1..j */
		for (size_t k = i; k < j; k++)
			if (all[k].side)
				rb += rank;
		ties += t * t * t - t;
	}
	free(all);
	u = rb - (double)nb * (double)(nb + 1) / 2;
	mu = (double)na * (double)nb / 2;
	if (ties == 0 && na <= CMP_MWU_EXACT && nb <= CMP_MWU_EXACT) {
		double lo = fmin(u, (double)na * (double)nb - u);

		p = 2 * mwu_exact_cdf(na < nb ? na : nb, na < nb ? nb : na,
				      (size_t)lo);
		return fmax(fmin(1, p), CMP_P_MIN);
	}
	var = (double)na * (double)nb / 12 *
	      ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
	if (var <= 0)
		return 1;
	z = fabs(u - mu) - 0.5;
	if (z < 0)
		z = 0;
	z /= sqrt(var);
	p = erfc(z / SQRT2);     /* 2 (1 - Phi(z)) */
	return fmax(fmin(1, p), CMP_P_MIN);
}

/* Sorted copy of x[0..n) (caller frees). */
static double *
sorted_copy(const double *x, size_t n)
{
	double *c = xmalloc((n ? n : 1) * sizeof(double));

	memcpy(c, x, n * sizeof(double));
	stats_sort(c, n);
	return c;
}

/*
 * A total order of doubles as unsigned integers: key(x) < key(y) iff
 * x < y, for everything but NaN (and -0 just below +0).
 */
static uint64_t
dkey(double x)
{
	uint64_t u;

	memcpy(&u, &x, sizeof(u));
	return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

static double
dval(uint64_t k)
{
	uint64_t u = k >> 63 ? k & ~(UINT64_C(1) << 63) : ~k;
	double x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/*
 * How many pairs have b[j] - a[i] <= d (as computed in doubles), for
 * sorted a and b: for a growing a[i] the qualifying b[j] are a growing
 * prefix, so one pass. Rounding is monotone, so the computed differences
 * keep that order.
 */
static uint64_t
pairs_at_most(const double *a, size_t na, const double *b, size_t nb,
	      double d)
{
	uint64_t c = 0;
	size_t i, j = 0;

	for (i = 0; i < na; i++) {
		while (j < nb && b[j] - a[i] <= d)
			j++;
		c += j;
	}
	return c;
}

/*
 * The k-th smallest (1-based) of the pairwise differences b[j] - a[i]:
 * the smallest double d with at least k differences <= d, by bisection
 * over the doubles' order (at most 64 passes of O(na + nb)). The count
 * changes only at differences, so d is one of them, exactly.
 */
static double
kth_difference(const double *a, size_t na, const double *b, size_t nb,
	       uint64_t k)
{
	uint64_t lo = dkey(b[0] - a[na - 1]), hi = dkey(b[nb - 1] - a[0]);

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (pairs_at_most(a, na, b, nb, dval(mid)) >= k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return dval(lo) + 0.0;   /* + 0.0: -0 becomes 0 */
}

/*
 * Hodges–Lehmann: the median of all pairwise differences b_j - a_i,
 * exactly as the median of the n_a·n_b differences would be, in
 * O((n_a + n_b) log) time and O(n_a + n_b) memory, never the pairs
 * themselves. NAN when a side is empty or a sample is not finite.
 */
double
cmp_hl_shift(const double *a, size_t na, const double *b, size_t nb)
{
	double *sa, *sb, m;
	uint64_t n = (uint64_t)na * nb, k;
	size_t i;

	if (!na || !nb)
		return NAN;
	for (i = 0; i < na; i++)
		if (!isfinite(a[i]))
			return NAN;
	for (i = 0; i < nb; i++)
		if (!isfinite(b[i]))
			return NAN;
	sa = sorted_copy(a, na);
	sb = sorted_copy(b, nb);
	k = (n + 1) / 2;
	m = kth_difference(sa, na, sb, nb, k);
	if (n % 2 == 0) {
		double next = m;

		if (pairs_at_most(sa, na, sb, nb, m) < k + 1)
			next = kth_difference(sa, na, sb, nb, k + 1);
		m = m / 2 + next / 2;
	}
	free(sa);
	free(sb);
	return m;
}

void
cmp_side_cv(const struct cmp_side *s, double *within, double *between)
{
	double ss = 0, df = 0, mean = 0, v = 0, rbar = 0;
	double *lm = xmalloc((s->nproc ? s->nproc : 1) * sizeof(double));
	size_t i, j, k = 0;

	for (i = 0; i < s->nproc; i++) {
		struct summary sm;

		if (!s->len[i])
			continue;
		stats_summary(s->x[i], s->len[i], &sm);
		if (sm.n > 1) {
			ss += sm.cv * sm.cv * (double)(sm.n - 1);
			df += (double)(sm.n - 1);
		}
		if (sm.median > 0)
			lm[k++] = log(sm.median);
		rbar += (double)sm.n;
	}
	*within = df > 0 ? sqrt(ss / df) : 0;
	*between = -1;
	if (k >= 2) {
		for (j = 0; j < k; j++)
			mean += lm[j];
		mean /= (double)k;
		for (j = 0; j < k; j++)
			v += (lm[j] - mean) * (lm[j] - mean);
		v /= (double)(k - 1);
		rbar /= (double)s->nproc;
		/* The variance of a process median holds pi/2 * w^2 / r
		 * of within-process noise; the rest is the process effect. */
		v -= stats_median_var(*within, rbar > 0 ? rbar : 1);
		*between = v > 0 ? sqrt(v) : 0;
	}
	free(lm);
}

/*
 * One bootstrap draw of a side's median: processes with replacement,
 * then samples within each; every drawn process is scaled by
 * exp(N(0, effect)) for the process effect the data cannot show.
 */
static double
boot_median(const struct cmp_side *s, struct rng *g, double effect,
	    double *pool)
{
	size_t i, j, k = 0;

	for (i = 0; i < s->nproc; i++) {
		size_t p = s->nproc > 1 ? rng_below(g, s->nproc) : 0;
		double f = effect > 0 ? exp(effect * rng_normal(g)) : 1;

		for (j = 0; j < s->len[p]; j++)
			pool[k++] = s->x[p][rng_below(g, s->len[p])] * f;
	}
	return stats_median_inplace(pool, k);
}

static int
same_processes(const struct cmp_side *a, const struct cmp_side *b)
{
	size_t i;

	if (a->nproc != b->nproc)
		return 0;
	for (i = 0; i < a->nproc; i++)
		if (a->run_id[i] != b->run_id[i] || a->len[i] != b->len[i] ||
		    memcmp(a->x[i], b->x[i], a->len[i] * sizeof(double)))
			return 0;
	return 1;
}

/*
 * The process effect to add in the bootstrap of one side: a single
 * process shows none, so it gets the calibrated effect or, without one,
 * its within-process CV as a stand-in; several processes show their own
 * spread, topped up to the calibrated one when that is larger.
 */
static double
side_effect(const struct cmp_side *s, double calibrated, double within,
	    double between, enum cmp_noise_source *src, double *used)
{
	double e;

	if (s->nproc < 2) {
		if (calibrated >= 0) {
			*src = NOISE_CALIBRATED;
			e = calibrated;
		} else {
			if (*src != NOISE_CALIBRATED)
				*src = NOISE_ASSUMED;
			e = within;
		}
		if (e > *used)
			*used = e;
		return e;
	}
	if (calibrated > between) {
		*src = NOISE_CALIBRATED;
		if (calibrated > *used)
			*used = calibrated;
		return sqrt(calibrated * calibrated - between * between);
	}
	if (between > *used)
		*used = between;
	return 0;
}

int
cmp_compute(const struct cmp_side *a, const struct cmp_side *b,
	    const struct cmp_opts *o, struct cmp_result *r)
{
	double *pa, *pb, *lr = NULL;
	double wa, wb, bta, btb, ea, eb, sum = 0, ss = 0;
	struct rng g;
	int i, nb = o->boot > 10 ? o->boot : 10;

	memset(r, 0, sizeof(*r));
	pa = side_pool(a, &r->na);
	pb = side_pool(b, &r->nb);
	r->ka = a->nproc;
	r->kb = b->nproc;
	if (!r->na || !r->nb) {
		free(pa);
		free(pb);
		return error("no samples on the %s side",
			     r->na ? "candidate" : "baseline");
	}
	r->med_a = stats_median(pa, r->na);
	r->med_b = stats_median(pb, r->nb);
	if (!(r->med_a > 0) || !(r->med_b > 0)) {
		free(pa);
		free(pb);
		return error("median throughput is not positive");
	}
	r->ratio = r->med_b / r->med_a;
	r->p_mwu = cmp_mwu_p(pa, r->na, pb, r->nb);
	r->hl = cmp_hl_shift(pa, r->na, pb, r->nb);
	r->hl_rel = r->hl / r->med_a;
	cmp_side_cv(a, &wa, &bta);
	cmp_side_cv(b, &wb, &btb);
	r->within_cv = sqrt((wa * wa * (double)r->na + wb * wb * (double)r->nb) /
			    (double)(r->na + r->nb));
	if (same_processes(a, b)) {
		/* Identical processes: every error cancels. */
		r->noise = NOISE_PAIRED;
		r->ci_lo = r->ci_hi = r->ratio;
		r->se = 0;
		r->between_cv = 0;
		free(pa);
		free(pb);
		return 0;
	}
	r->noise = NOISE_OBSERVED;
	r->between_cv = 0;
	ea = side_effect(a, o->between_cv, wa, bta, &r->noise, &r->between_cv);
	eb = side_effect(b, o->between_cv, wb, btb, &r->noise, &r->between_cv);
	rng_seed(&g, o->seed);
	lr = xmalloc(nb * sizeof(double));
	for (i = 0; i < nb; i++) {
		double ma = boot_median(a, &g, ea, pa);
		double mb = boot_median(b, &g, eb, pb);

		lr[i] = log(mb / ma);
		sum += lr[i];
	}
	for (i = 0; i < nb; i++)
		ss += (lr[i] - sum / nb) * (lr[i] - sum / nb);
	r->se = sqrt(ss / (nb - 1));
	stats_sort(lr, nb);
	r->ci_lo = exp(stats_quantile_sorted(lr, nb, 0.025));
	r->ci_hi = exp(stats_quantile_sorted(lr, nb, 0.975));
	free(lr);
	free(pa);
	free(pb);
	return 0;
}

const char *
cmp_verdict(const struct cmp_result *r, double threshold)
{
	if (r->ci_lo > 1)
		return "faster";
	if (r->ci_hi < 1)
		return "slower";
	if (r->ci_lo >= 1 - threshold && r->ci_hi <= 1 / (1 - threshold))
		return "same";
	return "inconclusive";
}
