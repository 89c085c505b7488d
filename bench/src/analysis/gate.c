#define _POSIX_C_SOURCE 200809L
#include "analysis/gate.h"
#include "analysis/baseline.h"
#include "analysis/outliers.h"
#include "analysis/provenance.h"
#include "analysis/stats.h"
#include "analysis/workload.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/rng.h"
#include "base/util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const int gate_calib_ks[GATE_CALIB_KS] = { 1, 3, 5 };

const char *
gate_verdict_name(enum gate_verdict v)
{
	switch (v) {
	case GATE_PASS: return "pass";
	case GATE_REGRESSION: return "regression";
	case GATE_INCONCLUSIVE: return "inconclusive";
	}
	return "?";
}

/* The first statistic of r and d that cannot be trusted, in words. */
static const char *
invalid_statistic(const struct cmp_result *r, const struct gate_decision *d)
{
	const struct { const char *what; double v; } s[] = {
		{ "the ratio of medians", r->ratio },
		{ "the bootstrap CI", r->ci_lo },
		{ "the bootstrap CI", r->ci_hi },
		{ "the standard error of the log ratio", r->se },
		{ "the lower bound", d->lo },
		{ "the upper bound", d->hi },
		{ "the smallest flaggable slowdown", d->crit },
		{ "the MDE", d->mde },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(s); i++)
		if (!isfinite(s[i].v))
			return s[i].what;
	if (!(r->ratio > 0))
		return "the ratio of medians";
	if (!(r->se >= 0))
		return "the standard error of the log ratio";
	return NULL;
}

/*
 * Works on d = log(ratio) with its bootstrap standard error se. The
 * one-sided bounds are d -/+ z(1-alpha)·se. Processes needed: every
 * noise component shrinks as 1/K, so se(K) = se·sqrt(K0/K). Every
 * comparison is written so that a NaN makes it false, and a NaN
 * anywhere ends as inconclusive, never pass.
 */
void
gate_decide(const struct cmp_result *r, double threshold, double alpha,
	    enum gate_mode mode, struct gate_decision *d)
{
	double z = cmp_norm_quantile(1 - alpha), zp = cmp_norm_quantile(0.95);
	double t = -log(1 - threshold), lr = log(r->ratio), need_se;
	double k0 = (double)(r->ka + r->kb) / 2;

	memset(d, 0, sizeof(*d));
	d->lo = exp(lr - z * r->se);
	d->hi = exp(lr + z * r->se);
	d->crit = 1 - exp(-z * r->se);
	d->mde = 1 - exp(-(fmax(z * r->se, t) + zp * r->se));
	d->below_floor = !(z * r->se <= t);
	d->invalid = invalid_statistic(r, d);
	if (d->invalid) {
		d->verdict = GATE_INCONCLUSIVE;
		return;
	}
	if (lr + z * r->se < 0 && lr <= -t)
		d->verdict = GATE_REGRESSION;
	else if (lr - z * r->se > -t)   /* confidently within: both modes */
		d->verdict = GATE_PASS;
	else if (mode == GATE_DETECT && !d->below_floor)
		d->verdict = GATE_PASS;
	else
		d->verdict = GATE_INCONCLUSIVE;
	if (d->verdict != GATE_INCONCLUSIVE || r->se <= 0)
		return;
	/* detect: z·se(K) <= t; prove: likely (80 %) to pass when there
	 * is no change, (z + z(0.8))·se(K) <= t. */
	need_se = mode == GATE_DETECT ? t / z :
		  t / (z + cmp_norm_quantile(0.8));
	{
		double k = ceil(k0 * (r->se / need_se) * (r->se / need_se));

		d->need_k = k > 1e6 ? 1000000 : (int)k;
		if (d->need_k <= (int)k0)
			d->need_k = (int)k0 + 1;
	}
}

/*
 * The se of log(ratio) with K processes of r samples per side is
 * sqrt(2 (between^2 + var(median of r)) / K); the MDE follows as in
 * gate_decide().
 */
double
gate_mde_model(double between, double within, double r, int k,
	       double threshold, double alpha)
{
	double se = sqrt(2 * (between * between +
			      stats_median_var(within, r)) / k);
	double z = cmp_norm_quantile(1 - alpha), zp = cmp_norm_quantile(0.95);

	return 1 - exp(-(fmax(z * se, -log(1 - threshold)) + zp * se));
}

