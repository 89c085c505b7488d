#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/gate.h"
#include "analysis/provenance.h"
#include "analysis/table.h"
#include "base/json.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gate_cli {
	const char *baseline, *candidate, *mode, *junit, *json, *summary;
	const char *format;
	struct opt_list threshold;
	long min_samples, seed, boot;
	double alpha, shim_floor;
};

#define GO struct gate_cli
static const struct opt gate_opts[] = {
	OPT_S("candidate", 0, GO, candidate, "SEL",
	      "the selection to gate (required)"),
	OPT_S("baseline", 0, GO, baseline, "SEL|auto",
	      "the selection to compare with; auto: the most recently "
	      "measured other session that counts (status ok, not tampered) "
	      "whose fingerprint equals the candidate's on everything but OS "
	      "version and build and that shares a workload with it (the "
	      "macOS-update gate); it says which it took, why, and what it "
	      "passed over; none: exit 3, --json says why (no_baseline)"),
	OPT_C("mode", 0, GO, mode, "M", "detect|prove",
	      "detect (default): fail only when confidently slower than the "
	      "threshold; inconclusive when the threshold is below what the "
	      "data can resolve. prove: pass only when confidently within the "
	      "threshold"),
	OPT_L("threshold", 0, GO, threshold, "[METRIC=]PCT",
	      "tolerated slowdown in percent (default 5; 0 < PCT < 100); "
	      "METRIC=PCT overrides it for a test or its kind, e.g. "
	      "--threshold tg=10 --threshold pp512=3"),
	OPT_I("min-samples", 0, GO, min_samples, "N", 1, 1000000000,
	      "fewer samples on a side is inconclusive, whatever the "
	      "verdict would be (default 5)"),
	OPT_D("alpha", 0, GO, alpha, "A", 0, 0.5,
	      "one-sided error rate per workload (default 0.005; 0 < A < 0.5)"),
	OPT_D("shim-floor", 0, GO, shim_floor, "X", 0, 1e9,
	      "the candidate's shim / stock speedup must stay above X (> 0) "
	      "and every shim run must be injection-verified (a macOS update "
	      "that breaks the shim)"),
	OPT_I("seed", 0, GO, seed, "N", 0, 9223372036854775807.0,
	      "bootstrap seed (default 1)"),
	OPT_I("boot", 0, GO, boot, "N", 100, 1000000,
	      "bootstrap iterations (default 2000)"),
	OPT_S("junit", 0, GO, junit, "FILE",
	      "JUnit XML, one test case per workload and check"),
	OPT_S("json", 0, GO, json, "FILE", "the decision as JSON"),
	OPT_S("summary", 0, GO, summary, "FILE",
	      "the Markdown summary (it is also appended to "
	      "$GITHUB_STEP_SUMMARY when that is set)"),
	OPT_C("format", 0, GO, format, "F", "md|json",
	      "standard output: md (default) or json"),
	OPT_END
};

static int gate_main(int argc, char **argv, struct cmd_ctx *ctx);

