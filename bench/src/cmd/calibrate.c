#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/workload.h"
#include "base/rng.h"
#include "analysis/render.h"
#include "analysis/stats.h"
#include "evidence/store.h"
#include "base/util.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char usage_calibrate[] =
	"usage: shimbench calibrate --from SEL [--store] [--format md|csv|json]\n"
	"                           [--trials N] [--power SEL] [--threshold P]\n"
	"                           [--seed N] [--simulate P]\n"
	"       shimbench calibrate [--trials N] [--format F] PLAN\n"
	"\n"
	"With PLAN: runs it (`shimbench run`: its \"processes\" should be 3\n"
	"or more, one configuration per variant), then calibrates from that\n"
	"session and stores the noise floor (as --from label=... --store).\n"
	"\n"
	"The noise floor of a target from A/A processes: stored runs of one\n"
	"configuration repeated as separate llama-bench processes (run the\n"
	"plan with \"processes\": K, or import K runs). Per fingerprint\n"
	"identity and workload: the pooled within-process CV, the between-\n"
	"process CV (the spread of the process medians less their within-\n"
	"process part) and the minimum detectable effect of the default gate\n"
	"at 95 % power for K = 1, 3 and 5 processes of r samples per side.\n"
	"--store writes the floor to the store's noise table, where `gate`\n"
	"and `compare` use it for that fingerprint.\n"
	"\n"
	"  --trials N     also measure the A/A false-alarm rate of\n"
	"                 `gate --mode detect` (default settings): N trials\n"
	"                 per K, each two disjoint random sets of K processes\n"
	"  --power SEL    also measure the detection rate of the real\n"
	"                 slowdown in SEL (same workloads, e.g. a larger\n"
	"                 model): N trials per K, baseline K processes from\n"
	"                 --from, candidate K processes from SEL\n"
	"  --threshold P  the gate threshold for the trials (default 5)\n"
	"  --seed N       trial seed (default 1)\n"
	"  --simulate P   instead: the detection rate of a P % slowdown\n"
	"                 and the A/A false-alarm rate of `gate --mode\n"
	"                 detect` on resampled copies of the stored samples\n"
	"                 (works with one process per variant, e.g. the\n"
	"                 published evidence); --trials defaults to 1000\n";

struct group {
	char *identity, *target, *model, *test;
	int64_t session;
	struct cmp_side side;
};

/* K distinct processes of src, drawn at random, into dst (copies). */
static void
draw(const struct cmp_side *src, size_t k, struct rng *g, int *used,
     struct cmp_side *dst)
{
	size_t i;

	for (i = 0; i < k; i++) {
		size_t p;

		do
			p = rng_below(g, src->nproc);
		while (used[p]);
		used[p] = 1;
		cmp_side_add(dst, src->run_id[p], src->x[p], src->len[p]);
	}
}

static double
model_mde(double between, double within, double r, int k, double thr,
	  double alpha)
{
	double se = sqrt(2 * (between * between + stats_median_var(within, r)) / k);
	double z = cmp_norm_quantile(1 - alpha), zp = cmp_norm_quantile(0.95);

	return 1 - exp(-(fmax(z * se, -log(1 - thr)) + zp * se));
}

static const char *const sim_cols[] = {
	"target", "model", "test", "processes#", "within_cv_pct#",
	"slowdown_pct#", "threshold_pct#", "detected", "aa_false_alarms",
};

/*
 * One simulated process: the samples of a random source process,
 * resampled with replacement, times factor.
 */
static void
sim_process(const struct cmp_side *src, struct rng *g, double factor,
	    struct cmp_side *dst, int64_t id)
{
	size_t p = rng_below(g, src->nproc), n = src->len[p], i;
	double *x = xcalloc(n, sizeof(double));

	for (i = 0; i < n; i++)
		x[i] = src->x[p][rng_below(g, n)] * factor;
	cmp_side_add(dst, id, x, n);
	free(x);
}