/* ---- trials ---- */

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

/*
 * One simulated process: the samples of a random source process,
 * resampled with replacement, times factor.
 */
static void
resampled(const struct cmp_side *src, struct rng *g, double factor,
	  struct cmp_side *dst, int64_t id)
{
	size_t p = rng_below(g, src->nproc), n = src->len[p], i;
	double *x = xcalloc(n ? n : 1, sizeof(double));

	for (i = 0; i < n; i++)
		x[i] = src->x[p][rng_below(g, n)] * factor;
	cmp_side_add(dst, id, x, n);
	free(x);
}

/* The two sides of one trial. */
static void
trial_sides(const struct gate_trial *t, struct rng *g, int *ua, int *ub,
	    struct cmp_side *a, struct cmp_side *b)
{
	size_t i;

	switch (t->kind) {
	case GATE_TRIAL_AA:
		memset(ua, 0, t->base->nproc * sizeof(int));
		draw(t->base, t->k, g, ua, a);
		draw(t->base, t->k, g, ua, b);
		break;
	case GATE_TRIAL_POWER:
		memset(ua, 0, t->base->nproc * sizeof(int));
		memset(ub, 0, t->cand->nproc * sizeof(int));
		draw(t->base, t->k, g, ua, a);
		draw(t->cand, t->k, g, ub, b);
		break;
	case GATE_TRIAL_RESAMPLED:
		for (i = 0; i < t->k; i++) {
			resampled(t->base, g, 1.0, a, (int64_t)i + 1);
			resampled(t->base, g, 1.0 - t->slowdown, b,
				  (int64_t)(t->k + i) + 1);
		}
		break;
	}
}

long
gate_trials(const struct gate_trial *t, struct rng *g)
{
	int *ua = xcalloc(t->base->nproc + 1, sizeof(int));
	int *ub = xcalloc((t->cand ? t->cand->nproc : 0) + 1, sizeof(int));
	long tr, hits = 0;

	for (tr = 0; tr < t->trials; tr++) {
		struct cmp_side a = { 0 }, b = { 0 };
		struct cmp_opts o = CMP_OPTS_INIT;
		struct cmp_result r;
		struct gate_decision d;

		trial_sides(t, g, ua, ub, &a, &b);
		o.seed = rng_next(g);
		o.boot = 500;
		o.between_cv = t->between_cv;
		if (cmp_compute(&a, &b, &o, &r) == 0) {
			gate_decide(&r, t->threshold, t->alpha, GATE_DETECT, &d);
			hits += d.verdict == GATE_REGRESSION;
		}
		cmp_side_release(&a);
		cmp_side_release(&b);
	}
	free(ua);
	free(ub);
	return hits;
}

/* ---- calibration ---- */

int
gate_calibrate(const struct workload_group *g, const struct cmp_side *cand,
	       const struct gate_calib_opts *o, struct gate_calib *c)
{
	const struct cmp_side *sd = &g->side;
	struct gate_trial t = { 0 };
	struct rng rg;
	size_t q;

	memset(c, 0, sizeof(*c));
	c->power_effect = NAN;
	for (q = 0; q < GATE_CALIB_KS; q++)
		c->aa[q] = c->power[q] = c->sim_hit[q] = c->sim_aa[q] = -1;
	c->processes = sd->nproc;
	c->samples = cmp_side_samples(sd);
	if (sd->nproc < 3)
		return error("'%s %s': %zu processes; calibration needs at "
			     "least 3", g->model, g->test, sd->nproc);
	c->samples_per_process = (double)c->samples / (double)sd->nproc;
	cmp_side_cv(sd, &c->within_cv, &c->between_cv);
	for (q = 0; q < GATE_CALIB_KS; q++)
		c->mde[q] = gate_mde_model(c->between_cv, c->within_cv,
					   c->samples_per_process,
					   gate_calib_ks[q], o->threshold,
					   o->alpha);
	t.base = sd;
	t.trials = o->trials;
	t.between_cv = c->between_cv;
	t.threshold = o->threshold;
	t.alpha = o->alpha;
	rng_seed(&rg, o->seed);
	for (q = 0; q < GATE_CALIB_KS && o->trials > 0; q++) {
		t.kind = GATE_TRIAL_AA;
		t.k = (size_t)gate_calib_ks[q];
		if (2 * t.k <= sd->nproc)
			c->aa[q] = gate_trials(&t, &rg);
	}
	if (!cand)
		return 0;
	if (cand->nproc) {
		struct cmp_opts co = CMP_OPTS_INIT;
		struct cmp_result all;

		co.between_cv = c->between_cv;
		if (cmp_compute(sd, cand, &co, &all) == 0)
			c->power_effect = 1 - all.ratio;
	}
	rng_seed(&rg, o->seed + 1);
	t.kind = GATE_TRIAL_POWER;
	t.cand = cand;
	for (q = 0; q < GATE_CALIB_KS && o->trials > 0; q++) {
		t.k = (size_t)gate_calib_ks[q];
		if (t.k <= sd->nproc && t.k <= cand->nproc)
			c->power[q] = gate_trials(&t, &rg);
	}
	return 0;
}

