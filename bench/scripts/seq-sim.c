/*
 * The sequential gate (analysis/sequential.h seq_decide) against the
 * fixed gate (gate.h gate_decide over compare.h cmp_compute), by
 * simulation; bench/scripts/seq-sim.sh builds and runs it.
 *
 *   seq-sim TRIALS SEED [PROFILE|all [loop]]
 *
 * A simulated process: r = 10 samples 100 x f x exp(between Z_p +
 * within Z_i) (f = 1 - slowdown on the candidate). Per noise profile and
 * true slowdown (0, 3, 5, 10 %; threshold 5 %, alpha 0.005):
 *
 *   sequential     both sides start with one process; after each pair
 *                  seq_decide() says pass, regression or needs-more;
 *                  on needs-more one more process per side, up to the
 *                  cap of 30 per side (then inconclusive). Uncalibrated,
 *                  and calibrated (a floor measured from 10 A/A
 *                  processes of the same noise, drawn afresh per trial,
 *                  with its 9 degrees of freedom)
 *   CLI loop       run --until-decided: the baseline K0 = 3 or 10
 *                  processes measured once, the candidate from one
 *                  process in rounds of gate_seq_batch() (the CLI's
 *                  rule), asked after each round; "loop" runs only it
 *   fixed K        K processes per side, `gate --mode detect` (500
 *                  bootstrap draws), uncalibrated K = 3, 10, 30 and
 *                  calibrated K = 3
 *
 * Prints one Markdown row per profile, slowdown and design: the share of
 * regressions, passes and undecided trials, and the mean processes used
 * per side. A regression at slowdown 0 or 3 % is a false alarm; a pass
 * at 10 % a miss that passed.
 */
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/gateseq.h"
#include "analysis/sequential.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct profile {
	const char *name;
	double between, within;
};

static const struct profile profiles[] = {
	{ "published pp512 (within 0.52 %)", 0, 0.0052 },
	{ "published tg128, stock guest (within 11.06 %)", 0, 0.1106 },
	{ "process effect 2 %, within 2 %", 0.02, 0.02 },
	{ "process effect 5 %, within 2 %", 0.05, 0.02 },
};
static const double slowdowns[] = { 0, 0.03, 0.05, 0.10 };

#define R 10
#define CAP 30
#define CALIB 10

static void
add_process(struct cmp_side *s, struct rng *g, const struct profile *p,
	    double f, int64_t id)
{
	double x[R], pe = p->between * rng_normal(g);
	int j;

	for (j = 0; j < R; j++)
		x[j] = 100 * f * exp(pe + p->within * rng_normal(g));
	cmp_side_add(s, id, x, R);
}

static double
calibration(struct rng *g, const struct profile *p)
{
	struct cmp_side s = { 0 };
	double w, b;
	int i;

	for (i = 0; i < CALIB; i++)
		add_process(&s, g, p, 1, 1000 + i);
	cmp_side_cv(&s, &w, &b);
	cmp_side_release(&s);
	return b;
}

struct tally {
	long reg, pass, undecided, trials;
	double procs;
};

static void
print_row(const struct profile *p, double slow, const char *design,
	  const struct tally *t)
{
	printf("| %s | %.0f %% | %s | %.1f %% | %.1f %% | %.1f %% | %.2f |\n",
	       p->name, slow * 100, design, 100.0 * t->reg / t->trials,
	       100.0 * t->pass / t->trials, 100.0 * t->undecided / t->trials,
	       t->procs / t->trials);
	fflush(stdout);
}

static void
sequential(struct rng *g, const struct profile *p, double slow, int calib,
	   long trials, struct tally *t)
{
	long tr;

	memset(t, 0, sizeof(*t));
	t->trials = trials;
	for (tr = 0; tr < trials; tr++) {
		struct cmp_side a = { 0 }, b = { 0 };
		struct seq_opts o = SEQ_OPTS_INIT;
		struct seq_decision d;
		int k = 0;

		o.grow = SEQ_GROW_BOTH;
		o.max_processes = CAP;
		if (calib) {
			o.between_cv = calibration(g, p);
			o.between_df = CALIB - 1;
		}
		for (;;) {            /* one pair at a time, asked after each */
			seq_decide(&a, &b, &o, &d);
			if (k && d.verdict != SEQ_MORE)
				break;
			add_process(&a, g, p, 1, k + 1);
			add_process(&b, g, p, 1 - slow, 1000 + k + 1);
			k++;
		}
		t->reg += d.verdict == SEQ_REGRESSION;
		t->pass += d.verdict == SEQ_PASS;
		t->undecided += d.verdict == SEQ_CAPPED;
		t->procs += (double)k;
		cmp_side_release(&a);
		cmp_side_release(&b);
	}
}

/*
 * run --until-decided's loop: the baseline measured once (K0 processes,
 * it cannot be repeated after an OS update), the candidate from one
 * process, then rounds of gate_seq_batch() processes (the CLI's own
 * rule), asked after each round, up to the cap. procs: the candidate's.
 */
