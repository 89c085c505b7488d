/* Statistics of compare and gate: values checked against textbook and
 * scipy results, seeded reproducibility, the gate's decisions. */
#include "test.h"
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/stats.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
test_normal(void)
{
	CHECK_NEAR(cmp_norm_cdf(0), 0.5, 1e-12);
	CHECK_NEAR(cmp_norm_cdf(1.959963984540054), 0.975, 1e-9);
	CHECK_NEAR(cmp_norm_quantile(0.975), 1.959963984540054, 1e-9);
	CHECK_NEAR(cmp_norm_quantile(0.995), 2.5758293035489, 1e-9);
	CHECK_NEAR(cmp_norm_quantile(0.05), -1.6448536269514722, 1e-9);
	CHECK_NEAR(cmp_norm_quantile(1e-6), -4.753424308822899, 1e-8);
}

/*
 * The two-sided p by enumerating every way to choose which nb of the
 * pooled values are b's: 2 min(P(U <= u), P(U >= u)), U counting ties
 * half (in doubled units, exactly).
 */
static double
mwu_brute(const double *a, size_t na, const double *b, size_t nb)
{
	double all[32];
	size_t n = na + nb, i, j;
	long u_obs = 0, le = 0, ge = 0, total = 0;
	unsigned long mask;

	for (i = 0; i < na; i++)
		all[i] = a[i];
	for (i = 0; i < nb; i++)
		all[na + i] = b[i];
	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			u_obs += b[j] > a[i] ? 2 : b[j] == a[i];
	for (mask = 0; mask < 1UL << n; mask++) {
		long u = 0;

		if ((size_t)__builtin_popcountl(mask) != nb)
			continue;
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++)
				if (!(mask >> i & 1) && (mask >> j & 1))
					u += all[j] > all[i] ? 2 : all[j] == all[i];
		le += u <= u_obs;
		ge += u >= u_obs;
		total++;
	}
	return fmin(1, 2.0 * (double)(le < ge ? le : ge) / (double)total);
}

/*
 * P(U <= u) without ties by the recursion of Mann and Whitney (1947),
 * f(m, n; u) = f(m-1, n; u-n) + f(m, n-1; u), counted in doubles.
 */
static double
mwu_recursion_cdf(int m, int n, int u)
{
	static double f[70][70][600];
	int i, j, k;
	double total = 1;

	for (i = 0; i <= m; i++)
		for (j = 0; j <= n; j++)
			for (k = 0; k <= u; k++)
				f[i][j][k] = i == 0 || j == 0 ? 1 :
					(k >= j ? f[i - 1][j][k - j] : 0) + f[i][j - 1][k];
	for (k = 1; k <= m; k++)
		total = total * (double)(n + k) / (double)k;
	return f[m][n][u] / total;
}