/*
 * Every simulated process resamples one stored process; there is no
 * process effect beyond what the stored processes show.
 */
void
gate_simulate(const struct workload_group *g, double slowdown,
	      const struct gate_calib_opts *o, struct gate_calib *c)
{
	struct gate_trial t = { 0 };
	struct rng rg;
	size_t q;

	memset(c, 0, sizeof(*c));
	c->power_effect = NAN;
	c->processes = g->side.nproc;
	c->samples = cmp_side_samples(&g->side);
	cmp_side_cv(&g->side, &c->within_cv, &c->between_cv);
	t.kind = GATE_TRIAL_RESAMPLED;
	t.base = &g->side;
	t.trials = o->trials;
	/* each simulated process is a copy of one stored process: with
	 * several, they differ by the stored processes' own effect, which a
	 * K = 1 comparison must be told (uncalibrated it would assume only
	 * the within-process CV: 10 % A/A false alarms on the OS-update
	 * pair's pp128) */
	t.between_cv = c->between_cv > 0 ? c->between_cv : -1;
	t.threshold = o->threshold;
	t.alpha = o->alpha;
	rng_seed(&rg, o->seed);
	for (q = 0; q < GATE_CALIB_KS; q++) {
		c->aa[q] = c->power[q] = -1;
		t.k = (size_t)gate_calib_ks[q];
		t.slowdown = slowdown;
		c->sim_hit[q] = gate_trials(&t, &rg);
		t.slowdown = 0;
		c->sim_aa[q] = gate_trials(&t, &rg);
	}
}

int
gate_store_floor(struct store *s, const struct workload_group *g,
		 const struct gate_calib *c, const struct gate_calib_opts *o)
{
	struct noise_rec nr = { 0 };
	struct buf det = BUF_INIT;
	int rc;

	buf_addf(&det, "{\"threshold\": %g, \"alpha\": %g, \"mde_k3\": %g, "
		 "\"mde_k5\": %g, \"samples_per_process\": %g, "
		 "\"variant\": ", o->threshold, o->alpha, c->mde[1], c->mde[2],
		 c->samples_per_process);
	buf_add_json_str(&det, g->variant);
	buf_adds(&det, ", \"configuration\": ");
	buf_add_json_str(&det, g->config ? g->config->canon : "");
	buf_adds(&det, "}");
	nr.identity = g->identity;
	nr.target = g->target;
	nr.model = g->model;
	nr.test = g->test;
	nr.session_id = g->session;
	nr.processes = (int)c->processes;
	nr.samples = (int)c->samples;
	nr.within_cv = c->within_cv;
	nr.between_cv = c->between_cv;
	nr.mde = c->mde[0];
	nr.details_json = det.buf;
	rc = store_noise_add(s, &nr);
	buf_release(&det);
	return rc;
}

int
gate_calib_valid(const struct gate_calib *c)
{
	return c->processes >= 3 && isfinite(c->within_cv) &&
	       c->within_cv >= 0 && isfinite(c->between_cv) &&
	       c->between_cv >= 0 && isfinite(c->mde[0]);
}