/* Detections out of trials of gate --mode detect on resampled sides. */
static long
sim_trials(const struct cmp_side *src, int k, double slowdown, long trials,
	   double threshold, double alpha, struct rng *g)
{
	long tr, hits = 0;
	int i;

	for (tr = 0; tr < trials; tr++) {
		struct cmp_side a = { 0 }, b = { 0 };
		struct cmp_opts o = CMP_OPTS_INIT;
		struct cmp_result r;
		struct gate_decision d;

		for (i = 0; i < k; i++) {
			sim_process(src, g, 1.0, &a, i + 1);
			sim_process(src, g, 1.0 - slowdown, &b, k + i + 1);
		}
		o.seed = rng_next(g);
		o.boot = 500;
		if (cmp_compute(&a, &b, &o, &r) == 0) {
			gate_decide(&r, threshold, alpha, GATE_DETECT, &d);
			hits += d.verdict == GATE_REGRESSION;
		}
		cmp_side_release(&a);
		cmp_side_release(&b);
	}
	return hits;
}

/*
 * --simulate P: the power of the gate to detect a P slowdown, and its
 * A/A false-alarm rate, on resampled copies of the stored samples (for
 * evidence with a single process per variant, such as the published
 * runs). Every simulated process resamples one stored process; there is
 * no process effect beyond what the stored processes show.
 */
static void
simulate_row(struct table *t, const struct group *gr, double slowdown,
	     long trials, double threshold, double alpha, uint64_t seed)
{
	static const int ks[] = { 1, 3, 5 };
	struct buf det = BUF_INIT, aa = BUF_INIT;
	char cell[5][64];
	const char *row[ARRAY_SIZE(sim_cols)];
	struct rng g;
	double w, b;
	size_t q;

	cmp_side_cv(&gr->side, &w, &b);
	rng_seed(&g, seed);
	for (q = 0; q < ARRAY_SIZE(ks); q++) {
		long hit = sim_trials(&gr->side, ks[q], slowdown, trials,
				      threshold, alpha, &g);
		long fa = sim_trials(&gr->side, ks[q], 0, trials, threshold,
				     alpha, &g);
		buf_addf(&det, "%sK=%d: %ld/%ld", q ? "; " : "", ks[q], hit,
			 trials);
		buf_addf(&aa, "%sK=%d: %ld/%ld", q ? "; " : "", ks[q], fa,
			 trials);
	}
	snprintf(cell[0], 64, "%zu", gr->side.nproc);
	fmt_num(cell[1], 64, w * 100, 2);
	fmt_num(cell[2], 64, slowdown * 100, 2);
	fmt_num(cell[3], 64, threshold * 100, 2);
	row[0] = gr->target;
	row[1] = gr->model;
	row[2] = gr->test;
	row[3] = cell[0];
	row[4] = cell[1];
	row[5] = cell[2];
	row[6] = cell[3];
	row[7] = det.buf;
	row[8] = aa.buf;
	table_add_row(t, row);
	buf_release(&det);
	buf_release(&aa);
}

