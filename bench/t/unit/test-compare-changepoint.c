/* E-divisive means: a step is found where it is, noise alone is not. */
#include "test.h"
#include "analysis/changepoint.h"
#include "base/rng.h"

#include <math.h>

#include <stdlib.h>

static void
test_step(void)
{
	double x[16];
	struct rng g;
	struct cp_change *c;
	size_t n, i;

	rng_seed(&g, 5);
	for (i = 0; i < 16; i++)
		x[i] = (i < 10 ? 100 : 85) + rng_normal(&g);
	cp_edivisive(x, 16, 2, 0.05, 199, 1, &c, &n);
	CHECK(n == 1);
	if (n == 1) {
		CHECK(c[0].index == 10);
		CHECK(c[0].p <= 0.05);
		CHECK(c[0].before > 99 && c[0].before < 101);
		CHECK(c[0].after > 84 && c[0].after < 86);
	}
	free(c);
}

static void
test_two_steps(void)
{
	double x[24];
	struct cp_change *c;
	size_t n, i;

	for (i = 0; i < 24; i++)
		x[i] = (i < 8 ? 50 : i < 16 ? 60 : 45) + (double)(i % 3) * 0.3;
	cp_edivisive(x, 24, 2, 0.05, 199, 1, &c, &n);
	CHECK(n == 2);
	if (n == 2)
		CHECK(c[0].index == 8 && c[1].index == 16);
	free(c);
}

static void
test_noise_only(void)
{
	double x[20];
	struct rng g;
	struct cp_change *c;
	size_t n, i;
	int found = 0, seed;

	for (seed = 0; seed < 20; seed++) {
		rng_seed(&g, (uint64_t)seed + 100);
		for (i = 0; i < 20; i++)
			x[i] = 100 + rng_normal(&g);
		cp_edivisive(x, 20, 2, 0.01, 199, (uint64_t)seed, &c, &n);
		found += n > 0;
		free(c);
	}
	CHECK(found <= 2);
}

/* The statistic of the best split the O(n^3) way, as the paper has it. */
static double
brute_split(const double *x, size_t n, size_t min_size, size_t *at)
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

/* The O(n log n) statistic equals the direct one, ties included. */
static void
test_split_statistic(void)
{
	double x[80];
	struct rng g;
	int trial, bad = 0;

	rng_seed(&g, 3);
	for (trial = 0; trial < 300; trial++) {
		size_t n = 2 + rng_below(&g, 79), i, at1, at2;
		size_t min_size = 1 + rng_below(&g, 3);
		double q1, q2;

		for (i = 0; i < n; i++)
			x[i] = trial % 2 ? (double)rng_below(&g, 4) :
			       (i < n / 2 ? 100 : 90) + 3 * rng_normal(&g);
		q1 = cp_best_split(x, n, min_size, &at1);
		q2 = brute_split(x, n, min_size, &at2);
		if (at1 != at2 || fabs(q1 - q2) > 1e-9 * (1 + fabs(q2)))
			bad++;
	}
	CHECK(bad == 0);
}

/* A long series: the change is found where it is, in well under a second. */
static void
test_long_series(void)
{
	double *x = malloc(1000 * sizeof(double));
	struct rng g;
	struct cp_change *c;
	size_t n, i;

	rng_seed(&g, 8);
	for (i = 0; i < 1000; i++)
		x[i] = (i < 700 ? 100 : 95) * (1 + 0.01 * rng_normal(&g));
	cp_edivisive(x, 1000, 1, 0.05, 999, 1, &c, &n);
	CHECK(n >= 1);
	for (i = 0; i < n && c[i].index != 700; i++)
		;
	CHECK(i < n);
	free(c);
	free(x);
}

static const struct test_case tests[] = {
	{ "one step", test_step },
	{ "two steps", test_two_steps },
	{ "pure noise", test_noise_only },
	{ "split statistic against the direct sums", test_split_statistic },
	{ "a series of 1000 sessions", test_long_series },
};

TEST_MAIN(tests)
