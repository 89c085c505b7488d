/* The sequential gate (analysis/sequential.h): its confidence sequence,
 * its decisions, and its error rate under optional stopping. */
#include "test.h"
#include "analysis/compare.h"
#include "analysis/gateseq.h"
#include "analysis/sequential.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
add(struct cmp_side *s, struct rng *g, double m, double between,
    double within, int64_t id)
{
	double x[10], pe = between * rng_normal(g);
	int j;

	for (j = 0; j < 10; j++)
		x[j] = m * exp(pe + within * rng_normal(g));
	cmp_side_add(s, id, x, 10);
}

/*
 * The half width: known noise against the closed form of a single
 * normal mixture component bounding it, shrinking with the processes,
 * wider with estimated noise, infinite while no statistic can reach
 * 1/alpha.
 */
static void
test_half_width(void)
{
	double known = seq_half_width(5, 5, 0.05, INFINITY, 0.005);
	double est = seq_half_width(5, 5, 0.05, 8, 0.005);
	double more = seq_half_width(20, 20, 0.05, INFINITY, 0.005);
	double lone = seq_half_width(20, 20, 0.05, INFINITY, 0.005 / 4);
	double n = 10, g, hw1;

	CHECK(known > 0 && isfinite(known));
	CHECK(est > known);
	CHECK(more < known);
	/* the mixture of four is at least one component at alpha / 4 (a
	 * quarter of its weight) and no wider than the best of them */
	g = 10;
	hw1 = sqrt((1 + n * g) / (n * g) * (2 * log(4 / 0.005) + log1p(n * g))) *
	      0.05 * sqrt(2.0 / 20);
	CHECK(lone > 0 && more <= hw1 + 1e-12);
	/* t mixture with one degree of freedom and one process a side:
	 * its Bayes factor is bounded below 1/alpha */
	CHECK(isinf(seq_half_width(1, 2, 0.05, 1, 0.005)));
	CHECK(isinf(seq_half_width(0, 2, 0.05, INFINITY, 0.005)));
}

static void
test_decisions(void)
{
	struct cmp_side a = { 0 }, b = { 0 }, c = { 0 };
	struct seq_opts o = SEQ_OPTS_INIT;
	struct seq_decision d;
	struct rng g;
	int i;

	rng_seed(&g, 3);
	/* one process a side, no floor: needs more, says why */
	add(&a, &g, 100, 0.02, 0.02, 1);
	add(&b, &g, 100, 0.02, 0.02, 2);
	CHECK(seq_decide(&a, &b, &o, &d) == 0);
	CHECK(d.verdict == SEQ_MORE && d.more_b >= 1 && d.more_a == 0);
	CHECK(strstr(d.why, "nothing shows the process effect") != NULL);
	/* calibrated: decided at once, both ways */
	o.between_cv = 0.02;
	o.between_df = 9;
	CHECK(seq_decide(&a, &b, &o, &d) == 0);
	CHECK(d.verdict == SEQ_MORE || d.verdict == SEQ_PASS);
	for (i = 0; i < 3; i++)
		add(&c, &g, 60, 0.02, 0.02, 10 + i);
	CHECK(seq_decide(&a, &c, &o, &d) == 0);
	CHECK(d.verdict == SEQ_REGRESSION && d.hi < 1 && d.ratio < 0.7);
	CHECK(strstr(d.why, "slower") != NULL);
	/* uncalibrated, many processes, no change: pass */
	o.between_cv = -1;
	for (i = 0; i < 12; i++) {
		add(&a, &g, 100, 0.02, 0.02, 100 + i);
		add(&b, &g, 100, 0.02, 0.02, 200 + i);
	}
	CHECK(seq_decide(&a, &b, &o, &d) == 0);
	CHECK(d.verdict == SEQ_PASS && d.lo > 0.95 && isfinite(d.df));
	/* at the cap, undecided: inconclusive */
	o.max_processes = 13;
	o.threshold = 0.001;
	CHECK(seq_decide(&a, &b, &o, &d) == 0);
	CHECK(d.verdict == SEQ_CAPPED);
	o.threshold = 0;
	CHECK(seq_decide(&a, &b, &o, &d) < 0);
	cmp_side_release(&a);
	cmp_side_release(&b);
	cmp_side_release(&c);
}

/*
 * Optional stopping: A/A, asked after every pair up to 30 a side and
 * stopped at the first decision. A regression is a false alarm: at most
 * alpha over the whole sequence (here 0.005 of 300 runs: 1.5 expected
 * at worst).
 */
static void
test_optional_stopping(void)
{
	struct rng g;
	int t, alarms = 0, passes = 0;

	rng_seed(&g, 31);
	for (t = 0; t < 300; t++) {
		struct cmp_side a = { 0 }, b = { 0 };
		struct seq_opts o = SEQ_OPTS_INIT;
		struct seq_decision d;
		int k;

		o.grow = SEQ_GROW_BOTH;
		for (k = 1; k <= 30; k++) {
			add(&a, &g, 100, 0.05, 0.02, k);
			add(&b, &g, 100, 0.05, 0.02, 100 + k);
			CHECK(seq_decide(&a, &b, &o, &d) == 0);
			if (d.verdict != SEQ_MORE)
				break;
		}
		alarms += d.verdict == SEQ_REGRESSION;
		passes += d.verdict == SEQ_PASS;
		cmp_side_release(&a);
		cmp_side_release(&b);
	}
	printf("  A/A, 5 %% process effect: %d regressions, %d passes of 300\n",
	       alarms, passes);
	CHECK(alarms <= 3);
	CHECK(passes > 0);
}

/* run --until-decided's rule for the next round (analysis/gateseq.h). */
static void
test_batch(void)
{
	static const struct {
		enum seq_verdict v;
		size_t kb;
		int more_b, cap, want;
	} t[] = {
		{ SEQ_MORE, 1, 5, 30, 5 },         /* what the gate asks */
		{ SEQ_MORE, 1, 0, 30, 1 },         /* at least one */
		{ SEQ_MORE, 27, 10, 30, 3 },       /* never past the cap */
		{ SEQ_MORE, 30, 4, 30, 0 },        /* at the cap: none */
		{ SEQ_PASS, 3, 4, 30, 0 },         /* decided: none */
		{ SEQ_REGRESSION, 3, 4, 30, 0 },
		{ SEQ_CAPPED, 30, 1, 30, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct seq_decision d;

		memset(&d, 0, sizeof(d));
		d.verdict = t[i].v;
		d.kb = t[i].kb;
		d.more_b = t[i].more_b;
		CHECK(gate_seq_batch(&d, t[i].cap) == t[i].want);
	}
}

static const struct test_case tests[] = {
	{ "confidence sequence half width", test_half_width },
	{ "decisions", test_decisions },
	{ "false alarms under optional stopping", test_optional_stopping },
	{ "run --until-decided: the next round's processes", test_batch },
};

TEST_MAIN(tests)