const struct command cmd_gate = {
	.name = "gate",
	.fn = gate_main,
	.summary = "CI verdict: regression, pass or inconclusive, JUnit and "
		"Markdown",
	.synopsis = "--candidate SEL [--baseline SEL|auto]\n"
		"                      [--mode detect|prove] "
		"[--threshold [METRIC=]PCT]...\n"
		"                      [--min-samples N] [--alpha A] "
		"[--shim-floor X]\n"
		"                      [--seed N] [--boot N] [--junit FILE]\n"
		"                      [--json FILE] [--summary FILE] "
		"[--format md|json]",
	.description =
		"Decides whether the candidate regressed against the baseline, per\n"
		"workload (model x test x llama-bench configuration, never pooled), for\n"
		"CI: after a macOS host or guest update,\n"
		"rerun the plan and gate the new session against the last one.\n"
		"Give --baseline, --shim-floor or both. A plan's variants are gated\n"
		"variant by variant; a variant whose runs lost the markers its\n"
		"baseline runs carried fails as 'VARIANT: injection stopped' (a\n"
		"session that failed only for that still counts).\n"
		"\n"
		"Noise: one llama-bench process shifts all of its samples, so with\n"
		"one process per side the gate uses the noise floor stored by\n"
		"`shimbench calibrate` for the fingerprint (uncalibrated: a\n"
		"conservative 10 %, so one process per side without a floor is\n"
		"inconclusive unless the slowdown is gross), and the observed\n"
		"between-process spread with several, with Student's t for few.\n"
		"Each verdict shows the minimum detectable effect (95 % power).\n"
		"Fewer than --min-samples on a side decides nothing, a regression\n"
		"included; a workload the candidate lacks is no pass.\n"
		"\n"
		"The Markdown names the sessions and OS builds compared, the\n"
		"confidence level of the bounds, warnings (outliers, a difference\n"
		"smaller than its spread, data left out or counted against the\n"
		"defaults) and the provenance of both sides. Tampered imports,\n"
		"sessions that failed, were interrupted or are unfinished, and runs\n"
		"that did not end ok never count unless a selection includes them\n"
		"(include=...); --shim-floor requires every shim run to be\n"
		"injection-verified (markers re-derived from the raw stderr).\n",
	.opts = gate_opts,
	.epilogue = "exit: 0 pass, 1 regression or shim check failed, 2 usage,\n"
		"3 nothing matched a selection or nothing comparable, 4 inconclusive\n"
		"(says how many processes per side would likely decide it, or that\n"
		"the candidate's data does not count)\n",
	.max_args = 0,
};

static void
pct(char *out, size_t size, double v)
{
	fmt_num(out, size, v * 100, 1);
}

static void
xml_escape(struct buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': buf_adds(b, "&amp;"); break;
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		case '"': buf_adds(b, "&quot;"); break;
		case '\'': buf_adds(b, "&apos;"); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				buf_addch(b, ' ');
			else
				buf_addch(b, *s);
		}
	}
}

/*
 * JUnit: a regression is a <failure>, an inconclusive check <skipped>
 * with its reason (a neutral result, as test reporters show skips; never
 * an <error>, which reads as a broken build), a pass a plain test case.
 */
static void
render_junit(const struct gate_check *c, size_t n, const struct warnings *w,
	     struct buf *b)
{
	static const char *const suites[] = {
		"workload", "injection", "shim-speedup", "shim-verified",
	};
	size_t i, s, fail = 0, skip = 0;
	int warned = 0;

	for (i = 0; i < n; i++) {
		fail += c[i].verdict == GATE_REGRESSION;
		skip += c[i].verdict == GATE_INCONCLUSIVE;
	}
	buf_addf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		 "<testsuites name=\"shimbench gate\" tests=\"%zu\" "
		 "failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n", n,
		 fail, skip);
	for (s = 0; s < ARRAY_SIZE(suites); s++) {
		size_t t = 0, f = 0, k = 0;

		for (i = 0; i < n; i++)
			if (!strcmp(c[i].suite, suites[s])) {
				t++;
				f += c[i].verdict == GATE_REGRESSION;
				k += c[i].verdict == GATE_INCONCLUSIVE;
			}
		if (!t)
			continue;
		buf_addf(b, "  <testsuite name=\"gate.%s\" tests=\"%zu\" "
			 "failures=\"%zu\" errors=\"0\" skipped=\"%zu\" "
			 "time=\"0\">\n", suites[s], t, f, k);
		for (i = 0; i < n; i++) {
			const char *tag = c[i].verdict == GATE_REGRESSION ?
					  "failure" : "skipped";

			if (strcmp(c[i].suite, suites[s]))
				continue;
			buf_addf(b, "    <testcase classname=\"shimbench.gate.%s\" "
				 "name=\"", suites[s]);
			xml_escape(b, c[i].name);
			buf_adds(b, "\" time=\"0\"");
			if (c[i].verdict == GATE_PASS) {
				buf_adds(b, ">\n      <system-out>");
				xml_escape(b, c[i].message);
				buf_adds(b, "</system-out>\n    </testcase>\n");
				continue;
			}
			buf_addf(b, ">\n      <%s message=\"", tag);
			xml_escape(b, c[i].message);
			if (c[i].verdict == GATE_REGRESSION) {
				buf_adds(b, "\" type=\"regression\">");
				xml_escape(b, c[i].message);
				buf_adds(b, "</failure>\n");
			} else {
				buf_adds(b, "\"/>\n      <system-out>inconclusive: ");
				xml_escape(b, c[i].message);
				buf_adds(b, "</system-out>\n");
			}
			buf_adds(b, "    </testcase>\n");
		}
		/* the warnings (what was left out or counted against the
		 * defaults, outliers), once, with the first suite */
		if (!warned && w->n) {
			buf_adds(b, "    <system-err>");
			for (i = 0; i < w->n; i++) {
				buf_adds(b, "warning: ");
				xml_escape(b, w->v[i]);
				buf_adds(b, "\n");
			}
			buf_adds(b, "</system-err>\n");
			warned = 1;
		}
		buf_adds(b, "  </testsuite>\n");
	}
	buf_adds(b, "</testsuites>\n");
}

