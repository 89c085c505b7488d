#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "evidence/state.h"
#include "run/plan.h"
#include "run/session.h"
#include "evidence/bundle.h"
#include "evidence/runrec.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RO struct cmd_run_args
static const struct opt run_cli_opts[] = {
	OPT_S("bundle", 'b', RO, bundle, "DIR",
	      "where to write the evidence bundle (new or empty; default "
	      "evidence/session-N, with -2, -3... when that exists)"),
	OPT_F("force", 0, RO, force,
	      "with --bundle: write into a directory that is not empty"),
	OPT_F("strict", 0, RO, strict,
	      "refuse to run on a pre-flight warning"),
	OPT_I("seed", 0, RO, seed, "N", 0, 9.2e18,
	      "seed of the interleaving (default: the plan's, else the clock; "
	      "always recorded)"),
	OPT_S("models-dir", 0, RO, models_dir, "DIR",
	      "where manifest models live (default models)"),
	OPT_S("label", 0, RO, label, "TEXT", "a label for the session"),
	OPT_F("until-decided", 0, RO, until_decided,
	      "the sequential gate: after the plan, more processes of the "
	      "workloads the gate cannot decide yet, round by round, until "
	      "each is decided against the baseline or --cap is reached "
	      "(always-valid bounds: docs/statistics.md)"),
	OPT_S("baseline", 0, RO, seq_baseline, "SEL|auto",
	      "--until-decided: the baseline (default auto, as gate's)"),
	OPT_I("cap", 0, RO, seq_cap, "N", 1, 1000,
	      "--until-decided: processes per workload at most (default 30)"),
	OPT_D("threshold", 0, RO, seq_threshold, "PCT", 0, 100,
	      "--until-decided: tolerated slowdown in percent (default 5)"),
	OPT_D("alpha", 0, RO, seq_alpha, "A", 0, 0.5,
	      "--until-decided: error rate of each claim (default 0.005)"),
	OPT_S("json", 0, RO, seq_json, "FILE",
	      "--until-decided: the sequential verdict as JSON"),
	OPT_I("resume", 0, RO, resume, "SESSION", 1, 9.2e18,
	      "finish an abandoned or interrupted session (PLAN: the one it "
	      "recorded when not given)"),
	OPT_END
};
#undef RO

/* ---- the command -------------------------------------------------------------------- */

static int
exit_of(int rc)
{
	switch (rc) {
	case RUN_REFUSED: return EXIT_CHECK;
	case RUN_BAD_PLAN: return EXIT_USAGE;
	default: return EXIT_ENV;
	}
}

/* After the processes: the bundle, the report, what went wrong. */
static int
conclude(struct cmd_ctx *ctx, struct store *s, struct run_summary *sum,
	 const char *tmp_dir, const char *dir, int force, int rc)
{
	struct buf md = BUF_INIT;
	char *final = NULL;
	int ret = rc < 0 ? exit_of(rc) : EXIT_OK;

	if (cmd_write_bundle(s, sum->session_id, dir, BUNDLE_KEEP_RUN_FILES |
			     (force ? BUNDLE_FORCE : 0), &md) < 0) {
		error("the evidence bundle of session %lld could not be "
		      "written; the session is marked failed",
		      (long long)sum->session_id);
		store_session_finish(s, sum->session_id,
				     session_state_name(SESSION_STATE_FAILED));
		ret = EXIT_ENV;
	} else {
		final = tmp_dir ? bundle_settle(tmp_dir, "evidence", sum->session_id) :
			xstrdup(dir);
		if (!ctx->quiet)
			fprintf(stderr, "evidence bundle: %s\n", final);
	}
	fwrite(md.buf, 1, md.len, stdout);
	if (sum->problems.len)
		fprintf(stderr, "session %lld failed:\n%s",
			(long long)sum->session_id, sum->problems.buf);
	if (sum->interrupted) {
		fprintf(stderr, "interrupted: session %lld stored as "
			"interrupted with its completed runs\n",
			(long long)sum->session_id);
		ret = EXIT_INTERRUPTED;
	} else if (ret == EXIT_OK && (sum->failures || sum->unverified)) {
		ret = EXIT_CHECK;
	}
	free(final);
	buf_release(&md);
	return ret;
}