static void
test_mwu(void)
{
	double a[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	double b[] = { 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
	double c[] = { 1, 2, 2, 3, 3, 3 }, d[] = { 2, 3, 4, 4, 5 };
	double e[] = { 1.1, 2.3, 3.2, 4.8, 5.0, 6.7 };
	double f[] = { 2.2, 3.9, 4.1, 6.1, 7.5, 8.8, 9.2 };
	double x[16], y[16];
	struct rng g;
	int trial, bad = 0, exact = 0;

	/* Exact without ties (issue 11: the normal approximation said
	 * 0.012185 for 5 vs 5 and 1.8e-4 for 10 vs 10): fully separated
	 * samples have p = 2 / C(m+n, m). */
	CHECK_NEAR(cmp_mwu_p(a, 5, b, 5), 2.0 / 252, 1e-15);
	CHECK_NEAR(cmp_mwu_p(b, 5, a, 5), 2.0 / 252, 1e-15);
	CHECK_NEAR(cmp_mwu_p(a, 10, b, 10) / (2.0 / 184756), 1, 1e-12);
	/* U = 12 of 42: 2 * 201/1716, counted by enumerating all 1716
	 * splits in Python */
	CHECK_NEAR(cmp_mwu_p(e, 6, f, 7), 0.23426573426573427, 1e-12);
	CHECK_NEAR(cmp_mwu_p(f, 7, e, 6), 0.23426573426573427, 1e-12);
	CHECK_NEAR(cmp_mwu_p(a, 3, b, 1), 0.5, 1e-15);
	CHECK_NEAR(cmp_mwu_p(a, 5, a, 5), 1, 1e-12);
	/* With ties, exact (issue 19 §7): the normal approximation gave
	 * 0.0887 here; enumerating the 462 splits gives 52/462 */
	CHECK_NEAR(cmp_mwu_p_ex(c, 6, d, 5, &exact), 2.0 * 26 / 462, 1e-12);
	CHECK(exact == 1);
	CHECK_NEAR(cmp_mwu_p(c, 6, d, 5), mwu_brute(c, 6, d, 5), 1e-12);
	CHECK(cmp_mwu_p(a, 0, b, 5) == 1);
	/* Random small samples with and without ties, both orders and
	 * unequal sizes: equal to the enumeration. */
	rng_seed(&g, 23);
	for (trial = 0; trial < 300; trial++) {
		size_t na = 1 + rng_below(&g, 8), nb = 1 + rng_below(&g, 8), i;
		int kind = trial % 3;
		double p, q;

		for (i = 0; i < na + nb; i++) {
			double v = kind == 0 ? (double)rng_below(&g, 4) :
				   kind == 1 ? (double)rng_below(&g, 12) :
				   rng_normal(&g) + (i < na ? 0 : 1);

			if (i < na)
				x[i] = v;
			else
				y[i - na] = v;
		}
		p = cmp_mwu_p_ex(x, na, y, nb, &exact);
		q = mwu_brute(x, na, y, nb);
		if (!exact || fabs(p - q) > 1e-12 * fmax(q, 1e-300)) {
			if (bad < 5)
				printf("  %zu vs %zu (kind %d): %.15g, enumerated "
				       "%.15g\n", na, nb, kind, p, q);
			bad++;
		}
	}
	CHECK(bad == 0);
}

/*
 * Beyond the old limit of 50 a side (issue 19 §7: 60 against 8 gave
 * 9.9e-5 by the normal approximation, 9.4e-6 exactly): exact without
 * ties, equal to the classic recursion.
 */
static void
test_mwu_exact_large(void)
{
	double a[60], b[8];
	struct rng g;
	int exact = 0, i, trial, bad = 0;

	rng_seed(&g, 5);
	for (trial = 0; trial < 20; trial++) {
		double p, want, u = 0;
		int j;

		for (i = 0; i < 60; i++)
			a[i] = rng_normal(&g);
		for (i = 0; i < 8; i++)
			b[i] = rng_normal(&g) + 0.3 * trial / 4.0;
		for (i = 0; i < 60; i++)
			for (j = 0; j < 8; j++)
				u += b[j] > a[i];
		u = fmin(u, 480 - u);
		want = fmin(1, 2 * mwu_recursion_cdf(8, 60, (int)u));
		p = cmp_mwu_p_ex(a, 60, b, 8, &exact);
		if (!exact || fabs(p / want - 1) > 1e-9)
			bad++;
	}
	CHECK(bad == 0);
}

/* Large separated samples: the p is tiny, never exactly 0. */
static void
test_mwu_never_zero(void)
{
	size_t n = 2000, i;
	double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
	double p;
	int exact = 1;

	for (i = 0; i < n; i++) {
		a[i] = 100 + (double)i * 1e-3;
		b[i] = 200 + (double)i * 1e-3;
	}
	p = cmp_mwu_p(a, n, b, n);
	CHECK(p > 0 && p <= CMP_P_MIN);
	/* 60 vs 60, separated: exactly 2 / C(120, 60) (the normal
	 * approximation said about 1e-20) */
	p = cmp_mwu_p_ex(a, 60, b, 60, &exact);
	CHECK(exact == 1);
	CHECK_NEAR(p / (2 / 9.6614908840363322e34), 1, 1e-9);
	free(a);
	free(b);
}

/* 100,000 a side: too much to count exactly near the middle, so the
 * normal approximation, said so; fast either way. */
static void
test_mwu_huge(void)
{
	size_t n = 100000, i;
	double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
	struct rng g;
	int exact = 1;
	double p;

	rng_seed(&g, 8);
	for (i = 0; i < n; i++) {
		a[i] = round(1000 * (100 + rng_normal(&g))) / 1000;
		b[i] = round(1000 * (100 + rng_normal(&g))) / 1000;
	}
	p = cmp_mwu_p_ex(a, n, b, n, &exact);
	CHECK(exact == 0 && p > 0 && p <= 1);
	free(a);
	free(b);
}

/* The median of all pairwise differences, by brute force. */
static double
hl_brute(const double *a, size_t na, const double *b, size_t nb)
{
	double *d = malloc(na * nb * sizeof(double)), m;
	size_t i, j, k = 0;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			d[k++] = b[j] - a[i];
	m = stats_median(d, k);
	free(d);
	return m;
}

static void
test_hl(void)
{
	double a[] = { 1, 2, 3 }, b[] = { 11, 12, 13, 14 };
	double x[200], y[200];
	struct rng g;
	int trial, bad = 0;

	/* pairwise differences 8..13; their median is 10.5 */
	CHECK_NEAR(cmp_hl_shift(a, 3, b, 4), 10.5, 1e-12);
	CHECK_NEAR(cmp_hl_shift(b, 4, a, 3), -10.5, 1e-12);
	CHECK(isnan(cmp_hl_shift(a, 0, b, 4)));
	/* Random sizes and values, many ties (small integers), mixed
	 * signs, irrational steps: equal to the brute force, bit for bit. */
	rng_seed(&g, 42);
	for (trial = 0; trial < 400; trial++) {
		size_t na = 1 + rng_below(&g, 60), nb = 1 + rng_below(&g, 60), i;
		int kind = trial % 4;

		for (i = 0; i < na + nb; i++) {
			double v = kind == 0 ? (double)rng_below(&g, 5) :
				   kind == 1 ? 100 * rng_normal(&g) :
				   kind == 2 ? (double)rng_below(&g, 7) * 0.1 - 0.3 :
				   1e6 * rng_uniform(&g);
			if (i < na)
				x[i] = v;
			else
				y[i - na] = v;
		}
		if (cmp_hl_shift(x, na, y, nb) != hl_brute(x, na, y, nb))
			bad++;
	}
	CHECK(bad == 0);
	x[0] = NAN;
	CHECK(isnan(cmp_hl_shift(x, 3, y, 3)));
}

/* A stable reference sort: by value (cmp_double's order), then by index. */
struct at { double v; size_t i; };

static int
at_cmp(const void *a, const void *b)
{
	const struct at *x = a, *y = b;

	if (x->v != y->v)
		return (x->v > y->v) - (x->v < y->v);
	return (x->i > y->i) - (x->i < y->i);
}

static void
sort_reference(double *x, size_t n)
{
	struct at *t = malloc(n * sizeof(*t));
	size_t i;

	for (i = 0; i < n; i++)
		t[i] = (struct at){ x[i], i };
	qsort(t, n, sizeof(*t), at_cmp);
	for (i = 0; i < n; i++)
		x[i] = t[i].v;
	free(t);
}

/* Random values of a kind: ties, signs, zeros of both signs, infinities,
 * subnormals, magnitudes far apart. */
static double
value_of_kind(struct rng *g, int kind)
{
	static const double odd[] = { 0.0, -0.0, INFINITY, -INFINITY, 5e-324,
				      -5e-324, 1e308, -1e308, 1.5, -1.5 };

	switch (kind) {
	case 0: return (double)rng_below(g, 4);
	case 1: return (double)rng_below(g, 50) * 0.1 - 2.5;
	case 2: return 100 * rng_normal(g);
	case 3: return odd[rng_below(g, 10)];
	default: return ldexp(rng_uniform(g) - 0.5, (int)rng_below(g, 200) - 100);
	}
}

/* stats_sort (a radix sort from 256 values) gives a stable sort's
 * order, bit for bit, -0 and +0 included, on both sides of the cut. */
static void
test_sort_radix(void)
{
	static double x[5000], s[5000];
	struct rng g;
	int trial, bad = 0;

	rng_seed(&g, 17);
	for (trial = 0; trial < 200; trial++) {
		size_t n = 1 + rng_below(&g, 5000), i;
		int kind = trial % 5;

		for (i = 0; i < n; i++)
			x[i] = value_of_kind(&g, kind);
		memcpy(s, x, n * sizeof(double));
		stats_sort(s, n);
		sort_reference(x, n);
		if (memcmp(s, x, n * sizeof(double)))
			bad++;
	}
	CHECK(bad == 0);
	/* a NaN: qsort's path; the other values still in order */
	for (trial = 0; trial < 1000; trial++)
		x[trial] = (double)(1000 - trial);
	x[500] = NAN;
	stats_sort(x, 1000);
	for (trial = 1, bad = 0; trial < 1000; trial++)
		if (!isnan(x[trial]) && !isnan(x[trial - 1]) && x[trial] < x[trial - 1])
			bad++;
	CHECK(bad == 0);
}

/*
 * Mann–Whitney on samples of hundreds a side with ties, where the normal
 * approximation applies, against the statistic counted pair by pair:
 * U2 (2 per b above a, 1 per tie) and the tie term sum(t^3 - t) from
 * each value's count of equals, then the documented formula.
 */
static double
mwu_normal_brute(const double *a, size_t na, const double *b, size_t nb)
{
	double u2 = 0, ties = 0, n = (double)(na + nb), m = (double)na;
	double l = (double)nb, var, z;
	size_t i, j;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			u2 += b[j] > a[i] ? 0 : b[j] == a[i] ? 1 : 2;
	for (i = 0; i < na + nb; i++) {
		double v = i < na ? a[i] : b[i - na], eq = 0;

		for (j = 0; j < na + nb; j++)
			eq += (j < na ? a[j] : b[j - na]) == v;
		ties += eq * eq - 1;       /* t (t^2 - 1) over the group */
	}
	var = m * l / 12 * ((n + 1) - ties / (n * (n - 1)));
	z = fmax(fabs(u2 / 2 - m * l / 2) - 0.5, 0) / sqrt(var);
	return fmax(fmin(1, erfc(z / sqrt(2))), CMP_P_MIN);
}

static void
test_mwu_large_brute(void)
{
	static double x[1500], y[1500];
	struct rng g;
	int trial, bad = 0, normal = 0, exact;

	rng_seed(&g, 31);
	for (trial = 0; trial < 60; trial++) {
		size_t na = 200 + rng_below(&g, 1300), nb = 200 + rng_below(&g, 1300), i;
		int kind = trial % 3;
		double p, q;

		for (i = 0; i < na + nb; i++) {
			double v = kind == 0 ? (double)rng_below(&g, 6) :
				   kind == 1 ? (double)rng_below(&g, 40) * 0.25 :
				   rng_normal(&g) + (i < na ? 0 : 0.1);

			if (i < na)
				x[i] = v;
			else
				y[i - na] = v;
		}
		p = cmp_mwu_p_ex(x, na, y, nb, &exact);
		if (exact)
			continue;
		normal++;
		q = mwu_normal_brute(x, na, y, nb);
		if (fabs(p - q) > 1e-12 * fmax(q, 1e-300)) {
			if (bad < 5)
				printf("  %zu vs %zu (kind %d): %.17g, brute %.17g\n",
				       na, nb, kind, p, q);
			bad++;
		}
	}
	CHECK(normal >= 40);
	CHECK(bad == 0);
}

/* Hodges–Lehmann on sides past the radix sort's cut, with ties and
 * zeros of both signs: the brute force's value, bit for bit, and the
 * sorted entry equal to the unsorted one. */
static void
test_hl_large_brute(void)
{
	static double x[700], y[700];
	struct rng g;
	int trial, bad = 0;

	rng_seed(&g, 43);
	for (trial = 0; trial < 40; trial++) {
		size_t na = 256 + rng_below(&g, 444), nb = 256 + rng_below(&g, 444), i;
		int kind = trial % 3;
		double h;

		for (i = 0; i < na + nb; i++) {
			double v = kind == 0 ? (double)rng_below(&g, 5) - 2 :
				   kind == 1 ? (rng_below(&g, 2) ? 0.0 : -0.0) +
					       (double)rng_below(&g, 3) :
				   100 * rng_normal(&g);
			if (i < na)
				x[i] = v;
			else
				y[i - na] = v;
		}
		h = cmp_hl_shift(x, na, y, nb);
		if (h != hl_brute(x, na, y, nb))
			bad++;
		stats_sort(x, na);
		stats_sort(y, nb);
		if (cmp_hl_shift_sorted(x, na, y, nb) != h)
			bad++;
	}
	CHECK(bad == 0);
}

/* Selection gives the sorted order's element, whatever the input. */
static void
test_select(void)
{
	double x[300], s[300], c[300];
	struct rng g;
	int trial, bad = 0;

	rng_seed(&g, 9);
	for (trial = 0; trial < 300; trial++) {
		size_t n = 1 + rng_below(&g, 300), i, k = rng_below(&g, n);

		for (i = 0; i < n; i++)
			x[i] = trial % 3 == 0 ? (double)rng_below(&g, 4) :
			       trial % 3 == 1 ? (double)i :    /* sorted */
			       rng_normal(&g);
		memcpy(s, x, n * sizeof(double));
		stats_sort(s, n);
		memcpy(c, x, n * sizeof(double));
		if (stats_select(c, n, k) != s[k] || c[k] != s[k])
			bad++;
		memcpy(c, x, n * sizeof(double));
		if (stats_median_inplace(c, n) !=
		    (n % 2 ? s[n / 2] : s[n / 2 - 1] / 2 + s[n / 2] / 2))
			bad++;
	}
	CHECK(bad == 0);
	CHECK(isnan(stats_median_inplace(x, 0)));
}

/* n processes of r samples: mean m, process offsets, within noise. */
static void
make_side(struct cmp_side *s, struct rng *g, int k, int r, double m,
	  double between, double within, int64_t id0)
{
	double x[64];
	int i, j;

	for (i = 0; i < k; i++) {
		double p = m * exp(between * rng_normal(g));

		for (j = 0; j < r; j++)
			x[j] = p * (1 + within * rng_normal(g));
		cmp_side_add(s, id0 + i, x, (size_t)r);
	}
}

static void
test_bootstrap_seeded(void)
{
	struct cmp_side a = { 0 }, b = { 0 };
	struct rng g;
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_result r1, r2, r3;

	rng_seed(&g, 7);
	make_side(&a, &g, 3, 10, 100, 0.03, 0.05, 1);
	make_side(&b, &g, 3, 10, 80, 0.03, 0.05, 10);
	CHECK(cmp_compute(&a, &b, &o, &r1) == 0);
	CHECK(cmp_compute(&a, &b, &o, &r2) == 0);
	CHECK(r1.ci_lo == r2.ci_lo && r1.ci_hi == r2.ci_hi && r1.se == r2.se);
	o.seed = 99;
	CHECK(cmp_compute(&a, &b, &o, &r3) == 0);
	CHECK(r3.ci_lo != r1.ci_lo);
	CHECK(r1.ci_lo < r1.ratio && r1.ratio < r1.ci_hi);
	CHECK(r1.ci_hi < 1);
	CHECK(r1.noise == NOISE_OBSERVED);
	CHECK(r1.ka == 3 && r1.na == 30);
	CHECK_STR(cmp_verdict(&r1, 0.05), "slower");
	cmp_side_release(&a);
	cmp_side_release(&b);
}

static void
test_cv(void)
{
	struct cmp_side s = { 0 };
	double p1[] = { 90, 100, 110 }, p2[] = { 180, 200, 220 };
	double w, bt;

	cmp_side_add(&s, 1, p1, 3);
	cmp_side_cv(&s, &w, &bt);
	CHECK_NEAR(w, 0.1, 1e-12);
	CHECK(bt == -1);
	cmp_side_add(&s, 2, p2, 3);
	cmp_side_cv(&s, &w, &bt);
	CHECK_NEAR(w, 0.1, 1e-12);
	/* log medians differ by log 2: sd = log2/sqrt2; minus pi/2*0.01/3 */
	CHECK_NEAR(bt, sqrt(log(2) * log(2) / 2 - acos(-1.0) / 2 * 0.01 / 3), 1e-9);
	cmp_side_release(&s);
}

static void
test_paired(void)
{
	struct cmp_side a = { 0 };
	double x[] = { 10, 11, 12 };
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_result r;
	struct gate_decision d;

	cmp_side_add(&a, 5, x, 3);
	CHECK(cmp_compute(&a, &a, &o, &r) == 0);
	CHECK(r.noise == NOISE_PAIRED && r.ratio == 1 && r.se == 0);
	gate_decide(&r, 0.05, 0.005, GATE_PROVE, &d);
	CHECK(d.verdict == GATE_PASS);
	cmp_side_release(&a);
}

/* A single process per side: the calibrated effect widens the CI. */
static void
test_calibrated_floor(void)
{
	struct cmp_side a = { 0 }, b = { 0 };
	struct rng g;
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_result r0, r1;

	rng_seed(&g, 3);
	make_side(&a, &g, 1, 10, 100, 0, 0.01, 1);
	make_side(&b, &g, 1, 10, 100, 0, 0.01, 2);
	o.between_cv = 0;
	CHECK(cmp_compute(&a, &b, &o, &r0) == 0);
	o.between_cv = 0.05;
	CHECK(cmp_compute(&a, &b, &o, &r1) == 0);
	CHECK(r1.noise == NOISE_CALIBRATED);
	/* sd of the difference of two N(0, 0.05): 0.0707 */
	CHECK(r1.se > 0.06 && r1.se < 0.08);
	CHECK(r0.se < 0.01);
	o.between_cv = -1;
	CHECK(cmp_compute(&a, &b, &o, &r0) == 0);
	CHECK(r0.noise == NOISE_ASSUMED);
	cmp_side_release(&a);
	cmp_side_release(&b);
}

static void
test_gate(void)
{
	struct cmp_result r = { 0 };
	struct gate_decision d;

	r.ka = r.kb = 1;
	/* 20 % slower with se 2 %: a regression in both modes */
	r.ratio = 0.8;
	r.se = 0.02;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict == GATE_REGRESSION);
	gate_decide(&r, 0.05, 0.005, GATE_PROVE, &d);
	CHECK(d.verdict == GATE_REGRESSION);
	/* 3 % slower, confidently, but within the 5 % threshold */
	r.ratio = 0.97;
	r.se = 0.005;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict == GATE_PASS);
	gate_decide(&r, 0.05, 0.005, GATE_PROVE, &d);
	CHECK(d.verdict == GATE_PASS);
	/* no change, se 4 %: 5 % cannot be resolved (z·se = 10 %) */
	r.ratio = 1;
	r.se = 0.04;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict == GATE_INCONCLUSIVE && d.below_floor);
	/* se(K) = 0.04/sqrt(K) <= 0.0513/2.576 -> K >= 4.03 -> 5 */
	CHECK(d.need_k == 5);
	CHECK(d.mde > 0.1);
	gate_decide(&r, 0.25, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict == GATE_PASS);
	/* the MDE at 95 % power: max(z·se, t) + 1.645·se */
	CHECK_NEAR(d.mde, 1 - exp(-(-log(0.75) + 1.6448536 * 0.04)), 1e-6);
}

