#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/workload.h"
#include "base/rng.h"
#include "analysis/render.h"
#include "evidence/store.h"
#include "base/util.h"

#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_gate[] =
	"usage: shimbench gate --candidate SEL [--baseline SEL|auto]\n"
	"                      [--mode detect|prove] [--threshold [METRIC=]PCT]...\n"
	"                      [--min-samples N] [--alpha A] [--shim-floor X]\n"
	"                      [--seed N] [--boot N] [--junit FILE]\n"
	"                      [--json FILE] [--summary FILE] [--format md|json]\n"
	"\n"
	"Decides whether the candidate regressed against the baseline, per\n"
	"workload (model x test), for CI: after a macOS host or guest update,\n"
	"rerun the plan and gate the new session against the last one.\n"
	"\n"
	"  --baseline auto   the most recent other session whose fingerprint\n"
	"                    equals the candidate's on everything but OS\n"
	"                    version and build (the macOS-update gate)\n"
	"  --mode detect     fail only when confidently slower than the\n"
	"                    threshold (default); inconclusive when the\n"
	"                    threshold is below what the data can resolve\n"
	"  --mode prove      pass only when confidently within the threshold\n"
	"  --threshold P     tolerated slowdown in percent (default 5);\n"
	"                    METRIC=P overrides it for a test or its kind,\n"
	"                    e.g. --threshold tg=10 --threshold pp512=3\n"
	"  --min-samples N   fewer samples on a side is inconclusive (default 5)\n"
	"  --alpha A         one-sided error rate per workload (default 0.005)\n"
	"  --shim-floor X    the candidate's shim / stock speedup must stay\n"
	"                    above X and every shim run must be injection-\n"
	"                    verified (a macOS update that breaks the shim)\n"
	"  --junit FILE      JUnit XML, one test case per workload and check\n"
	"  --json FILE       the decision as JSON\n"
	"  --summary FILE    the Markdown summary (it is also appended to\n"
	"                    $GITHUB_STEP_SUMMARY when that is set)\n"
	"  --format F        standard output: md (default) or json\n"
	"\n"
	"Noise: one llama-bench process shifts all of its samples, so with\n"
	"one process per side the gate uses the noise floor stored by\n"
	"`shimbench calibrate` for the fingerprint (uncalibrated: the\n"
	"within-process CV as a stand-in), and the observed between-process\n"
	"spread with several. Each verdict shows the minimum detectable\n"
	"effect (95 % power).\n"
	"\n"
	"exit: 0 pass, 1 regression or shim check failed, 2 usage,\n"
	"3 nothing comparable, 4 inconclusive (says how many processes per\n"
	"side would likely decide it)\n";

struct check {
	char *suite;       /* "workload", "shim-speedup", "shim-verified" */
	char *name;
	enum gate_verdict verdict;
	char *message;
	int has_stats;
	struct cmp_result r;
	struct gate_decision d;
	double threshold;
};

struct overrides {
	size_t n;
	char **metric;
	double *pct;
};

static double
threshold_for(const struct overrides *o, double dflt, const char *test)
{
	size_t i, k = 0;

	for (i = 0; i < o->n; i++)     /* exact test name first */
		if (!strcmp(o->metric[i], test))
			return o->pct[i];
	while (isalpha((unsigned char)test[k]))
		k++;
	for (i = 0; i < o->n; i++)
		if (strlen(o->metric[i]) == k && !strncmp(o->metric[i], test, k))
			return o->pct[i];
	return dflt;
}

static void
add_check(struct check **c, size_t *n, const char *suite, const char *name,
	  enum gate_verdict v, char *message)
{
	struct check *k;

	*c = xrealloc(*c, (*n + 1) * sizeof(**c));
	k = &(*c)[(*n)++];
	memset(k, 0, sizeof(*k));
	k->suite = xstrdup(suite);
	k->name = xstrdup(name);
	k->verdict = v;
	k->message = message;
}

static void
pct(char *out, size_t size, double v)
{
	fmt_num(out, size, v * 100, 1);
}

