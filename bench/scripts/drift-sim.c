/*
 * Drifts in history (changepoint.h cp_sessions), by simulation;
 * bench/scripts/drift-sim.sh builds and runs it.
 *
 *   drift-sim TRIALS K BETWEEN WITHIN SESSION_EFFECT SEED
 *
 * Each trial is a series of 6 sessions at one level, then a change, then
 * 6 sessions at the new level; each session K processes of 10 samples
 * 100 x level x exp(session effect + process effect + within noise).
 * The change is an abrupt step (the new level from one session to the
 * next) or a ramp over W sessions (a straight line in log throughput
 * from the old level to the new, W - 1 sessions on the slope). Per
 * shape: the share of series where a change is found, where it is named
 * a drift, and the mean number of steps reported (not drifts); for the
 * series without a change, any change is a false alarm.
 */
#include "analysis/changepoint.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct sim {
	long trials;
	int k;
	double between, within, sess;
};

#define R 10
#define FLAT 6

/* Session i's level in a series with a change of log size d over w
 * sessions (w = 0: none, w = 1: a step). */
static double
level(size_t i, double d, int w)
{
	double x;

	if (!w || i < FLAT)
		return 0;
	x = (double)(i - FLAT + 1) / (double)w;
	return d * (x < 1 ? x : 1);
}

static void
run(const struct sim *s, struct rng *g, double d, int w, long *found,
    long *drifts, long *steps)
{
	size_t n = 2 * FLAT + (w > 1 ? (size_t)w - 1 : 0), t, i, p, j;
	double *x = xmalloc(n * s->k * R * sizeof(double));
	size_t *plen = xmalloc(n * s->k * sizeof(size_t));
	struct cp_session *ss = xcalloc(n, sizeof(*ss));

	*found = *drifts = *steps = 0;
	for (t = 0; t < (size_t)s->trials; t++) {
		struct cp_change *cp;
		size_t ncp, off = 0;
		int drift = 0;

		for (i = 0; i < n; i++) {
			double se = s->sess * rng_normal(g), l = level(i, d, w);
			size_t start = off;

			for (p = 0; p < (size_t)s->k; p++) {
				double pe = s->between * rng_normal(g);

				plen[i * s->k + p] = R;
				for (j = 0; j < R; j++)
					x[off++] = 100 * exp(l + se + pe +
							     s->within * rng_normal(g));
			}
			ss[i] = (struct cp_session){ x + start, off - start,
						     plen + i * s->k, (size_t)s->k };
		}
		cp_sessions(ss, n, 0.05, &cp, &ncp);
		*found += ncp > 0;
		for (i = 0; i < ncp; i++) {
			drift |= cp[i].drift;
			*steps += !cp[i].drift;
		}
		*drifts += drift;
		free(cp);
	}
	free(x);
	free(plen);
	free(ss);
}

int
main(int argc, char **argv)
{
	static const struct { double d; int w; const char *name; } shapes[] = {
		{ 0, 0, "none" },
		{ -0.10, 1, "step -10 %" }, { -0.15, 1, "step -15 %" },
		{ -0.10, 4, "ramp -10 % over 4 sessions" },
		{ -0.10, 6, "ramp -10 % over 6 sessions" },
		{ -0.10, 10, "ramp -10 % over 10 sessions" },
		{ -0.15, 6, "ramp -15 % over 6 sessions" },
		{ -0.15, 10, "ramp -15 % over 10 sessions" },
	};
	struct sim s;
	struct rng g;
	size_t i;

	if (argc != 7) {
		fprintf(stderr, "usage: drift-sim TRIALS K BETWEEN WITHIN "
			"SESSION_EFFECT SEED\n");
		return 2;
	}
	s.trials = atol(argv[1]);
	s.k = atoi(argv[2]);
	s.between = atof(argv[3]);
	s.within = atof(argv[4]);
	s.sess = atof(argv[5]);
	rng_seed(&g, (uint64_t)atoll(argv[6]));
	printf("| change | sessions | a change found | named a drift | steps "
	       "reported (mean) |\n|---|---:|---:|---:|---:|\n");
	for (i = 0; i < ARRAY_SIZE(shapes); i++) {
		long f, dr, st;
		int w = shapes[i].w;

		run(&s, &g, log(1 + shapes[i].d), w, &f, &dr, &st);
		printf("| %s | %d | %.1f %% | %.1f %% | %.2f |\n", shapes[i].name,
		       2 * FLAT + (w > 1 ? w - 1 : 0), 100.0 * f / s.trials,
		       100.0 * dr / s.trials, (double)st / s.trials);
		fflush(stdout);
	}
	return 0;
}