int
cmd_run_plan(struct cmd_ctx *ctx, const char *plan_path,
	     const struct cmd_run_args *a)
{
	struct cmd_progress pg = { ctx->quiet, isatty(2) };
	struct run_opts ro = { 0 };
	struct run_summary sum = { 0 };
	struct plan plan = { 0 };
	struct store *s = NULL;
	char *tmp_dir = NULL;
	int rc, ret;

	if (plan_load(plan_path, a->models_dir, &plan) < 0)
		return EXIT_USAGE;
	if (run_check_models(&plan) < 0) {
		plan_free(&plan);
		return EXIT_ENV;
	}
	/* the bundles of runs killed before theirs settled (issue 21 §1) */
	if (!a->bundle && bundle_clean_dead("evidence") > 0 && !ctx->quiet)
		fprintf(stderr, "removed the bundle directories of dead runs "
			"in 'evidence'\n");
	if (!a->bundle && !(tmp_dir = bundle_tmpdir("evidence"))) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	if (store_open(&s, ctx->db_path) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	ro.source = plan_path;
	ro.bundle_dir = a->bundle ? a->bundle : tmp_dir;
	ro.label = a->label;
	ro.strict = a->strict;
	ro.seed = a->seed >= 0 ? (uint64_t)a->seed : plan.seed_given ?
		plan.seed : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	ro.progress = cmd_run_progress;
	ro.progress_ctx = &pg;
	rc = run_session(s, &plan, &ro, &sum);
	if (sum.session_id)
		ret = conclude(ctx, s, &sum, tmp_dir, ro.bundle_dir, a->force,
			       rc);
	else
		ret = exit_of(rc);
cleanup:
	if (tmp_dir && !sum.session_id)
		rmdir(tmp_dir);
	run_summary_release(&sum);
	store_close(s);
	plan_free(&plan);
	free(tmp_dir);
	return ret;
}

/* ---- --resume ---------------------------------------------------------------------- */

/*
 * run --resume SESSION [PLAN]: the plan given, else the one the session
 * recorded, through run_resume(); the bundle as for a new run (its files
 * come from the store, the runs before the resume included).
 */
static int
cmd_run_resume(struct cmd_ctx *ctx, const char *plan_path,
	       const struct cmd_run_args *a)
{
	struct cmd_progress pg = { ctx->quiet, isatty(2) };
	struct run_opts ro = { 0 };
	struct run_summary sum = { 0 };
	struct session_rec sr = { 0 };
	struct plan plan = { 0 };
	struct store *s = NULL;
	char *tmp_dir = NULL;
	int rc, ret = EXIT_ENV;

	if (cmd_open_existing_store(ctx, &s) < 0)
		goto cleanup;
	rc = store_session_get(s, a->resume, &sr);
	if (rc <= 0) {
		if (rc == 0)
			error("store '%s' has no session %ld", ctx->db_path,
			      a->resume);
		ret = rc == 0 ? EXIT_USAGE : EXIT_ENV;
		goto cleanup;
	}
	if (!plan_path && !(plan_path = sr.source)) {
		ret = cmd_usage_error(ctx, "session %ld recorded no plan file; "
				      "give PLAN", a->resume);
		goto cleanup;
	}
	if (plan_load(plan_path, a->models_dir, &plan) < 0) {
		ret = EXIT_USAGE;
		goto cleanup;
	}
	if (!a->bundle) {
		bundle_clean_dead("evidence");
		if (!(tmp_dir = bundle_tmpdir("evidence")))
			goto cleanup;
	}
	ro.source = plan_path;
	ro.bundle_dir = a->bundle ? a->bundle : tmp_dir;
	ro.strict = a->strict;
	ro.progress = cmd_run_progress;
	ro.progress_ctx = &pg;
	rc = run_resume(s, &plan, &ro, a->resume, &sum);
	ret = sum.session_id ? conclude(ctx, s, &sum, tmp_dir, ro.bundle_dir,
					a->force, rc) : exit_of(rc);
cleanup:
	if (tmp_dir && !sum.session_id)
		rmdir(tmp_dir);
	run_summary_release(&sum);
	rec_release(sessionrec_fields, sessionrec_nfields, &sr);
	store_close(s);
	plan_free(&plan);
	free(tmp_dir);
	return ret;
}

static int
run_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct cmd_run_args o = { .seed = -1, .seq_cap = 30,
				  .seq_threshold = 5, .seq_alpha = 0.005 };
	const char **args = NULL;
	size_t nargs;
	int rc, ret;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (o.force && !o.bundle)
		ret = cmd_usage_error(ctx, "--force goes with --bundle DIR");
	else if (o.bundle && !o.force && dir_is_empty(o.bundle) != 1)
		ret = cmd_usage_error(ctx, "bundle directory '%s' is not empty; "
				      "give a new one (or --force)", o.bundle);
	else if (o.resume > 0 && o.until_decided)
		ret = cmd_usage_error(ctx, "--resume finishes a session as it "
				      "was planned; --until-decided goes with a "
				      "new run");
	else if (o.resume > 0)
		ret = cmd_run_resume(ctx, nargs ? args[0] : NULL, &o);
	else if (!nargs)
		ret = cmd_usage_error(ctx, "give PLAN");
	else if ((o.seq_baseline || o.seq_json) && !o.until_decided)
		ret = cmd_usage_error(ctx, "--baseline and --json go with "
				      "--until-decided");
	else if (o.until_decided && !(o.seq_threshold > 0 &&
				      o.seq_threshold < 100 &&
				      o.seq_alpha > 0 && o.seq_alpha < 0.5))
		ret = cmd_usage_error(ctx, "bad --threshold or --alpha (0 < PCT "
				      "< 100, 0 < A < 0.5)");
	else if (o.until_decided)
		ret = cmd_run_until_decided(ctx, args[0], &o);
	else
		ret = cmd_run_plan(ctx, args[0], &o);
	free(args);
	return ret;
}

