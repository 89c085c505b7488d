/*
 * Driver for bench-compare.sh: times the statistics of one `compare` /
 * `gate` workload on synthetic sides, through the project's library.
 *
 *   bench-compare compare K R CAL [SAMPLES_FILE]
 *       K processes of R samples per side (baseline ~100 t/s, candidate
 *       3 % slower, 2 % process effect, 1 % within-process noise, with
 *       ties from rounding to 3 decimals), the default 2000 bootstrap
 *       draws, the gate decision; prints seconds, peak RSS and results.
 *       CAL: a calibrated process effect (between-process CV, e.g.
 *       0.05), or -1 for none.
 *       With SAMPLES_FILE, also writes all 2 K R samples there, one per
 *       line (the input of the `sort -g` anchor).
 *   bench-compare qsort N
 *       the anchor in process: qsort of N seeded doubles.
 *   bench-compare history N
 *       change points of one series of N session medians (a 10 % step
 *       at N/2 and another at 3N/4), with history's settings.
 *   bench-compare mwu NA NB SHIFT
 *       the Mann-Whitney p of NA against NB samples (normal, sd 1, the
 *       second shifted by SHIFT, rounded to 0.1: ties), exact or not.
 *
 * Output: one line of key=value pairs.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis/changepoint.h"
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/stats.h"
#include "base/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* User + system CPU seconds of the process so far (every thread). */
static double
cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static long
peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;     /* KiB on Linux */
}

static void
make_side(struct cmp_side *s, struct rng *g, long k, long r, double m,
	  int64_t id0, FILE *out)
{
	double *x = malloc((size_t)r * sizeof(double));
	long i, j;

	for (i = 0; i < k; i++) {
		double p = m * exp(0.02 * rng_normal(g));

		for (j = 0; j < r; j++) {
			x[j] = round(p * (1 + 0.01 * rng_normal(g)) * 1000) / 1000;
			if (out)
				fprintf(out, "%.3f\n", x[j]);
		}
		cmp_side_add(s, id0 + i, x, (size_t)r);
	}
	free(x);
}

static int
bench_compare(long k, long r, double cal, const char *samples)
{
	struct cmp_side a = { 0 }, b = { 0 };
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_result res;
	struct gate_decision d;
	struct rng g;
	FILE *out = samples ? fopen(samples, "w") : NULL;
	double t0, t1, c0, c1;

	if (samples && !out) {
		perror(samples);
		return 1;
	}
	rng_seed(&g, 1);
	make_side(&a, &g, k, r, 100, 1, out);
	make_side(&b, &g, k, r, 97, 1000000, out);
	if (out)
		fclose(out);
	o.between_cv = cal;
	t0 = now();
	c0 = cpu_seconds();
	if (cmp_compute(&a, &b, &o, &res) < 0)
		return 1;
	gate_decide(&res, 0.05, 0.005, GATE_DETECT, &d);
	t1 = now();
	c1 = cpu_seconds();
	printf("job=compare processes=%ld per_process=%ld samples_per_side=%ld "
	       "calibrated=%g seconds=%.3f cpu=%.3f peak_rss_kb=%ld "
	       "ratio=%.4f ci=%.4f-%.4f p_mwu=%.3g hl=%.3f noise=%s "
	       "verdict=%s\n", k, r, k * r, cal, t1 - t0, c1 - c0,
	       peak_rss_kb(), res.ratio, res.ci_lo,
	       res.ci_hi, res.p_mwu, res.hl, cmp_noise_name(res.noise),
	       gate_verdict_name(d.verdict));
	cmp_side_release(&a);
	cmp_side_release(&b);
	return 0;
}

static int
bench_qsort(long n)
{
	double *x = malloc((size_t)n * sizeof(double)), t0, t1;
	struct rng g;
	long i;

	rng_seed(&g, 1);
	for (i = 0; i < n; i++)
		x[i] = 100 * (1 + 0.01 * rng_normal(&g));
	t0 = now();
	stats_sort(x, (size_t)n);
	t1 = now();
	printf("job=qsort n=%ld seconds=%.4f\n", n, t1 - t0);
	free(x);
	return 0;
}

static int
bench_history(long n)
{
	/* history's test: sessions of 3 processes of 10 samples */
	size_t k = 3, r = 10, nc = 0, i, j;
	double *x = malloc((size_t)n * k * r * sizeof(double)), t0, t1;
	size_t *plen = malloc((size_t)n * k * sizeof(size_t));
	struct cp_session *ss = calloc((size_t)n, sizeof(*ss));
	struct cp_change *c = NULL;
	struct rng g;

	rng_seed(&g, 1);
	for (i = 0; i < (size_t)n; i++) {
		double level = i < (size_t)n / 2 ? 100 :
			       i < (size_t)n * 3 / 4 ? 90 : 99;

		for (j = 0; j < k * r; j++)
			x[i * k * r + j] = level * (1 + 0.01 * rng_normal(&g));
		for (j = 0; j < k; j++)
			plen[i * k + j] = r;
		ss[i].x = x + i * k * r;
		ss[i].n = k * r;
		ss[i].plen = plen + i * k;
		ss[i].nproc = k;
	}
	t0 = now();
	cp_sessions(ss, (size_t)n, 0.05, &c, &nc);
	t1 = now();
	free(ss);
	free(plen);
	printf("job=history sessions=%ld seconds=%.3f peak_rss_kb=%ld "
	       "changes=%zu", n, t1 - t0, peak_rss_kb(), nc);
	for (i = 0; i < nc; i++)
		printf("%s%zu(p %.3g)", i ? "," : " at=", c[i].index, c[i].p);
	printf("\n");
	free(c);
	free(x);
	return 0;
}

static int
bench_mwu(long na, long nb, double shift)
{
	double *a = malloc((size_t)na * sizeof(double));
	double *b = malloc((size_t)nb * sizeof(double)), t0, t1, p;
	struct rng g;
	int exact;
	long i;

	rng_seed(&g, 7);
	for (i = 0; i < na; i++)
		a[i] = round(10 * rng_normal(&g)) / 10;
	for (i = 0; i < nb; i++)
		b[i] = round(10 * (rng_normal(&g) + shift)) / 10;
	t0 = now();
	p = cmp_mwu_p_ex(a, (size_t)na, b, (size_t)nb, &exact);
	t1 = now();
	printf("job=mwu na=%ld nb=%ld seconds=%.4f p=%.3g exact=%d "
	       "peak_rss_kb=%ld\n", na, nb, t1 - t0, p, exact, peak_rss_kb());
	free(a);
	free(b);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "compare"))
		return bench_compare(atol(argv[2]), atol(argv[3]), atof(argv[4]),
				     argc > 5 ? argv[5] : NULL);
	if (argc == 3 && !strcmp(argv[1], "qsort"))
		return bench_qsort(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "history"))
		return bench_history(atol(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "mwu"))
		return bench_mwu(atol(argv[2]), atol(argv[3]), atof(argv[4]));
	fprintf(stderr, "usage: bench-compare compare K R CAL [FILE] | qsort N | "
		"history N | mwu NA NB SHIFT\n");
	return 2;
}