/* A/A with a known process effect: false alarms stay under alpha. */
static void
test_aa_rate(void)
{
	struct rng g;
	struct cmp_opts o = CMP_OPTS_INIT;
	int i, alarms = 0, trials = 200;

	rng_seed(&g, 11);
	o.boot = 400;
	o.between_cv = 0.05;
	for (i = 0; i < trials; i++) {
		struct cmp_side a = { 0 }, b = { 0 };
		struct cmp_result r;
		struct gate_decision d;

		make_side(&a, &g, 1, 10, 100, 0.05, 0.05, 1);
		make_side(&b, &g, 1, 10, 100, 0.05, 0.05, 2);
		CHECK(cmp_compute(&a, &b, &o, &r) == 0);
		gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
		alarms += d.verdict == GATE_REGRESSION;
		cmp_side_release(&a);
		cmp_side_release(&b);
	}
	CHECK(alarms <= 4);
}

/*
 * Fail closed (issue 11): a NaN or infinite statistic never passes.
 * The old code passed a NaN se in detect mode, because "z·se > t" (below
 * the floor) is false for NaN.
 */
static void
test_gate_nonfinite(void)
{
	struct cmp_result r = { 0 };
	struct gate_decision d;
	const double bad[] = { NAN, INFINITY, -INFINITY };
	size_t i;

	r.ka = r.kb = 1;
	for (i = 0; i < 3; i++) {
		r.ratio = 0.8;
		r.ci_lo = 0.7;
		r.ci_hi = 0.9;
		r.se = bad[i];
		gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
		CHECK(d.verdict == GATE_INCONCLUSIVE && d.invalid);
		gate_decide(&r, 0.05, 0.005, GATE_PROVE, &d);
		CHECK(d.verdict == GATE_INCONCLUSIVE && d.invalid);
		r.se = 0.01;
		r.ratio = bad[i];
		gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
		CHECK(d.verdict == GATE_INCONCLUSIVE && d.invalid);
		r.ratio = 1;
		r.ci_hi = bad[i];
		gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
		CHECK(d.verdict == GATE_INCONCLUSIVE && d.invalid);
	}
	r.ratio = 1;
	r.ci_lo = 0.99;
	r.ci_hi = 1.01;
	r.se = 0.001;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict == GATE_PASS && !d.invalid);
	r.se = -1;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict == GATE_INCONCLUSIVE && d.invalid);
}