/* The workload message: the numbers a reader needs beside the verdict. */
static char *
workload_message(const struct check *k, enum gate_mode mode)
{
	char ratio[32], lo[32], hi[32], mde[32], crit[32], thr[32], bcv[32];
	char slow[32];

	fmt_num(ratio, sizeof(ratio), k->r.ratio, 4);
	fmt_num(lo, sizeof(lo), k->d.lo, 4);
	fmt_num(hi, sizeof(hi), k->d.hi, 4);
	pct(mde, sizeof(mde), k->d.mde);
	pct(crit, sizeof(crit), k->d.crit);
	pct(thr, sizeof(thr), k->threshold);
	pct(bcv, sizeof(bcv), k->r.between_cv);
	pct(slow, sizeof(slow), 1 - k->r.ratio);
	switch (k->verdict) {
	case GATE_REGRESSION:
		return xstrfmt("%s%% slower (ratio %s, bounds %s-%s), beyond the "
			       "%s%% threshold; MDE %s%%", slow, ratio, lo, hi,
			       thr, mde);
	case GATE_PASS:
		if (k->d.lo > 1)
			return xstrfmt("%s× faster (bounds %s-%s): an "
				       "improvement; MDE %s%%", ratio, lo, hi, mde);
		return xstrfmt("ratio %s (bounds %s-%s) within the %s%% "
			       "threshold; MDE %s%%", ratio, lo, hi, thr, mde);
	case GATE_INCONCLUSIVE:
		break;
	}
	if (mode == GATE_DETECT || k->d.below_floor)
		return xstrfmt("threshold %s%% is below what the data can "
			       "resolve: the smallest slowdown it can flag is "
			       "%s%% (noise %s, process CV %s%%, %zu vs %zu "
			       "processes); about %d processes per side would "
			       "resolve %s%% (ratio %s, MDE %s%%)", thr, crit,
			       cmp_noise_name(k->r.noise), bcv, k->r.ka, k->r.kb,
			       k->d.need_k, thr, ratio, mde);
	return xstrfmt("cannot show the slowdown is within %s%% (ratio %s, "
		       "bounds %s-%s); about %d processes per side would likely "
		       "decide it (MDE %s%%)", thr, ratio, lo, hi, k->d.need_k,
		       mde);
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

static void
render_junit(const struct check *c, size_t n, struct buf *b)
{
	static const char *const suites[] = {
		"workload", "shim-speedup", "shim-verified",
	};
	size_t i, s, fail = 0, err = 0;

	for (i = 0; i < n; i++) {
		fail += c[i].verdict == GATE_REGRESSION;
		err += c[i].verdict == GATE_INCONCLUSIVE;
	}
	buf_addf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		 "<testsuites name=\"shimbench gate\" tests=\"%zu\" "
		 "failures=\"%zu\" errors=\"%zu\">\n", n, fail, err);
	for (s = 0; s < ARRAY_SIZE(suites); s++) {
		size_t t = 0, f = 0, e = 0;

		for (i = 0; i < n; i++)
			if (!strcmp(c[i].suite, suites[s])) {
				t++;
				f += c[i].verdict == GATE_REGRESSION;
				e += c[i].verdict == GATE_INCONCLUSIVE;
			}
		if (!t)
			continue;
		buf_addf(b, "  <testsuite name=\"gate.%s\" tests=\"%zu\" "
			 "failures=\"%zu\" errors=\"%zu\" skipped=\"0\" "
			 "time=\"0\">\n", suites[s], t, f, e);
		for (i = 0; i < n; i++) {
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
			buf_addf(b, ">\n      <%s message=\"",
				 c[i].verdict == GATE_REGRESSION ? "failure" : "error");
			xml_escape(b, c[i].message);
			buf_addf(b, "\" type=\"%s\">", gate_verdict_name(c[i].verdict));
			xml_escape(b, c[i].message);
			buf_addf(b, "</%s>\n    </testcase>\n",
				 c[i].verdict == GATE_REGRESSION ? "failure" : "error");
		}
		buf_adds(b, "  </testsuite>\n");
	}
	buf_adds(b, "</testsuites>\n");
}

static void
json_num(struct buf *b, const char *key, double v)
{
	buf_add_json_str(b, key);
	if (isfinite(v))
		buf_addf(b, ": %.6g", v);
	else
		buf_adds(b, ": null");
}

