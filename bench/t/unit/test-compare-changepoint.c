/* E-divisive means: a step is found where it is, noise alone is not. */
#include "test.h"
#include "analysis/changepoint.h"
#include "base/rng.h"

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

static const struct test_case tests[] = {
	{ "one step", test_step },
	{ "two steps", test_two_steps },
	{ "pure noise", test_noise_only },
};

TEST_MAIN(tests)
