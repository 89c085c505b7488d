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
 *   se         standard error of log(ratio): a seeded hierarchical
 *              bootstrap (processes resampled with replacement, then
 *              samples within each drawn process), each side's part
 *              corrected for what resampling few processes misses (a
 *              side of K observed processes: times K / (K - 1))
 *   df         the degrees of freedom of se (added over
 *              the noise estimates it stands on): K - 1 for a side's own
 *              spread of K processes, the calibration's for a calibrated
 *              floor (INFINITY when unknown), INFINITY for the assumed
 *              floor; bounds and MDE use Student's t with df
 *   ci95       the bootstrap's 95 % percentile interval, widened by the
 *              same correction and by t(df) / z where df is finite
 *   noise      where the process effect comes from (cmp_noise_source):
 *              a side with a single process cannot show its own, so it
 *              takes the calibrated floor, else the other side's
 *              observed spread, else the assumed floor CMP_ASSUMED_BETWEEN
 *              (never less than its within-process CV): one process per
 *              side and no calibration never gives tight bounds
 *              a side of more than CMP_BOOT_KMAX processes is resampled
 *              m out of n: CMP_BOOT_KMAX processes per draw, the draw's
 *              deviation of its log median scaled by sqrt(m / K)
 *   p_mwu      Mann–Whitney U, two-sided, samples treated as independent
 *              (for reference: it ignores the process effect): exact,
 *              ties included (the permutation distribution of the
 *              mid-rank sum), when that takes at most CMP_MWU_WORK
 *              steps; otherwise the normal approximation with tie and
 *              continuity corrections and p_exact 0; never below
 *              CMP_P_MIN
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
/* All samples of a side in one array, process after process (caller
 * frees); *n gets their count. */
double *cmp_side_pool(const struct cmp_side *s, size_t *n);

struct cmp_opts {
	uint64_t seed;        /* bootstrap PRNG seed */
	int boot;             /* bootstrap iterations (default 2000) */
	double between_cv;    /* calibrated process effect; < 0: none */
	double between_df;    /* its degrees of freedom (the calibration's
				 processes - 1); <= 0: unknown, taken as
				 exact */
	int no_mwu;           /* 1: leave p_mwu NAN (simulations) */
};
#define CMP_OPTS_INIT { 1, 2000, -1, 0, 0 }

/*
 * The process effect (between-process CV) assumed for a side of one
 * process when neither a calibration nor the other side can show it:
 * twice the largest measured so far (4.98 %, bench/BENCHMARKS.md "Noise
 * calibration"), so that one process per side without a noise floor
 * flags only gross slowdowns (about 30 % and more) and otherwise says
 * inconclusive.
 */
#define CMP_ASSUMED_BETWEEN 0.10

enum cmp_noise_source {
	NOISE_PAIRED,      /* the same processes on both sides */
	NOISE_OBSERVED,    /* between-process spread of K >= 2 processes
			      (a one-process side takes the other side's) */
	NOISE_CALIBRATED,  /* from `shimbench calibrate` */
	NOISE_ASSUMED,     /* one process a side, uncalibrated: the
			      conservative CMP_ASSUMED_BETWEEN */
};
const char *cmp_noise_name(enum cmp_noise_source s);

struct cmp_result {
	size_t na, nb;          /* samples */
	size_t ka, kb;          /* processes */
	double med_a, med_b;
	double ratio, ci_lo, ci_hi;
	double se;              /* of log(ratio) */
	double df;              /* of se; INFINITY: normal */
	double p_mwu;
	int p_exact;            /* 1: p_mwu is exact */
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

/* Processes drawn per bootstrap resample at most (m out of n beyond). */
#define CMP_BOOT_KMAX 250

/*
 * The most steps (tie groups x smaller side x U values of the tail) the
 * exact Mann–Whitney p may take, about 0.1 s: every split of 100 + 100
 * samples, 60 + 8 and far beyond; 1,000 a side only far in the tail.
 */
#define CMP_MWU_WORK 2e8
/*
 * The smallest p-value reported: a p below it (the normal tail
 * underflows near 1e-308) is given as CMP_P_MIN and printed "<1e-300".
 */
#define CMP_P_MIN 1e-300

/* Building blocks, exposed for tests. The p of cmp_mwu_p is exact when
 * *exact (NULL allowed) is set to 1. */
double cmp_mwu_p(const double *a, size_t na, const double *b, size_t nb);
double cmp_mwu_p_ex(const double *a, size_t na, const double *b, size_t nb,
		    int *exact);
double cmp_hl_shift(const double *a, size_t na, const double *b, size_t nb);
/* The same two of sorted a and b (no NaN for the p; NAN for the shift
 * when a value is not finite): what cmp_compute() calls on its sorted
 * pools, so that it sorts each side once. */
double cmp_mwu_p_sorted(const double *a, size_t na, const double *b,
			size_t nb, int *exact);
double cmp_hl_shift_sorted(const double *a, size_t na, const double *b,
			   size_t nb);
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
 * [1-thr, 1/(1-thr)] same, otherwise inconclusive; inconclusive too when
 * a side has fewer than CMP_MIN_SAMPLES samples, or when the CI has no
 * width although the sides are not the same processes (nothing shows
 * the noise), or is not a finite number. */
#define CMP_MIN_SAMPLES 2
const char *cmp_verdict(const struct cmp_result *r, double threshold);

#endif