int
gate_calibration_run(struct store *s, const struct selection *from,
		     const struct selection *power, double simulate,
		     const struct gate_calib_opts *o,
		     struct gate_calibration *out)
{
	struct workload_rows rows, prow;
	size_t j, i;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&prow, 0, sizeof(prow));
	memset(&rows, 0, sizeof(rows));
	if (store_read_begin(s) < 0)
		return -1;
	ret = workload_load(s, from, &rows);
	if (ret == 0 && power)
		ret = workload_load(s, power, &prow);
	store_read_end(s);
	if (ret < 0)
		goto cleanup;
	out->left_out = workload_left_out_words(&rows);
	out->included = workload_included_words(rows.r, rows.n);
	for (i = 0; i < rows.n && !workload_row_usable(&rows.r[i]); i++)
		;
	if (i == rows.n) {
		char *m = workload_nothing_words(&rows);

		error("%s", m);
		free(m);
		ret = RC_NOTHING;
		goto cleanup;
	}
	ret = workload_groups(rows.r, rows.n, &out->g, &out->n);
	if (ret < 0)
		goto cleanup;
	out->c = xcalloc(out->n, sizeof(*out->c));
	out->ok = xcalloc(out->n, sizeof(*out->ok));
	for (j = 0; j < out->n; j++) {
		struct cmp_side cand = { 0 };

		if (simulate >= 0) {
			gate_simulate(&out->g[j], simulate, o, &out->c[j]);
			out->ok[j] = 1;
			continue;
		}
		if (power)
			workload_side_of(prow.r, prow.n, &out->g[j], &cand);
		out->ok[j] = gate_calibrate(&out->g[j], power ? &cand : NULL,
					    o, &out->c[j]) == 0;
		if (out->ok[j] && !gate_calib_valid(&out->c[j])) {
			error("'%s %s': the noise floor is not a finite number "
			      "(within-process CV %g, between-process CV %g)",
			      out->g[j].model, out->g[j].test,
			      out->c[j].within_cv, out->c[j].between_cv);
			out->ok[j] = 0;
		}
		cmp_side_release(&cand);
	}
	ret = 0;
cleanup:
	workload_rows_release(&rows);
	workload_rows_release(&prow);
	return ret;
}

void
gate_calibration_release(struct gate_calibration *c)
{
	workload_groups_free(c->g, c->n);
	free(c->c);
	free(c->ok);
	free(c->left_out);
	free(c->included);
	memset(c, 0, sizeof(*c));
}

/* ---- the gate over a store ---- */

static double
threshold_for(const struct gate_opts *o, const char *test)
{
	size_t i, k = 0;

	for (i = 0; i < o->noverrides; i++)     /* exact test name first */
		if (!strcmp(o->overrides[i].metric, test))
			return o->overrides[i].value;
	while (isalpha((unsigned char)test[k]))
		k++;
	for (i = 0; i < o->noverrides; i++)
		if (strlen(o->overrides[i].metric) == k &&
		    !strncmp(o->overrides[i].metric, test, k))
			return o->overrides[i].value;
	return o->threshold;
}

static struct gate_check *
add_check(struct gate_report *rep, const char *suite, const char *name,
	  enum gate_verdict v, char *message)
{
	struct gate_check *k;

	rep->checks = xrealloc(rep->checks, (rep->n + 1) * sizeof(*rep->checks));
	k = &rep->checks[rep->n++];
	memset(k, 0, sizeof(*k));
	k->suite = xstrdup(suite);
	k->name = xstrdup(name);
	k->verdict = v;
	k->message = message;
	return k;
}

static void
pct(char *out, size_t size, double v)
{
	fmt_num(out, size, v * 100, 1);
}

/* The workload message: the numbers a reader needs beside the verdict. */
static char *
workload_message(const struct gate_check *k, enum gate_mode mode)
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
	if (k->d.invalid)
		return xstrfmt("%s is not a finite number, so nothing can be "
			       "decided: the samples (%zu and %zu, medians %g "
			       "and %g) hold values the statistics cannot "
			       "use; check them for implausible throughput",
			       k->d.invalid, k->r.na, k->r.nb, k->r.med_a,
			       k->r.med_b);
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

/* The candidate's selection without variant, role, target and status
 * keys, counting everything (the shim run checks look at every run). */
static void
session_selection(const struct selection *cand, struct selection *out)
{
	static const enum sel_key drop[] = {
		SEL_KEY_VARIANT, SEL_KEY_ROLE, SEL_KEY_TARGET,
		SEL_KEY_VERIFICATION, SEL_KEY_STATUS,
	};
	size_t i;

	selection_copy(out, cand);
	out->include = 0;
	for (i = 0; i < ARRAY_SIZE(drop); i++)
		selection_drop(out, drop[i]);
	selection_set_include(out, SEL_ALL);
}