/* One check's statistics, for render_json(). */
static void
json_check_stats(struct jw *w, const struct gate_check *c)
{
	const struct { const char *key; double v; } nums[] = {
		{ "ratio", c->r.ratio },
		{ "ci95_lo", c->r.ci_lo },
		{ "ci95_hi", c->r.ci_hi },
		{ "bound_lo", c->d.lo },
		{ "bound_hi", c->d.hi },
		{ "p_mwu", c->r.p_mwu },
		{ "threshold", c->threshold },
		{ "mde", c->d.mde },
		{ "critical", c->d.crit },
		{ "between_cv", c->r.between_cv },
		{ "within_cv", c->r.within_cv },
	};
	size_t k;

	for (k = 0; k < ARRAY_SIZE(nums); k++)
		jw_knum(w, nums[k].key, nums[k].v);
	jw_kstr(w, "noise", cmp_noise_name(c->r.noise));
	jw_kint(w, "baseline_samples", (int64_t)c->r.na);
	jw_kint(w, "baseline_processes", (int64_t)c->r.ka);
	jw_kint(w, "candidate_samples", (int64_t)c->r.nb);
	jw_kint(w, "candidate_processes", (int64_t)c->r.kb);
	jw_kint(w, "processes_needed", c->d.need_k);
}

/*
 * The decision as JSON (--json, --format json), through the JSON writer.
 * Keys in this order; numbers at full precision, null when not finite.
 */
static void
render_json(const struct gate_report *rep, const char *verdict, int code,
	    const char *base, const char *cand, enum gate_mode mode,
	    struct buf *b)
{
	const struct gate_check *c = rep->checks;
	struct jw w;
	size_t i;

	jw_init(&w, b, 1);
	jw_object(&w);
	jw_kstr(&w, "verdict", verdict);
	jw_kint(&w, "exit_code", code);
	jw_kstr(&w, "mode", mode == GATE_DETECT ? "detect" : "prove");
	jw_knum(&w, "confidence", 1 - rep->alpha);
	jw_kstr(&w, "baseline", base);
	jw_kstr(&w, "candidate", cand);
	jw_kstr(&w, "baseline_compared",
		rep->baseline_words ? rep->baseline_words : "");
	jw_kstr(&w, "candidate_compared",
		rep->candidate_words ? rep->candidate_words : "");
	if (rep->auto_session) {
		jw_key(&w, "baseline_auto");
		jw_object(&w);
		jw_kint(&w, "session", rep->auto_session);
		jw_kstr(&w, "why", rep->auto_reason ? rep->auto_reason : "");
		jw_end(&w);
	}
	jw_key(&w, "warnings");
	jw_array(&w);
	for (i = 0; i < rep->warn.n; i++)
		jw_str(&w, rep->warn.v[i]);
	jw_end(&w);
	jw_key(&w, "checks");
	jw_array(&w);
	for (i = 0; i < rep->n; i++) {
		jw_object(&w);
		jw_kstr(&w, "suite", c[i].suite);
		jw_kstr(&w, "name", c[i].name);
		jw_kstr(&w, "verdict", gate_verdict_name(c[i].verdict));
		jw_kstr(&w, "message", c[i].message);
		if (c[i].has_stats)
			json_check_stats(&w, &c[i]);
		jw_end(&w);
	}
	jw_end(&w);
	jw_key(&w, "provenance");
	jw_object(&w);
	jw_key(&w, "baseline");
	if (rep->prov_baseline)
		provenance_json(rep->prov_baseline, &w);
	else
		jw_null(&w);
	jw_key(&w, "candidate");
	if (rep->prov_candidate)
		provenance_json(rep->prov_candidate, &w);
	else
		jw_null(&w);
	jw_end(&w);
	jw_end(&w);
	buf_addch(b, '\n');
}

