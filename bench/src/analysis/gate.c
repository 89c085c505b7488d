#define _POSIX_C_SOURCE 200809L
#include "analysis/gate-internal.h"
#include "evidence/state.h"
#include "analysis/baseline.h"
#include "analysis/outliers.h"
#include "analysis/provenance.h"
#include "analysis/stats.h"
#include "analysis/workload.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "evidence/runrec.h"
#include "base/json.h"
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
	if (!(r->se >= 0) || isnan(r->df))
		return "the standard error of the log ratio";
	if (r->se == 0 && r->noise != NOISE_PAIRED)
		return "the standard error of the log ratio (0: no spread "
		       "shows the noise)";
	return NULL;
}

/*
 * Power of the detect rule at a true slowdown delta (log units) when
 * the estimate is N(-delta, sigma^2) and its standard error is
 * sigma sqrt(V / df), V chi-square with df degrees of freedom,
 * independent of it: the estimate must lie below -q se (confidently
 * slower) and below -t (beyond the threshold):
 *   E_V[ Phi(min(delta / sigma - q sqrt(V / df), (delta - t) / sigma)) ]
 * The expectation by the midpoint rule over log(V / df) (160 points
 * from 1e-9 to 60 times its mean: the rest holds less than 1e-9).
 */
#define POWER_POINTS 160

static double
detect_power(double delta, double sigma, double q, double t, double df)
{
	double lo = log(1e-9), hi = log(60.0), h = (hi - lo) / POWER_POINTS;
	double lnorm, sum = 0;
	int i;

	if (!isfinite(df))
		return stats_norm_cdf(fmin(delta / sigma - q, (delta - t) / sigma));
	/* U = V / df has density (df/2)^(df/2) u^(df/2-1) e^(-df u/2) /
	 * Gamma(df/2); in x = log u the integrand gains a factor u */
	lnorm = df / 2 * log(df / 2) - lgamma(df / 2);
	for (i = 0; i < POWER_POINTS; i++) {
		double x = lo + (i + 0.5) * h, u = exp(x);
		double dens = exp(lnorm + df / 2 * x - df * u / 2);

		sum += dens * stats_norm_cdf(fmin(delta / sigma - q * sqrt(u),
						  (delta - t) / sigma)) * h;
	}
	return sum;
}

/*
 * The slowdown (log units) caught with 95 % power by the detect rule
 * with critical value q and threshold t, for an estimate whose
 * standard error se has df degrees of freedom. se itself is a random
 * estimate; dividing it by the median of sqrt(V / df) (Wilson–Hilferty)
 * makes the MDE median-unbiased: over repeated data sets half the
 * printed MDEs lie at or above the true one. The bootstrap se of a
 * median over few processes spreads more than a variance estimate of
 * df degrees of freedom would (a median of a few process offsets): by
 * simulation about as much as one of three quarters of them; the spread
 * of se is given 60 % of them here (MDE_DF_SHARE, which keeps every
 * simulated cell at or above 95 %: bench/BENCHMARKS.md, "The fixed
 * gate"); the bounds keep df.
 * With df infinite this is max(q se, t) + z(0.95) se.
 */
#define MDE_DF_SHARE 0.6