static int
cmd_calibrate_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'F' },
		{ "store", no_argument, NULL, 'W' },
		{ "format", required_argument, NULL, 'f' },
		{ "trials", required_argument, NULL, 'T' },
		{ "power", required_argument, NULL, 'P' },
		{ "threshold", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "simulate", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const cols[] = {
		"target", "model", "test", "processes#", "samples#",
		"within_cv_pct#", "between_cv_pct#", "mde_k1_pct#",
		"mde_k3_pct#", "mde_k5_pct#", "aa_trials", "aa_false_alarms",
		"power_effect_pct#", "power_detected",
	};
	const char *from = NULL, *power = NULL, *format = "md";
	int store_it = 0, c, ret = EXIT_OK;
	long trials = 0, seed = 1;
	double threshold = 0.05, alpha = 0.005, simulate = -1;
	struct store *s = NULL;
	struct store_result *rows = NULL, *prow = NULL;
	struct group *gr = NULL;
	size_t nrows = 0, np = 0, ng = 0, i, j;
	struct table t;
	struct buf out = BUF_INIT;

	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'F': from = optarg; break;
		case 'W': store_it = 1; break;
		case 'f': format = optarg; break;
		case 'P': power = optarg; break;
		case 'T':
			if (parse_long(optarg, &trials) < 0 || trials < 0 || trials > 1000000)
				return cmd_usage_error_name("calibrate", "bad --trials '%s'", optarg);
			break;
		case 't':
			if (parse_double(optarg, &threshold) < 0 || threshold <= 0 ||
			    threshold >= 100)
				return cmd_usage_error_name("calibrate", "bad --threshold '%s'",
						       optarg);
			threshold /= 100;
			break;
		case 'S':
			if (parse_long(optarg, &seed) < 0 || seed < 0)
				return cmd_usage_error_name("calibrate", "bad --seed '%s'", optarg);
			break;
		case 'M':
			if (parse_double(optarg, &simulate) < 0 || simulate < 0 ||
			    simulate >= 100)
				return cmd_usage_error_name("calibrate", "bad --simulate '%s'",
						       optarg);
			simulate /= 100;
			break;
		case 'h': return cmd_help(usage_calibrate);
		default:
			return cmd_usage_error_name("calibrate", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc) {
		/* calibrate PLAN: run the A/A processes, then calibrate them. */
		char stamp[21], *label, *sel;
		char *rargv[9], ntrials[32];
		int rc;

		if (from || optind + 1 != argc)
			return cmd_usage_error_name("calibrate", "give either one PLAN "
					       "or --from SEL");
		utc_now(stamp);
		label = xstrfmt("calibrate-%s-%ld", stamp, (long)getpid());
		rargv[0] = "run";
		rargv[1] = "--label";
		rargv[2] = label;
		rargv[3] = argv[optind];
		rargv[4] = NULL;
		cmd_getopt_reset();
		ctx->cmd = &cmd_run;
		rc = cmd_run.fn(4, rargv, ctx);
		ctx->cmd = &cmd_calibrate;
		if (rc != EXIT_OK) {
			error("the calibration run failed (exit %d); nothing "
			      "calibrated", rc);
			free(label);
			return rc;
		}
		sel = xstrfmt("label=%s", label);
		free(label);
		snprintf(ntrials, sizeof(ntrials), "%ld", trials);
		rargv[0] = "calibrate";
		rargv[1] = "--from";
		rargv[2] = sel;
		rargv[3] = "--store";
		rargv[4] = "--trials";
		rargv[5] = ntrials;
		rargv[6] = "--format";
		rargv[7] = (char *)format;
		rargv[8] = NULL;
		cmd_getopt_reset();
		rc = cmd_calibrate_main(8, rargv, ctx);
		free(sel);
		return rc;
	}
	if (!from)
		return cmd_usage_error_name("calibrate", "--from SEL is required");
	if (simulate >= 0 && trials <= 0)
		trials = 1000;
	if (strcmp(format, "md") && strcmp(format, "csv") && strcmp(format, "json"))
		return cmd_usage_error_name("calibrate", "unknown format '%s'", format);
	if (cmd_open_existing_store(ctx, &s) < 0 || workload_load(s, from, &rows, &nrows) < 0 ||
	    (power && workload_load(s, power, &prow, &np) < 0)) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	for (i = 0; i < nrows; i++) {
		struct store_result *r = &rows[i];
		struct cmp_side *sd;
		size_t p;

		if (strcmp(r->run_status, "ok") || !r->n)
			continue;
		for (j = 0; j < ng; j++)
			if (!strcmp(gr[j].identity, r->identity) &&
			    !strcmp(gr[j].target, r->target) &&
			    !strcmp(gr[j].model, r->model) && !strcmp(gr[j].test, r->test))
				break;
		if (j == ng) {
			gr = xrealloc(gr, (ng + 1) * sizeof(*gr));
			memset(&gr[ng], 0, sizeof(*gr));
			gr[ng].identity = xstrdup(r->identity);
			gr[ng].target = xstrdup(r->target);
			gr[ng].model = xstrdup(r->model);
			gr[ng].test = xstrdup(r->test);
			gr[ng].session = r->session_id;
			ng++;
		}
		sd = &gr[j].side;
		for (p = 0; p < sd->nproc && sd->run_id[p] != r->run_id; p++)
			;
		if (p == sd->nproc)
			cmp_side_add(sd, r->run_id, r->ts, r->n);
	}
	if (!ng) {
		error("nothing matches '%s'", from);
		ret = EXIT_ENV;
		goto cleanup;
	}
	if (simulate >= 0)
		table_init(&t, ARRAY_SIZE(sim_cols), sim_cols);
	else
		table_init(&t, ARRAY_SIZE(cols), cols);
	for (j = 0; j < ng; j++) {
		struct cmp_side *sd = &gr[j].side;
		size_t ns = cmp_side_samples(sd);
		double w, b, rbar = (double)ns / (double)sd->nproc;
		double m1, m3, m5;
		char cell[ARRAY_SIZE(cols)][64], aa[200] = "", pw[200] = "", eff[32] = "";
		const char *row[ARRAY_SIZE(cols)];
		size_t k;

		if (simulate >= 0) {
			simulate_row(&t, &gr[j], simulate, trials, threshold, alpha,
				     (uint64_t)seed);
			continue;
		}
		if (sd->nproc < 3) {
			error("'%s %s': %zu processes; calibration needs at least 3",
			      gr[j].model, gr[j].test, sd->nproc);
			ret = EXIT_INCONCLUSIVE;
			continue;
		}
		cmp_side_cv(sd, &w, &b);
		m1 = model_mde(b, w, rbar, 1, threshold, alpha);
		m3 = model_mde(b, w, rbar, 3, threshold, alpha);
		m5 = model_mde(b, w, rbar, 5, threshold, alpha);
		if (trials > 0) {
			static const int ks[] = { 1, 3, 5 };
			struct rng g;
			struct buf ab = BUF_INIT;
			size_t q;

			rng_seed(&g, (uint64_t)seed);
			for (q = 0; q < ARRAY_SIZE(ks); q++) {
				long tr, alarms = 0;
				int *used;

				if ((size_t)(2 * ks[q]) > sd->nproc)
					continue;
				used = xcalloc(sd->nproc, sizeof(int));
				for (tr = 0; tr < trials; tr++) {
					struct cmp_side a = { 0 }, bb = { 0 };
					struct cmp_opts o = CMP_OPTS_INIT;
					struct cmp_result r;
					struct gate_decision d;

					memset(used, 0, sd->nproc * sizeof(int));
					draw(sd, (size_t)ks[q], &g, used, &a);
					draw(sd, (size_t)ks[q], &g, used, &bb);
					o.seed = rng_next(&g);
					o.boot = 500;
					o.between_cv = b;
					if (cmp_compute(&a, &bb, &o, &r) == 0) {
						gate_decide(&r, threshold, alpha, GATE_DETECT, &d);
						alarms += d.verdict == GATE_REGRESSION;
					}
					cmp_side_release(&a);
					cmp_side_release(&bb);
				}
				free(used);
				buf_addf(&ab, "%sK=%d: %ld/%ld", ab.len ? "; " : "",
					 ks[q], alarms, trials);
			}
			snprintf(aa, sizeof(aa), "%s", ab.buf);
			buf_release(&ab);
		}
		if (power) {
			static const int ks[] = { 1, 3, 5 };
			struct cmp_side cand = { 0 };
			struct rng g;
			struct buf pb = BUF_INIT;
			size_t q;

			for (i = 0; i < np; i++)
				if (!strcmp(prow[i].run_status, "ok") && prow[i].n &&
				    !strcmp(prow[i].model, gr[j].model) &&
				    !strcmp(prow[i].test, gr[j].test))
					cmp_side_add(&cand, prow[i].run_id, prow[i].ts,
						     prow[i].n);
			if (cand.nproc) {
				struct cmp_opts o = CMP_OPTS_INIT;
				struct cmp_result all;

				o.between_cv = b;
				if (cmp_compute(sd, &cand, &o, &all) == 0)
					fmt_num(eff, sizeof(eff), (1 - all.ratio) * 100, 1);
			}
			rng_seed(&g, (uint64_t)seed + 1);
			for (q = 0; q < ARRAY_SIZE(ks) && trials > 0; q++) {
				long tr, hits = 0;
				int *ua, *ub;

				if ((size_t)ks[q] > sd->nproc || (size_t)ks[q] > cand.nproc)
					continue;
				ua = xcalloc(sd->nproc, sizeof(int));
				ub = xcalloc(cand.nproc, sizeof(int));
				for (tr = 0; tr < trials; tr++) {
					struct cmp_side a = { 0 }, bb = { 0 };
					struct cmp_opts o = CMP_OPTS_INIT;
					struct cmp_result r;
					struct gate_decision d;

					memset(ua, 0, sd->nproc * sizeof(int));
					memset(ub, 0, cand.nproc * sizeof(int));
					draw(sd, (size_t)ks[q], &g, ua, &a);
					draw(&cand, (size_t)ks[q], &g, ub, &bb);
					o.seed = rng_next(&g);
					o.boot = 500;
					o.between_cv = b;
					if (cmp_compute(&a, &bb, &o, &r) == 0) {
						gate_decide(&r, threshold, alpha, GATE_DETECT, &d);
						hits += d.verdict == GATE_REGRESSION;
					}
					cmp_side_release(&a);
					cmp_side_release(&bb);
				}
				free(ua);
				free(ub);
				buf_addf(&pb, "%sK=%d: %ld/%ld", pb.len ? "; " : "",
					 ks[q], hits, trials);
			}
			snprintf(pw, sizeof(pw), "%s", pb.buf);
			buf_release(&pb);
			cmp_side_release(&cand);
		}
		snprintf(cell[3], 64, "%zu", sd->nproc);
		snprintf(cell[4], 64, "%zu", ns);
		fmt_num(cell[5], 64, w * 100, 2);
		fmt_num(cell[6], 64, b * 100, 2);
		fmt_num(cell[7], 64, m1 * 100, 1);
		fmt_num(cell[8], 64, m3 * 100, 1);
		fmt_num(cell[9], 64, m5 * 100, 1);
		for (k = 0; k < ARRAY_SIZE(cols); k++)
			row[k] = cell[k];
		row[0] = gr[j].target;
		row[1] = gr[j].model;
		row[2] = gr[j].test;
		row[10] = "";
		row[11] = "";
		if (trials > 0) {
			row[10] = xstrfmt("%ld per K", trials);
			row[11] = aa;
		}
		row[12] = eff;
		row[13] = pw;
		table_add_row(&t, row);
		if (trials > 0)
			free((char *)row[10]);
		if (store_it) {
			struct noise_rec nr = { 0 };
			char *det = xstrfmt("{\"threshold\": %g, \"alpha\": %g, "
					    "\"mde_k3\": %g, \"mde_k5\": %g, "
					    "\"samples_per_process\": %g}",
					    threshold, alpha, m3, m5, rbar);

			nr.identity = gr[j].identity;
			nr.target = gr[j].target;
			nr.model = gr[j].model;
			nr.test = gr[j].test;
			nr.session_id = gr[j].session;
			nr.processes = (int)sd->nproc;
			nr.samples = (int)ns;
			nr.within_cv = w;
			nr.between_cv = b;
			nr.mde = m1;
			nr.details_json = det;
			if (store_noise_add(s, &nr) < 0)
				ret = EXIT_ENV;
			free(det);
		}
	}
	if (table_render(&t, format, &out) == 0)
		fwrite(out.buf, 1, out.len, stdout);
	table_release(&t);
	if (store_it && !ret && !ctx->quiet)
		fprintf(stderr, "stored the noise floor of %zu workloads\n", ng);
cleanup:
	for (j = 0; j < ng; j++) {
		free(gr[j].identity);
		free(gr[j].target);
		free(gr[j].model);
		free(gr[j].test);
		cmp_side_release(&gr[j].side);
	}
	free(gr);
	store_results_free(rows, nrows);
	store_results_free(prow, np);
	buf_release(&out);
	store_close(s);
	return ret;
}

LEGACY_COMMAND(calibrate, "noise floor of a target from A/A processes; false-alarm and power trials", cmd_calibrate_main, usage_calibrate);