/* "session 2 (OS build 24A200)", "sessions 1, 3 (OS builds A, B)" of
 * the usable rows (caller frees). */
static char *
side_words(const struct store_result *r, size_t n)
{
	int64_t *ss = NULL;
	char **ob = NULL;
	size_t ns = 0, nb = 0, i, j;
	struct buf b = BUF_INIT;

	for (i = 0; i < n; i++) {
		if (!workload_row_usable(&r[i]))
			continue;
		for (j = 0; j < ns && ss[j] != r[i].session_id; j++)
			;
		if (j == ns) {
			ss = xrealloc(ss, (ns + 1) * sizeof(*ss));
			ss[ns++] = r[i].session_id;
		}
		for (j = 0; j < nb && strcmp(ob[j], r[i].os_build); j++)
			;
		if (j == nb)
			ob = strv_push(ob, &nb, xstrdup(r[i].os_build));
	}
	buf_addf(&b, "session%s ", ns == 1 ? "" : "s");
	for (i = 0; i < ns && i < 8; i++)
		buf_addf(&b, "%s%lld", i ? ", " : "", (long long)ss[i]);
	if (ns > 8)
		buf_addf(&b, " and %zu more", ns - 8);
	buf_addf(&b, " (OS build%s ", nb == 1 ? "" : "s");
	for (i = 0; i < nb; i++)
		buf_addf(&b, "%s%s", i ? ", " : "", *ob[i] ? ob[i] : "unknown");
	buf_adds(&b, ")");
	free(ss);
	strv_free(ob);
	return buf_detach(&b, NULL);
}

/*
 * --baseline auto (analysis/baseline.h): sets *base, rep->baseline and
 * the auto_* fields; RC_NOTHING after error() when there is none.
 */
static int
resolve_auto(struct store *s, const struct selection *cand,
	     const struct store_result *rb, size_t nb, struct gate_report *rep,
	     struct selection *base)
{
	struct baseline_pick p;
	int rc = baseline_auto(s, cand, rb, nb, &p);

	if (rc == 0) {
		*base = p.sel;
		memset(&p.sel, 0, sizeof(p.sel));
		rep->baseline = xstrdup(base->text);
		rep->auto_session = p.session;
		rep->auto_os_build = p.cand_os_build;
		rep->auto_base = p.base;
		rep->auto_reason = p.reason;
		p.cand_os_build = p.base = p.reason = NULL;
	}
	baseline_pick_release(&p);
	return rc;
}

/* The statistics and verdict of one workload check. */
static void
workload_check(struct store *s, const struct gate_opts *o,
	       const struct workload *w, struct gate_report *rep)
{
	struct gate_check *k;
	struct cmp_opts copt = o->cmp;
	char *what;

	k = add_check(rep, "workload", w->name, GATE_PASS, NULL);
	k->threshold = threshold_for(o, w->test);
	copt.between_cv = workload_calibrated(s, w);
	what = xstrfmt("%s (baseline)", w->name);
	outliers_side(&w->a, what, &rep->warn);
	free(what);
	what = xstrfmt("%s (candidate)", w->name);
	outliers_side(&w->b, what, &rep->warn);
	free(what);
	if (w->idents_a > 1 || w->idents_b > 1)
		warnings_add(&rep->warn, xstrfmt(
			"%s: the %s pools sessions %s of %zu different "
			"fingerprints", w->name, w->idents_a > 1 ? "baseline" :
			"candidate", w->idents_a > 1 ? w->sessions_a :
			w->sessions_b, w->idents_a > 1 ? w->idents_a :
			w->idents_b));
	if (cmp_compute(&w->a, &w->b, &copt, &k->r) < 0) {
		k->verdict = GATE_INCONCLUSIVE;
		k->message = xstrdup(error_last());
		return;
	}
	k->has_stats = 1;
	{
		double *xa, *xb;
		size_t na, nb;

		xa = cmp_side_pool(&w->a, &na);
		xb = cmp_side_pool(&w->b, &nb);
		outliers_effect(xa, na, xb, nb, k->r.ratio, w->name,
				"the baseline", "the candidate", &rep->warn);
		free(xa);
		free(xb);
	}
	gate_decide(&k->r, k->threshold, o->alpha, o->mode, &k->d);
	k->verdict = k->d.verdict;
	if (((long)k->r.na < o->min_samples || (long)k->r.nb < o->min_samples) &&
	    k->verdict != GATE_REGRESSION) {
		k->verdict = GATE_INCONCLUSIVE;
		k->message = xstrfmt("only %zu and %zu samples; --min-samples "
				     "is %ld", k->r.na, k->r.nb, o->min_samples);
		return;
	}
	k->message = workload_message(k, o->mode);
}

