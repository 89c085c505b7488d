#define _POSIX_C_SOURCE 200809L
/*
 * `run --until-decided PLAN` (issue 19 §8): the sequential gate as a
 * loop of runs. Round 1 runs the plan as written; after each round
 * every workload of the rounds so far (pooled, variant by variant) is
 * decided against the baseline by seq_decide() (analysis/gateseq.h),
 * whose always-valid bounds hold however often it is asked; the
 * workloads that need more get another round (the plan with only their
 * variants and models, and as many processes as seq_decide() says would
 * likely decide them, never past the cap), until every one is decided
 * or capped. Each round is a session of its own, run by cmd_run_plan()
 * with its evidence bundle and report; the plan of a later round is
 * written beside the bundles and stored as that session's plan.
 */
#include "cmd/cmd.h"
#include "analysis/gateseq.h"
#include "base/files.h"
#include "base/json.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "run/plan.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The newest session's id (0 none), or -1 after error(). */
static int64_t
latest_session(struct cmd_ctx *ctx)
{
	struct store *s = NULL;
	int64_t id = 0;

	if (access(ctx->db_path, F_OK) < 0)
		return 0;             /* no store yet: the first run makes it */
	if (cmd_open_store_readonly(ctx, &s) < 0)
		return -1;
	if (store_session_latest(s, 0, &id) < 0)
		id = -1;
	store_close(s);
	return id;
}

/* 1 when name is in v[0..n). */
static int
in_list(char *const *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return 1;
	return 0;
}

/* Keeps the members of the array key of root whose "name" is in v. */
static void
keep_named(struct json *root, const char *key, char *const *v, size_t n)
{
	const struct json *arr = json_get(root, key), *e;
	struct json *kept = json_new_array();
	size_t k = 0;

	for (e = json_first(arr); e; e = json_next(e)) {
		const char *name = json_get_str(e, "name");

		if (name && in_list(v, n, name)) {
			json_append(kept, json_dup(e));
			k++;
		}
	}
	if (k)
		json_set(root, key, kept);
	else
		json_free(kept);      /* names that do not match: keep all */
}

/*
 * The plan of the next round: plan's JSON with only the variants and
 * models of the workloads that need more, and processes K: written to
 * path. 0, or -1 after error().
 */
static int
next_plan(const struct plan *plan, const struct gate_seq_report *rep,
	  int cap, const char *path, int *k_out)
{
	struct json *root = json_parse(plan->json, strlen(plan->json), "plan");
	char **vars = NULL, **models = NULL, *text;
	size_t nv = 0, nm = 0, i;
	int k = 0, ret;

	if (!root)
		return -1;
	for (i = 0; i < rep->n; i++) {
		const struct gate_seq_check *c = &rep->c[i];
		int need = gate_seq_batch(&c->d, cap);

		if (!need)
			continue;
		if (need > k)
			k = need;
		if (!in_list(vars, nv, c->variant))
			vars = strv_push(vars, &nv, xstrdup(c->variant));
		if (!in_list(models, nm, c->model))
			models = strv_push(models, &nm, xstrdup(c->model));
	}
	keep_named(root, "variants", vars, nv);
	keep_named(root, "models", models, nm);
	json_set_num(root, "processes", k);
	text = json_print(root, 1);
	ret = write_file_atomic(path, text, strlen(text));
	free(text);
	json_free(root);
	strv_free(vars);
	strv_free(models);
	*k_out = k;
	return ret;
}

static void
render_md(const struct gate_seq_report *rep, const char *head, int rounds,
	  const struct buf *sessions, struct buf *b)
{
	size_t i;

	buf_addf(b, "### shimbench run --until-decided: %s\n\n", head);
	buf_addf(b, "Baseline `%s`; candidate: %d round%s (sessions %s). "
		 "Bounds: always-valid (a confidence sequence: they hold "
		 "however often the gate was asked).\n\n", rep->baseline,
		 rounds, rounds == 1 ? "" : "s", sessions->buf);
	if (rep->baseline_why)
		buf_addf(b, "Baseline auto: %s.\n\n", rep->baseline_why);
	buf_adds(b, "| workload | verdict | processes | ratio | bounds | detail |\n"
		 "| --- | --- | ---: | ---: | --- | --- |\n");
	for (i = 0; i < rep->n; i++) {
		const struct seq_decision *d = &rep->c[i].d;
		char r[32], lo[32], hi[32];

		fmt_num(r, sizeof(r), d->ratio, 4);
		fmt_num(lo, sizeof(lo), d->lo, 4);
		fmt_num(hi, sizeof(hi), d->hi, 4);
		buf_addf(b, "| %s | %s | %zu/%zu | %s | %s-%s | %s |\n",
			 rep->c[i].name, d->verdict == SEQ_PASS ? "pass" :
			 d->verdict == SEQ_REGRESSION ? "regression" :
			 "inconclusive", d->ka, d->kb, r, lo, hi, d->why);
	}
	if (rep->warn.n) {
		buf_adds(b, "\nWarnings:\n\n");
		for (i = 0; i < rep->warn.n; i++)
			buf_addf(b, "- %s\n", rep->warn.v[i]);
	}
}

