#ifndef BASE_RNG_H
#define BASE_RNG_H

/*
 * The one seeded PRNG of shimbench: xoshiro256** (Blackman and Vigna
 * 2018), its state expanded from a 64-bit seed by splitmix64 (Steele,
 * Lea and Flood 2014). The same seed gives the same sequence on every
 * platform, so interleavings, bootstraps, permutation tests and
 * simulations are reproducible from the recorded seed.
 *
 * splitmix64 on its own is also the stream behind the synthetic models'
 * weights (models/synth.c): changing it changes every model's SHA-256.
 */

#include <stddef.h>
#include <stdint.h>

struct rng {
	uint64_t s[4];
};

/* Advances *state and returns the next splitmix64 value. */
uint64_t splitmix64(uint64_t *state);

void rng_seed(struct rng *g, uint64_t seed);
uint64_t rng_next(struct rng *g);
/* Uniform in [0, n) without modulo bias; 0 when n <= 1. */
size_t rng_below(struct rng *g, size_t n);
/* Uniform in (0, 1). */
double rng_uniform(struct rng *g);
/* Standard normal (Box-Muller). */
double rng_normal(struct rng *g);
/* Shuffles v[0..n) of `size`-byte elements in place (Fisher-Yates). */
void rng_shuffle(struct rng *g, void *v, size_t n, size_t size);

#endif
