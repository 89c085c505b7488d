#ifndef COMPARE_H
#define COMPARE_H

/*
 * Two-sample statistics for throughput (tokens per second, higher is
 * better) where samples come in processes: each llama-bench process
 * yields r samples that share the process's own offset (placement,
 * clocks, load), so samples are not independent across processes.
 *
 * The comparison of a baseline A and a candidate B:
 *   ratio      median(B) / median(A) over all samples
 *   ci95       seeded hierarchical bootstrap: processes are resampled
 *              with replacement, then samples within each drawn process;
 *              a side with a single process cannot show its process
 *              effect, so each bootstrap draw multiplies it by
 *              exp(N(0, between_cv)) from the calibrated noise floor
 *              (or, uncalibrated, the within-process CV as a stand-in)
 *   se         standard deviation of log(ratio) over the bootstrap
 *   p_mwu      Mann–Whitney U, normal approximation with tie correction,
 *              two-sided, samples treated as independent (for reference:
 *              it ignores the process effect)
 *   hl         Hodges–Lehmann shift: median of all B_j - A_i
 *   mde        the slowdown the detect gate catches with 95 % power
 *
 * Nothing here allocates behind the caller's back except where said.
 */

#include <stddef.h>
#include <stdint.h>

/* One side: nproc processes, process i has len[i] samples x[i][...]. */
struct cmp_side {
	size_t nproc;
	size_t *len;
	double **x;
	int64_t *run_id;
};

/* Adds a process (the samples are copied). */
void cmp_side_add(struct cmp_side *s, int64_t run_id, const double *x,
		  size_t n);
void cmp_side_release(struct cmp_side *s);
size_t cmp_side_samples(const struct cmp_side *s);

struct cmp_opts {
	uint64_t seed;        /* bootstrap PRNG seed */
	int boot;             /* bootstrap iterations (default 2000) */
	double between_cv;    /* calibrated process effect; < 0: none */
};
#define CMP_OPTS_INIT { 1, 2000, -1 }

enum cmp_noise_source {
	NOISE_PAIRED,      /* the same processes on both sides */
	NOISE_OBSERVED,    /* between-process spread of K >= 2 processes */
	NOISE_CALIBRATED,  /* from `shimbench calibrate` */
	NOISE_ASSUMED,     /* uncalibrated K = 1: within-CV as stand-in */
};
const char *cmp_noise_name(enum cmp_noise_source s);

struct cmp_result {
	size_t na, nb;          /* samples */
	size_t ka, kb;          /* processes */
	double med_a, med_b;
	double ratio, ci_lo, ci_hi;
	double se;              /* of log(ratio) */
	double p_mwu;
	double hl, hl_rel;      /* shift in t/s and relative to med_a */
	double within_cv;       /* pooled within-process CV, both sides */
	double between_cv;      /* process effect used */
	enum cmp_noise_source noise;
};

/*
 * Compares b against a. Returns 0, or -1 after error() when a side has
 * no samples or a non-positive median.
 */
int cmp_compute(const struct cmp_side *a, const struct cmp_side *b,
		const struct cmp_opts *o, struct cmp_result *r);

/* Building blocks, exposed for tests. */
double cmp_mwu_p(const double *a, size_t na, const double *b, size_t nb);
double cmp_hl_shift(const double *a, size_t na, const double *b, size_t nb);
/* Pooled within-process CV and the CV of the process medians (log sd);
 * between is corrected for the within part and is -1 with one process. */
void cmp_side_cv(const struct cmp_side *s, double *within, double *between);
double cmp_norm_cdf(double z);
double cmp_norm_quantile(double p);

/* The verdict of `compare`: CI above 1 faster, below 1 slower, inside
 * [1-thr, 1/(1-thr)] same, otherwise inconclusive. */
const char *cmp_verdict(const struct cmp_result *r, double threshold);

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
};
void gate_decide(const struct cmp_result *r, double threshold, double alpha,
		 enum gate_mode mode, struct gate_decision *d);
const char *gate_verdict_name(enum gate_verdict v);

/* A small seeded PRNG (xoshiro256**), for the bootstrap and simulations. */
struct cmp_rng { uint64_t s[4]; };
void cmp_rng_seed(struct cmp_rng *g, uint64_t seed);
uint64_t cmp_rng_next(struct cmp_rng *g);
size_t cmp_rng_below(struct cmp_rng *g, size_t n);
double cmp_rng_normal(struct cmp_rng *g);

#endif

/*
 * Workloads: store rows of a baseline and a candidate selection paired
 * by (model, test), and also by (target, variant) when both selections
 * hold the same several variants (a session against itself). Only rows
 * of runs with status "ok" count; each run is one process.
 */
struct store_result;
struct cmp_workload {
	char *target, *variant, *model, *model_label, *test;
	char *name;                  /* "model test" or "variant: model test" */
	char *identity_a, *identity_b;
	char *os_build_a, *os_build_b;
	int64_t session_a, session_b;
	struct cmp_side a, b;
};
/*
 * Fills *out with the workloads present on both sides (*n of them) and
 * counts in *only_a / *only_b those present on one side only. Returns 0,
 * or -1 after error() when a selection mixes variants that cannot be
 * paired. Free with cmp_workloads_free().
 */
int cmp_match(const struct store_result *ra, size_t na,
	      const struct store_result *rb, size_t nb,
	      struct cmp_workload **out, size_t *n,
	      size_t *only_a, size_t *only_b);
void cmp_workloads_free(struct cmp_workload *w, size_t n);

struct store;
/*
 * The calibrated process effect (between-process CV) for a workload:
 * the candidate's fingerprint identity first, then the baseline's; -1
 * when neither was calibrated.
 */
double cmp_calibrated(struct store *s, const struct cmp_workload *w);
/* Parses a selection and loads its rows; -1 after error(). */
int cmp_load(struct store *s, const char *selection, struct store_result **rows,
	     size_t *n);