static void
render_json(const struct check *c, size_t n, const char *verdict, int code,
	    const char *base, const char *cand, enum gate_mode mode,
	    struct buf *b)
{
	size_t i;

	buf_adds(b, "{\"verdict\": ");
	buf_add_json_str(b, verdict);
	buf_addf(b, ", \"exit_code\": %d, \"mode\": \"%s\", \"baseline\": ",
		 code, mode == GATE_DETECT ? "detect" : "prove");
	buf_add_json_str(b, base);
	buf_adds(b, ", \"candidate\": ");
	buf_add_json_str(b, cand);
	buf_adds(b, ", \"checks\": [");
	for (i = 0; i < n; i++) {
		buf_adds(b, i ? ",\n  {" : "\n  {");
		buf_adds(b, "\"suite\": ");
		buf_add_json_str(b, c[i].suite);
		buf_adds(b, ", \"name\": ");
		buf_add_json_str(b, c[i].name);
		buf_adds(b, ", \"verdict\": ");
		buf_add_json_str(b, gate_verdict_name(c[i].verdict));
		buf_adds(b, ", \"message\": ");
		buf_add_json_str(b, c[i].message);
		if (c[i].has_stats) {
			const struct { const char *key; double v; } nums[] = {
				{ "ratio", c[i].r.ratio },
				{ "ci95_lo", c[i].r.ci_lo },
				{ "ci95_hi", c[i].r.ci_hi },
				{ "bound_lo", c[i].d.lo },
				{ "bound_hi", c[i].d.hi },
				{ "p_mwu", c[i].r.p_mwu },
				{ "threshold", c[i].threshold },
				{ "mde", c[i].d.mde },
				{ "critical", c[i].d.crit },
				{ "between_cv", c[i].r.between_cv },
				{ "within_cv", c[i].r.within_cv },
			};
			size_t k;

			for (k = 0; k < ARRAY_SIZE(nums); k++) {
				buf_adds(b, ", ");
				json_num(b, nums[k].key, nums[k].v);
			}
			buf_addf(b, ", \"noise\": \"%s\", \"baseline_samples\": %zu,"
				 " \"baseline_processes\": %zu,"
				 " \"candidate_samples\": %zu,"
				 " \"candidate_processes\": %zu,"
				 " \"processes_needed\": %d",
				 cmp_noise_name(c[i].r.noise), c[i].r.na, c[i].r.ka,
				 c[i].r.nb, c[i].r.kb, c[i].d.need_k);
		}
		buf_adds(b, "}");
	}
	buf_adds(b, "\n]}\n");
}

static void
render_md(const struct check *c, size_t n, const char *headline,
	  const char *base, const char *cand, struct buf *b)
{
	static const char *const cols[] = {
		"check", "workload", "verdict", "ratio#", "bounds", "threshold %#",
		"MDE %#", "noise", "processes", "detail",
	};
	struct table t;
	size_t i;

	buf_addf(b, "### shimbench gate: %s\n\nbaseline `%s`, candidate `%s`\n\n",
		 headline, base, cand);
	table_init(&t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < n; i++) {
		char ratio[32] = "", bounds[64] = "", thr[32] = "", mde[32] = "",
		     procs[32] = "", a[32], z[32];
		const char *row[ARRAY_SIZE(cols)];

		if (c[i].has_stats) {
			fmt_num(ratio, sizeof(ratio), c[i].r.ratio, 4);
			fmt_num(a, sizeof(a), c[i].d.lo, 4);
			fmt_num(z, sizeof(z), c[i].d.hi, 4);
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
}

/* Copies sel into text, replacing the session and dropping OS keys. */
static char *
auto_selection(const struct selection *sel, int64_t session)
{
	struct buf b = BUF_INIT;
	size_t i;

	buf_addf(&b, "session=%lld", (long long)session);
	for (i = 0; i < sel->n; i++) {
		const char *k = sel->keys[i];

		if (!strcmp(k, "session") || !strcmp(k, "os_build") ||
		    !strcmp(k, "os_version") || !strcmp(k, "identity"))
			continue;
		buf_addf(&b, ",%s=%s", k, sel->values[i]);
	}
	return buf_detach(&b, NULL);
}

/* Candidate selection without variant, role and target keys. */
static char *
session_selection(const struct selection *sel)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < sel->n; i++) {
		const char *k = sel->keys[i];

		if (!strcmp(k, "variant") || !strcmp(k, "role") ||
		    !strcmp(k, "target") || !strcmp(k, "verification") ||
		    !strcmp(k, "status"))
			continue;
		buf_addf(&b, "%s%s=%s", b.len ? "," : "", k, sel->values[i]);
	}
	return buf_detach(&b, NULL);
}

