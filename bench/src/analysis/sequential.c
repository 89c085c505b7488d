/*
 * The sequential gate (analysis/sequential.h): an always-valid
 * confidence sequence for the shift of the processes' log medians.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis/sequential.h"
#include "analysis/stats.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double seq_g[] = { 1, 10, 100, 1000 };

const char *
seq_verdict_name(enum seq_verdict v)
{
	switch (v) {
	case SEQ_PASS: return "pass";
	case SEQ_REGRESSION: return "regression";
	case SEQ_MORE: return "needs-more";
	case SEQ_CAPPED: return "inconclusive";
	}
	return "?";
}

/*
 * log of the mixture Bayes factor at |statistic| x for effective size n
 * and df degrees of freedom (INFINITY: the normal mixture), the mean of
 * the components for each g, computed in logs (it reaches 1e300 and
 * beyond for large x).
 */
static double
log_bf(double x, double n, double df)
{
	double best = -INFINITY, sum = 0, l[ARRAY_SIZE(seq_g)];
	size_t j;

	for (j = 0; j < ARRAY_SIZE(seq_g); j++) {
		double ng = n * seq_g[j];

		if (!isfinite(df))
			l[j] = -0.5 * log1p(ng) + ng * x * x / (2 * (1 + ng));
		else
			l[j] = -0.5 * log1p(ng) + (df + 1) / 2 *
			       (log1p(x * x / df) - log1p(x * x / (df * (1 + ng))));
		if (l[j] > best)
			best = l[j];
	}
	for (j = 0; j < ARRAY_SIZE(seq_g); j++)
		sum += exp(l[j] - best);
	return best + log(sum / (double)ARRAY_SIZE(seq_g));
}

/* The |statistic| where the Bayes factor reaches 1/alpha; INFINITY when
 * it never does (its limit for large x is below). */