static void
render_json(const struct gate_seq_report *rep, const char *verdict, int code,
	    int rounds, const int64_t *sess, size_t nsess, struct buf *b)
{
	struct jw w;
	size_t i;

	jw_init(&w, b, 1);
	jw_object(&w);
	jw_kstr(&w, "verdict", verdict);
	jw_kint(&w, "exit_code", code);
	jw_kint(&w, "rounds", rounds);
	jw_key(&w, "sessions");
	jw_array(&w);
	for (i = 0; i < nsess; i++)
		jw_int(&w, sess[i]);
	jw_end(&w);
	jw_kstr(&w, "baseline", rep->baseline ? rep->baseline : "");
	jw_key(&w, "warnings");
	jw_array(&w);
	for (i = 0; i < rep->warn.n; i++)
		jw_str(&w, rep->warn.v[i]);
	jw_end(&w);
	jw_key(&w, "checks");
	jw_array(&w);
	for (i = 0; i < rep->n; i++) {
		const struct seq_decision *d = &rep->c[i].d;

		jw_object(&w);
		jw_kstr(&w, "name", rep->c[i].name);
		jw_kstr(&w, "verdict", seq_verdict_name(d->verdict));
		jw_kint(&w, "baseline_processes", (int64_t)d->ka);
		jw_kint(&w, "candidate_processes", (int64_t)d->kb);
		jw_knum(&w, "ratio", d->ratio);
		jw_knum(&w, "bound_lo", d->lo);
		jw_knum(&w, "bound_hi", d->hi);
		jw_kstr(&w, "message", d->why);
		jw_end(&w);
	}
	jw_end(&w);
	jw_end(&w);
	buf_addch(b, '\n');
}

/* The verdict, its words and exit code; writes the outputs. */
static int
conclude_seq(const struct cmd_run_args *a, const struct gate_seq_report *rep,
	     int rounds, const int64_t *sess, size_t nsess)
{
	struct buf md = BUF_INIT, js = BUF_INIT, head = BUF_INIT, ids = BUF_INIT;
	int code = rep->regressions ? EXIT_CHECK :
		   rep->capped || rep->more || rep->only_baseline ?
		   EXIT_INCONCLUSIVE : EXIT_OK;
	const char *verdict = code == EXIT_CHECK ? "regression" :
			      code == EXIT_INCONCLUSIVE ? "inconclusive" : "pass";
	size_t i;

	for (i = 0; i < nsess; i++)
		buf_addf(&ids, "%s%lld", i ? ", " : "", (long long)sess[i]);
	buf_addf(&head, "%s, %d regression%s, %d pass%s, %d undecided "
		 "(%zu workloads, %d round%s)", code == EXIT_CHECK ? "FAIL" :
		 code == EXIT_INCONCLUSIVE ? "INCONCLUSIVE" : "PASS",
		 rep->regressions, rep->regressions == 1 ? "" : "s",
		 rep->passes, rep->passes == 1 ? "" : "es",
		 rep->capped + rep->more, rep->n, rounds, rounds == 1 ? "" : "s");
	render_md(rep, head.buf, rounds, &ids, &md);
	render_json(rep, verdict, code, rounds, sess, nsess, &js);
	fwrite(md.buf, 1, md.len, stdout);
	if (a->seq_json && write_file_atomic(a->seq_json, js.buf, js.len) < 0)
		code = EXIT_ENV;
	fprintf(stderr, "until-decided: %s\n", head.buf);
	buf_release(&md);
	buf_release(&js);
	buf_release(&head);
	buf_release(&ids);
	return code;
}

/* One round's run: plan_path into the store, with bundle DIR/round-N
 * when a bundle directory was given. The run's exit code. */
