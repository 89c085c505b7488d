/*
 * The power and false alarms of history's change-point test
 * (changepoint.h cp_sessions), by simulation; bench/scripts/history-power.sh
 * builds and runs it.
 *
 *   history-power TRIALS K R BETWEEN WITHIN SESSION_EFFECT SEED [BEFORE]
 *
 * Each trial is a series of BEFORE (default 6) sessions before a step and
 * A sessions after it (A = 1, 3, 6), each session K processes of R samples: sample =
 * 100 x step x exp(session effect + process effect + within noise), the
 * effects normal with the given standard deviations (log scale). A trial
 * detects the step when a change is reported within one session of where
 * it starts; a false alarm is any change in a series without a step
 * (same lengths). For reference the same series through E-divisive over
 * the session medians alone (what history used before; 999
 * permutations). Prints one Markdown row per step and A.
 */
#include "analysis/changepoint.h"
#include "analysis/stats.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim {
	long trials;
	int k, r;
	size_t before;
	double between, within, sess;
};

/* Builds one series of n sessions, the step (factor f) from index at. */
static void
series(const struct sim *s, struct rng *g, size_t n, size_t at, double f,
       double *x, size_t *plen, struct cp_session *ss, double *med)
{
	size_t i, p, j, off = 0;

	for (i = 0; i < n; i++) {
		double se = s->sess * rng_normal(g);
		size_t start = off;

		for (p = 0; p < (size_t)s->k; p++) {
			double pe = s->between * rng_normal(g);

			plen[i * s->k + p] = (size_t)s->r;
			for (j = 0; j < (size_t)s->r; j++)
				x[off++] = 100 * (i >= at ? f : 1) *
					   exp(se + pe + s->within * rng_normal(g));
		}
		ss[i].x = x + start;
		ss[i].n = off - start;
		ss[i].plen = plen + i * s->k;
		ss[i].nproc = (size_t)s->k;
		med[i] = stats_median(ss[i].x, ss[i].n);
	}
}

/* Runs trials of before + after sessions; hit: a change within one
 * session of where the step starts (any change when f == 1). */
static void
run(const struct sim *s, struct rng *g, size_t after, double f, long *hits,
    long *hits_med)
{
	size_t n = s->before + after, t, b = s->before;
	double *x = xmalloc(n * s->k * s->r * sizeof(double));
	size_t *plen = xmalloc(n * s->k * sizeof(size_t));
	struct cp_session *ss = xcalloc(n, sizeof(*ss));
	double *med = xmalloc(n * sizeof(double));

	*hits = *hits_med = 0;
	for (t = 0; t < (size_t)s->trials; t++) {
		struct cp_change *cp;
		size_t ncp, i;
		int hit = 0;

		series(s, g, n, b, f, x, plen, ss, med);
		cp_sessions(ss, n, 0.05, &cp, &ncp);
		for (i = 0; i < ncp; i++)
			hit |= f == 1 || (cp[i].index + 1 >= b && cp[i].index <= b + 1);
		*hits += hit;
		free(cp);
		cp_edivisive(med, n, 1, 0.05, 999, rng_next(g), &cp, &ncp);
		hit = 0;
		for (i = 0; i < ncp; i++)
			hit |= f == 1 || (cp[i].index + 1 >= b && cp[i].index <= b + 1);
		*hits_med += hit;
		free(cp);
	}
	free(x);
	free(plen);
	free(ss);
	free(med);
}

int
main(int argc, char **argv)
{
	static const double steps[] = { 0, 0.05, 0.10, 0.14 };
	static const size_t afters[] = { 1, 3, 6 };
	struct sim s;
	struct rng g;
	size_t i, j;

	if (argc != 8 && argc != 9) {
		fprintf(stderr, "usage: history-power TRIALS K R BETWEEN WITHIN "
			"SESSION_EFFECT SEED [BEFORE]\n");
		return 2;
	}
	s.trials = atol(argv[1]);
	s.k = atoi(argv[2]);
	s.r = atoi(argv[3]);
	s.between = atof(argv[4]);
	s.within = atof(argv[5]);
	s.sess = atof(argv[6]);
	rng_seed(&g, (uint64_t)atoll(argv[7]));
	s.before = argc == 9 ? (size_t)atol(argv[8]) : 6;
	printf("| step | sessions after | detected (sessions' processes, "
	       "p <= 0.05) | medians only, E-divisive (before) |\n"
	       "|---:|---:|---:|---:|\n");
	for (i = 0; i < ARRAY_SIZE(steps); i++)
		for (j = 0; j < ARRAY_SIZE(afters); j++) {
			if (argc == 9 && afters[j] != s.before)
				continue;   /* BEFORE given: that many after */
			long h, hm;

			run(&s, &g, afters[j], 1 - steps[i], &h, &hm);
			printf("| %s | %zu | %ld of %ld (%.1f %%) | %ld of %ld "
			       "(%.1f %%) |\n", steps[i] == 0 ? "none (A/A: "
			       "false alarms)" : i == 1 ? "-5 %" : i == 2 ?
			       "-10 %" : "-14 %", afters[j], h, s.trials,
			       100.0 * h / s.trials, hm, s.trials,
			       100.0 * hm / s.trials);
			fflush(stdout);
		}
	return 0;
}