static double
critical(double n, double df, double alpha)
{
	double target = -log(alpha), lo = 0, hi = 1;
	int i;

	if (isfinite(df)) {
		/* the limit: mean of (1 + n g)^(df / 2) */
		double lim = -INFINITY, sum = 0;
		size_t j;

		for (j = 0; j < ARRAY_SIZE(seq_g); j++)
			lim = fmax(lim, df / 2 * log1p(n * seq_g[j]));
		for (j = 0; j < ARRAY_SIZE(seq_g); j++)
			sum += exp(df / 2 * log1p(n * seq_g[j]) - lim);
		if (lim + log(sum / (double)ARRAY_SIZE(seq_g)) <= target + 1e-12)
			return INFINITY;
	}
	while (log_bf(hi, n, df) < target) {
		hi *= 2;
		if (hi > 1e12)
			return INFINITY;
	}
	for (i = 0; i < 80 && hi - lo > 1e-10 * hi; i++) {
		double mid = lo / 2 + hi / 2;

		if (log_bf(mid, n, df) >= target)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

double
seq_half_width(double ka, double kb, double sigma, double df, double alpha)
{
	double n, c;

	if (!(ka > 0) || !(kb > 0) || !(sigma >= 0) || isnan(df) || !(df > 0))
		return INFINITY;
	n = 1 / (1 / ka + 1 / kb);
	c = critical(n, df, alpha);
	return c * sigma * sqrt(1 / ka + 1 / kb);
}

/* The processes of a side as log medians (those with samples): their
 * count, mean and sum of squares about it; the samples per process. */
struct seq_side {
	size_t k;
	double mean, ss, samples;
};

static void
seq_side(const struct cmp_side *s, struct seq_side *out)
{
	size_t i;
	double *y = xmalloc((s->nproc + 1) * sizeof(double));

	memset(out, 0, sizeof(*out));
	for (i = 0; i < s->nproc; i++) {
		double m;

		if (!s->len[i])
			continue;
		m = stats_median(s->x[i], s->len[i]);
		if (!(m > 0) || !isfinite(m))
			continue;
		y[out->k++] = log(m);
		out->samples += (double)s->len[i];
	}
	for (i = 0; i < out->k; i++)
		out->mean += y[i];
	if (out->k)
		out->mean /= (double)out->k;
	for (i = 0; i < out->k; i++)
		out->ss += (y[i] - out->mean) * (y[i] - out->mean);
	if (out->k)
		out->samples /= (double)out->k;
	free(y);
	return;
}

/*
 * The per-process spread sigma and its degrees of freedom: the
 * calibration (known, or pooled with the processes' own spread when its
 * degrees of freedom are known), else the processes' pooled spread;
 * never below the within-process part floor_v. 0 when there is none
 * yet (df 0).
 */
static double
spread(const struct seq_side *a, const struct seq_side *b, double floor_v,
       const struct seq_opts *o, double *df)
{
	double nu = (double)(a->k + b->k) - 2, v;

	if (o->between_cv >= 0) {
		double vc = o->between_cv * o->between_cv + floor_v;

		if (o->between_df > 0) {
			v = (o->between_df * vc + (nu > 0 ? a->ss + b->ss : 0)) /
			    (o->between_df + (nu > 0 ? nu : 0));
			*df = o->between_df + (nu > 0 ? nu : 0);
		} else {
			v = nu > 0 ? fmax(vc, (a->ss + b->ss) / nu) : vc;
			*df = INFINITY;
		}
		return sqrt(fmax(v, floor_v));
	}
	if (nu < 1) {
		*df = 0;
		return 0;
	}
	*df = nu;
	return sqrt(fmax((a->ss + b->ss) / nu, floor_v));
}

/* The half width after n more processes (as the growing sides allow). */
static double
hw_after(const struct seq_side *a, const struct seq_side *b, int n,
	 int room_a, int room_b, double sigma, double df, double alpha,
	 int *add_a, int *add_b)
{
	*add_a = n < room_a ? n : room_a;
	*add_b = n < room_b ? n : room_b;
	return seq_half_width((double)a->k + *add_a, (double)b->k + *add_b,
			      sigma, isfinite(df) ? df + *add_a + *add_b : df,
			      alpha);
}

/*
 * How many processes more (per side: *ma, *mb) would likely decide,
 * the estimate and spread as they are: the first that makes the half
 * width smaller than the margin the decision needs (it shrinks as
 * processes are added: bisection). 0 when the cap comes first (*ma and
 * *mb then reach the cap).
 */
static int
more_needed(const struct seq_side *a, const struct seq_side *b, double d,
	    double sigma, double df, const struct seq_opts *o, int *ma, int *mb)
{
	double t = -log(1 - o->threshold);
	double margin = d <= -t ? -d : d + t;   /* to 0, or to -t */
	int cap = o->max_processes, lo = 0, hi, mid, xa, xb;
	int room_a = o->grow == SEQ_GROW_BOTH ? cap - (int)a->k : 0;
	int room_b = cap - (int)b->k;

	hi = room_a > room_b ? room_a : room_b;
	if (hi < 1 || hw_after(a, b, hi, room_a, room_b, sigma, df, o->alpha,
			       ma, mb) >= margin)
		return 0;
	while (hi - lo > 1) {            /* hw(lo) >= margin > hw(hi) */
		mid = lo + (hi - lo) / 2;
		if (hw_after(a, b, mid, room_a, room_b, sigma, df, o->alpha,
			     &xa, &xb) < margin)
			hi = mid;
		else
			lo = mid;
	}
	hw_after(a, b, hi, room_a, room_b, sigma, df, o->alpha, ma, mb);
	return 1;
}

static void
fill_words(struct seq_decision *d, const struct seq_opts *o)
{
	const char *method = !isfinite(d->df) ? "normal mixture on the noise floor" :
			     "t mixture";
	double thr = o->threshold * 100;

	switch (d->verdict) {
	case SEQ_REGRESSION:
		snprintf(d->why, sizeof(d->why), "%.1f%% slower (ratio %.4f, "
			 "always-valid bounds %.4g-%.4g), beyond the %.3g%% "
			 "threshold, after %zu + %zu processes (%s)",
			 (1 - d->ratio) * 100, d->ratio, d->lo, d->hi, thr, d->ka,
			 d->kb, method);
		break;
	case SEQ_PASS:
		snprintf(d->why, sizeof(d->why), "ratio %.4f (always-valid "
			 "bounds %.4g-%.4g) within the %.3g%% threshold, after "
			 "%zu + %zu processes (%s)", d->ratio, d->lo, d->hi, thr,
			 d->ka, d->kb, method);
		break;
	case SEQ_MORE:
		if (!(d->sigma > 0))
			snprintf(d->why, sizeof(d->why), "%zu + %zu processes and no "
				 "noise floor: nothing shows the process effect "
				 "yet; run %d more of the baseline and %d more of "
				 "the candidate", d->ka, d->kb, d->more_a, d->more_b);
		else
			snprintf(d->why, sizeof(d->why), "ratio %.4f (always-valid "
				 "bounds %.4g-%.4g) not decided after %zu + %zu "
				 "processes; about %d more of the baseline and %d "
				 "more of the candidate would %s", d->ratio, d->lo,
				 d->hi, d->ka, d->kb, d->more_a, d->more_b,
				 d->reachable ? "likely decide it" :
				 "reach the cap without deciding it, as it stands");
		break;
	case SEQ_CAPPED:
		snprintf(d->why, sizeof(d->why), "ratio %.4f (always-valid bounds "
			 "%.4f-%.4f) not decided at the cap of %d processes "
			 "per side: inconclusive", d->ratio, d->lo, d->hi,
			 o->max_processes);
		break;
	}
}

int
seq_decide(const struct cmp_side *a, const struct cmp_side *b,
	   const struct seq_opts *o, struct seq_decision *d)
{
	struct seq_side sa, sb;
	double t, dl, hw, wa, wb, btw, floor_v;
	int at_cap;

	memset(d, 0, sizeof(*d));
	if (!(o->threshold > 0 && o->threshold < 1) ||
	    !(o->alpha > 0 && o->alpha < 0.5) || o->max_processes < 1)
		return error("sequential gate: threshold %g, alpha %g or cap %d "
			     "out of range", o->threshold, o->alpha,
			     o->max_processes);
	seq_side(a, &sa);
	seq_side(b, &sb);
	d->ka = sa.k;
	d->kb = sb.k;
	t = -log(1 - o->threshold);
	cmp_side_cv(a, &wa, &btw);
	cmp_side_cv(b, &wb, &btw);
	/* the within-process part of one process median: a floor */
	floor_v = stats_median_var(sqrt((wa * wa + wb * wb) / 2),
				   sa.k && sb.k ? (sa.samples + sb.samples) / 2 : 1);
	at_cap = (int)sb.k >= o->max_processes &&
		 (o->grow == SEQ_GROW_CANDIDATE || (int)sa.k >= o->max_processes);
	if (!sa.k || !sb.k) {
		d->verdict = at_cap ? SEQ_CAPPED : SEQ_MORE;
		d->more_a = sa.k ? 0 : 1;
		d->more_b = sb.k ? 0 : 1;
		d->lo = d->hi = d->ratio = NAN;
		snprintf(d->why, sizeof(d->why), "a side without processes that "
			 "have samples (%zu + %zu): nothing to decide on", sa.k,
			 sb.k);
		return 0;
	}
	dl = sb.mean - sa.mean;
	d->ratio = exp(dl);
	d->sigma = spread(&sa, &sb, floor_v, o, &d->df);
	hw = d->sigma > 0 ? seq_half_width((double)sa.k, (double)sb.k,
					   d->sigma, d->df, o->alpha) : INFINITY;
	d->lo = exp(dl - hw);
	d->hi = exp(dl + hw);
	if (dl + hw < 0 && dl <= -t)
		d->verdict = SEQ_REGRESSION;
	else if (dl - hw > -t)
		d->verdict = SEQ_PASS;
	else if (at_cap)
		d->verdict = SEQ_CAPPED;
	else
		d->verdict = SEQ_MORE;
	if (d->verdict == SEQ_MORE) {
		if (d->sigma > 0) {
			d->reachable = more_needed(&sa, &sb, dl, d->sigma, d->df, o,
						   &d->more_a, &d->more_b);
		} else {
			/* no spread yet: one more process on a growing side */
			d->more_b = 1;
			d->more_a = o->grow == SEQ_GROW_BOTH ? 1 : 0;
		}
		if (!d->more_a && !d->more_b)
			d->more_b = 1;
	}
	fill_words(d, o);
	return 0;
}