/*
 * The case of issue 11: two huge but finite samples in a one-process
 * baseline and a real 20 % slowdown. The sums of the spread overflowed
 * to NaN and the gate said PASS "within the 5% threshold".
 */
static void
test_gate_huge_samples(void)
{
	double a[] = { 100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.1,
		       1e308, 1.5e308 };
	double b[] = { 80, 81, 79, 80.5, 79.5, 80.2, 79.8, 80.1, 80.3, 79.9 };
	struct cmp_side sa = { 0 }, sb = { 0 };
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_result r;
	struct gate_decision d;
	double w, bt;
	int i;

	cmp_side_add(&sa, 1, a, 10);
	cmp_side_add(&sb, 2, b, 10);
	cmp_side_cv(&sa, &w, &bt);
	CHECK(isfinite(w) && w > 1);
	CHECK(cmp_compute(&sa, &sb, &o, &r) == 0);
	CHECK(isfinite(r.within_cv) && isfinite(r.hl) && isfinite(r.p_mwu));
	CHECK_NEAR(r.ratio, 80.05 / 100.15, 1e-12);
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict != GATE_PASS);
	for (i = 0; i < 20; i++) {       /* whatever the seed */
		o.seed = (uint64_t)i + 2;
		CHECK(cmp_compute(&sa, &sb, &o, &r) == 0);
		gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
		CHECK(d.verdict != GATE_PASS);
		gate_decide(&r, 0.05, 0.005, GATE_PROVE, &d);
		CHECK(d.verdict != GATE_PASS);
	}
	cmp_side_release(&sa);
	cmp_side_release(&sb);
}

