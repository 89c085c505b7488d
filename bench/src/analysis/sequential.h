#ifndef ANALYSIS_SEQUENTIAL_H
#define ANALYSIS_SEQUENTIAL_H

/*
 * The sequential gate: given the processes measured so far on each
 * side, decided-pass, decided-regression, or needs-more (how many more
 * processes of which side), with its error rates held however often it
 * is asked and whenever the caller stops: `run --until-decided` and the
 * CI loop call seq_decide() after every process (or batch) and stop at
 * the first decision or at the cap.
 *
 * Statistic: each process is reduced to the log of its median, d is the
 * mean of the candidate's less the mean of the baseline's. Its bounds
 * are an always-valid confidence sequence: the inversion of a mixture
 * Bayes factor, which is a test martingale under the null, so by
 * Ville's inequality the chance that the sequence ever excludes the
 * true shift, over every look, is at most alpha (Robbins 1970; Lai
 * 1976; Howard et al. 2021, "Time-uniform, nonparametric, nonasymptotic
 * confidence sequences"):
 *   noise known     (a noise floor whose degrees of freedom are unknown):
 *                   the normal mixture, z = d / (sigma sqrt(1/Ka+1/Kb)),
 *                   BF = (1 + n g)^(-1/2) exp(n g z^2 / (2 (1 + n g))),
 *                   n = 1 / (1/Ka + 1/Kb); sigma never below the
 *                   processes' own spread
 *   noise estimated the t mixture over the pooled spread of the
 *                   processes (plus the calibration's, when its degrees
 *                   of freedom are known), nu degrees of freedom:
 *                   BF = (1 + n g)^(-1/2) [(1 + t^2/nu) /
 *                        (1 + t^2/(nu (1 + n g)))]^((nu + 1) / 2)
 *                   (the Bayes factor with a right-Haar prior on the
 *                   scale: an e-process under location-scale invariance,
 *                   Perez-Ortiz et al. 2022)
 * g, the prior variance of the standardized shift, is mixed over 1,
 * 10, 100 and 1000 in equal parts (shifts of 1 to 30 process standard
 * deviations: a 5 % threshold against the published Mac noise and
 * against a 5 % process effect). The two-sided sequence at level alpha
 * bounds each one-sided claim at alpha. The spread is never taken below
 * the within-process part of a process median.
 *
 * Decisions, as the fixed gate's (analysis/gate.h) but on these bounds:
 *   regression  upper bound of the ratio < 1 and the estimate at least
 *               the threshold slower
 *   pass        lower bound above 1 - threshold
 *   more        neither, below the cap: more_a / more_b processes per
 *               side would likely decide it (the estimate and spread
 *               taken as they are)
 *   capped      neither, and the growing side(s) are at the cap:
 *               inconclusive
 * A regression when the candidate is not slower, or a pass when it is
 * slower than the threshold, happens with probability at most alpha
 * over the whole sequence of looks. Figures: bench/BENCHMARKS.md
 * ("The sequential gate"); docs/statistics.md.
 *
 * Pure: no store, no output, nothing allocated that outlives the call.
 */

#include "analysis/compare.h"

enum seq_verdict { SEQ_PASS, SEQ_REGRESSION, SEQ_MORE, SEQ_CAPPED };
const char *seq_verdict_name(enum seq_verdict v);

/* Which side may grow: the candidate only (a baseline measured before
 * an OS update cannot be repeated), or both (two variants of one
 * session, alternating). */
enum seq_grow { SEQ_GROW_CANDIDATE, SEQ_GROW_BOTH };

struct seq_opts {
	double threshold;     /* tolerated slowdown, relative (0.05) */
	double alpha;         /* error rate of each claim (0.005) */
	double between_cv;    /* calibrated process effect; < 0: none */
	double between_df;    /* its degrees of freedom; <= 0: unknown */
	enum seq_grow grow;
	int max_processes;    /* per side; the cap */
};
#define SEQ_OPTS_INIT { 0.05, 0.005, -1, 0, SEQ_GROW_CANDIDATE, 30 }

struct seq_decision {
	enum seq_verdict verdict;
	size_t ka, kb;        /* processes used (with samples) */
	double ratio;         /* exp(d) */
	double lo, hi;        /* always-valid (1 - alpha) bounds of the ratio */
	double sigma;         /* per-process sd of the log median used */
	double df;            /* of sigma; INFINITY: known */
	int more_a, more_b;   /* SEQ_MORE: processes to add per side */
	int reachable;        /* SEQ_MORE: 1 when the cap likely suffices */
	char why[320];        /* the verdict in words */
};

/*
 * Decides on a (baseline) and b (candidate) with o. Returns 0, or -1
 * after error() when o is not usable (threshold or alpha out of range,
 * a cap below 1). Too little data to estimate the noise (one process a
 * side and no floor) is SEQ_MORE, never an error.
 */
int seq_decide(const struct cmp_side *a, const struct cmp_side *b,
	       const struct seq_opts *o, struct seq_decision *d);

/*
 * The half-width (log units) of the confidence sequence for a design
 * of ka and kb processes, per-process sd sigma with df degrees of
 * freedom (INFINITY: known): exposed for tests and the simulation.
 * INFINITY when no value of the statistic can reach 1/alpha yet.
 */
double seq_half_width(double ka, double kb, double sigma, double df,
		      double alpha);

#endif
