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
	qsort(s, n, sizeof(double), by_value);
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
	qsort(*out, *nout, sizeof(**out), by_index);
	for (i = 0; i < *nout; i++) {
		size_t next = i + 1 < *nout ? (*out)[i + 1].index : n;

		(*out)[i].before = stats_median(x + prev, (*out)[i].index - prev);
		(*out)[i].after = stats_median(x + (*out)[i].index,
					       next - (*out)[i].index);
		prev = (*out)[i].index;
	}
}
