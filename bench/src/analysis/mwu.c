/*
 * The Mann–Whitney U test of compare (analysis/compare.h cmp_mwu_p):
 * exact, ties included, wherever that is affordable, else the normal
 * approximation, and which of the two it was.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis/compare.h"
#include "analysis/stats.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SQRT2 1.41421356237309504880

/* log C(n, k) from a table of log factorials; -INFINITY when k < 0 or
 * k > n. */
static double
lchoose(const double *lf, long n, long k)
{
	if (k < 0 || k > n || n < 0)
		return -INFINITY;
	return lf[n] - lf[k] - lf[n - k];
}

/* The tie groups of the pooled samples in order: size and how many of
 * them belong to the smaller side s. */
struct mwu_groups {
	size_t *t, *s;
	size_t n;
	int ties;
};

/*
 * P(U2 <= u) for the smaller side of m values among n: U2 is twice its
 * U statistic with ties counted half (each pair of a value of the side
 * above one of the other adds 2, each tie 1), and under the null the m
 * values are a uniformly random m-subset of the n with the observed tie
 * groups. Groups in order g (reversed when rev: the upper tail). The
 * number of the side's values among the first groups is a Markov chain
 * whose step is hypergeometric; f[k][u] holds the probability of k of
 * them so far with U2 so far u, only for u <= the tail's u (U2 only
 * grows). Without ties every increment is even, so U itself is counted.
 */
static double
mwu_tail(const struct mwu_groups *gr, size_t m, size_t n, size_t u, int rev)
{
	size_t unit = gr->ties ? 1 : 2, w = u / unit + 1;
	double *f = xcalloc((m + 1) * w, sizeof(double)), p = 0;
	double *lf = xmalloc((n + 1) * sizeof(double));
	size_t before = 0, g, k, c, j;

	for (lf[0] = 0, j = 1; j <= n; j++)
		lf[j] = lf[j - 1] + log((double)j);
	f[0] = 1;
	for (g = 0; g < gr->n; g++) {
		size_t t = gr->t[rev ? gr->n - 1 - g : g];
		long rem = (long)(n - before);
		size_t top = before + t < m ? before + t : m;

		/* targets from the top, so each reads sources not yet moved */
		for (k = top + 1; k-- > 0;) {
			double *dst = f + k * w;
			double w0 = exp(lchoose(lf, rem - (long)t, (long)(m - k)) -
					lchoose(lf, rem, (long)(m - k)));

			for (j = 0; j < w; j++)
				dst[j] *= w0;
			for (c = 1; c <= t && c <= k; c++) {
				size_t from = k - c, inc;
				const double *src = f + from * w;
				double wc;

				if (from > before)
					continue;     /* not reachable */
				/* c values of the side each above the other side's
				 * earlier values (2 each) and tied with t - c */
				inc = c * (2 * (before - from) + t - c) / unit;
				if (inc >= w)
					continue;
				wc = exp(lchoose(lf, (long)t, (long)c) +
					 lchoose(lf, rem - (long)t,
						 (long)(m - from - c)) -
					 lchoose(lf, rem, (long)(m - from)));
				if (!(wc > 0))
					continue;
				for (j = 0; j + inc < w; j++)
					dst[j + inc] += wc * src[j];
			}
		}
		before += t;
	}
	for (j = 0; j < w; j++)
		p += f[m * w + j];
	free(f);
	free(lf);
	return p;
}

/* The normal approximation with tie and continuity corrections. */
static double
mwu_normal(double u2, double m, double l, double ties, double n)
{
	double var = m * l / 12 * ((n + 1) - ties / (n * (n - 1))), z;

	if (var <= 0)
		return 1;
	z = fabs(u2 / 2 - m * l / 2) - 0.5;
	if (z < 0)
		z = 0;
	z /= sqrt(var);
	return erfc(z / SQRT2);     /* 2 (1 - Phi(z)) */
}

/*
 * The tie groups of sorted a and sorted b pooled, by one merge: a group
 * is a run of equal values (==, so -0 and +0 are one), its size and how
 * many of them the smaller side (small: 0 a, 1 b) holds; and U2, twice
 * the smaller side's U, and the tie term sum(t^3 - t). The same groups,
 * in the same order, as sorting the pooled samples would give.
 */