static void
cli_loop(struct rng *g, const struct profile *p, double slow, int k0,
	 long trials, struct tally *t)
{
	long tr;

	memset(t, 0, sizeof(*t));
	t->trials = trials;
	for (tr = 0; tr < trials; tr++) {
		struct cmp_side a = { 0 }, b = { 0 };
		struct seq_opts o = SEQ_OPTS_INIT;
		struct seq_decision d;
		int i, k = 1, add;

		o.grow = SEQ_GROW_CANDIDATE;
		o.max_processes = CAP;
		for (i = 0; i < k0; i++)
			add_process(&a, g, p, 1, i + 1);
		add_process(&b, g, p, 1 - slow, 1001);
		for (;;) {
			seq_decide(&a, &b, &o, &d);
			if (!(add = gate_seq_batch(&d, CAP)))
				break;
			for (i = 0; i < add; i++, k++)
				add_process(&b, g, p, 1 - slow, 1001 + k);
		}
		t->reg += d.verdict == SEQ_REGRESSION;
		t->pass += d.verdict == SEQ_PASS;
		t->undecided += d.verdict != SEQ_REGRESSION && d.verdict != SEQ_PASS;
		t->procs += (double)k;
		cmp_side_release(&a);
		cmp_side_release(&b);
	}
}

static void
fixed(struct rng *g, const struct profile *p, double slow, int k, int calib,
      long trials, struct tally *t)
{
	long tr;

	memset(t, 0, sizeof(*t));
	t->trials = trials;
	for (tr = 0; tr < trials; tr++) {
		struct cmp_side a = { 0 }, b = { 0 };
		struct cmp_opts o = CMP_OPTS_INIT;
		struct cmp_result r;
		struct gate_decision d;
		int i;

		o.boot = 500;
		o.no_mwu = 1;
		o.seed = rng_next(g);
		if (calib) {
			o.between_cv = calibration(g, p);
			o.between_df = CALIB - 1;
		}
		for (i = 0; i < k; i++) {
			add_process(&a, g, p, 1, i + 1);
			add_process(&b, g, p, 1 - slow, 1000 + i + 1);
		}
		if (cmp_compute(&a, &b, &o, &r) == 0) {
			gate_decide(&r, 0.05, 0.005, GATE_DETECT, &d);
			t->reg += d.verdict == GATE_REGRESSION;
			t->pass += d.verdict == GATE_PASS;
			t->undecided += d.verdict == GATE_INCONCLUSIVE;
		} else {
			t->undecided++;
		}
		t->procs += k;
		cmp_side_release(&a);
		cmp_side_release(&b);
	}
}

int
main(int argc, char **argv)
{
	static const int fixed_k[] = { 3, 10, 30 };
	static const int loop_k0[] = { 3, 10 };
	int loop_only;
	struct rng g;
	long trials;
	size_t i, j, q;

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: seq-sim TRIALS SEED [PROFILE [loop]]\n");
		return 2;
	}
	loop_only = argc > 4 && !strcmp(argv[4], "loop");
	trials = atol(argv[1]);
	rng_seed(&g, (uint64_t)atoll(argv[2]));
	printf("| noise | slowdown | design | regression | pass | undecided | "
	       "processes per side (mean) |\n|---|---:|---|---:|---:|---:|---:|\n");
	for (i = 0; i < ARRAY_SIZE(profiles); i++) {
		if (argc > 3 && strcmp(argv[3], "all") &&
		    (size_t)atoi(argv[3]) != i)
			continue;
		for (j = 0; j < ARRAY_SIZE(slowdowns); j++) {
			const struct profile *p = &profiles[i];
			double s = slowdowns[j];
			struct tally t;
			char name[64];

			for (q = 0; q < ARRAY_SIZE(loop_k0); q++) {
				cli_loop(&g, p, s, loop_k0[q], trials, &t);
				snprintf(name, sizeof(name), "run --until-decided, "
					 "baseline K = %d", loop_k0[q]);
				print_row(p, s, name, &t);
			}
			if (loop_only)
				continue;
			sequential(&g, p, s, 0, trials, &t);
			print_row(p, s, "sequential, uncalibrated", &t);
			sequential(&g, p, s, 1, trials, &t);
			print_row(p, s, "sequential, calibrated", &t);
			for (q = 0; q < ARRAY_SIZE(fixed_k); q++) {
				fixed(&g, p, s, fixed_k[q], 0, trials, &t);
				snprintf(name, sizeof(name), "fixed K = %d, uncalibrated",
					 fixed_k[q]);
				print_row(p, s, name, &t);
			}
			fixed(&g, p, s, 3, 1, trials, &t);
			print_row(p, s, "fixed K = 3, calibrated", &t);
		}
	}
	return 0;
}