static void
render_md(const struct gate_report *rep, const char *headline,
	  const char *base, const char *cand, struct buf *b)
{
	static const char *const cols[] = {
		"check", "workload", "verdict", "ratio#", "bounds", "threshold %#",
		"MDE %#", "noise", "processes", "detail",
	};
	const struct gate_check *c = rep->checks;
	size_t n = rep->n;
	struct table t;
	size_t i;
	char conf[32];

	fmt_num(conf, sizeof(conf), (1 - rep->alpha) * 100, 2);
	buf_addf(b, "### shimbench gate: %s\n\nbaseline `%s`, candidate `%s`\n\n",
		 headline, base, cand);
	if (rep->baseline_words)
		buf_addf(b, "Compared: baseline %s against candidate %s.\n\n",
			 rep->baseline_words, rep->candidate_words ?
			 rep->candidate_words : "");
	else if (rep->candidate_words)
		buf_addf(b, "Candidate: %s.\n\n", rep->candidate_words);
	if (rep->auto_session)
		buf_addf(b, "Baseline auto: session %lld, %s.\n\n",
			 (long long)rep->auto_session, rep->auto_reason);
	buf_addf(b, "Bounds: one-sided %s %% confidence bounds of the ratio "
		 "candidate / baseline (alpha %g per workload); MDE: the "
		 "slowdown caught with 95 %% power.\n\n", conf, rep->alpha);
	table_init(&t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < n; i++) {
		char ratio[32] = "", bounds[64] = "", thr[32] = "", mde[32] = "",
		     procs[32] = "", a[32], z[32];
		const char *row[ARRAY_SIZE(cols)];

		if (c[i].has_stats) {
			fmt_num(ratio, sizeof(ratio), c[i].r.ratio, 4);
			fmt_num(a, sizeof(a), c[i].d.lo, 4);
			fmt_num(z, sizeof(z), c[i].d.hi, 4);
			if (*a && *z)
				snprintf(bounds, sizeof(bounds), "%s-%s", a, z);
			pct(thr, sizeof(thr), c[i].threshold);
			pct(mde, sizeof(mde), c[i].d.mde);
			snprintf(procs, sizeof(procs), "%zu/%zu", c[i].r.ka, c[i].r.kb);
		}
		row[0] = c[i].suite;
		row[1] = c[i].name;
		row[2] = gate_verdict_name(c[i].verdict);
		row[3] = ratio;
		row[4] = bounds;
		row[5] = thr;
		row[6] = mde;
		row[7] = c[i].has_stats ? cmp_noise_name(c[i].r.noise) : "";
		row[8] = procs;
		row[9] = c[i].message;
		table_add_row(&t, row);
	}
	table_render_md(&t, b);
	table_release(&t);
	if (rep->warn.n) {
		buf_adds(b, "\nWarnings:\n\n");
		for (i = 0; i < rep->warn.n; i++)
			buf_addf(b, "- %s\n", rep->warn.v[i]);
	}
	if (rep->prov_baseline) {
		buf_adds(b, "\n");
		provenance_render_md(rep->prov_baseline,
				     "Provenance of the baseline", 4, b);
	}
	if (rep->prov_candidate) {
		buf_adds(b, "\n");
		provenance_render_md(rep->prov_candidate,
				     "Provenance of the candidate", 4, b);
	}
}

/* The thresholds of --threshold: a default and METRIC=PCT overrides. */
static int
parse_thresholds(struct cmd_ctx *ctx, const struct opt_list *l,
		 struct gate_opts *o, struct gate_threshold **ov)
{
	size_t i;

	*ov = NULL;
	for (i = 0; i < l->n; i++) {
		const char *a = l->v[i], *eq = strchr(a, '=');
		double v;

		if (parse_double(eq ? eq + 1 : a, &v) < 0 || !(v > 0) ||
		    v >= 100 || (eq && eq == a))
			return cmd_usage_error(ctx, "bad --threshold '%s' (PCT or "
					       "METRIC=PCT, 0 < PCT < 100)", a);
		if (!eq) {
			o->threshold = v / 100;
			continue;
		}
		*ov = xrealloc(*ov, (o->noverrides + 1) * sizeof(**ov));
		(*ov)[o->noverrides].metric = xstrndup(a, (size_t)(eq - a));
		(*ov)[o->noverrides++].value = v / 100;
	}
	o->overrides = *ov;
	return 0;
}

