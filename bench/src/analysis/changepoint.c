#define _POSIX_C_SOURCE 200809L
#include "analysis/changepoint.h"
#include "analysis/stats.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The best split of x[0..n) and its statistic: for a split at t,
 * E = 2 mean|X-Y| - mean|X-X'| - mean|Y-Y'| (the energy distance with
 * alpha = 1, pairs i < j within a side), weighted by t(n-t)/n.
 */
static double
best_split(const double *x, size_t n, size_t min_size, size_t *at)
{
	double best = -1;
	size_t t, i, j;

	*at = 0;
	for (t = min_size; t + min_size <= n; t++) {
		double between = 0, wa = 0, wb = 0, e;
		size_t na = t, nb = n - t;

		for (i = 0; i < na; i++)
			for (j = na; j < n; j++)
				between += fabs(x[i] - x[j]);
		for (i = 0; i < na; i++)
			for (j = i + 1; j < na; j++)
				wa += fabs(x[i] - x[j]);
		for (i = na; i < n; i++)
			for (j = i + 1; j < n; j++)
				wb += fabs(x[i] - x[j]);
		e = 2 * between / (double)(na * nb);
		if (na > 1)
			e -= wa / ((double)na * (double)(na - 1) / 2);
		if (nb > 1)
			e -= wb / ((double)nb * (double)(nb - 1) / 2);
		e *= (double)na * (double)nb / (double)n;
		if (e > best) {
			best = e;
			*at = t;
		}
	}
	return best;
}

static void
segment(const double *x, size_t lo, size_t hi, size_t min_size, double p_max,
	int perms, struct rng *g, struct cp_change **out, size_t *nout)
{
	size_t n = hi - lo, at;
	double q, *perm;
	int r, ge = 0;

	if (n < 2 * min_size)
		return;
	q = best_split(x + lo, n, min_size, &at);
	if (q <= 0 || !at)
		return;
	perm = xmalloc(n * sizeof(double));
	memcpy(perm, x + lo, n * sizeof(double));
	for (r = 0; r < perms; r++) {
		size_t dummy;

		rng_shuffle(g, perm, n, sizeof(double));
		if (best_split(perm, n, min_size, &dummy) >= q)
			ge++;
	}
	free(perm);
	if ((double)(ge + 1) / (perms + 1) > p_max)
		return;
	*out = xrealloc(*out, (*nout + 1) * sizeof(**out));
	(*out)[*nout].index = lo + at;
	(*out)[*nout].p = (double)(ge + 1) / (perms + 1);
	(*nout)++;
	segment(x, lo, lo + at, min_size, p_max, perms, g, out, nout);
	segment(x, lo + at, hi, min_size, p_max, perms, g, out, nout);
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