/* The workload checks against the baseline. */
static int
baseline_checks(struct store *s, const struct gate_opts *o,
		const struct selection *base, const struct workload_rows *cand,
		struct gate_report *rep)
{
	struct workload_rows ra;
	struct workload *w = NULL;
	size_t nw = 0, oa = 0, ob = 0, i;
	char *why = NULL, *lo;
	int ret;

	ret = workload_load(s, base, &ra);
	if (ret < 0)
		goto cleanup;
	for (i = 0; i < ra.n && !workload_row_usable(&ra.r[i]); i++)
		;
	if (i == ra.n) {
		char *m = workload_nothing_words(&ra);

		error("baseline: %s", m);
		free(m);
		ret = RC_NOTHING;
		goto cleanup;
	}
	lo = workload_left_out_words(&ra);
	if (*lo)
		warnings_add(&rep->warn, xstrfmt("baseline: left out %s", lo));
	free(lo);
	lo = workload_included_words(ra.r, ra.n);
	if (*lo)
		warnings_add(&rep->warn, xstrfmt("baseline counts what the "
						 "defaults leave out: %s", lo));
	free(lo);
	ret = workload_match(ra.r, ra.n, cand->r, cand->n, &w, &nw, &oa, &ob,
			     &why);
	if (ret < 0)
		goto cleanup;
	if (!nw) {
		error("nothing comparable between '%s' and '%s' (%zu workloads "
		      "only in the baseline, %zu only in the candidate)%s%s",
		      rep->baseline, o->candidate->text, oa, ob,
		      *why ? ": " : "", why);
		ret = WORKLOAD_INCOMPARABLE;
		goto cleanup;
	}
	if (oa || ob)
		warnings_add(&rep->warn, xstrfmt(
			"%zu workloads only in the baseline, %zu only in the "
			"candidate: not gated%s%s", oa, ob, *why ? " (" : "",
			*why ? why : ""));
	rep->baseline_words = side_words(ra.r, ra.n);
	if (provenance_from_results(s, ra.r, ra.n, &rep->prov_baseline) < 0) {
		ret = -1;
		goto cleanup;
	}
	for (i = 0; i < nw; i++)
		workload_check(s, o, &w[i], rep);
	ret = 0;
cleanup:
	free(why);
	workloads_free(w, nw);
	workload_rows_release(&ra);
	return ret;
}

/* The verdict of one shim run: verified and ok, or a regression. */
static int
shim_run_check(const struct store_result *r, struct gate_report *rep)
{
	char *name;
	const char *why;

	if (!strcmp(r->verification, "verified") && !strcmp(r->run_status, "ok"))
		return 0;
	why = !strcmp(r->verification, "unverified") ?
		"the injection did not take effect" :
	      !strcmp(r->verification, "not-required") ?
		"nothing proves the injection took effect (the variant "
		"expects no markers)" :
		"the run did not complete";
	name = xstrfmt("shim run %lld (%s %s)", (long long)r->run_id, r->model,
		       r->test);
	add_check(rep, "shim-verified", name, GATE_REGRESSION,
		  xstrfmt("shim run %lld of session %lld is %s, status %s: %s",
			  (long long)r->run_id, (long long)r->session_id,
			  r->verification, r->run_status, why));
	free(name);
	return 1;
}