/*
 * Options to gate_opts, the selections parsed into cand and base (the
 * caller frees them); 0, or the exit code after a usage error.
 */
static int
gate_check_options(struct cmd_ctx *ctx, const struct gate_cli *c,
		   struct gate_opts *o, struct gate_threshold **ov,
		   struct selection *cand, struct selection *base)
{
	if (!c->candidate)
		return cmd_usage_error(ctx, "--candidate SEL is required");
	if (!c->baseline && c->shim_floor <= 0)
		return cmd_usage_error(ctx, "give --baseline SEL|auto, "
				       "--shim-floor X or both");
	if (c->alpha <= 0 || c->alpha >= 0.5)
		return cmd_usage_error(ctx, "bad --alpha '%g' (0 < A < 0.5)",
				       c->alpha);
	if (c->shim_floor == 0)
		return cmd_usage_error(ctx, "bad --shim-floor '0' (X > 0)");
	o->mode = !strcmp(c->mode, "prove") ? GATE_PROVE : GATE_DETECT;
	o->threshold = 0.05;
	o->min_samples = c->min_samples;
	o->alpha = c->alpha;
	o->shim_floor = c->shim_floor;
	o->cmp.seed = (uint64_t)c->seed;
	o->cmp.boot = (int)c->boot;
	if (parse_thresholds(ctx, &c->threshold, o, ov))
		return EXIT_USAGE;
	if (selection_parse(c->candidate, cand) < 0)
		return EXIT_USAGE;
	o->candidate = cand;
	o->baseline_auto = c->baseline && !strcmp(c->baseline, "auto");
	if (c->baseline && !o->baseline_auto) {
		if (selection_parse(c->baseline, base) < 0)
			return EXIT_USAGE;
		o->baseline = base;
	}
	return 0;
}

/* The one-line verdict: FAIL, INCONCLUSIVE or PASS with its reasons. */
static void
gate_headline(const struct gate_report *rep, enum gate_mode mode, struct buf *b)
{
	size_t i;

	if (rep->regressions) {
		buf_addf(b, "FAIL, %d regression%s:", rep->regressions,
			 rep->regressions > 1 ? "s" : "");
		for (i = 0; i < rep->n; i++)
			if (rep->checks[i].verdict == GATE_REGRESSION)
				buf_addf(b, " %s;", rep->checks[i].name);
		buf_setlen(b, b->len - 1);
	} else if (rep->inconclusive) {
		buf_addf(b, "INCONCLUSIVE, %d of %zu checks undecided",
			 rep->inconclusive, rep->n);
		if (rep->most_k)
			buf_addf(b, "; about %d processes per side would "
				 "likely decide them", rep->most_k);
	} else {
		buf_addf(b, "PASS, %zu checks (%s mode)", rep->n,
			 mode == GATE_DETECT ? "detect" : "prove");
	}
}

/* Writes the outputs asked for; the exit code, EXIT_ENV on a failure. */
static int
gate_write(const struct gate_cli *c, const struct gate_report *rep,
	   const struct gate_opts *o, int code, const char *head)
{
	struct buf md = BUF_INIT, js = BUF_INIT, xml = BUF_INIT, tty = BUF_INIT;
	const char *base = rep->baseline ? rep->baseline : "";
	const char *gh = getenv("GITHUB_STEP_SUMMARY");
	size_t was;
	int ret = code;

	/* the summary files are read in a browser: every column; standard
	 * output gets what fits a terminal (issue 22) */
	was = table_md_width(0);
	render_md(rep, head, *base ? base : "-", c->candidate, &md);
	table_md_width(was);
	render_md(rep, head, *base ? base : "-", c->candidate, &tty);
	render_json(rep, rep->regressions ? "regression" :
		    rep->inconclusive ? "inconclusive" : "pass", code, base,
		    c->candidate, o->mode, &js);
	if (c->junit) {
		render_junit(rep->checks, rep->n, &rep->warn, &xml);
		if (write_file_atomic(c->junit, xml.buf, xml.len) < 0)
			ret = EXIT_ENV;
	}
	if (c->json && write_file_atomic(c->json, js.buf, js.len) < 0)
		ret = EXIT_ENV;
	if (c->summary && write_file_atomic(c->summary, md.buf, md.len) < 0)
		ret = EXIT_ENV;
	if (gh && *gh) {
		FILE *fp = fopen(gh, "a");

		if (!fp || fwrite(md.buf, 1, md.len, fp) != md.len) {
			error("cannot append to GITHUB_STEP_SUMMARY '%s'", gh);
			ret = EXIT_ENV;
		}
		if (fp)
			fclose(fp);
	}
	if (!strcmp(c->format, "json"))
		fwrite(js.buf, 1, js.len, stdout);
	else
		fwrite(tty.buf, 1, tty.len, stdout);
	buf_release(&md);
	buf_release(&tty);
	buf_release(&js);
	buf_release(&xml);
	return ret;
}