static void
mwu_groups_sorted(const double *a, size_t na, const double *b, size_t nb,
		  int small, struct mwu_groups *gr, size_t *u2, double *ties)
{
	size_t i = 0, j = 0, lbefore = 0;

	gr->t = xmalloc((na + nb) * sizeof(size_t));
	gr->s = xmalloc((na + nb) * sizeof(size_t));
	*u2 = 0;
	*ties = 0;
	while (i < na || j < nb) {
		double v = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
		size_t ca = 0, cb = 0, t, s;

		while (i < na && a[i] == v)
			i++, ca++;
		while (j < nb && b[j] == v)
			j++, cb++;
		t = ca + cb;
		s = small ? cb : ca;
		gr->t[gr->n] = t;
		gr->s[gr->n++] = s;
		/* each of its s values: 2 per earlier value of the other
		 * side, 1 per tie with one */
		*u2 += s * (2 * lbefore + (t - s));
		lbefore += t - s;
		*ties += (double)t * (double)t * (double)t - (double)t;
		if (t > 1)
			gr->ties = 1;
	}
}

/*
 * cmp_mwu_p_ex() of sorted a and b without NaN (analysis/compare.h): the
 * tie groups by a merge instead of a sort of the pooled samples.
 */
double
cmp_mwu_p_sorted(const double *a, size_t na, const double *b, size_t nb,
		 int *exact)
{
	struct mwu_groups gr = { 0 };
	size_t n = na + nb, m, l, u2, mean, u;
	int small = na <= nb ? 0 : 1;   /* the smaller side's mark */
	double ties, p, work;

	if (exact)
		*exact = 1;
	if (!na || !nb)
		return 1;
	m = small ? nb : na;
	l = n - m;
	mwu_groups_sorted(a, na, b, nb, small, &gr, &u2, &ties);
	if (gr.n == 1) {           /* every value ties */
		free(gr.t);
		free(gr.s);
		return 1;
	}
	mean = m * l;              /* of U2 */
	u = u2 <= mean ? u2 : 2 * mean - u2;
	work = (double)n * (double)m *
	       ((double)u / (gr.ties ? 1 : 2) + 8);
	if (work <= CMP_MWU_WORK) {
		p = mwu_tail(&gr, m, n, u, u2 > mean);
		if (p > 0.5) /* near the middle: the other tail may be smaller */
			p = fmin(p, mwu_tail(&gr, m, n, 2 * mean - u, u2 <= mean));
		p *= 2;
	} else {
		p = mwu_normal((double)u2, (double)m, (double)l, ties, (double)n);
		if (exact)
			*exact = 0;
	}
	free(gr.t);
	free(gr.s);
	return fmax(fmin(1, p), CMP_P_MIN);
}

/*
 * Two-sided Mann–Whitney U p-value: 2 min(P(U <= u), P(U >= u)), at
 * most 1. Exact (the permutation distribution of U with the observed
 * ties: mwu_tail) when the tail on the observed side of the mean takes
 * at most CMP_MWU_WORK steps, else the normal approximation with the tie
 * correction of the variance and a continuity correction, its tail from
 * erfc() so that it stays accurate far out. Never 0: a p below
 * CMP_P_MIN is CMP_P_MIN. 1 (exact) when either side is empty or every
 * value ties; NAN when a sample is NaN. Sorts copies once, then
 * cmp_mwu_p_sorted().
 */
double
cmp_mwu_p_ex(const double *a, size_t na, const double *b, size_t nb,
	     int *exact)
{
	double *sa, *sb, p;
	size_t i;

	if (exact)
		*exact = 1;
	if (!na || !nb)
		return 1;
	for (i = 0; i < na; i++)
		if (isnan(a[i]))
			goto nan;
	for (i = 0; i < nb; i++)
		if (isnan(b[i]))
			goto nan;
	sa = xmalloc(na * sizeof(double));
	sb = xmalloc(nb * sizeof(double));
	memcpy(sa, a, na * sizeof(double));
	memcpy(sb, b, nb * sizeof(double));
	stats_sort(sa, na);
	stats_sort(sb, nb);
	p = cmp_mwu_p_sorted(sa, na, sb, nb, exact);
	free(sa);
	free(sb);
	return p;
nan:
	if (exact)
		*exact = 0;
	return NAN;
}

double
cmp_mwu_p(const double *a, size_t na, const double *b, size_t nb)
{
	return cmp_mwu_p_ex(a, na, b, nb, NULL);
}
