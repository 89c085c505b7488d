#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/gate.h"
#include "analysis/render.h"
#include "analysis/workload.h"
#include "evidence/store.h"
#include "base/util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct calibrate_opts {
	const char *from, *power, *format;
	int store;
	long trials, seed;
	double threshold, simulate;
};

#define CO struct calibrate_opts
static const struct opt calibrate_opts[] = {
	OPT_S("from", 0, CO, from, "SEL",
	      "the stored A/A processes to calibrate from (required without "
	      "PLAN)"),
	OPT_F("store", 0, CO, store,
	      "write the noise floor to the store's noise table, where `gate` "
	      "and `compare` use it for that fingerprint"),
	OPT_C("format", 'f', CO, format, "F", "md|csv|json",
	      "md (default), csv or json"),
	OPT_I("trials", 0, CO, trials, "N", 0, 1000000,
	      "also measure the A/A false-alarm rate of `gate --mode detect` "
	      "(default settings): N trials per K, each two disjoint random "
	      "sets of K processes"),
	OPT_S("power", 0, CO, power, "SEL",
	      "also measure the detection rate of the real slowdown in SEL "
	      "(same workloads, e.g. a larger model): N trials per K, baseline "
	      "K processes from --from, candidate K processes from SEL"),
	OPT_D("threshold", 0, CO, threshold, "P", 0, 100,
	      "the gate threshold for the trials (default 5; 0 < P < 100)"),
	OPT_I("seed", 0, CO, seed, "N", 0, 9223372036854775807.0,
	      "trial seed (default 1)"),
	OPT_D("simulate", 0, CO, simulate, "P", 0, 100,
	      "instead: the detection rate of a P % slowdown (0 <= P < 100) "
	      "and the A/A false-alarm rate of `gate --mode detect` on "
	      "resampled copies of the stored samples (works with one process "
	      "per variant, e.g. the published evidence); --trials defaults "
	      "to 1000"),
	OPT_END
};

static int calibrate_main(int argc, char **argv, struct cmd_ctx *ctx);

const struct command cmd_calibrate = {
	.name = "calibrate",
	.fn = calibrate_main,
	.summary = "noise floor of a target from A/A processes; false-alarm "
		"and power trials",
	.synopsis = "--from SEL [--store] [--format md|csv|json]\n"
		"                           [--trials N] [--power SEL] "
		"[--threshold P]\n"
		"                           [--seed N] [--simulate P]\n"
		"       shimbench calibrate [--trials N] [--format F] PLAN",
	.description =
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
		"and `compare` use it for that fingerprint.\n",
	.opts = calibrate_opts,
	.epilogue = "exit: 0 calibrated, 2 usage, 3 no store or nothing matches\n"
		"(or the PLAN's run failed: its exit code), 4 a workload has fewer\n"
		"than 3 processes\n",
	.max_args = 1,
};

static const char *const calib_cols[] = {
	"target", "model", "test", "processes#", "samples#",
	"within_cv_pct#", "between_cv_pct#", "mde_k1_pct#",
	"mde_k3_pct#", "mde_k5_pct#", "aa_trials", "aa_false_alarms",
	"power_effect_pct#", "power_detected",
};

static const char *const sim_cols[] = {
	"target", "model", "test", "processes#", "within_cv_pct#",
	"slowdown_pct#", "threshold_pct#", "detected", "aa_false_alarms",
};

/*
 * Runs the plan at plan_path as one session labelled label (run_session()
 * through the run engine's command helper); its exit code.
 */
static int
calibrate_run_plan(struct cmd_ctx *ctx, const char *plan_path,
		   const char *label)
{
	struct cmd_run_args a = { .label = label, .seed = -1 };

	return cmd_run_plan(ctx, plan_path, &a);
}

/* "K=1: 3/50; K=3: 0/50" of the counts that ran (>= 0). */
static void
counts(struct buf *b, const long *c, long trials)
{
	size_t q;

	for (q = 0; q < GATE_CALIB_KS; q++)
		if (c[q] >= 0)
			buf_addf(b, "%sK=%d: %ld/%ld", b->len ? "; " : "",
				 gate_calib_ks[q], c[q], trials);
}

static void
calib_row(struct table *t, const struct workload_group *g,
	  const struct gate_calib *c, long trials)
{
	char cell[ARRAY_SIZE(calib_cols)][64], eff[32] = "", ntr[64] = "";
	const char *row[ARRAY_SIZE(calib_cols)];
	struct buf aa = BUF_INIT, pw = BUF_INIT;
	size_t k;

	if (trials > 0) {
		snprintf(ntr, sizeof(ntr), "%ld per K", trials);
		counts(&aa, c->aa, trials);
	}
	counts(&pw, c->power, trials);
	if (isfinite(c->power_effect))
		fmt_num(eff, sizeof(eff), c->power_effect * 100, 1);
	snprintf(cell[3], 64, "%zu", c->processes);
	snprintf(cell[4], 64, "%zu", c->samples);
	fmt_num(cell[5], 64, c->within_cv * 100, 2);
	fmt_num(cell[6], 64, c->between_cv * 100, 2);
	for (k = 0; k < GATE_CALIB_KS; k++)
		fmt_num(cell[7 + k], 64, c->mde[k] * 100, 1);
	for (k = 0; k < ARRAY_SIZE(calib_cols); k++)
		row[k] = cell[k];
	row[0] = g->target;
	row[1] = g->model;
	row[2] = g->test;
	row[10] = ntr;
	row[11] = aa.buf;
	row[12] = eff;
	row[13] = pw.buf;
	table_add_row(t, row);
	buf_release(&aa);
	buf_release(&pw);
}

