#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/gate.h"
#include "analysis/table.h"
#include "analysis/workload.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct calibrate_opts {
	const char *from, *power, *format, *forget;
	int store, list;
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
	      "and `compare` use it for that fingerprint (all or nothing: a "
	      "calibration that fails stores nothing)"),
	OPT_F("list", 0, CO, list,
	      "list the stored noise floors (id, fingerprint, workload, "
	      "session, figures)"),
	OPT_S("forget", 0, CO, forget, "ID|SEL",
	      "remove a stored noise floor by id, or those a selection over "
	      "identity, target, model, test and session matches"),
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
		"       shimbench calibrate [--trials N] [--format F] PLAN\n"
		"       shimbench calibrate --list [--format F]\n"
		"       shimbench calibrate --forget ID|SEL",
	.description =
		"With PLAN: runs it (`shimbench run`: its \"processes\" should be 3\n"
		"or more, one variant and one llama-bench configuration: several are\n"
		"refused, they are not repeats), then calibrates from that\n"
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
		"A selection that mixes configurations (variants, targets,\n"
		"fingerprints or llama-bench fields) of one model and test is refused\n"
		"with what differs: they are not repeats of one configuration.\n",
	.opts = calibrate_opts,
	.epilogue = "exit: 0 calibrated, 2 usage (an unknown selection key, a\n"
		"selection that mixes configurations), 3 no store or nothing matched\n"
		"the selection (or the PLAN's run failed: its exit code), 4 a workload\n"
		"could not be calibrated (fewer than 3 processes): nothing stored\n",
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
calibrate_from(struct cmd_ctx *ctx, const struct calibrate_opts *co,
	       const struct selection *from, const struct selection *power)
{
	struct gate_calib_opts o = { co->trials, co->threshold / 100, 0.005,
				     (uint64_t)co->seed };
	struct gate_calibration cal = { 0 };
	struct store *s = NULL;
	struct table t;
	struct buf out = BUF_INIT;
	size_t j;
	int ret = EXIT_OK, rc;

	if (co->simulate >= 0)
		table_init(&t, ARRAY_SIZE(sim_cols), sim_cols);
	else
		table_init(&t, ARRAY_SIZE(calib_cols), calib_cols);
	if (cmd_open_existing_store(ctx, &s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	rc = gate_calibration_run(s, from, power, co->simulate >= 0 ?
				  co->simulate / 100 : -1, &o, &cal);
	if (rc < 0) {
		ret = rc == RC_USAGE ? EXIT_USAGE : EXIT_ENV;
		goto cleanup;
	}
	if (*cal.left_out)
		warning("left out by default: %s", cal.left_out);
	if (*cal.included)
		warning("counts what the defaults leave out, because the "
			"selection asks for it: %s", cal.included);
	for (j = 0; j < cal.n; j++) {
		if (!cal.ok[j])
			ret = EXIT_INCONCLUSIVE;
		else if (co->simulate >= 0)
			sim_row(&t, &cal.g[j], &cal.c[j], co->simulate / 100,
				o.trials, o.threshold);
		else
			calib_row(&t, &cal.g[j], &cal.c[j], o.trials);
	}
	/* all or nothing: a calibration that failed anywhere stores nothing */
	if (co->store && co->simulate < 0 && ret == EXIT_OK) {
		if (store_begin(s) < 0) {
			ret = EXIT_ENV;
		} else {
			for (j = 0; j < cal.n; j++)
				gate_store_floor(s, &cal.g[j], &cal.c[j], &o);
			if (store_commit(s) < 0)
				ret = EXIT_ENV;
		}
	} else if (co->store && ret == EXIT_INCONCLUSIVE) {
		error("the calibration failed; no noise floor was stored");
	}
	if (table_render(&t, co->format, &out) == 0)
		fwrite(out.buf, 1, out.len, stdout);
	if (co->store && co->simulate < 0 && !ret && !ctx->quiet)
		fprintf(stderr, "stored the noise floor of %zu workloads\n",
			cal.n);
cleanup:
	table_release(&t);
	gate_calibration_release(&cal);
	buf_release(&out);
	store_close(s);
	return ret;
}

static const char *const list_cols[] = {
	"id#", "identity", "target", "model", "test", "session#",
	"processes#", "samples#", "within_cv_pct#", "between_cv_pct#",
	"mde_k1_pct#", "created", "details",
};

/* calibrate --list: every stored noise floor. */
static int
calibrate_list(struct cmd_ctx *ctx, const char *format)
{
	struct store *s = NULL;
	struct store_noise_row *r = NULL;
	struct table t;
	struct buf out = BUF_INIT;
	size_t n = 0, i;
	int ret = EXIT_OK;

	table_init(&t, ARRAY_SIZE(list_cols), list_cols);
	if (cmd_open_store_readonly(ctx, &s) < 0 ||
	    store_noise_list(s, &r, &n) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		char c[8][64];
		const char *row[ARRAY_SIZE(list_cols)];

		snprintf(c[0], 64, "%lld", (long long)r[i].id);
		snprintf(c[1], 64, "%lld", (long long)r[i].session_id);
		snprintf(c[2], 64, "%d", r[i].processes);
		snprintf(c[3], 64, "%d", r[i].samples);
		fmt_num(c[4], 64, r[i].within_cv * 100, 2);
		fmt_num(c[5], 64, r[i].between_cv * 100, 2);
		fmt_num(c[6], 64, r[i].mde * 100, 1);
		row[0] = c[0];
		row[1] = r[i].identity;
		row[2] = r[i].target;
		row[3] = r[i].model;
		row[4] = r[i].test;
		row[5] = r[i].session_id ? c[1] : "";
		row[6] = c[2];
		row[7] = c[3];
		row[8] = c[4];
		row[9] = c[5];
		row[10] = c[6];
		row[11] = r[i].created_at;
		row[12] = r[i].details_json;
		table_add_row(&t, row);
	}
	if (table_render(&t, format, &out) == 0)
		fwrite(out.buf, 1, out.len, stdout);
	if (!n && !ctx->quiet)
		fprintf(stderr, "no noise floor is stored\n");
cleanup:
	store_noise_list_free(r, n);
	table_release(&t);
	buf_release(&out);
	store_close(s);
	return ret;
}

/* calibrate --forget ID|SEL: removes stored noise floors. */
static int
calibrate_forget(struct cmd_ctx *ctx, const char *what)
{
	static const enum sel_key keys[] = {
		SEL_KEY_IDENTITY, SEL_KEY_TARGET, SEL_KEY_MODEL, SEL_KEY_TEST,
		SEL_KEY_SESSION,
	};
	const char *val[ARRAY_SIZE(keys)] = { 0 };
	struct selection sel = { 0 };
	struct store *s = NULL;
	long id = 0, session = 0, removed = 0;
	size_t i, k;
	int ret = EXIT_OK;

	if (parse_long(what, &id) < 0) {
		id = 0;
		if (selection_parse(what, &sel) < 0)
			return EXIT_USAGE;
		if (!sel.n) {
			selection_free(&sel);
			return cmd_usage_error(ctx, "--forget needs an id or a "
					       "selection");
		}
		for (i = 0; i < sel.n; i++) {
			for (k = 0; k < ARRAY_SIZE(keys) &&
			     keys[k] != sel.t[i].key; k++)
				;
			if (k == ARRAY_SIZE(keys)) {
				ret = cmd_usage_error(ctx, "--forget: unknown key "
						      "'%s' (identity, target, "
						      "model, test, session)",
						      sel.t[i].name);
				goto cleanup;
			}
			val[k] = sel.t[i].value;
		}
		if (val[4] && parse_long(val[4], &session) < 0) {
			ret = cmd_usage_error(ctx, "--forget: session '%s' is not "
					      "a number", val[4]);
			goto cleanup;
		}
	} else if (id <= 0) {
		return cmd_usage_error(ctx, "--forget: bad id '%s'", what);
	}
	if (cmd_open_existing_store(ctx, &s) < 0 ||
	    store_noise_remove(s, id, val[0], val[1], val[2], val[3], session,
			       &removed) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	printf("forgot %ld noise floor%s\n", removed, removed == 1 ? "" : "s");
	if (!removed) {
		error("no stored noise floor matches '%s'", what);
		ret = EXIT_ENV;
	}
cleanup:
	selection_free(&sel);
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
	char stamp[21], *label = NULL;
	struct selection from = { 0 }, power = { 0 };
	int rc;

	rc = cmd_parse(ctx, argc, argv, &co, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if ((co.list || co.forget) && (nargs || co.from || co.store ||
				       co.power || co.simulate >= 0 ||
				       (co.list && co.forget)))
		rc = cmd_usage_error(ctx, "--list and --forget go alone");
	else if (co.list)
		rc = calibrate_list(ctx, co.format);
	else if (co.forget)
		rc = calibrate_forget(ctx, co.forget);
	else if (co.threshold <= 0 || co.threshold >= 100)
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
	if (rc || co.list || co.forget)
		goto cleanup;
	if (co.simulate >= 0 && co.trials <= 0)
		co.trials = 1000;
	if ((co.from && selection_parse(co.from, &from) < 0) ||
	    (co.power && selection_parse(co.power, &power) < 0)) {
		rc = EXIT_USAGE;
		goto cleanup;
	}
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
		selection_add(&from, "label", label);
		co.store = 1;
	}
	rc = calibrate_from(ctx, &co, &from, co.power ? &power : NULL);
cleanup:
	free(label);
	selection_free(&from);
	selection_free(&power);
	free(args);
	return rc;
}