/*
 * The bootstrap reads each resample's median off counts, or selects it
 * among the values in a window around the earlier medians: either must
 * be exactly the median of the gathered resample, for one or many
 * processes, short or long, with ties, with and without a process
 * effect, with lengths that differ, over enough draws to place the
 * window and to miss it.
 */
static void
test_boot_draw(void)
{
	static const struct { int k, r; double effect; int ties; } shapes[] = {
		{ 1, 1, 0, 0 }, { 1, 10, 0.05, 0 }, { 1, 5001, 0.05, 1 },
		{ 3, 10, 0, 1 }, { 3, 10, 0.05, 0 }, { 2, 7, 0.2, 1 },
		{ 7, 3000, 0.05, 0 }, { 40, 200, 0.03, 1 }, { 2000, 5, 0.05, 1 },
		{ 500, 20, 0.01, 0 }, { 9, 1, 0.05, 0 }, { 2, 2, 0.5, 0 },
	};
	struct rng g;
	size_t q;
	int bad = 0;

	rng_seed(&g, 17);
	for (q = 0; q < ARRAY_SIZE(shapes); q++) {
		struct cmp_side s = { 0 };
		double *x = malloc((size_t)shapes[q].r * 2 * sizeof(double));
		int i, j, b;

		for (i = 0; i < shapes[q].k; i++) {
			int len = shapes[q].r + (i % 3 == 1 ? shapes[q].r : 0);

			for (j = 0; j < len; j++) {
				x[j] = 100 * (1 + 0.02 * rng_normal(&g));
				if (shapes[q].ties)
					x[j] = round(x[j]);
			}
			cmp_side_add(&s, i + 1, x, (size_t)len);
		}
		b = cmp_boot_check(&s, shapes[q].effect, q + 1, 60);
		if (b)
			printf("  shape %zu: %d of 60 draws differ\n", q, b);
		bad += b;
		free(x);
		cmp_side_release(&s);
	}
	CHECK(bad == 0);
}

