#ifndef ANALYSIS_COMPARE_H
#define ANALYSIS_COMPARE_H

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
 *   p_mwu      Mann–Whitney U, two-sided, samples treated as independent
 *              (for reference: it ignores the process effect): exact
 *              without ties and up to CMP_MWU_EXACT samples per side,
 *              otherwise the normal approximation with tie and
 *              continuity corrections; never below CMP_P_MIN
 *   hl         Hodges–Lehmann shift: median of all B_j - A_i (computed
 *              without forming the pairs)
 *   mde        the slowdown the detect gate catches with 95 % power
 *
 * Pure: no store, no output; the seeded PRNG is base/rng.h. The gate
 * decision built on these results is analysis/gate.h, the samples come
 * from analysis/workload.h. Nothing here allocates behind the caller's
 * back except where said.
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

/* Samples per side up to which the Mann–Whitney p is exact (no ties). */
#define CMP_MWU_EXACT 50
/*
 * The smallest p-value reported: a p below it (the normal tail
 * underflows near 1e-308) is given as CMP_P_MIN and printed "<1e-300".
 */
#define CMP_P_MIN 1e-300

/* Building blocks, exposed for tests. */
double cmp_mwu_p(const double *a, size_t na, const double *b, size_t nb);
double cmp_hl_shift(const double *a, size_t na, const double *b, size_t nb);
/* Pooled within-process CV and the CV of the process medians (log sd);
 * between is corrected for the within part and is -1 with one process. */
void cmp_side_cv(const struct cmp_side *s, double *within, double *between);
/*
 * Runs n successive bootstrap draws of a side's median (process effect
 * `effect`, PRNG seeded with seed) and counts those whose median differs
 * from the median of the same resample gathered and sorted: the fast
 * paths must give 0.
 */
int cmp_boot_check(const struct cmp_side *s, double effect, uint64_t seed,
		   int n);
double cmp_norm_cdf(double z);
double cmp_norm_quantile(double p);

/* The verdict of `compare`: CI above 1 faster, below 1 slower, inside
 * [1-thr, 1/(1-thr)] same, otherwise inconclusive. */
const char *cmp_verdict(const struct cmp_result *r, double threshold);

#endif