static int
run_round(struct cmd_ctx *ctx, const struct cmd_run_args *a,
	  const char *plan_path, int round)
{
	struct cmd_run_args ra = *a;
	char *bundle = NULL, *label;
	int rc;

	if (a->bundle)
		bundle = xstrfmt("%s/round-%d", a->bundle, round);
	label = xstrfmt("%s%suntil-decided round %d", a->label ? a->label : "",
			a->label ? ", " : "", round);
	ra.bundle = bundle;
	ra.label = label;
	ra.force = 0;
	rc = cmd_run_plan(ctx, plan_path, &ra);
	free(bundle);
	free(label);
	return rc;
}

int
cmd_run_until_decided(struct cmd_ctx *ctx, const char *plan_path,
		      const struct cmd_run_args *a)
{
	struct seq_opts o = SEQ_OPTS_INIT;
	struct selection base = { 0 };
	struct gate_seq_report rep = { 0 };
	struct plan plan = { 0 };
	struct store *s = NULL;
	int64_t *sess = NULL, before, id;
	size_t nsess = 0;
	char *dir = NULL, *round_plan = NULL;
	int ret = EXIT_USAGE, round, rc, k, tmp = 0, have_base = 0;

	o.threshold = a->seq_threshold / 100;
	o.alpha = a->seq_alpha;
	o.max_processes = (int)a->seq_cap;
	o.grow = SEQ_GROW_CANDIDATE;
	if (a->seq_baseline && strcmp(a->seq_baseline, "auto")) {
		if (selection_parse(a->seq_baseline, &base) < 0)
			goto cleanup;
		have_base = 1;
	}
	if (plan_load(plan_path, a->models_dir, &plan) < 0)
		goto cleanup;
	if (a->bundle && mkdir(a->bundle, 0777) < 0 && dir_is_empty(a->bundle) != 1) {
		ret = cmd_usage_error(ctx, "bundle directory '%s' is not empty; "
				      "give a new one", a->bundle);
		goto cleanup;
	}
	if (a->bundle) {
		dir = xstrdup(a->bundle);
	} else {
		const char *t = getenv("TMPDIR");

		dir = xstrfmt("%s/shimbench-until.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(dir)) {
			error("cannot make a directory for the rounds' plans "
			      "'%s': %s", dir, strerror(errno));
			ret = EXIT_ENV;
			goto cleanup;
		}
		tmp = 1;
	}
	for (round = 1; round <= o.max_processes; round++) {
		before = latest_session(ctx);
		rc = run_round(ctx, a, round == 1 ? plan_path : round_plan, round);
		if (tmp && round_plan)
			unlink(round_plan);   /* the session keeps its plan */
		id = latest_session(ctx);
		if (id <= 0 || id == before) {
			ret = rc ? rc : EXIT_ENV;
			error("until-decided: round %d stored no session", round);
			goto cleanup;
		}
		sess = xrealloc(sess, (nsess + 1) * sizeof(*sess));
		sess[nsess++] = id;
		if (rc != EXIT_OK) {
			/* a failed or unverified run decides nothing here */
			error("until-decided: round %d (session %lld) exited %d: "
			      "the sequential gate stops; `shimbench gate "
			      "--candidate session=%lld` says what failed",
			      round, (long long)id, rc, (long long)id);
			ret = rc;
			goto cleanup;
		}
		gate_seq_report_release(&rep);
		if (cmd_open_store_readonly(ctx, &s) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
		rc = gate_seq_evaluate(s, have_base ? &base : NULL,
				       sess, nsess, &o, &rep);
		store_close(s);
		s = NULL;
		if (rc < 0) {
			ret = rc == RC_USAGE ? EXIT_USAGE : EXIT_ENV;
			goto cleanup;
		}
		if (!rep.more)
			break;
		free(round_plan);
		round_plan = xstrfmt("%s/until-decided-round-%d.json", dir,
				     round + 1);
		if (next_plan(&plan, &rep, o.max_processes, round_plan, &k) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
		if (k < 1)
			break;
		if (!ctx->quiet)
			fprintf(stderr, "until-decided: round %d: %d workload%s "
				"undecided; %d more process%s of their variants\n",
				round, rep.more, rep.more == 1 ? "" : "s", k,
				k == 1 ? "" : "es");
	}
	ret = conclude_seq(a, &rep, (int)nsess, sess, nsess);
cleanup:
	gate_seq_report_release(&rep);
	selection_free(&base);
	plan_free(&plan);
	free(sess);
	if (tmp && round_plan)
		unlink(round_plan);
	if (tmp)
		rmdir(dir);
	free(dir);
	free(round_plan);
	return ret;
}