/*
 * Many processes: the bootstrap draws CMP_BOOT_KMAX of them and scales
 * (m out of n). Its standard error must match the spread of the log
 * ratio over independent data sets, never understate it.
 */
static void
m_out_of_n_side(struct cmp_side *s, struct rng *g, int k)
{
	double x[10];
	int p, j;

	memset(s, 0, sizeof(*s));
	for (p = 0; p < k; p++) {
		double pe = exp(0.02 * rng_normal(g));

		for (j = 0; j < 10; j++)
			x[j] = 100 * pe * exp(0.01 * rng_normal(g));
		cmp_side_add(s, p + 1, x, 10);
	}
}

static void
test_m_out_of_n(void)
{
	struct rng g;
	double sse = 0, sl = 0, sl2 = 0, sd;
	int t, cover = 0, trials = 40, k = 4 * CMP_BOOT_KMAX;

	rng_seed(&g, 11);
	for (t = 0; t < trials; t++) {
		struct cmp_side a, b;
		struct cmp_opts o = CMP_OPTS_INIT;
		struct cmp_result r;
		double l;

		m_out_of_n_side(&a, &g, k);
		m_out_of_n_side(&b, &g, k);
		o.boot = 200;
		o.seed = (uint64_t)t + 1;
		CHECK(cmp_compute(&a, &b, &o, &r) == 0);
		cover += r.ci_lo <= 1 && r.ci_hi >= 1;
		sse += r.se;
		l = log(r.ratio);
		sl += l;
		sl2 += l * l;
		cmp_side_release(&a);
		cmp_side_release(&b);
	}
	sd = sqrt(sl2 / trials - (sl / trials) * (sl / trials));
	printf("  %d processes a side: mean se %.5f, sd of log ratio %.5f, "
	       "CI covers 1 in %d of %d\n", k, sse / trials, sd, cover, trials);
	CHECK(sse / trials > 0.8 * sd && sse / trials < 1.5 * sd);
	CHECK(cover >= trials * 85 / 100);
}


