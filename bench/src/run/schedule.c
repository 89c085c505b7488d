#define _POSIX_C_SOURCE 200809L
#include "run/schedule.h"
#include "run/plan.h"
#include "base/rng.h"
#include "base/util.h"

#include <stdlib.h>

struct job *
schedule(const struct plan *p, uint64_t seed, size_t *njobs)
{
	size_t nv = p->nvariants, n = 0, m, v;
	struct job *jobs = xcalloc((size_t)p->processes * p->nmodels * nv + 1,
				   sizeof(*jobs));
	size_t *perm = xcalloc(nv + 1, sizeof(size_t));
	struct rng g;
	int r;

	rng_seed(&g, seed);
	if (p->interleaved) {
		for (r = 0; r < p->processes; r++)
			for (m = 0; m < p->nmodels; m++) {
				for (v = 0; v < nv; v++)
					perm[v] = v;
				rng_shuffle(&g, perm, nv, sizeof(size_t));
				for (v = 0; v < nv; v++)
					jobs[n++] = (struct job){ m, perm[v], r };
			}
	} else {
		for (v = 0; v < nv; v++)
			for (m = 0; m < p->nmodels; m++)
				for (r = 0; r < p->processes; r++)
					jobs[n++] = (struct job){ m, v, r };
	}
	free(perm);
	*njobs = n;
	return jobs;
}
