/*
 * The fixed gate (`gate --mode detect`, analysis/gate.h gate_decide over
 * compare.h cmp_compute) by simulation: its A/A false alarms, the MDE it
 * prints, and its power at a slowdown equal to that MDE.
 * bench/scripts/gate-sim.sh builds and runs it.
 *
 *   gate-sim TRIALS SEED [PROFILE [K [CALIB]]]
 *
 * A simulated process: r samples 100 x exp(between Z_p + within Z_i)
 * (log-normal process effect and within-process noise, Z standard
 * normal). Each cell is a noise profile, K processes per side and a
 * calibration: none (the gate is told nothing) or a noise floor measured
 * the way `calibrate` measures it, from 10 A/A processes of the same
 * noise, drawn afresh for every trial. Per cell:
 *
 *   A/A         TRIALS gates of two independent sides of K processes
 *               without any slowdown: false alarms (verdict regression),
 *               inconclusive verdicts, and the MDE each gate printed
 *   power       TRIALS gates whose candidate is slower by the median of
 *               the MDEs printed in the A/A gates: the share flagged
 *
 * 500 bootstrap draws per gate (as calibrate's trials), threshold 5 %,
 * alpha 0.005. Only the API that has not changed is used (and the
 * floor's degrees of freedom where compare.h has them), so the same
 * file measures the gate before and after a change. Prints one Markdown
 * row per cell.
 */
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/stats.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct profile {
	const char *name;
	double between, within;
	int r;
};

static const struct profile profiles[] = {
	{ "published pp512, TinyLlama shim guest (within 0.52 %)", 0, 0.0052, 10 },
	{ "published tg128, TinyLlama stock guest (within 11.06 %)", 0, 0.1106, 10 },
	{ "process effect 2 %, within 2 %", 0.02, 0.02, 10 },
	{ "process effect 5 %, within 2 %", 0.05, 0.02, 10 },
	{ "process effect 5 %, within 5 %", 0.05, 0.05, 10 },
};
static const int ks[] = { 1, 3, 5 };

#define CALIB_PROCESSES 10

static void
side(struct cmp_side *s, struct rng *g, const struct profile *p, int k,
     double factor, int64_t id0)
{
	double x[64];
	int i, j;

	for (i = 0; i < k; i++) {
		double pe = p->between * rng_normal(g);

		for (j = 0; j < p->r; j++)
			x[j] = 100 * factor * exp(pe + p->within * rng_normal(g));
		cmp_side_add(s, id0 + i, x, (size_t)p->r);
	}
}

/* The between-process CV `calibrate` would store for this noise. */
static double
calibration(struct rng *g, const struct profile *p)
{
	struct cmp_side s = { 0 };
	double within, between;

	side(&s, g, p, CALIB_PROCESSES, 1, 1000);
	cmp_side_cv(&s, &within, &between);
	cmp_side_release(&s);
	return between;
}

/* One gate; its verdict and MDE. */
static enum gate_verdict
one_gate(struct rng *g, const struct profile *p, int k, int calib,
	 double slowdown, double *mde)
{
	struct cmp_side a = { 0 }, b = { 0 };
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_result r;
	struct gate_decision d;
	enum gate_verdict v = GATE_INCONCLUSIVE;

	o.boot = 500;
	o.seed = rng_next(g);
	o.between_cv = calib ? calibration(g, p) : -1;
#ifdef CMP_ASSUMED_BETWEEN
	/* as the gate reads it from the store: the floor's processes - 1
	 * (the API before issue 19 had no such field) */
	o.between_df = calib ? CALIB_PROCESSES - 1 : 0;
#endif
	side(&a, g, p, k, 1, 1);
	side(&b, g, p, k, 1 - slowdown, 100);
	*mde = NAN;
	if (cmp_compute(&a, &b, &o, &r) == 0) {
		gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
		v = d.verdict;
		*mde = d.mde;
	}
	cmp_side_release(&a);
	cmp_side_release(&b);
	return v;
}

static int
by_value(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void
cell(struct rng *g, const struct profile *p, int k, int calib, long trials)
{
	double *mde = xcalloc((size_t)trials, sizeof(double)), m, lo, hi;
	long t, alarms = 0, undecided = 0, caught = 0, n = 0;

	for (t = 0; t < trials; t++) {
		double d;
		enum gate_verdict v = one_gate(g, p, k, calib, 0, &d);

		alarms += v == GATE_REGRESSION;
		undecided += v == GATE_INCONCLUSIVE;
		if (isfinite(d))
			mde[n++] = d;
	}
	qsort(mde, (size_t)n, sizeof(double), by_value);
	m = n ? mde[n / 2] : NAN;
	lo = n ? mde[n / 10] : NAN;
	hi = n ? mde[n - 1 - n / 10] : NAN;
	for (t = 0; t < trials && isfinite(m) && m < 1; t++) {
		double d;

		caught += one_gate(g, p, k, calib, m, &d) == GATE_REGRESSION;
	}
	printf("| %s | %d | %s | %ld (%.2f %%) | %.1f %% | %.1f %% (%.1f–%.1f) "
	       "| %ld (%.1f %%) |\n", p->name, k, calib ? "10 A/A processes" :
	       "none", alarms, 100.0 * alarms / trials,
	       100.0 * undecided / trials, 100 * m, 100 * lo, 100 * hi,
	       caught, 100.0 * caught / trials);
	fflush(stdout);
	free(mde);
}

int
main(int argc, char **argv)
{
	struct rng g;
	long trials;
	size_t i, j;
	int c;

	if (argc < 3 || argc > 6) {
		fprintf(stderr, "usage: gate-sim TRIALS SEED [PROFILE [K [CALIB]]]\n");
		return 2;
	}
	trials = atol(argv[1]);
	rng_seed(&g, (uint64_t)atoll(argv[2]));
	printf("| noise | K | calibration | A/A false alarms | A/A "
	       "inconclusive | median MDE printed (10th–90th percentile) | "
	       "caught at that slowdown |\n|---|---:|---|---:|---:|---:|---:|\n");
	for (i = 0; i < ARRAY_SIZE(profiles); i++) {
		if (argc > 3 && (size_t)atoi(argv[3]) != i)
			continue;
		for (j = 0; j < ARRAY_SIZE(ks); j++) {
			if (argc > 4 && atoi(argv[4]) != ks[j])
				continue;
			for (c = 0; c < 2; c++)
				if (argc <= 5 || atoi(argv[5]) == c)
					cell(&g, &profiles[i], ks[j], c, trials);
		}
	}
	return 0;
}
