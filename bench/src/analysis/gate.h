#ifndef ANALYSIS_GATE_H
#define ANALYSIS_GATE_H

/*
 * The regression gate: the decision for one workload from a comparison
 * (gate_decide), the minimum detectable effect of that decision, the one
 * trial loop that measures its false alarms and power (gate_trials, for
 * calibrate), calibration of a group of A/A processes (gate_calibrate),
 * and a whole gate over a store (gate_evaluate) whose checks cmd/gate.c
 * renders.
 */

#include "analysis/compare.h"
#include "analysis/outliers.h"

#include <stddef.h>
#include <stdint.h>

struct rng;
struct selection;
struct store;
struct store_result;
struct workload_group;

/*
 * The gate decision for one workload. threshold: the tolerated slowdown
 * (0.05 = 5 %); alpha: one-sided error rate (default 0.005).
 *   regression  confidently slower (upper bound of the ratio < 1) and
 *               the point estimate at least threshold slower
 *   pass        the lower bound of the ratio is above 1-threshold (both
 *               modes), or, detect only, not a regression and the
 *               threshold is at least the critical slowdown z·se the
 *               data can resolve
 *   inconclusive otherwise
 * mde: the true slowdown caught with 95 % power; need_k: processes per
 * side that would likely decide an inconclusive case (0 otherwise).
 *
 * Fails closed: when the ratio, its CI, its standard error, a bound, the
 * critical slowdown or the MDE is not a finite number (or the ratio is
 * not positive, the se negative), the verdict is inconclusive in both
 * modes and invalid names the statistic in words.
 */
enum gate_verdict { GATE_PASS, GATE_REGRESSION, GATE_INCONCLUSIVE };
enum gate_mode { GATE_DETECT, GATE_PROVE };
struct gate_decision {
	enum gate_verdict verdict;
	double crit;     /* smallest flaggable slowdown (relative) */
	double mde;      /* relative */
	double lo, hi;   /* one-sided (1-alpha) bounds of the ratio */
	int need_k;
	int below_floor; /* threshold below what the data can resolve */
	const char *invalid;  /* NULL, or the statistic that is not finite */
};
void gate_decide(const struct cmp_result *r, double threshold, double alpha,
		 enum gate_mode mode, struct gate_decision *d);
const char *gate_verdict_name(enum gate_verdict v);

/*
 * One trial loop for calibration. Each trial builds a baseline and a
 * candidate of k processes, compares them (500 bootstrap draws, seeded
 * from g) and decides with `gate --mode detect`; gate_trials() returns
 * how many trials were flagged as regressions.
 *   GATE_TRIAL_AA         two disjoint random sets of k processes of
 *                         base (the A/A false-alarm rate)
 *   GATE_TRIAL_POWER      k random processes of base against k of cand
 *                         (the detection rate of a real slowdown)
 *   GATE_TRIAL_RESAMPLED  k processes on each side, each a resampled
 *                         copy of a random process of base; the
 *                         candidate's scaled by 1 - slowdown
 */
enum gate_trial_kind { GATE_TRIAL_AA, GATE_TRIAL_POWER, GATE_TRIAL_RESAMPLED };
struct gate_trial {
	enum gate_trial_kind kind;
	const struct cmp_side *base, *cand;
	size_t k;
	long trials;
	double slowdown;      /* GATE_TRIAL_RESAMPLED */
	double between_cv;    /* the calibrated effect given to the bootstrap */
	double threshold, alpha;
};

/* The processes per side of calibration's MDE figures and trials. */
#define GATE_CALIB_KS 3
extern const int gate_calib_ks[GATE_CALIB_KS];   /* 1, 3, 5 */

struct gate_calib_opts {
	long trials;          /* per K; 0: no trials */
	double threshold, alpha;
	uint64_t seed;
};
/*
 * The calibration of one group of A/A processes. Counts of trials that
 * could not run (too few processes for K) are -1.
 */
struct gate_calib {
	size_t processes, samples;
	double within_cv, between_cv, samples_per_process;
	double mde[GATE_CALIB_KS];
	long aa[GATE_CALIB_KS];        /* false alarms out of trials */
	double power_effect;           /* observed slowdown of cand; NAN: none */
	long power[GATE_CALIB_KS];     /* detections out of trials */
	long sim_hit[GATE_CALIB_KS];   /* --simulate: detections */
	long sim_aa[GATE_CALIB_KS];    /* --simulate: A/A false alarms */
};
/* Stores the noise floor of g measured in c; 0, or -1 after error(). */
int gate_store_floor(struct store *s, const struct workload_group *g,
		     const struct gate_calib *c, const struct gate_calib_opts *o);