static double
mde_log(double se, double df, double q, double t)
{
	double sigma = se, lo, hi;
	int i;

	if (!isfinite(df))
		return fmax(q * se, t) + stats_norm_quantile(0.95) * se;
	df = fmax(1, MDE_DF_SHARE * df);
	sigma /= pow(1 - 2 / (9 * df), 1.5);
	if (!(sigma > 0))
		return t;
	lo = t;
	hi = t + 100 * q * sigma;
	if (detect_power(hi, sigma, q, t, df) < 0.95)
		return INFINITY;
	for (i = 0; i < 60 && hi - lo > 1e-7 * hi; i++) {
		double mid = lo / 2 + hi / 2;

		if (detect_power(mid, sigma, q, t, df) >= 0.95)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/*
 * The degrees of freedom of an se measured with k0 processes per side
 * (df0) when the sides have k: the estimates' degrees of freedom grow
 * with the processes (K - 1 each); exact ones stay exact.
 */
static double
df_at(double df0, double k0, double k)
{
	if (!isfinite(df0) || k0 <= 1)
		return df0;
	return df0 * (k - 1) / (k0 - 1);
}

/*
 * Works on d = log(ratio) with its bootstrap standard error se of df
 * degrees of freedom. The one-sided bounds are d -/+ q·se with q the
 * (1 - alpha) quantile of Student's t with df (the normal's when df is
 * infinite). Processes needed: every noise component shrinks as 1/K,
 * so se(K) = se·sqrt(K0/K), and the degrees of freedom grow with K.
 * Every comparison is written so that a NaN makes it false, and a NaN
 * anywhere ends as inconclusive, never pass.
 */
void
gate_decide(const struct cmp_result *r, double threshold, double alpha,
	    enum gate_mode mode, struct gate_decision *d)
{
	double df = r->df > 0 || isnan(r->df) ? r->df : INFINITY;
	double q = stats_t_quantile(1 - alpha, df);
	double t = -log(1 - threshold), lr = log(r->ratio);
	double k0 = (double)(r->ka + r->kb) / 2;
	int k;

	memset(d, 0, sizeof(*d));
	d->lo = exp(lr - q * r->se);
	d->hi = exp(lr + q * r->se);
	d->crit = 1 - exp(-q * r->se);
	d->mde = 1 - exp(-mde_log(r->se, df, q, t));
	d->below_floor = !(q * r->se <= t);
	d->invalid = invalid_statistic(r, d);
	if (d->invalid) {
		d->verdict = GATE_INCONCLUSIVE;
		return;
	}
	if (lr + q * r->se < 0 && lr <= -t)
		d->verdict = GATE_REGRESSION;
	else if (lr - q * r->se > -t)   /* confidently within: both modes */
		d->verdict = GATE_PASS;
	else if (mode == GATE_DETECT && !d->below_floor)
		d->verdict = GATE_PASS;
	else
		d->verdict = GATE_INCONCLUSIVE;
	if (d->verdict != GATE_INCONCLUSIVE || r->se <= 0)
		return;
	/* detect: q(K)·se(K) <= t; prove: likely (80 %) to pass when there
	 * is no change, (q(K) + t(0.8))·se(K) <= t. Doubling, then
	 * bisection over K. */
	{
		long lo = (long)k0, hi = lo + 1, mid;

		for (;;) {
			double dfk = df_at(df, k0, (double)hi);
			double sek = r->se * sqrt(k0 / (double)hi);
			double need = stats_t_quantile(1 - alpha, dfk) +
				      (mode == GATE_DETECT ? 0 :
				       stats_t_quantile(0.8, dfk));

			if (need * sek <= t || hi >= 1000000)
				break;
			lo = hi;
			hi *= 2;
		}
		while (hi - lo > 1) {
			double dfk, sek, need;

			mid = lo + (hi - lo) / 2;
			dfk = df_at(df, k0, (double)mid);
			sek = r->se * sqrt(k0 / (double)mid);
			need = stats_t_quantile(1 - alpha, dfk) +
			       (mode == GATE_DETECT ? 0 :
				stats_t_quantile(0.8, dfk));
			if (need * sek <= t)
				hi = mid;
			else
				lo = mid;
		}
		k = hi > 1000000 ? 1000000 : (int)hi;
		d->need_k = k <= (int)k0 ? (int)k0 + 1 : k;
	}
}

/*
 * The MDE of the default detect gate predicted from a noise model: K
 * processes of r samples per side, process effect between, within-
 * process CV within. The se of log(ratio) with K processes of r
 * samples per side is sqrt(2 (between^2 + var(median of r)) / K); the
 * MDE follows as in gate_decide() for a calibrated gate (the floor
 * counts as known).
 */
static double
gate_mde_model(double between, double within, double r, int k,
	       double threshold, double alpha)
{
	double se = sqrt(2 * (between * between +
			      stats_median_var(within, r)) / k);

	return 1 - exp(-mde_log(se, INFINITY, stats_norm_quantile(1 - alpha),
				-log(1 - threshold)));
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

/* The trials of t (gate.h struct gate_trial): how many were flagged. */
static long
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

/*
 * Calibrates g (at least 3 processes; -1 after error() otherwise): the
 * noise floor, the model MDE for each K and, with trials, the A/A
 * false-alarm counts and, when cand has processes, the power against it.
 */
static int
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
 * --simulate: the detection rate of a slowdown and the A/A false-alarm
 * rate on resampled copies of g's processes (works with one process).
 * Every simulated process resamples one stored process; there is no
 * process effect beyond what the stored processes show.
 */
static void
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
	struct jw w;
	int rc;

	jw_init(&w, &det, 0);
	jw_object(&w);
	jw_knum(&w, "threshold", o->threshold);
	jw_knum(&w, "alpha", o->alpha);
	jw_knum(&w, "mde_k3", c->mde[1]);
	jw_knum(&w, "mde_k5", c->mde[2]);
	jw_knum(&w, "samples_per_process", c->samples_per_process);
	jw_kstr(&w, "variant", g->variant);
	jw_kstr(&w, "configuration", g->config ? g->config->canon : "");
	jw_end(&w);
	nr.identity = g->identity;
	nr.target = g->target;
	nr.model = g->model;
	nr.test = g->test;
	nr.variant = g->variant;
	nr.config = g->config ? g->config->canon : "";
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

/* 1 when c is a floor that may be stored: 3 processes or more, every
 * figure a finite non-negative number. */
static int
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

struct gate_check *
gate_add_check(struct gate_report *rep, const char *suite, const char *name,
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

/* What the noise estimate stands on, for a message: "noise observed,
 * process CV 5.1 %, 3 vs 3 processes, t with 4 degrees of freedom". */
static char *
noise_words(const struct gate_check *k)
{
	char bcv[32], df[64] = "";

	pct(bcv, sizeof(bcv), k->r.between_cv);
	if (isfinite(k->r.df))
		snprintf(df, sizeof(df), ", t with %.1f degrees of freedom",
			 k->r.df);
	return xstrfmt("noise %s, process CV %s%%, %zu vs %zu processes%s",
		       cmp_noise_name(k->r.noise), bcv, k->r.ka, k->r.kb, df);
}

/* The words of the assumed floor, "" unless the noise is assumed. */
static const char *
assumed_words(const struct gate_check *k)
{
	if (k->r.noise != NOISE_ASSUMED)
		return "";
	if (k->floors_elsewhere > 0)
		return "; one process per side and no noise floor for this "
		       "configuration (uncalibrated: this fingerprint's floors "
		       "for this test are of another model, variant or "
		       "configuration, and none stands in), so the process "
		       "effect is assumed to be the conservative 10 % "
		       "(docs/statistics.md): calibrate this one (shimbench "
		       "calibrate --store) or run 3 or more processes per side "
		       "for a tighter verdict";
	return "; one process per side and no noise floor for this "
	       "configuration, so the process effect is assumed to be the "
	       "conservative 10 % (docs/statistics.md): calibrate it "
	       "(shimbench calibrate --store) or run 3 or more processes "
	       "per side for a tighter verdict";
}

/* The workload message: the numbers a reader needs beside the verdict. */
static char *
workload_message(const struct gate_check *k, enum gate_mode mode)
{
	char ratio[32], lo[32], hi[32], mde[32], crit[32], thr[32];
	char slow[32], *noise = noise_words(k), *m;

	fmt_num(ratio, sizeof(ratio), k->r.ratio, 4);
	fmt_num(lo, sizeof(lo), k->d.lo, 4);
	fmt_num(hi, sizeof(hi), k->d.hi, 4);
	pct(mde, sizeof(mde), k->d.mde);
	pct(crit, sizeof(crit), k->d.crit);
	pct(thr, sizeof(thr), k->threshold);
	pct(slow, sizeof(slow), 1 - k->r.ratio);
	if (k->verdict == GATE_REGRESSION)
		m = xstrfmt("%s%% slower (ratio %s, bounds %s-%s), beyond the "
			    "%s%% threshold; MDE %s%% (%s)%s", slow, ratio, lo,
			    hi, thr, mde, noise, assumed_words(k));
	else if (k->verdict == GATE_PASS && k->d.lo > 1)
		m = xstrfmt("%s× faster (bounds %s-%s): an improvement; MDE "
			    "%s%%", ratio, lo, hi, mde);
	else if (k->verdict == GATE_PASS)
		m = xstrfmt("ratio %s (bounds %s-%s) within the %s%% threshold; "
			    "MDE %s%%", ratio, lo, hi, thr, mde);
	else if (k->d.invalid)
		m = xstrfmt("%s is not a finite number, so nothing can be "
			    "decided: the samples (%zu and %zu, medians %g and "
			    "%g) hold values the statistics cannot use; check "
			    "them for implausible throughput", k->d.invalid,
			    k->r.na, k->r.nb, k->r.med_a, k->r.med_b);
	else if (mode == GATE_DETECT || k->d.below_floor)
		m = xstrfmt("threshold %s%% is below what the data can resolve: "
			    "the smallest slowdown it can flag is %s%% (%s); "
			    "about %d processes per side would resolve %s%% "
			    "(ratio %s, MDE %s%%)%s", thr, crit, noise,
			    k->d.need_k, thr, ratio, mde, assumed_words(k));
	else
		m = xstrfmt("cannot show the slowdown is within %s%% (ratio %s, "
			    "bounds %s-%s); about %d processes per side would "
			    "likely decide it (MDE %s%%)", thr, ratio, lo, hi,
			    k->d.need_k, mde);
	free(noise);
	return m;
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
	} else if (rc == RC_NOTHING) {
		rep->auto_none = p.none;
	}
	baseline_pick_release(&p);
	return rc;
}

/*
 * "decided on 2 of the 3 processes session 2 ran of it (run 5 crashed,
 * killed by signal 9)" for the side's one session (nothing when the
 * side pools several, or none was lost); from the session's runs, so a
 * process killed before its first row counts too.
 */
static void
of_runs_words(struct store *s, const struct cmp_side *side, int64_t session,
	      const char *model, struct buf *b)
{
	struct run_rec *runs = NULL;
	const char *variant = NULL;
	size_t n = 0, i, total = 0, lost = 0;
	struct buf why = BUF_INIT;

	if (!side->nproc || store_runs_get(s, session, &runs, &n) < 0)
		return;
	for (i = 0; i < n && !variant; i++)
		if (runs[i].id == side->run_id[0])
			variant = runs[i].variant;
	for (i = 0; variant && i < n; i++) {
		const struct run_rec *r = &runs[i];

		if (strcmp(r->variant, variant) || strcmp(r->model, model))
			continue;
		total++;
		if (run_state_of(r->status) == RUN_STATE_OK)
			continue;
		if (lost++ >= 4)
			continue;
		buf_addf(&why, "%srun %lld %s", why.len ? ", " : "",
			 (long long)r->id, r->status);
		if (r->signal > 0)
			buf_addf(&why, ", killed by signal %lld",
				 (long long)r->signal);
	}
	if (lost && total > side->nproc)
		buf_addf(b, "%sdecided on %zu of the %zu processes session %lld "
			 "ran of it (%s)", b->len ? "; " : "", side->nproc,
			 total, (long long)session, why.buf);
	buf_release(&why);
	store_runs_free(runs, n);
}

/*
 * The processes a side of w lost, in words ("" none, caller frees):
 * how many of its session's processes it decided on and why the others
 * do not count (a killed or failed process), runs the defaults left out,
 * and fewer processes than the other side holds.
 */
static char *
lost_words(struct store *s, const struct workload *w,
	   const struct workload_rows *rows, int candidate)
{
	struct buf b = BUF_INIT;
	int64_t session = candidate ? w->session_b : w->session_a;
	const struct cmp_side *side = candidate ? &w->b : &w->a;
	const char *sessions = candidate ? w->sessions_b : w->sessions_a;
	size_t mine = side->nproc;
	size_t theirs = candidate ? w->a.nproc : w->b.nproc, i;
	int suspect;

	/* the session's runs are read only when something may be lost: a
	 * session that did not end ok, runs left out, fewer processes */
	for (i = 0; rows && i < rows->nlo && rows->lo[i].session != session; i++)
		;
	suspect = mine < theirs || (rows && i < rows->nlo);
	for (i = 0; rows && !suspect && i < rows->n; i++)
		if (rows->r[i].session_id == session &&
		    session_state_of(rows->r[i].session_status) !=
		    SESSION_STATE_OK)
			suspect = 1;
	if (suspect && sessions && !strchr(sessions, ','))
		of_runs_words(s, side, session, w->model, &b);
	for (i = 0; rows && i < rows->nlo; i++) {
		const struct store_left_out *l = &rows->lo[i];

		if (l->session != session ||
		    run_state_of(l->run_status) == RUN_STATE_OK)
			continue;
		buf_addf(&b, "%s%ld run%s of session %lld lost (status %s)",
			 b.len ? ", " : "", l->runs, l->runs == 1 ? "" : "s",
			 (long long)session, l->run_status);
	}
	if (b.len || mine < theirs)
		buf_addf(&b, "%sthe %s has %zu process%s against the %s's %zu",
			 b.len ? "; " : "", candidate ? "candidate" : "baseline",
			 mine, mine == 1 ? "" : "es",
			 candidate ? "baseline" : "candidate", theirs);
	return buf_detach(&b, NULL);
}

/* The statistics and verdict of one workload check. */
static void
workload_check(struct store *s, const struct gate_opts *o,
	       const struct workload *w, const struct workload_rows *ra,
	       const struct workload_rows *rb, struct gate_report *rep)
{
	struct gate_check *k;
	struct cmp_opts copt = o->cmp;
	char *what, *lost_a, *lost_b;

	k = gate_add_check(rep, "workload", w->name, GATE_PASS, NULL);
	k->threshold = threshold_for(o, w->test);
	copt.between_cv = workload_calibrated(s, w, &copt.between_df);
	if (copt.between_cv < 0)
		k->floors_elsewhere = workload_floors_elsewhere(s, w);
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
	/* thin data decides nothing, a regression included (one sample a
	 * side has bounds of no width) */
	if ((long)k->r.na < o->min_samples || (long)k->r.nb < o->min_samples) {
		k->verdict = GATE_INCONCLUSIVE;
		k->message = xstrfmt("only %zu and %zu samples; --min-samples "
				     "is %ld: too few to decide anything (ratio "
				     "%.4g)", k->r.na, k->r.nb, o->min_samples,
				     k->r.ratio);
	} else {
		k->message = workload_message(k, o->mode);
	}
	lost_a = lost_words(s, w, ra, 0);
	lost_b = lost_words(s, w, rb, 1);
	if (*lost_a || *lost_b) {
		const char *first = *lost_b ? lost_b : lost_a;
		char *m = xstrfmt("%s; %s%s%s%s", k->message,
				  strncmp(first, "decided on ", 11) ?
				  "decided on what is left: " : "", lost_b,
				  *lost_a && *lost_b ? "; " : "", lost_a);

		free(k->message);
		k->message = m;
	}
	free(lost_a);
	free(lost_b);
}

/* 1 when the rows hold more than one variant (usable or not: a variant
 * whose runs all lost their injection is still one of the selection's). */
static int
several_variants(const struct store_result *r, size_t n)
{
	size_t i;
	const char *first = NULL;

	for (i = 0; i < n; i++) {
		if (!first)
			first = r[i].variant;
		else if (strcmp(first, r[i].variant))
			return 1;
	}
	return 0;
}

static int
same_check_workload(const struct store_result *a, const struct store_result *b,
		    int by_variant)
{
	return workload_same(a, b) && (!by_variant || !strcmp(a->variant, b->variant));
}

/*
 * A workload of the baseline that the candidate lacks, or holds only
 * without samples, is no pass: an inconclusive check per workload,
 * named, with the reason.
 */
static void
missing_checks(const struct workload_rows *ra, const struct workload_rows *rb,
	       struct gate_report *rep)
{
	int by_variant = several_variants(ra->r, ra->n) ||
			 several_variants(rb->r, rb->n);
	size_t i, j;

	for (i = 0; i < ra->n; i++) {
		const struct store_result *a = &ra->r[i];
		const char *why = NULL;
		char *name;

		if (!workload_row_usable(a))
			continue;
		for (j = 0; j < i; j++)
			if (workload_row_usable(&ra->r[j]) &&
			    same_check_workload(&ra->r[j], a, by_variant))
				break;
		if (j < i)
			continue;        /* named once */
		for (j = 0; j < rb->n; j++) {
			if (!same_check_workload(a, &rb->r[j], by_variant))
				continue;
			if (workload_row_usable(&rb->r[j]) ||
			    verify_state_of(rb->r[j].verification) ==
			    VERIFY_UNVERIFIED)
				break;  /* gated, or its injection check */
			why = "its runs of it hold no samples (llama-bench -r "
			      "0, or a run cut off before its first)";
		}
		if (j < rb->n)
			continue;
		name = xstrfmt("%s%s%s %s", by_variant ? a->variant : "",
			       by_variant ? ": " : "", a->model, a->test);
		gate_add_check(rep, "workload", name, GATE_INCONCLUSIVE, xstrfmt(
			"in the baseline (session %lld) but not in the candidate "
			"'%s'%s%s: a workload that was not measured is no pass",
			(long long)a->session_id, rb->text, why ? ": " : "",
			why ? why : ""));
		free(name);
	}
}

/*
 * An explicit baseline of another machine or setup (its base
 * fingerprint, everything but OS version and build, differs from the
 * candidate's): a warning in the verdict, since the ratio then compares
 * machines, not an OS update.
 */
static void
other_machine_warning(const struct workload_rows *ra,
		      const struct workload_rows *rb, struct gate_report *rep)
{
	const struct store_result *a = NULL, *b = NULL;
	size_t i;

	for (i = 0; i < ra->n && !a; i++)
		if (workload_row_usable(&ra->r[i]) && *ra->r[i].base_identity)
			a = &ra->r[i];
	for (i = 0; i < rb->n && !b; i++)
		if (workload_row_usable(&rb->r[i]) && *rb->r[i].base_identity)
			b = &rb->r[i];
	if (!a || !b || !strcmp(a->base_identity, b->base_identity))
		return;
	warnings_add(&rep->warn, xstrfmt(
		"the baseline (session %lld, target '%s') was measured on another "
		"machine or setup than the candidate (session %lld, target '%s'): "
		"their fingerprints differ beyond OS version and build (base "
		"fingerprints %.12s and %.12s: hardware, VM, llama.cpp build or "
		"shim), so the verdict compares those, not only an OS update",
		(long long)a->session_id, a->target, (long long)b->session_id,
		b->target, a->base_identity, b->base_identity));
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
		/* a candidate of only runs that lost their injection: the
		 * injection checks are its verdict */
		size_t before = rep->n;

		gate_injection_checks(&ra, cand, rep);
		if (rep->n > before) {
			ret = 0;
			goto cleanup;
		}
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
			"candidate: not gated%s%s%s%s", oa, ob, *why ? " (" : "",
			*why ? why : "", *why ? ")" : "",
			gate_has_unverified(cand) ? "; those of a variant whose "
			"runs lost their injection markers are judged by its "
			"injection check" : ""));
	if (!o->baseline_auto)
		other_machine_warning(&ra, cand, rep);
	rep->baseline_words = side_words(ra.r, ra.n);
	if (provenance_from_results(s, ra.r, ra.n, &rep->prov_baseline) < 0) {
		ret = -1;
		goto cleanup;
	}
	for (i = 0; i < nw; i++)
		workload_check(s, o, &w[i], &ra, cand, rep);
	if (oa)
		missing_checks(&ra, cand, rep);
	gate_injection_checks(&ra, cand, rep);
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

	switch (verify_state_of(r->verification)) {
	case VERIFY_VERIFIED:
		if (run_state_of(r->run_status) == RUN_STATE_OK)
			return 0;
		why = "the run did not complete";
		break;
	case VERIFY_UNVERIFIED:
		why = "the injection did not take effect";
		break;
	case VERIFY_NOT_REQUIRED:
		why = "nothing proves the injection took effect (the variant "
			"expects no markers)";
		break;
	default:
		why = "the run did not complete";
		break;
	}
	name = xstrfmt("shim run %lld (%s %s)", (long long)r->run_id, r->model,
		       r->test);
	gate_add_check(rep, "shim-verified", name, GATE_REGRESSION,
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

	co.between_cv = workload_calibrated(s, w, &co.between_df);
	k = gate_add_check(rep, "shim-speedup", w->name, GATE_PASS, NULL);
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
		gate_add_check(rep, "shim-verified", "shim runs", GATE_REGRESSION,
			  xstrfmt("the candidate '%s' has no shim runs",
				  o->candidate->text));
		ret = 0;
		goto cleanup;
	}
	if (!bad)
		gate_add_check(rep, "shim-verified", "shim runs", GATE_PASS,
			  xstrfmt("%zu shim results, every run "
				  "injection-verified", shims));
	if (workload_match(stock, ns, shim, nh, &w, &nw, &oa, &ob, NULL) < 0) {
		ret = RC_USAGE;
		goto cleanup;
	}
	for (i = 0; i < nw; i++)
		shim_speedup_check(s, o, &w[i], rep);
	if (!nw && !bad && uncounted)
		gate_add_check(rep, "shim-speedup", "shim / stock", GATE_INCONCLUSIVE,
			  xstrfmt("the candidate's stock and shim results do "
				  "not count (a tampered, failed, interrupted "
				  "or partial session or run); include them "
				  "explicitly (include=...) to gate them"));
	else if (!nw && !bad)
		gate_add_check(rep, "shim-speedup", "shim / stock", GATE_REGRESSION,
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
	if (ret == 0 && (o->baseline || o->baseline_auto))
		ret = gate_count_injection_failures(s, o->candidate, &rb, rep);
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
	if ((o->baseline || o->baseline_auto) && !counts &&
	    !gate_has_unverified(&rb)) {
		char *m = workload_nothing_words(&rb);

		gate_add_check(rep, "workload", "candidate", GATE_INCONCLUSIVE,
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