/*
 * --baseline auto found no baseline: --json (and --format json) still
 * say so, for CI, by a field rather than words: verdict "no-baseline",
 * exit_code 3, no_baseline the reason ("no-other-os-build": no macOS
 * update since the last session that counts; "nothing-comparable",
 * "no-fingerprint") and why in words. EXIT_ENV on a write failure.
 */
static int
gate_write_none(const struct gate_cli *c, const struct gate_report *rep,
		const char *why)
{
	struct buf js = BUF_INIT;
	struct jw w;
	int ret = EXIT_ENV;

	jw_init(&w, &js, 1);
	jw_object(&w);
	jw_kstr(&w, "verdict", "no-baseline");
	jw_kint(&w, "exit_code", EXIT_ENV);
	jw_kstr(&w, "no_baseline", rep->auto_none);
	jw_kstr(&w, "why", why);
	jw_kstr(&w, "candidate", c->candidate);
	jw_end(&w);
	buf_addch(&js, '\n');
	if (c->json && write_file_atomic(c->json, js.buf, js.len) < 0)
		ret = EXIT_ENV;
	if (!strcmp(c->format, "json"))
		fwrite(js.buf, 1, js.len, stdout);
	buf_release(&js);
	return ret;
}

static int
gate_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct gate_cli c = { .mode = "detect", .format = "md",
			      .min_samples = 5, .seed = 1, .boot = 2000,
			      .alpha = 0.005, .shim_floor = -1 };
	struct gate_opts o = { 0 };
	struct selection cand = { 0 }, base = { 0 };
	struct gate_threshold *ov = NULL;
	struct gate_report rep = { 0 };
	struct store *s = NULL;
	struct buf head = BUF_INIT;
	const char **args = NULL;
	size_t nargs, i;
	int ret, rc;

	rc = cmd_parse(ctx, argc, argv, &c, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	free(args);
	ret = gate_check_options(ctx, &c, &o, &ov, &cand, &base);
	if (ret)
		goto cleanup;
	if (cmd_open_store_readonly(ctx, &s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	rc = gate_evaluate(s, &o, &rep);
	if (rep.auto_session && !ctx->quiet)
		fprintf(stderr, "baseline auto: session %lld: %s\n",
			(long long)rep.auto_session, rep.auto_reason);
	if (rc == RC_NOTHING && rep.auto_none) {
		char *why = xstrdup(error_last());

		ret = gate_write_none(&c, &rep, why);
		free(why);
		goto cleanup;
	}
	if (rc < 0) {
		ret = rc == RC_USAGE ? EXIT_USAGE : EXIT_ENV;
		goto cleanup;
	}
	ret = rep.regressions ? EXIT_CHECK :
	      rep.inconclusive ? EXIT_INCONCLUSIVE : EXIT_OK;
	gate_headline(&rep, o.mode, &head);
	ret = gate_write(&c, &rep, &o, ret, head.buf);
	if (!ctx->quiet)
		fprintf(stderr, "gate: %s\n", head.buf);
cleanup:
	for (i = 0; i < o.noverrides; i++)
		free(ov[i].metric);
	free(ov);
	selection_free(&cand);
	selection_free(&base);
	opt_release(gate_opts, &c);
	gate_report_release(&rep);
	buf_release(&head);
	store_close(s);
	return ret;
}
