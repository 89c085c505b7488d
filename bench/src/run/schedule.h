#ifndef RUN_SCHEDULE_H
#define RUN_SCHEDULE_H

/*
 * The order of a plan's processes. Interleaved: every round runs each
 * variant once per model, in an order shuffled by the seeded PRNG (so a
 * drift in the machine's state hits all variants alike); grouped: all
 * processes of a variant, then the next.
 */

#include <stddef.h>
#include <stdint.h>

struct plan;

struct job {
	size_t model, variant;
	int round;
};

/* The jobs of p in order (*njobs of them; free() the array). */
struct job *schedule(const struct plan *p, uint64_t seed, size_t *njobs);

#endif