/* The shim / stock speedup of one workload against the floor. */
static void
shim_speedup_check(struct store *s, const struct gate_opts *o,
		   const struct workload *w, struct gate_report *rep)
{
	struct gate_check *k;
	struct cmp_opts co = o->cmp;
	char ratio[32], lo[32], fl[32];

	co.between_cv = workload_calibrated(s, w);
	k = add_check(rep, "shim-speedup", w->name, GATE_PASS, NULL);
	if (cmp_compute(&w->a, &w->b, &co, &k->r) < 0) {
		k->verdict = GATE_INCONCLUSIVE;
		k->message = xstrdup(error_last());
		return;
	}
	k->has_stats = 1;
	gate_decide(&k->r, 0.05, o->alpha, GATE_DETECT, &k->d);
	fmt_num(ratio, sizeof(ratio), k->r.ratio, 3);
	fmt_num(lo, sizeof(lo), k->d.lo, 3);
	fmt_num(fl, sizeof(fl), o->shim_floor, 3);
	if (k->d.invalid) {
		k->verdict = GATE_INCONCLUSIVE;
		k->message = xstrfmt("%s of shim / stock is not a finite "
				     "number: nothing can be decided against "
				     "the floor %s×", k->d.invalid, fl);
	} else if (k->d.lo >= o->shim_floor) {
		k->message = xstrfmt("shim / stock %s× (lower bound %s×) above "
				     "the floor %s×", ratio, lo, fl);
	} else if (k->d.hi < o->shim_floor) {
		k->verdict = GATE_REGRESSION;
		k->message = xstrfmt("shim / stock %s× is below the floor %s×",
				     ratio, fl);
	} else {
		k->verdict = GATE_INCONCLUSIVE;
		k->message = xstrfmt("shim / stock %s× (lower bound %s×) is not "
				     "confidently above the floor %s×", ratio,
				     lo, fl);
	}
	k->threshold = 0.05;
}

/*
 * The shim checks on the candidate: every shim run verified and ok
 * (every run the candidate's session keys select, counted or not: a
 * failed session's unverified shim is exactly what this catches), and
 * per workload the shim / stock speedup confidently above the floor (of
 * the rows that count).
 */
static int
shim_checks(struct store *s, const struct gate_opts *o, unsigned inc,
	    struct gate_report *rep)
{
	struct selection sel;
	struct workload_rows rows;
	struct store_result *stock = NULL, *shim = NULL;
	struct workload *w = NULL;
	size_t ns = 0, nh = 0, nw = 0, oa, ob, i, bad = 0, uncounted = 0;
	size_t shims = 0;
	int ret = -1;

	session_selection(o->candidate, &sel);
	memset(&rows, 0, sizeof(rows));
	ret = workload_load(s, &sel, &rows);
	if (ret < 0)
		goto cleanup;
	ret = -1;
	/* Shallow partitions: the rows stay owned by rows. */
	stock = xcalloc(rows.n ? rows.n : 1, sizeof(*stock));
	shim = xcalloc(rows.n ? rows.n : 1, sizeof(*shim));
	for (i = 0; i < rows.n; i++) {
		const struct store_result *r = &rows.r[i];
		int counted = selection_counts(inc, r->session_status,
					       r->session_tampered,
					       r->run_status);

		if (!strcmp(r->role, "shim")) {
			shims++;
			if (shim_run_check(r, rep))
				bad++;
			else if (counted)
				shim[nh++] = *r;
			else
				uncounted++;
		} else if (!strcmp(r->role, "stock")) {
			if (counted)
				stock[ns++] = *r;
			else
				uncounted++;
		}
	}
	if (!shims) {
		add_check(rep, "shim-verified", "shim runs", GATE_REGRESSION,
			  xstrfmt("the candidate '%s' has no shim runs",
				  o->candidate->text));
		ret = 0;
		goto cleanup;
	}
	if (!bad)
		add_check(rep, "shim-verified", "shim runs", GATE_PASS,
			  xstrfmt("%zu shim results, every run "
				  "injection-verified", shims));
	if (workload_match(stock, ns, shim, nh, &w, &nw, &oa, &ob, NULL) < 0) {
		ret = RC_USAGE;
		goto cleanup;
	}
	for (i = 0; i < nw; i++)
		shim_speedup_check(s, o, &w[i], rep);
	if (!nw && !bad && uncounted)
		add_check(rep, "shim-speedup", "shim / stock", GATE_INCONCLUSIVE,
			  xstrfmt("the candidate's stock and shim results do "
				  "not count (a tampered, failed, interrupted "
				  "or partial session or run); include them "
				  "explicitly (include=...) to gate them"));
	else if (!nw && !bad)
		add_check(rep, "shim-speedup", "shim / stock", GATE_REGRESSION,
			  xstrfmt("no stock run to compare the shim with in "
				  "'%s'", sel.text));
	ret = 0;
cleanup:
	workloads_free(w, nw);
	free(stock);
	free(shim);
	workload_rows_release(&rows);
	selection_free(&sel);
	return ret;
}

