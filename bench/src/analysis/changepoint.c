#define _POSIX_C_SOURCE 200809L
#include "analysis/changepoint.h"
#include "analysis/stats.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * One point of a segment: its value, the rank of the value in the
 * segment, and the sum of its distances to every point of the segment.
 * A permutation reorders points; none of the three changes.
 */
struct cp_point {
	double v;
	size_t rank;
	double dist_all;
};

/* A Fenwick tree over ranks: counts and sums of the values added. */
struct cp_tree {
	size_t n;
	double *cnt, *sum;
};

static void
tree_add(struct cp_tree *t, size_t rank, double v)
{
	size_t i;

	for (i = rank + 1; i <= t->n; i += i & -i) {
		t->cnt[i] += 1;
		t->sum[i] += v;
	}
}

/* Count and sum of the values added with rank < rank. */
static void
tree_below(const struct cp_tree *t, size_t rank, double *cnt, double *sum)
{
	size_t i;

	*cnt = *sum = 0;
	for (i = rank; i > 0; i -= i & -i) {
		*cnt += t->cnt[i];
		*sum += t->sum[i];
	}
}

/*
 * The best split of p[0..n) and its statistic: for a split at t,
 * E = 2 mean|X-Y| - mean|X-X'| - mean|Y-Y'| (the energy distance with
 * alpha = 1, pairs i < j within a side), weighted by t(n-t)/n.
 *
 * The three sums of distances follow the split as it moves right by one
 * point: the point's distances to the left part come from a Fenwick
 * tree over ranks (count and sum of the values below it), those to the
 * right part are its distances to all points less those to the left.
 * O(n log n) per call instead of O(n^2) per split (O(n^3) in all).
 */
static double
best_split(const struct cp_point *p, size_t n, size_t min_size,
	   struct cp_tree *tr, size_t *at)
{
	double best = -1, wa = 0, wb = 0, between = 0, cnt_a = 0, sum_a = 0;
	size_t t;

	*at = 0;
	memset(tr->cnt, 0, (n + 1) * sizeof(double));
	memset(tr->sum, 0, (n + 1) * sizeof(double));
	tr->n = n;
	for (t = 0; t < n; t++)
		wb += p[t].dist_all;
	wb /= 2;                     /* every pair, all in the right part */
	for (t = 0; t + min_size <= n; t++) {
		double na = (double)t, nb = (double)(n - t), e;

		if (t >= min_size) {
			e = 2 * between / (na * nb);
			if (t > 1)
				e -= wa / (na * (na - 1) / 2);
			if (n - t > 1)
				e -= wb / (nb * (nb - 1) / 2);
			e *= na * nb / (double)n;
			if (e > best) {
				best = e;
				*at = t;
			}
		}
		{
			/* point t moves from the right part to the left */
			double c, s, v = p[t].v, to_a, to_b;

			tree_below(tr, p[t].rank, &c, &s);
			to_a = (c * v - s) + ((sum_a - s) - (cnt_a - c) * v);
			to_b = p[t].dist_all - to_a;
			wa += to_a;
			wb -= to_b;
			between += to_b - to_a;
			tree_add(tr, p[t].rank, v);
			cnt_a += 1;
			sum_a += v;
		}
	}
	return best;
}