static void
sim_row(struct table *t, const struct workload_group *g,
	const struct gate_calib *c, double slowdown, long trials,
	double threshold)
{
	struct buf det = BUF_INIT, aa = BUF_INIT;
	char cell[4][64];
	const char *row[ARRAY_SIZE(sim_cols)];

	counts(&det, c->sim_hit, trials);
	counts(&aa, c->sim_aa, trials);
	snprintf(cell[0], 64, "%zu", c->processes);
	fmt_num(cell[1], 64, c->within_cv * 100, 2);
	fmt_num(cell[2], 64, slowdown * 100, 2);
	fmt_num(cell[3], 64, threshold * 100, 2);
	row[0] = g->target;
	row[1] = g->model;
	row[2] = g->test;
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

/* calibrate --from: one library call, a table, the floors stored. */
static int
calibrate_from(struct cmd_ctx *ctx, const struct calibrate_opts *co)
{
	struct gate_calib_opts o = { co->trials, co->threshold / 100, 0.005,
				     (uint64_t)co->seed };
	struct gate_calibration cal = { 0 };
	struct store *s = NULL;
	struct table t;
	struct buf out = BUF_INIT;
	size_t j;
	int ret = EXIT_OK;

	if (co->simulate >= 0)
		table_init(&t, ARRAY_SIZE(sim_cols), sim_cols);
	else
		table_init(&t, ARRAY_SIZE(calib_cols), calib_cols);
	if (cmd_open_existing_store(ctx, &s) < 0 ||
	    gate_calibration_run(s, co->from, co->power, co->simulate >= 0 ?
				 co->simulate / 100 : -1, &o, &cal) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	for (j = 0; j < cal.n; j++) {
		if (!cal.ok[j]) {
			ret = EXIT_INCONCLUSIVE;
		} else if (co->simulate >= 0) {
			sim_row(&t, &cal.g[j], &cal.c[j], co->simulate / 100,
				o.trials, o.threshold);
		} else {
			calib_row(&t, &cal.g[j], &cal.c[j], o.trials);
			if (co->store && gate_store_floor(s, &cal.g[j], &cal.c[j],
							  &o) < 0)
				ret = EXIT_ENV;
		}
	}
	if (table_render(&t, co->format, &out) == 0)
		fwrite(out.buf, 1, out.len, stdout);
	if (co->store && !ret && !ctx->quiet)
		fprintf(stderr, "stored the noise floor of %zu workloads\n",
			cal.n);
cleanup:
	table_release(&t);
	gate_calibration_release(&cal);
	buf_release(&out);
	store_close(s);
	return ret;
}

static int
calibrate_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct calibrate_opts co = { .format = "md", .seed = 1,
				     .threshold = 5, .simulate = -1 };
	const char **args = NULL;
	size_t nargs = 0;
	char stamp[21], *label = NULL, *sel = NULL;
	int rc;

	rc = cmd_parse(ctx, argc, argv, &co, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (co.threshold <= 0 || co.threshold >= 100)
		rc = cmd_usage_error(ctx, "bad --threshold '%g' (0 < P < 100)",
				     co.threshold);
	else if (co.simulate >= 100)
		rc = cmd_usage_error(ctx, "bad --simulate '%g' (0 <= P < 100)",
				     co.simulate);
	else if (nargs && co.from)
		rc = cmd_usage_error(ctx, "give either one PLAN or --from SEL");
	else if (!nargs && !co.from)
		rc = cmd_usage_error(ctx, "--from SEL is required");
	else if (nargs && (co.simulate >= 0 || co.power))
		rc = cmd_usage_error(ctx, "--simulate and --power go with --from "
				     "SEL, not with PLAN");
	if (rc)
		goto cleanup;
	if (co.simulate >= 0 && co.trials <= 0)
		co.trials = 1000;
	if (nargs) {
		/* calibrate PLAN: run the A/A processes, then calibrate them. */
		utc_now(stamp);
		label = xstrfmt("calibrate-%s-%ld", stamp, (long)getpid());
		rc = calibrate_run_plan(ctx, args[0], label);
		if (rc != EXIT_OK) {
			error("the calibration run failed (exit %d); nothing "
			      "calibrated", rc);
			goto cleanup;
		}
		sel = xstrfmt("label=%s", label);
		co.from = sel;
		co.store = 1;
	}
	rc = calibrate_from(ctx, &co);
cleanup:
	free(label);
	free(sel);
	free(args);
	return rc;
}