/*
 * The shim checks on the candidate: every shim run verified and ok, and
 * per workload the shim / stock speedup confidently above floor.
 */
static int
shim_checks(struct store *s, const char *cand_text, double floor,
	    const struct cmp_opts *opts, double alpha, struct check **c,
	    size_t *n)
{
	struct selection sel;
	struct store_result *rows = NULL, *stock = NULL, *shim = NULL;
	struct workload *w = NULL;
	size_t nrows = 0, ns = 0, nh = 0, nw = 0, oa, ob, i, bad = 0;
	char *text;
	int ret = -1;

	if (selection_parse(cand_text, &sel) < 0)
		return -1;
	text = session_selection(&sel);
	selection_free(&sel);
	if (workload_load(s, text, &rows, &nrows) < 0)
		goto cleanup;
	/* Shallow partitions: the rows stay owned by rows[]. */
	stock = xcalloc(nrows ? nrows : 1, sizeof(*stock));
	shim = xcalloc(nrows ? nrows : 1, sizeof(*shim));
	for (i = 0; i < nrows; i++) {
		if (!strcmp(rows[i].role, "shim")) {
			if (strcmp(rows[i].verification, "verified") ||
			    strcmp(rows[i].run_status, "ok")) {
				char *name = xstrfmt("shim run %lld (%s %s)",
					(long long)rows[i].run_id, rows[i].model,
					rows[i].test);
				const char *why =
					!strcmp(rows[i].verification, "unverified") ?
					"the injection did not take effect" :
					!strcmp(rows[i].verification, "not-required") ?
					"nothing proves the injection took effect "
					"(the variant expects no markers)" :
					"the run did not complete";
				add_check(c, n, "shim-verified", name, GATE_REGRESSION,
					  xstrfmt("shim run %lld of session %lld is "
						  "%s, status %s: %s",
						  (long long)rows[i].run_id,
						  (long long)rows[i].session_id,
						  rows[i].verification, rows[i].run_status,
						  why));
				free(name);
				bad++;
				continue;
			}
			shim[nh++] = rows[i];
		} else if (!strcmp(rows[i].role, "stock")) {
			stock[ns++] = rows[i];
		}
	}
	if (!nh && !bad) {
		add_check(c, n, "shim-verified", "shim runs", GATE_REGRESSION,
			  xstrfmt("the candidate '%s' has no shim runs", cand_text));
		ret = 0;
		goto cleanup;
	}
	if (!bad)
		add_check(c, n, "shim-verified", "shim runs", GATE_PASS,
			  xstrfmt("%zu shim results, every run injection-verified",
				  nh));
	if (workload_match(stock, ns, shim, nh, &w, &nw, &oa, &ob) < 0)
		goto cleanup;
	for (i = 0; i < nw; i++) {
		struct check *k;
		struct cmp_opts o = *opts;
		char ratio[32], lo[32], fl[32];

		o.between_cv = workload_calibrated(s, &w[i]);
		add_check(c, n, "shim-speedup", w[i].name, GATE_PASS, NULL);
		k = &(*c)[*n - 1];
		if (cmp_compute(&w[i].a, &w[i].b, &o, &k->r) < 0) {
			k->verdict = GATE_INCONCLUSIVE;
			k->message = xstrdup(error_last());
			continue;
		}
		k->has_stats = 1;
		gate_decide(&k->r, 0.05, alpha, GATE_DETECT, &k->d);
		fmt_num(ratio, sizeof(ratio), k->r.ratio, 3);
		fmt_num(lo, sizeof(lo), k->d.lo, 3);
		fmt_num(fl, sizeof(fl), floor, 3);
		if (k->d.lo >= floor) {
			k->message = xstrfmt("shim / stock %s× (lower bound %s×) "
					     "above the floor %s×", ratio, lo, fl);
		} else if (k->d.hi < floor) {
			k->verdict = GATE_REGRESSION;
			k->message = xstrfmt("shim / stock %s× is below the floor "
					     "%s×", ratio, fl);
		} else {
			k->verdict = GATE_INCONCLUSIVE;
			k->message = xstrfmt("shim / stock %s× (lower bound %s×) "
					     "is not confidently above the floor %s×",
					     ratio, lo, fl);
		}
		k->threshold = 0.05;
	}
	if (!nw && !bad)
		add_check(c, n, "shim-speedup", "shim / stock", GATE_REGRESSION,
			  xstrfmt("no stock run to compare the shim with in '%s'",
				  text));
	ret = 0;
cleanup:
	workloads_free(w, nw);
	free(stock);
	free(shim);
	store_results_free(rows, nrows);
	free(text);
	return ret;
}