static int gate_evaluate_tx(struct store *s, const struct gate_opts *o,
			    struct gate_report *rep);

int
gate_evaluate(struct store *s, const struct gate_opts *o,
	      struct gate_report *rep)
{
	int rc;

	memset(rep, 0, sizeof(*rep));
	/* both sides from one snapshot of the store */
	if (store_read_begin(s) < 0)
		return -1;
	rc = gate_evaluate_tx(s, o, rep);
	store_read_end(s);
	return rc;
}

static int
gate_evaluate_tx(struct store *s, const struct gate_opts *o,
		 struct gate_report *rep)
{
	struct workload_rows rb;
	struct selection base = { 0 };
	size_t i;
	int ret, counts;
	char *words;

	memset(rep, 0, sizeof(*rep));
	rep->alpha = o->alpha;
	ret = workload_load(s, o->candidate, &rb);
	if (ret < 0)
		goto cleanup;
	if (!rb.n && !rb.nlo) {
		error("nothing matched the selection '%s' (the candidate)",
		      o->candidate->text);
		ret = RC_NOTHING;
		goto cleanup;
	}
	for (i = 0; i < rb.n && !workload_row_usable(&rb.r[i]); i++)
		;
	counts = i < rb.n;
	words = workload_left_out_words(&rb);
	if (*words)
		warnings_add(&rep->warn, xstrfmt("candidate: left out %s", words));
	free(words);
	words = workload_included_words(rb.r, rb.n);
	if (*words)
		warnings_add(&rep->warn, xstrfmt("candidate counts what the "
						 "defaults leave out: %s",
						 words));
	free(words);
	rep->candidate_words = counts ? side_words(rb.r, rb.n) :
			       xstrdup("nothing that counts");
	if (counts && provenance_from_results(s, rb.r, rb.n,
					      &rep->prov_candidate) < 0) {
		ret = -1;
		goto cleanup;
	}
	if ((o->baseline || o->baseline_auto) && !counts) {
		char *m = workload_nothing_words(&rb);

		add_check(rep, "workload", "candidate", GATE_INCONCLUSIVE,
			  xstrfmt("%s: no verdict on data that does not count",
				  m));
		free(m);
	} else if (o->baseline_auto) {
		ret = resolve_auto(s, o->candidate, rb.r, rb.n, rep, &base);
		if (ret < 0)
			goto cleanup;
	} else if (o->baseline) {
		selection_copy(&base, o->baseline);
		rep->baseline = xstrdup(base.text);
	}
	if (rep->baseline) {
		ret = baseline_checks(s, o, &base, &rb, rep);
		if (ret < 0)
			goto cleanup;
	}
	if (o->shim_floor > 0) {
		ret = shim_checks(s, o, rb.include, rep);
		if (ret < 0)
			goto cleanup;
	}
	for (i = 0; i < rep->n; i++) {
		const struct gate_check *k = &rep->checks[i];

		rep->regressions += k->verdict == GATE_REGRESSION;
		rep->inconclusive += k->verdict == GATE_INCONCLUSIVE;
		if (k->verdict == GATE_INCONCLUSIVE && k->d.need_k > rep->most_k)
			rep->most_k = k->d.need_k;
	}
	ret = 0;
cleanup:
	workload_rows_release(&rb);
	selection_free(&base);
	return ret;
}

void
gate_report_release(struct gate_report *rep)
{
	size_t i;

	for (i = 0; i < rep->n; i++) {
		free(rep->checks[i].suite);
		free(rep->checks[i].name);
		free(rep->checks[i].message);
	}
	free(rep->checks);
	free(rep->baseline);
	free(rep->auto_os_build);
	free(rep->auto_base);
	free(rep->auto_reason);
	free(rep->baseline_words);
	free(rep->candidate_words);
	provenance_free(rep->prov_baseline);
	provenance_free(rep->prov_candidate);
	warnings_release(&rep->warn);
	memset(rep, 0, sizeof(*rep));
}