/* Student's t against tabulated values (and the normal beyond). */
static void
test_student_t(void)
{
	CHECK_NEAR(stats_incbeta(0.5, 2, 3), 11.0 / 16, 1e-13);
	CHECK_NEAR(stats_incbeta(0.3, 1, 1), 0.3, 1e-13);
	CHECK_NEAR(stats_t_cdf(2, 5), 0.9490302605850709, 1e-11);
	CHECK_NEAR(stats_t_cdf(-2, 5), 1 - 0.9490302605850709, 1e-11);
	CHECK_NEAR(stats_t_cdf(1, 1), 0.75, 1e-12);        /* Cauchy */
	CHECK_NEAR(stats_t_quantile(0.975, 1), 12.706204736174698, 1e-9);
	CHECK_NEAR(stats_t_quantile(0.995, 2), 9.924843200918276, 1e-9);
	CHECK_NEAR(stats_t_quantile(0.995, 4), 4.604094871415897, 1e-9);
	CHECK_NEAR(stats_t_quantile(0.995, 9), 3.2498355415921263, 1e-9);
	CHECK_NEAR(stats_t_quantile(0.05, 30), -1.6972608865939587, 1e-9);
	/* non-integer df: the CDF at the quantile, integrated numerically */
	CHECK_NEAR(stats_t_quantile(0.995, 2.5), 7.163728139, 1e-8);
	CHECK_NEAR(stats_t_quantile(0.995, INFINITY), 2.5758293035489, 1e-9);
	CHECK_NEAR(stats_t_quantile(0.995, 1e9), 2.5758293035489, 1e-9);
	CHECK(isnan(stats_t_quantile(0.5, 0)) && isnan(stats_t_cdf(NAN, 3)));
}

/* A/A gates of K processes a side, uncalibrated: false alarms. */
static int
aa_alarms(struct rng *g, int k, double between, double within, int trials)
{
	struct cmp_opts o = CMP_OPTS_INIT;
	int i, alarms = 0;

	o.boot = 300;
	o.no_mwu = 1;
	for (i = 0; i < trials; i++) {
		struct cmp_side a = { 0 }, b = { 0 };
		struct cmp_result r;
		struct gate_decision d;

		make_side(&a, g, k, 10, 100, between, within, 1);
		make_side(&b, g, k, 10, 100, between, within, 100);
		o.seed = (uint64_t)i + 1;
		CHECK(cmp_compute(&a, &b, &o, &r) == 0);
		gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
		alarms += d.verdict == GATE_REGRESSION;
		cmp_side_release(&a);
		cmp_side_release(&b);
	}
	return alarms;
}

/*
 * Issue 19 §2: one process a side and no calibration, with processes
 * that differ more than the samples within one (5 % against 2 %), raised
 * 14.9 % false alarms with tight bounds; three processes a side of
 * 5 %/5 % raised 4.6 %. Now the single process assumes the conservative
 * floor and few processes take Student's t.
 */
static void
test_process_effect_aa(void)
{
	struct rng g;
	int a1, a3;

	rng_seed(&g, 19);
	a1 = aa_alarms(&g, 1, 0.05, 0.02, 300);
	a3 = aa_alarms(&g, 3, 0.05, 0.05, 300);
	printf("  A/A false alarms: K=1 5 %%/2 %% %d of 300, K=3 5 %%/5 %% %d of 300\n",
	       a1, a3);
	CHECK(a1 <= 3);
	CHECK(a3 <= 4);
}