static int
cmd_gate_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "baseline", required_argument, NULL, 'b' },
		{ "candidate", required_argument, NULL, 'c' },
		{ "mode", required_argument, NULL, 'm' },
		{ "threshold", required_argument, NULL, 't' },
		{ "min-samples", required_argument, NULL, 'n' },
		{ "alpha", required_argument, NULL, 'a' },
		{ "shim-floor", required_argument, NULL, 'F' },
		{ "seed", required_argument, NULL, 'S' },
		{ "boot", required_argument, NULL, 'B' },
		{ "junit", required_argument, NULL, 'J' },
		{ "json", required_argument, NULL, 'j' },
		{ "summary", required_argument, NULL, 'M' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *base_text = NULL, *cand_text = NULL, *junit = NULL,
		   *json = NULL, *summary = NULL, *format = "md", *gh;
	char *auto_text = NULL;
	enum gate_mode mode = GATE_DETECT;
	struct overrides ov = { 0 };
	struct cmp_opts copt = CMP_OPTS_INIT;
	struct store *s = NULL;
	struct store_result *ra = NULL, *rb = NULL;
	struct workload *w = NULL;
	struct check *chk = NULL;
	size_t na = 0, nb = 0, nw = 0, nc = 0, oa = 0, ob = 0, i;
	struct buf md = BUF_INIT, js = BUF_INIT, xml = BUF_INIT, head = BUF_INIT;
	double threshold = 0.05, alpha = 0.005, floor = -1, v;
	long min_samples = 5, l;
	int c, ret = EXIT_OK, nreg = 0, ninc = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': base_text = optarg; break;
		case 'c': cand_text = optarg; break;
		case 'm':
			if (!strcmp(optarg, "detect"))
				mode = GATE_DETECT;
			else if (!strcmp(optarg, "prove"))
				mode = GATE_PROVE;
			else
				return cmd_usage_error_name("gate", "unknown mode '%s' "
						       "(detect or prove)", optarg);
			break;
		case 't': {
			const char *eq = strchr(optarg, '=');

			if (parse_double(eq ? eq + 1 : optarg, &v) < 0 || v <= 0 ||
			    v >= 100 || (eq && eq == optarg))
				return cmd_usage_error_name("gate", "bad --threshold '%s' "
						       "(PCT or METRIC=PCT, 0 < PCT < "
						       "100)", optarg);
			if (!eq) {
				threshold = v / 100;
				break;
			}
			ov.metric = xrealloc(ov.metric, (ov.n + 1) * sizeof(char *));
			ov.pct = xrealloc(ov.pct, (ov.n + 1) * sizeof(double));
			ov.metric[ov.n] = xstrndup(optarg, (size_t)(eq - optarg));
			ov.pct[ov.n++] = v / 100;
			break;
		}
		case 'n':
			if (parse_long(optarg, &l) < 0 || l < 1)
				return cmd_usage_error_name("gate", "bad --min-samples '%s'",
						       optarg);
			min_samples = l;
			break;
		case 'a':
			if (parse_double(optarg, &alpha) < 0 || alpha <= 0 ||
			    alpha >= 0.5)
				return cmd_usage_error_name("gate", "bad --alpha '%s' "
						       "(0 < A < 0.5)", optarg);
			break;
		case 'F':
			if (parse_double(optarg, &floor) < 0 || floor <= 0)
				return cmd_usage_error_name("gate", "bad --shim-floor '%s'",
						       optarg);
			break;
		case 'S':
			if (parse_long(optarg, &l) < 0 || l < 0)
				return cmd_usage_error_name("gate", "bad --seed '%s'", optarg);
			copt.seed = (uint64_t)l;
			break;
		case 'B':
			if (parse_long(optarg, &l) < 0 || l < 100 || l > 1000000)
				return cmd_usage_error_name("gate", "bad --boot '%s'", optarg);
			copt.boot = (int)l;
			break;
		case 'J': junit = optarg; break;
		case 'j': json = optarg; break;
		case 'M': summary = optarg; break;
		case 'f': format = optarg; break;
		case 'h': return cmd_help(usage_gate);
		default:
			return cmd_usage_error_name("gate", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		ret = cmd_usage_error_name("gate", "unexpected argument '%s'", argv[optind]);
	else if (!cand_text)
		ret = cmd_usage_error_name("gate", "--candidate SEL is required");
	else if (!base_text && floor < 0)
		ret = cmd_usage_error_name("gate", "give --baseline SEL|auto, "
				      "--shim-floor X or both");
	else if (strcmp(format, "md") && strcmp(format, "json"))
		ret = cmd_usage_error_name("gate", "unknown format '%s' (md or json)",
				      format);
	if (ret)
		goto cleanup;
	{
		struct selection p;

		if (selection_parse(cand_text, &p) < 0 ||
		    (base_text && strcmp(base_text, "auto") &&
		     (selection_free(&p), selection_parse(base_text, &p) < 0))) {
			ret = EXIT_USAGE;
			goto cleanup;
		}
		selection_free(&p);
	}
	if (cmd_open_existing_store(ctx, &s) < 0 ||
	    workload_load(s, cand_text, &rb, &nb) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	if (!nb) {
		error("nothing matches the candidate '%s'", cand_text);
		ret = EXIT_ENV;
		goto cleanup;
	}
	if (base_text && !strcmp(base_text, "auto")) {
		char *bi = NULL, *ob_ = NULL;
		int64_t sess = 0;
		struct selection p;
		int found = 0;

		for (i = 0; i < nb && !rb[i].environment_id; i++)
			;
		if (i < nb && store_environment_base(s, rb[i].environment_id,
						     &bi, &ob_) == 1 && *bi)
			found = store_latest_session_base(s, bi, ob_,
							  rb[i].session_id, &sess);
		if (found != 1) {
			error("--baseline auto: no other session has the "
			      "candidate's fingerprint with another OS build%s",
			      i < nb ? "" : " (the candidate has no fingerprint)");
			free(bi);
			free(ob_);
			ret = EXIT_ENV;
			goto cleanup;
		}
		selection_parse(cand_text, &p);
		auto_text = auto_selection(&p, sess);
		selection_free(&p);
		if (!ctx->quiet)
			fprintf(stderr, "baseline auto: session %lld (OS build "
				"other than %s, same base fingerprint %.12s)\n",
				(long long)sess, ob_, bi);
		free(bi);
		free(ob_);
		base_text = auto_text;
	}
	if (base_text) {
		if (workload_load(s, base_text, &ra, &na) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
		if (workload_match(ra, na, rb, nb, &w, &nw, &oa, &ob) < 0) {
			ret = EXIT_USAGE;
			goto cleanup;
		}
		if (!nw) {
			error("nothing comparable between '%s' and '%s' (%zu "
			      "workloads only in the baseline, %zu only in the "
			      "candidate)", base_text, cand_text, oa, ob);
			ret = EXIT_ENV;
			goto cleanup;
		}
	}
	for (i = 0; i < nw; i++) {
		struct check *k;

		add_check(&chk, &nc, "workload", w[i].name, GATE_PASS, NULL);
		k = &chk[nc - 1];
		k->threshold = threshold_for(&ov, threshold, w[i].test);
		copt.between_cv = workload_calibrated(s, &w[i]);
		if (cmp_compute(&w[i].a, &w[i].b, &copt, &k->r) < 0) {
			k->verdict = GATE_INCONCLUSIVE;
			k->message = xstrdup(error_last());
			continue;
		}
		k->has_stats = 1;
		gate_decide(&k->r, k->threshold, alpha, mode, &k->d);
		k->verdict = k->d.verdict;
		if ((long)k->r.na < min_samples || (long)k->r.nb < min_samples) {
			if (k->verdict != GATE_REGRESSION) {
				k->verdict = GATE_INCONCLUSIVE;
				k->message = xstrfmt("only %zu and %zu samples; "
						     "--min-samples is %ld",
						     k->r.na, k->r.nb, min_samples);
				continue;
			}
		}
		k->message = workload_message(k, mode);
	}
	if (floor > 0 && shim_checks(s, cand_text, floor, &copt, alpha, &chk,
				     &nc) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	for (i = 0; i < nc; i++) {
		nreg += chk[i].verdict == GATE_REGRESSION;
		ninc += chk[i].verdict == GATE_INCONCLUSIVE;
	}
	if (nreg) {
		ret = EXIT_CHECK;
		buf_addf(&head, "FAIL, %d regression%s:", nreg, nreg > 1 ? "s" : "");
		for (i = 0; i < nc; i++)
			if (chk[i].verdict == GATE_REGRESSION)
				buf_addf(&head, " %s;", chk[i].name);
		buf_setlen(&head, head.len - 1);
	} else if (ninc) {
		int most = 0;

		ret = EXIT_INCONCLUSIVE;
		for (i = 0; i < nc; i++)
			if (chk[i].verdict == GATE_INCONCLUSIVE &&
			    chk[i].d.need_k > most)
				most = chk[i].d.need_k;
		buf_addf(&head, "INCONCLUSIVE, %d of %zu checks undecided", ninc, nc);
		if (most)
			buf_addf(&head, "; about %d processes per side would "
				 "likely decide them", most);
	} else {
		buf_addf(&head, "PASS, %zu checks (%s mode)", nc,
			 mode == GATE_DETECT ? "detect" : "prove");
	}
	render_md(chk, nc, head.buf, base_text ? base_text : "-", cand_text, &md);
	render_json(chk, nc, nreg ? "regression" : ninc ? "inconclusive" : "pass",
		    ret, base_text ? base_text : "", cand_text, mode, &js);
	if (junit) {
		render_junit(chk, nc, &xml);
		if (write_file_atomic(junit, xml.buf, xml.len) < 0)
			ret = EXIT_ENV;
	}
	if (json && write_file_atomic(json, js.buf, js.len) < 0)
		ret = EXIT_ENV;
	if (summary && write_file_atomic(summary, md.buf, md.len) < 0)
		ret = EXIT_ENV;
	gh = getenv("GITHUB_STEP_SUMMARY");
	if (gh && *gh) {
		FILE *fp = fopen(gh, "a");

		if (!fp || fwrite(md.buf, 1, md.len, fp) != md.len) {
			error("cannot append to GITHUB_STEP_SUMMARY '%s'", gh);
			ret = EXIT_ENV;
		}
		if (fp)
			fclose(fp);
	}
	if (!strcmp(format, "json"))
		fwrite(js.buf, 1, js.len, stdout);
	else
		fwrite(md.buf, 1, md.len, stdout);
	if (!ctx->quiet)
		fprintf(stderr, "gate: %s\n", head.buf);
cleanup:
	for (i = 0; i < nc; i++) {
		free(chk[i].suite);
		free(chk[i].name);
		free(chk[i].message);
	}
	free(chk);
	for (i = 0; i < ov.n; i++)
		free(ov.metric[i]);
	free(ov.metric);
	free(ov.pct);
	workloads_free(w, nw);
	store_results_free(ra, na);
	store_results_free(rb, nb);
	buf_release(&md);
	buf_release(&js);
	buf_release(&xml);
	buf_release(&head);
	free(auto_text);
	store_close(s);
	return ret;
}

LEGACY_COMMAND(gate, "CI verdict: regression, pass or inconclusive, JUnit and Markdown", cmd_gate_main, usage_gate);
