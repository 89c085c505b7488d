#define _POSIX_C_SOURCE 200809L
#include "base/rng.h"

#include <math.h>

uint64_t
splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void
rng_seed(struct rng *g, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		g->s[i] = splitmix64(&seed);
}

uint64_t
rng_next(struct rng *g)
{
	uint64_t *s = g->s, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

size_t
rng_below(struct rng *g, size_t n)
{
	uint64_t lim, v;

	if (n <= 1)
		return 0;
	lim = UINT64_MAX - UINT64_MAX % n;
	do
		v = rng_next(g);
	while (v >= lim);
	return (size_t)(v % n);
}

double
rng_uniform(struct rng *g)
{
	return ((rng_next(g) >> 11) + 0.5) * 0x1.0p-53;
}

double
rng_normal(struct rng *g)
{
	double u1 = rng_uniform(g);
	double u2 = (rng_next(g) >> 11) * 0x1.0p-53;

	return sqrt(-2 * log(u1)) * cos(2 * acos(-1.0) * u2);
}

void
rng_shuffle(struct rng *g, void *v, size_t n, size_t size)
{
	unsigned char *p = v, *a, *b, t;
	size_t i, j, k;

	for (i = n; i > 1; i--) {
		j = rng_below(g, i);
		a = p + (i - 1) * size;
		b = p + j * size;
		for (k = 0; a != b && k < size; k++) {
			t = a[k];
			a[k] = b[k];
			b[k] = t;
		}
	}
}