static int
by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The points of x[0..n): ranks and distances to all (caller frees). */
static struct cp_point *
points(const double *x, size_t n)
{
	struct cp_point *p = xmalloc((n ? n : 1) * sizeof(*p));
	double *s = xmalloc((n ? n : 1) * sizeof(double));
	double *pre = xmalloc((n + 1) * sizeof(double));
	size_t *idx = xmalloc((n ? n : 1) * sizeof(size_t));
	size_t i, r;

	memcpy(s, x, n * sizeof(double));
	xqsort(s, n, sizeof(double), by_value);
	for (i = 0, pre[0] = 0; i < n; i++)
		pre[i + 1] = pre[i] + s[i];
	/* rank of x[i]: its place in s, equal values taking the next free */
	for (i = 0; i < n; i++)
		idx[i] = 0;
	for (i = 0; i < n; i++) {
		size_t lo = 0, hi = n;

		while (lo < hi) {       /* first position of the value */
			size_t mid = lo + (hi - lo) / 2;

			if (s[mid] < x[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		r = lo + idx[lo]++;
		p[i].v = x[i];
		p[i].rank = r;
		p[i].dist_all = ((double)r * s[r] - pre[r]) +
				((pre[n] - pre[r + 1]) - (double)(n - r - 1) * s[r]);
	}
	free(idx);
	free(pre);
	free(s);
	return p;
}

/*
 * The permutation test of a segment's best split: the share of
 * permutations whose best split is at least as strong. It stops as soon
 * as the p-value is certain to exceed p_max (the split is rejected then,
 * whatever the remaining permutations give); an accepted split always
 * runs all perms.
 */
static double
permutation_p(struct cp_point *perm, size_t n, size_t min_size, double q,
	      double p_max, int perms, struct rng *g, struct cp_tree *tr)
{
	int r, ge = 0;

	for (r = 0; r < perms; r++) {
		size_t dummy;

		rng_shuffle(g, perm, n, sizeof(*perm));
		if (best_split(perm, n, min_size, tr, &dummy) >= q)
			ge++;
		if ((double)(ge + 1) / (perms + 1) > p_max)
			break;
	}
	return (double)(ge + 1) / (perms + 1);
}

static void
segment(const double *x, size_t lo, size_t hi, size_t min_size, double p_max,
	int perms, struct rng *g, struct cp_change **out, size_t *nout)
{
	size_t n = hi - lo, at;
	struct cp_point *p;
	struct cp_tree tr;
	double q, pv;

	if (n < 2 * min_size)
		return;
	p = points(x + lo, n);
	tr.n = n;
	tr.cnt = xmalloc((n + 1) * sizeof(double));
	tr.sum = xmalloc((n + 1) * sizeof(double));
	q = best_split(p, n, min_size, &tr, &at);
	pv = q > 0 && at ? permutation_p(p, n, min_size, q, p_max, perms, g,
					 &tr) : 2;
	free(tr.cnt);
	free(tr.sum);
	free(p);
	if (pv > p_max)
		return;
	*out = xrealloc(*out, (*nout + 1) * sizeof(**out));
	memset(&(*out)[*nout], 0, sizeof(**out));
	(*out)[*nout].index = lo + at;
	(*out)[*nout].p = pv;
	(*nout)++;
	segment(x, lo, lo + at, min_size, p_max, perms, g, out, nout);
	segment(x, lo + at, hi, min_size, p_max, perms, g, out, nout);
}

double
cp_best_split(const double *x, size_t n, size_t min_size, size_t *at)
{
	struct cp_point *p = points(x, n);
	struct cp_tree tr = { n, xmalloc((n + 1) * sizeof(double)),
			      xmalloc((n + 1) * sizeof(double)) };
	double q = best_split(p, n, min_size ? min_size : 1, &tr, at);

	free(tr.cnt);
	free(tr.sum);
	free(p);
	return q;
}

static int
by_index(const void *a, const void *b)
{
	size_t x = ((const struct cp_change *)a)->index;
	size_t y = ((const struct cp_change *)b)->index;

	return (x > y) - (x < y);
}

void
cp_edivisive(const double *x, size_t n, size_t min_size, double p_max,
	     int perms, uint64_t seed, struct cp_change **out, size_t *nout)
{
	struct rng g;
	size_t i, prev = 0;

	*out = NULL;
	*nout = 0;
	if (min_size < 1)
		min_size = 1;
	rng_seed(&g, seed);
	segment(x, 0, n, min_size, p_max, perms, &g, out, nout);
	if (*nout)           /* qsort of NULL is undefined, even of 0 */
		xqsort(*out, *nout, sizeof(**out), by_index);
	for (i = 0; i < *nout; i++) {
		size_t next = i + 1 < *nout ? (*out)[i + 1].index : n;

		(*out)[i].before = stats_median(x + prev, (*out)[i].index - prev);
		(*out)[i].after = stats_median(x + (*out)[i].index,
					       next - (*out)[i].index);
		prev = (*out)[i].index;
	}
}

/* ---- change points of sessions of processes ------------------------------ */

/* One session reduced: the mean of its processes' log medians, their
 * count, their sum of squares about the mean, and its median. */
struct cp_red {
	double m, ss, med;
	size_t k;
};

static void
reduce(const struct cp_session *ss, struct cp_red *r)
{
	size_t p, off = 0;
	double *y = xmalloc((ss->nproc ? ss->nproc : 1) * sizeof(double));
	size_t k = 0;

	for (p = 0; p < ss->nproc; p++) {
		double med = stats_median(ss->x + off, ss->plen[p]);

		off += ss->plen[p];
		if (med > 0 && isfinite(med))
			y[k++] = log(med);
	}
	r->k = k;
	r->m = 0;
	for (p = 0; p < k; p++)
		r->m += y[p];
	r->m = k ? r->m / (double)k : NAN;
	r->ss = 0;
	for (p = 0; p < k; p++)
		r->ss += (y[p] - r->m) * (y[p] - r->m);
	r->med = stats_median(ss->x, ss->n);
	free(y);
}

/*
 * The split of m[0..n) (at least one value on each side, n >= 3) with
 * the largest |t|: the difference of the two sides' means over its
 * standard error, the variance of one value pooled from both sides
 * (n - 2 degrees of freedom) and never below floor_v. Prefix sums make
 * it O(n). *at gets the first index of the right side (0: none).
 */
static double
max_abs_t(const double *m, size_t n, double floor_v, double *pre, size_t *at)
{
	double best = 0;
	size_t t, i;

	*at = 0;
	/* centred on the first value: no cancellation for close values */
	pre[0] = pre[1] = 0;
	for (i = 0; i < n; i++) {
		double d = m[i] - m[0];

		pre[2 * (i + 1)] = pre[2 * i] + d;
		pre[2 * (i + 1) + 1] = pre[2 * i + 1] + d * d;
	}
	for (t = 1; t < n; t++) {
		double nl = (double)t, nr = (double)(n - t);
		double sl = pre[2 * t], ql = pre[2 * t + 1];
		double sr = pre[2 * n] - sl, qr = pre[2 * n + 1] - ql;
		double ml = sl / nl, mr = sr / nr, v, se, tt;

		v = (fmax(ql - nl * ml * ml, 0) + fmax(qr - nr * mr * mr, 0)) /
		    (double)(n - 2);
		if (v < floor_v)
			v = floor_v;
		se = sqrt(v * (1 / nl + 1 / nr));
		if (!(se > 0))
			continue;
		tt = fabs(mr - ml) / se;
		if (tt > best) {
			best = tt;
			*at = t;
		}
	}
	return best;
}

/* Draws of the null distribution of max_abs_t for n values. */
#define CP_NULL_DRAWS 1999

/*
 * The p of an observed maximum |t| over the splits of n session values:
 * the share of CP_NULL_DRAWS series of n independent normal values (no
 * change, no floor) whose maximum |t| is at least as large (seeded by n:
 * the same series always gives the same p). The statistic is scale-free,
 * so this is the exact null of the unfloored maximum; the floored one is
 * never larger, so its p is conservative.
 *
 * The draws stop once the p is certain to exceed p_max, whatever the
 * remaining draws give (issue 17: a series of 10,000 sessions without a
 * change spent 20 million normal values on a p that only had to be
 * above p_max). The p returned then is a lower bound, above p_max; a p
 * at or below p_max is always the full count, so every accept or reject
 * is the one the full count gives.
 */
static double
max_t_p(size_t n, double t_obs, double p_max)
{
	double *x = xmalloc(n * sizeof(double));
	double *pre = xmalloc((2 * n + 2) * sizeof(double));
	struct rng g;
	size_t at, i;
	int d, ge = 0;

	rng_seed(&g, 0x9e3779b97f4a7c15ULL ^ (uint64_t)n);
	for (d = 0; d < CP_NULL_DRAWS; d++) {
		for (i = 0; i < n; i++)
			x[i] = rng_normal(&g);
		if (max_abs_t(x, n, 0, pre, &at) >= t_obs)
			ge++;
		if ((double)(ge + 1) / (CP_NULL_DRAWS + 1) > p_max)
			break;
	}
	free(x);
	free(pre);
	return (double)(ge + 1) / (CP_NULL_DRAWS + 1);
}

/*
 * The best split of sessions r[0..n) (n >= 3) and the p of its |t|
 * against the maximum over all splits of a series without a change
 * (above p_max: only known to be so, max_t_p()).
 */
static double
best_t_split(const struct cp_red *r, size_t n, double p_max, size_t *at,
	     double *t_out)
{
	double ssw = 0, dfw = 0, inv_k = 0, floor_v, *m, *pre, t;
	size_t i;

	for (i = 0; i < n; i++) {
		ssw += r[i].ss;
		dfw += r[i].k > 1 ? (double)(r[i].k - 1) : 0;
		inv_k += 1.0 / (double)r[i].k;
	}
	inv_k /= (double)n;
	/* never below what the processes alone imply */
	floor_v = dfw > 0 ? ssw / dfw * inv_k : 0;
	m = xmalloc(n * sizeof(double));
	pre = xmalloc((2 * n + 2) * sizeof(double));
	for (i = 0; i < n; i++)
		m[i] = r[i].m;
	t = max_abs_t(m, n, floor_v, pre, at);
	free(m);
	free(pre);
	*t_out = t;
	if (!*at || !(t > 0))
		return 2;
	return max_t_p(n, t, p_max);
}

static void
seg_sessions(const struct cp_red *r, size_t lo, size_t hi, double p_max,
	     struct cp_change **out, size_t *nout)
{
	size_t n = hi - lo, at;
	double t, p;

	if (n < 3)
		return;
	p = best_t_split(r + lo, n, p_max, &at, &t);
	if (!at || !isfinite(p) || p > p_max)
		return;
	*out = xrealloc(*out, (*nout + 1) * sizeof(**out));
	memset(&(*out)[*nout], 0, sizeof(**out));
	(*out)[*nout].index = lo + at;
	(*out)[*nout].p = p;
	(*nout)++;
	seg_sessions(r, lo, lo + at, p_max, out, nout);
	seg_sessions(r, lo + at, hi, p_max, out, nout);
}

/* ---- drifts --------------------------------------------------------------- */

/* Prefix sums over session values m: of 1, i, i^2, m, i m, m^2. */
struct cp_sums {
	double *c[6];
	size_t n;
};

static void
sums_init(struct cp_sums *ps, const struct cp_red *r, size_t n)
{
	size_t i, k;

	ps->n = n;
	for (k = 0; k < 6; k++)
		ps->c[k] = xcalloc(n + 1, sizeof(double));
	for (i = 0; i < n; i++) {
		double x = (double)i, y = r[i].m - r[0].m;   /* centred */
		double v[6] = { 1, x, x * x, y, x * y, y * y };

		for (k = 0; k < 6; k++)
			ps->c[k][i + 1] = ps->c[k][i] + v[k];
	}
}

static void
sums_release(struct cp_sums *ps)
{
	size_t k;

	for (k = 0; k < 6; k++)
		free(ps->c[k]);
}

/* Sum k over [a, b). */
static double
sum(const struct cp_sums *ps, int k, size_t a, size_t b)
{
	return ps->c[k][b] - ps->c[k][a];
}

/* Residual sum of squares of one level over [a, b). */
static double
rss_flat(const struct cp_sums *ps, size_t a, size_t b)
{
	double n = sum(ps, 0, a, b), y = sum(ps, 3, a, b);

	return n > 0 ? fmax(sum(ps, 5, a, b) - y * y / n, 0) : 0;
}

/*
 * Residual sum of squares over [lo, hi) of the ramp with knots s < e:
 * L1 up to s, a line from L1 at s to L2 at e, L2 from e; L1 and L2 by
 * least squares (2 x 2 normal equations from the prefix sums).
 */
static double
rss_ramp(const struct cp_sums *ps, size_t lo, size_t hi, size_t s, size_t e)
{
	double w = (double)(e - s), sd = (double)s;
	/* the slope: points s+1 .. e-1, h = (i - s) / w */
	double nb = sum(ps, 0, s + 1, e), ib = sum(ps, 1, s + 1, e);
	double i2b = sum(ps, 2, s + 1, e), yb = sum(ps, 3, s + 1, e);
	double iyb = sum(ps, 4, s + 1, e);
	double h = (ib - sd * nb) / w;
	double h2 = (i2b - 2 * sd * ib + sd * sd * nb) / (w * w);
	double hy = (iyb - sd * yb) / w;
	double na = sum(ps, 0, lo, s + 1), nc = sum(ps, 0, e, hi);
	double s00 = na + nb - 2 * h + h2, s01 = h - h2, s11 = h2 + nc;
	double t0 = sum(ps, 3, lo, s + 1) + yb - hy, t1 = hy + sum(ps, 3, e, hi);
	double det = s00 * s11 - s01 * s01, l1, l2;

	if (!(fabs(det) > 1e-12))
		return INFINITY;
	l1 = (t0 * s11 - t1 * s01) / det;
	l2 = (t1 * s00 - t0 * s01) / det;
	return fmax(sum(ps, 5, lo, hi) - (l1 * t0 + l2 * t1), 0);
}

/* The 95 % point of chi-square with one degree of freedom. */
#define CHI2_1_95 3.841458820694124

/*
 * Changes c[g0..g1] (consecutive, one direction) within the sessions
 * [lo, hi): a drift? Then *s and *e are the ramp's knots.
 */
static int
is_drift(const struct cp_red *r, const struct cp_sums *ps, size_t lo,
	 size_t hi, const struct cp_change *c, size_t g0, size_t g1,
	 size_t *s_out, size_t *e_out)
{
	double best = INFINITY, step1 = INFINITY, steps = 0, floor_v, v;
	double ssw = 0, dfw = 0, inv_k = 0;
	size_t first = c[g0].index, last = c[g1].index, s, e, t, i, prev;
	size_t s_lo = first > lo + CP_DRIFT_REACH ? first - CP_DRIFT_REACH : lo;
	size_t e_hi = last + CP_DRIFT_REACH < hi ? last + CP_DRIFT_REACH : hi - 1;

	if (hi - lo < 5)
		return 0;
	for (s = s_lo; s < first; s++)
		for (e = last; e <= e_hi; e++) {
			double q;

			if (e <= s)
				continue;
			q = rss_ramp(ps, lo, hi, s, e);
			if (q < best) {
				best = q;
				*s_out = s;
				*e_out = e;
			}
		}
	for (t = lo + 1; t < hi; t++)
		step1 = fmin(step1, rss_flat(ps, lo, t) + rss_flat(ps, t, hi));
	for (i = g0, prev = lo; i <= g1; prev = c[i].index, i++)
		steps += rss_flat(ps, prev, c[i].index);
	steps += rss_flat(ps, prev, hi);
	for (i = lo; i < hi; i++) {
		ssw += r[i].ss;
		dfw += r[i].k > 1 ? (double)(r[i].k - 1) : 0;
		inv_k += 1.0 / (double)r[i].k;
	}
	floor_v = dfw > 0 ? ssw / dfw * inv_k / (double)(hi - lo) : 0;
	v = fmax(floor_v, best / (double)(hi - lo - 4));
	if (!isfinite(best) || *e_out - *s_out < CP_DRIFT_MIN_SPAN)
		return 0;
	return best <= steps && v > 0 && (step1 - best) / v > CHI2_1_95;
}

/*
 * Runs of consecutive changes in one direction (by the session means
 * of the segments between them) that a ramp explains better: each
 * becomes one drift entry. c (sorted, indexes into r) is rewritten in
 * place; *n shrinks.
 */
static void
find_drifts(const struct cp_red *r, size_t n, struct cp_change *c, size_t *nc)
{
	struct cp_sums ps;
	double *dir = xcalloc(*nc + 1, sizeof(double));
	size_t i, g0, k = 0, out = 0;

	if (!*nc) {
		free(dir);
		return;
	}
	sums_init(&ps, r, n);
	for (i = 0; i < *nc; i++) {
		size_t a = i ? c[i - 1].index : 0, b = c[i].index;
		size_t z = i + 1 < *nc ? c[i + 1].index : n;

		dir[i] = sum(&ps, 3, b, z) / (double)(z - b) -
			 sum(&ps, 3, a, b) / (double)(b - a);
	}
	for (g0 = 0; g0 < *nc; g0 = k) {
		size_t lo = g0 ? c[g0 - 1].index : 0, hi, s = 0, e = 0;

		for (k = g0 + 1; k < *nc && (dir[k] > 0) == (dir[g0] > 0); k++)
			;
		hi = k < *nc ? c[k].index : n;
		if (is_drift(r, &ps, lo, hi, c, g0, k - 1, &s, &e)) {
			struct cp_change d = c[g0];

			for (i = g0 + 1; i < k; i++)
				d.p = fmin(d.p, c[i].p);
			d.index = s + 1;
			d.end = e;
			d.drift = 1;
			c[out++] = d;
		} else {
			for (i = g0; i < k; i++)
				c[out++] = c[i];
		}
	}
	*nc = out;
	sums_release(&ps);
	free(dir);
}

void
cp_sessions(const struct cp_session *ss, size_t n, double p_max,
	    struct cp_change **out, size_t *nout)
{
	struct cp_red *r = xcalloc(n ? n : 1, sizeof(*r));
	double *meds;
	size_t i, j, kept = 0, prev = 0;
	size_t *orig = xcalloc(n ? n : 1, sizeof(size_t));

	*out = NULL;
	*nout = 0;
	/* sessions without a usable process take no part */
	for (i = 0; i < n; i++) {
		reduce(&ss[i], &r[kept]);
		if (r[kept].k && isfinite(r[kept].m))
			orig[kept++] = i;
	}
	seg_sessions(r, 0, kept, p_max, out, nout);
	if (*nout)           /* qsort of NULL is undefined, even of 0 */
		xqsort(*out, *nout, sizeof(**out), by_index);
	find_drifts(r, kept, *out, nout);
	meds = xmalloc((kept ? kept : 1) * sizeof(double));
	for (i = 0; i < kept; i++)
		meds[i] = r[i].med;
	for (i = 0; i < *nout; i++) {
		size_t next = i + 1 < *nout ? (*out)[i + 1].index : kept;
		size_t from = (*out)[i].drift ? (*out)[i].end : (*out)[i].index;

		j = (*out)[i].index;
		(*out)[i].before = stats_median(meds + prev, j - prev);
		(*out)[i].after = stats_median(meds + from, next - from);
		prev = from;
		(*out)[i].index = orig[j];
		if ((*out)[i].drift)
			(*out)[i].end = orig[(*out)[i].end];
	}
	free(meds);
	free(orig);
	free(r);
}