/*
 * calibrate: the groups of A/A processes of selection from, each
 * calibrated, or, with simulate >= 0, simulated with that slowdown;
 * with power (a selection, or NULL), power trials against its processes
 * of the same model, test and configuration. ok[i] is 0 for a group that
 * could not be calibrated (error() said why: fewer than 3 processes, a
 * floor that is not a finite number). Returns 0; -1 after error() when
 * the store fails; RC_USAGE after error() when a selection is bad or
 * mixes configurations (workload_groups() names what differs);
 * RC_NOTHING after error() when it holds nothing that counts. Release with
 * gate_calibration_release() whatever the return.
 */
struct gate_calibration {
	struct workload_group *g;
	struct gate_calib *c;
	int *ok;
	size_t n;
	char *left_out, *included;  /* in words; "" nothing */
};
int gate_calibration_run(struct store *s, const struct selection *from,
			 const struct selection *power, double simulate,
			 const struct gate_calib_opts *o,
			 struct gate_calibration *out);
void gate_calibration_release(struct gate_calibration *c);

/* A tolerated slowdown for one test ("pp512") or kind of test ("tg"). */
struct gate_threshold {
	char *metric;
	double value;         /* relative: 0.05 = 5 % */
};

struct gate_opts {
	const struct selection *baseline;   /* NULL: auto, or none (shim
					       checks only) */
	int baseline_auto;         /* --baseline auto (analysis/baseline.h) */
	const struct selection *candidate;
	enum gate_mode mode;
	double threshold;          /* default tolerated slowdown, relative */
	const struct gate_threshold *overrides;
	size_t noverrides;
	long min_samples;          /* fewer on a side: inconclusive */
	double alpha;              /* one-sided error rate per workload */
	double shim_floor;         /* > 0: the shim checks on the candidate */
	struct cmp_opts cmp;       /* seed and bootstrap draws */
};

/* One check: a workload, the shim speedup of a workload, or shim runs. */
struct gate_check {
	char *suite;               /* "workload", "shim-speedup", "shim-verified" */
	char *name;
	enum gate_verdict verdict;
	char *message;             /* the verdict in words, with its numbers */
	int has_stats;             /* r and d are set */
	struct cmp_result r;
	struct gate_decision d;
	double threshold;
	long floors_elsewhere;     /* uncalibrated: floors of the same
				      fingerprint and test for another
				      model, variant or configuration */
};

struct provenance;
struct gate_report {
	struct gate_check *checks;
	size_t n;
	int regressions, inconclusive;
	int most_k;                /* the largest need_k of inconclusive checks */
	double alpha;              /* one-sided: bounds at 1 - alpha */
	char *baseline;            /* the baseline selection used, or NULL */
	int64_t auto_session;      /* --baseline auto: the session picked */
	char *auto_os_build;       /* ... the candidate's OS build */
	char *auto_base;           /* ... and base fingerprint identity */
	char *auto_reason;         /* ... why that one, what was passed over */
	const char *auto_none;     /* ... none: why, as a word (baseline.h) */
	char *baseline_words;      /* "session 1 (OS build 24A100)"; NULL */
	char *candidate_words;
	struct provenance *prov_baseline, *prov_candidate;   /* NULL: none */
	struct warnings warn;      /* outliers, left out, pooled fingerprints */
};

/*
 * Runs the gate of o over s into *rep (release it with
 * gate_report_release() whatever the return). A candidate that matched
 * only data the defaults leave out (a tampered, failed or interrupted
 * session, partial runs) gets an inconclusive check saying so; the shim
 * run checks still look at every run it selects. Returns 0; -1 after
 * error() when the store fails; RC_USAGE after error() when a selection
 * is bad or mixes variants that cannot be paired (a usage error);
 * RC_NOTHING after error() when a selection matches nothing (or,
 * --baseline auto, no session qualifies); WORKLOAD_INCOMPARABLE
 * (workload.h) after error() when nothing is comparable.
 */
int gate_evaluate(struct store *s, const struct gate_opts *o,
		  struct gate_report *rep);
void gate_report_release(struct gate_report *rep);

#endif