/* Where the process effect comes from, and its degrees of freedom. */
static void
test_noise_sources(void)
{
	struct cmp_side a = { 0 }, b = { 0 }, b5 = { 0 }, b3 = { 0 };
	struct rng g;
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_result r, r0;
	struct gate_decision d;

	rng_seed(&g, 29);
	make_side(&a, &g, 1, 10, 100, 0.05, 0.02, 1);
	make_side(&b, &g, 1, 10, 40, 0.05, 0.02, 2);
	make_side(&b5, &g, 5, 10, 100, 0.05, 0.02, 10);
	make_side(&b3, &g, 3, 10, 100, 0.05, 0.02, 20);
	/* one process a side, no floor: the assumed 10 %, exact */
	CHECK(cmp_compute(&a, &b, &o, &r) == 0);
	CHECK(r.noise == NOISE_ASSUMED && r.between_cv == CMP_ASSUMED_BETWEEN);
	CHECK(isinf(r.df));
	CHECK(r.se > 0.12 && r.se < 0.17);   /* about sqrt(2) x 10 % */
	/* a 60 % slowdown is still caught (the shim lost, say) */
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict == GATE_REGRESSION && d.hi / d.lo > 1.5);
	/* one process against five: the five's spread, their 4 degrees of
	 * freedom */
	CHECK(cmp_compute(&a, &b5, &o, &r) == 0);
	CHECK(r.noise == NOISE_OBSERVED && r.df == 4);
	/* three against five: 2 + 4 */
	CHECK(cmp_compute(&b3, &b5, &o, &r) == 0);
	CHECK(r.noise == NOISE_OBSERVED && r.df == 6);
	/* the correction: the se of three processes exceeds the plain
	 * bootstrap's by sqrt(3/2) on their part; the bounds take t(6) */
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK_NEAR(log(d.hi / r.ratio), stats_t_quantile(0.995, 6) * r.se, 1e-12);
	/* calibrated: the floor's degrees of freedom, or exact */
	o.between_cv = 0.05;
	CHECK(cmp_compute(&a, &b, &o, &r0) == 0);
	CHECK(r0.noise == NOISE_CALIBRATED && isinf(r0.df));
	o.between_df = 9;
	CHECK(cmp_compute(&a, &b, &o, &r) == 0);
	CHECK(r.noise == NOISE_CALIBRATED && r.df == 9 && r.se == r0.se);
	cmp_side_release(&a);
	cmp_side_release(&b);
	cmp_side_release(&b5);
	cmp_side_release(&b3);
}

/*
 * Thin data (issue 19 §5): one sample a side is no verdict in compare,
 * and a standard error of zero without identical processes is none in
 * the gate.
 */
static void
test_thin(void)
{
	struct cmp_side a = { 0 }, b = { 0 };
	double x = 100, y = 80;
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_result r = { 0 };
	struct gate_decision d;

	cmp_side_add(&a, 1, &x, 1);
	cmp_side_add(&b, 2, &y, 1);
	CHECK(cmp_compute(&a, &b, &o, &r) == 0);
	CHECK_STR(cmp_verdict(&r, 0.05), "inconclusive");
	CHECK(r.ci_hi > r.ci_lo);
	r.se = 0;
	r.noise = NOISE_OBSERVED;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict == GATE_INCONCLUSIVE && d.invalid);
	r.noise = NOISE_PAIRED;
	r.ratio = 1;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	CHECK(d.verdict == GATE_PASS);
	cmp_side_release(&a);
	cmp_side_release(&b);
}

/* The MDE of few processes is larger than the normal one, and grows as
 * the degrees of freedom shrink. */
static void
test_mde_df(void)
{
	struct cmp_result r = { 0 };
	struct gate_decision d;
	double m_inf, m9, m4, m2;

	r.ratio = 1;
	r.se = 0.03;
	r.ka = r.kb = 3;
	r.noise = NOISE_OBSERVED;
	r.df = INFINITY;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	m_inf = d.mde;
	CHECK_NEAR(m_inf, 1 - exp(-(2.5758293 + 1.6448536) * 0.03), 1e-6);
	r.df = 9;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	m9 = d.mde;
	r.df = 4;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	m4 = d.mde;
	r.df = 2;
	gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
	m2 = d.mde;
	CHECK(m_inf < m9 && m9 < m4 && m4 < m2 && m2 < 1);
	/* processes needed grow the degrees of freedom too */
	CHECK(d.verdict == GATE_INCONCLUSIVE && d.need_k > 3);
}

static const struct test_case tests[] = {
	{ "bootstrap of many processes: m out of n", test_m_out_of_n },
	{ "normal cdf and quantile", test_normal },
	{ "student t cdf and quantile", test_student_t },
	{ "a/a with a process effect, uncalibrated", test_process_effect_aa },
	{ "noise sources and degrees of freedom", test_noise_sources },
	{ "thin data", test_thin },
	{ "mde with few degrees of freedom", test_mde_df },
	{ "mann-whitney u", test_mwu },
	{ "mann-whitney u: never 0", test_mwu_never_zero },
	{ "mann-whitney u: exact beyond 50 a side", test_mwu_exact_large },
	{ "mann-whitney u: 100,000 a side", test_mwu_huge },
	{ "hodges-lehmann against brute force", test_hl },
	{ "selection", test_select },
	{ "radix sort against a stable reference", test_sort_radix },
	{ "mann-whitney u: hundreds a side against pair counts", test_mwu_large_brute },
	{ "hodges-lehmann: hundreds a side against brute force", test_hl_large_brute },
	{ "bootstrap medians: counted and selected", test_boot_draw },
	{ "seeded hierarchical bootstrap", test_bootstrap_seeded },
	{ "within and between cv", test_cv },
	{ "identical processes", test_paired },
	{ "calibrated floor for one process", test_calibrated_floor },
	{ "gate decisions", test_gate },
	{ "a/a false alarms", test_aa_rate },
	{ "gate fails closed on non-finite statistics", test_gate_nonfinite },
	{ "gate: huge samples never pass a slowdown", test_gate_huge_samples },
};

TEST_MAIN(tests)