const struct command cmd_run = {
	.name = "run",
	.fn = run_main,
	.summary = "run a plan: llama-bench per variant, verified and stored",
	.synopsis = "[--bundle DIR [--force]] [--strict] [--seed N] "
		"[--models-dir DIR] [--label TEXT]\n"
		"                      [--until-decided [--baseline SEL|auto] "
		"[--cap N] [--threshold PCT]\n"
		"                      [--alpha A] [--json FILE]] PLAN\n"
		"       shimbench run --resume SESSION [--bundle DIR [--force]] "
		"[PLAN]",
	.description =
		"Runs a plan (JSON, see docs/plans.md): for every model, variant and\n"
		"process, llama-bench with the plan's arguments and `-o jsonl`, with\n"
		"the variant's environment and injected library, in interleaved (or\n"
		"grouped) order. Checks model and library SHA-256 before anything\n"
		"runs, fingerprints each target, verifies expected capability\n"
		"markers, stores every process in one transaction, writes an\n"
		"evidence bundle and prints the report (also with --quiet, which\n"
		"only silences the progress).\n"
		"\n"
		"A session whose process was killed shows as `abandoned` in\n"
		"`sessions`. --resume SESSION finishes it, or an interrupted one,\n"
		"into the same session with the same seed and order: the processes\n"
		"not stored yet run, then the bundle is written. It refuses, saying\n"
		"why, when the plan, a model's SHA-256 or a target's llama-bench,\n"
		"hardware or OS build changed, or when the session still runs.\n",
	.opts = run_cli_opts,
	.epilogue =
		"exit: 0 every run ok and verified; 1 a run failed, crashed, timed\n"
		"out, was not injection-verified, a model or library hash did not\n"
		"match, or --strict refused; 2 bad plan or options; 3 environment\n"
		"failure (including a bundle that could not be written); 130\n"
		"interrupted (completed runs are kept). --until-decided: 0 every\n"
		"workload passed, 1 a regression or a round's run failed, 3 no\n"
		"baseline or nothing comparable, 4 undecided at the cap.\n",
	.min_args = 0,
	.max_args = 1,
};
