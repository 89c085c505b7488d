#define _POSIX_C_SOURCE 200809L
#include "analysis/compare.h"
#include "analysis/stats.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846
#define SQRT2 1.41421356237309504880

void
cmp_side_add(struct cmp_side *s, int64_t run_id, const double *x, size_t n)
{
	s->len = xrealloc(s->len, (s->nproc + 1) * sizeof(*s->len));
	s->x = xrealloc(s->x, (s->nproc + 1) * sizeof(*s->x));
	s->run_id = xrealloc(s->run_id, (s->nproc + 1) * sizeof(*s->run_id));
	s->x[s->nproc] = xmalloc((n ? n : 1) * sizeof(double));
	if (n)
		memcpy(s->x[s->nproc], x, n * sizeof(double));
	s->len[s->nproc] = n;
	s->run_id[s->nproc] = run_id;
	s->nproc++;
}

void
cmp_side_release(struct cmp_side *s)
{
	size_t i;

	for (i = 0; i < s->nproc; i++)
		free(s->x[i]);
	free(s->x);
	free(s->len);
	free(s->run_id);
	memset(s, 0, sizeof(*s));
}

size_t
cmp_side_samples(const struct cmp_side *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nproc; i++)
		n += s->len[i];
	return n;
}

/* All samples of a side in one array (caller frees). */
static double *
side_pool(const struct cmp_side *s, size_t *n)
{
	double *p;
	size_t i, k = 0;

	*n = cmp_side_samples(s);
	p = xmalloc((*n ? *n : 1) * sizeof(double));
	for (i = 0; i < s->nproc; i++) {
		memcpy(p + k, s->x[i], s->len[i] * sizeof(double));
		k += s->len[i];
	}
	return p;
}

const char *
cmp_noise_name(enum cmp_noise_source s)
{
	switch (s) {
	case NOISE_PAIRED: return "paired";
	case NOISE_OBSERVED: return "observed";
	case NOISE_CALIBRATED: return "calibrated";
	case NOISE_ASSUMED: return "assumed";
	}
	return "?";
}

/* Expands a seed into xoshiro's state with splitmix64. */
void
cmp_rng_seed(struct cmp_rng *g, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		g->s[i] = splitmix64(&seed);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna). */
uint64_t
cmp_rng_next(struct cmp_rng *g)
{
	uint64_t *s = g->s, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

/* Uniform in [0, n) without modulo bias. */
size_t
cmp_rng_below(struct cmp_rng *g, size_t n)
{
	uint64_t lim, v;

	if (n <= 1)
		return 0;
	lim = UINT64_MAX - UINT64_MAX % n;
	do
		v = cmp_rng_next(g);
	while (v >= lim);
	return (size_t)(v % n);
}

/* Standard normal by Box–Muller (one of the pair; simplicity over speed). */
double
cmp_rng_normal(struct cmp_rng *g)
{
	double u1 = ((cmp_rng_next(g) >> 11) + 0.5) * 0x1.0p-53;
	double u2 = (cmp_rng_next(g) >> 11) * 0x1.0p-53;

	return sqrt(-2 * log(u1)) * cos(2 * PI * u2);
}

double
cmp_norm_cdf(double z)
{
	return 0.5 * erfc(-z / SQRT2);
}

/*
 * Inverse of the standard normal CDF: Acklam's rational approximation
 * (relative error < 1.2e-9), refined by one Halley step.
 */
double
cmp_norm_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
		-2.759285104469687e+02, 1.383577518672690e+02,
		-3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
		-1.556989798598866e+02, 6.680131188771972e+01,
		-1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
		-2.400758277161838e+00, -2.549732539343734e+00,
		4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
		2.445134137142996e+00, 3.754408661907416e+00 };
	double q, r, x, e, u;

	if (p <= 0)
		return -INFINITY;
	if (p >= 1)
		return INFINITY;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p > 1 - 0.02425) {
		q = sqrt(-2 * log(1 - p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	}
	e = cmp_norm_cdf(x) - p;
	u = e * sqrt(2 * PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

struct ranked { double v; int side; };

static int
ranked_cmp(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->v, y = ((const struct ranked *)b)->v;

	return (x > y) - (x < y);
}

/*
 * Two-sided Mann–Whitney U p-value: normal approximation with the tie
 * correction of the variance and a continuity correction. 1 when either
 * side is empty or every value ties.
 */
double
cmp_mwu_p(const double *a, size_t na, const double *b, size_t nb)
{
	struct ranked *all;
	size_t n = na + nb, i, j;
	double rb = 0, ties = 0, u, mu, var, z;

	if (!na || !nb)
		return 1;
	all = xmalloc(n * sizeof(*all));
	for (i = 0; i < na; i++)
		all[i] = (struct ranked){ a[i], 0 };
	for (i = 0; i < nb; i++)
		all[na + i] = (struct ranked){ b[i], 1 };
	qsort(all, n, sizeof(*all), ranked_cmp);
	for (i = 0; i < n; i = j) {
		double t, rank;

		for (j = i + 1; j < n && all[j].v == all[i].v; j++)
			;
		t = (double)(j - i);
		rank = (double)(i + j + 1) / 2;   /* mean of ranks i+1..j */
		for (size_t k = i; k < j; k++)
			if (all[k].side)
				rb += rank;
		ties += t * t * t - t;
	}
	free(all);
	u = rb - (double)nb * (double)(nb + 1) / 2;
	mu = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 *
	      ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
	if (var <= 0)
		return 1;
	z = fabs(u - mu) - 0.5;
	if (z < 0)
		z = 0;
	z /= sqrt(var);
	return fmin(1, 2 * (1 - cmp_norm_cdf(z)));
}

/* Hodges–Lehmann: the median of all pairwise differences b_j - a_i. */
double
cmp_hl_shift(const double *a, size_t na, const double *b, size_t nb)
{
	double *d, m;
	size_t i, j, k = 0;

	if (!na || !nb)
		return NAN;
	d = xmalloc(na * nb * sizeof(double));
	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			d[k++] = b[j] - a[i];
	m = stats_median(d, k);
	free(d);
	return m;
}

void
cmp_side_cv(const struct cmp_side *s, double *within, double *between)
{
	double ss = 0, df = 0, mean = 0, v = 0, rbar = 0;
	double *lm = xmalloc((s->nproc ? s->nproc : 1) * sizeof(double));
	size_t i, j, k = 0;

	for (i = 0; i < s->nproc; i++) {
		struct summary sm;

		if (!s->len[i])
			continue;
		stats_summary(s->x[i], s->len[i], &sm);
		if (sm.n > 1) {
			ss += sm.cv * sm.cv * (double)(sm.n - 1);
			df += (double)(sm.n - 1);
		}
		if (sm.median > 0)
			lm[k++] = log(sm.median);
		rbar += (double)sm.n;
	}
	*within = df > 0 ? sqrt(ss / df) : 0;
	*between = -1;
	if (k >= 2) {
		for (j = 0; j < k; j++)
			mean += lm[j];
		mean /= (double)k;
		for (j = 0; j < k; j++)
			v += (lm[j] - mean) * (lm[j] - mean);
		v /= (double)(k - 1);
		rbar /= (double)s->nproc;
		/* The sd of a process median holds pi/2 * w^2 / r of
		 * within-process noise; the rest is the process effect. */
		v -= PI / 2 * *within * *within / (rbar > 0 ? rbar : 1);
		*between = v > 0 ? sqrt(v) : 0;
	}
	free(lm);
}

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median_inplace(double *x, size_t n)
{
	qsort(x, n, sizeof(double), dbl_cmp);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/*
 * One bootstrap draw of a side's median: processes with replacement,
 * then samples within each; every drawn process is scaled by
 * exp(N(0, effect)) for the process effect the data cannot show.
 */
static double
boot_median(const struct cmp_side *s, struct cmp_rng *g, double effect,
	    double *pool)
{
	size_t i, j, k = 0;

	for (i = 0; i < s->nproc; i++) {
		size_t p = s->nproc > 1 ? cmp_rng_below(g, s->nproc) : 0;
		double f = effect > 0 ? exp(effect * cmp_rng_normal(g)) : 1;

		for (j = 0; j < s->len[p]; j++)
			pool[k++] = s->x[p][cmp_rng_below(g, s->len[p])] * f;
	}
	return median_inplace(pool, k);
}

static int
same_processes(const struct cmp_side *a, const struct cmp_side *b)
{
	size_t i;

	if (a->nproc != b->nproc)
		return 0;
	for (i = 0; i < a->nproc; i++)
		if (a->run_id[i] != b->run_id[i] || a->len[i] != b->len[i] ||
		    memcmp(a->x[i], b->x[i], a->len[i] * sizeof(double)))
			return 0;
	return 1;
}

/*
 * The process effect to add in the bootstrap of one side: a single
 * process shows none, so it gets the calibrated effect or, without one,
 * its within-process CV as a stand-in; several processes show their own
 * spread, topped up to the calibrated one when that is larger.
 */
static double
side_effect(const struct cmp_side *s, double calibrated, double within,
	    double between, enum cmp_noise_source *src, double *used)
{
	double e;

	if (s->nproc < 2) {
		if (calibrated >= 0) {
			*src = NOISE_CALIBRATED;
			e = calibrated;
		} else {
			if (*src != NOISE_CALIBRATED)
				*src = NOISE_ASSUMED;
			e = within;
		}
		if (e > *used)
			*used = e;
		return e;
	}
	if (calibrated > between) {
		*src = NOISE_CALIBRATED;
		if (calibrated > *used)
			*used = calibrated;
		return sqrt(calibrated * calibrated - between * between);
	}
	if (between > *used)
		*used = between;
	return 0;
}

int
cmp_compute(const struct cmp_side *a, const struct cmp_side *b,
	    const struct cmp_opts *o, struct cmp_result *r)
{
	double *pa, *pb, *lr = NULL;
	double wa, wb, bta, btb, ea, eb, sum = 0, ss = 0;
	struct cmp_rng g;
	int i, nb = o->boot > 10 ? o->boot : 10;

	memset(r, 0, sizeof(*r));
	pa = side_pool(a, &r->na);
	pb = side_pool(b, &r->nb);
	r->ka = a->nproc;
	r->kb = b->nproc;
	if (!r->na || !r->nb) {
		free(pa);
		free(pb);
		return error("no samples on the %s side",
			     r->na ? "candidate" : "baseline");
	}
	r->med_a = stats_median(pa, r->na);
	r->med_b = stats_median(pb, r->nb);
	if (!(r->med_a > 0) || !(r->med_b > 0)) {
		free(pa);
		free(pb);
		return error("median throughput is not positive");
	}
	r->ratio = r->med_b / r->med_a;
	r->p_mwu = cmp_mwu_p(pa, r->na, pb, r->nb);
	r->hl = cmp_hl_shift(pa, r->na, pb, r->nb);
	r->hl_rel = r->hl / r->med_a;
	cmp_side_cv(a, &wa, &bta);
	cmp_side_cv(b, &wb, &btb);
	r->within_cv = sqrt((wa * wa * (double)r->na + wb * wb * (double)r->nb) /
			    (double)(r->na + r->nb));
	if (same_processes(a, b)) {
		/* Identical processes: every error cancels. */
		r->noise = NOISE_PAIRED;
		r->ci_lo = r->ci_hi = r->ratio;
		r->se = 0;
		r->between_cv = 0;
		free(pa);
		free(pb);
		return 0;
	}
	r->noise = NOISE_OBSERVED;
	r->between_cv = 0;
	ea = side_effect(a, o->between_cv, wa, bta, &r->noise, &r->between_cv);
	eb = side_effect(b, o->between_cv, wb, btb, &r->noise, &r->between_cv);
	cmp_rng_seed(&g, o->seed);
	lr = xmalloc(nb * sizeof(double));
	for (i = 0; i < nb; i++) {
		double ma = boot_median(a, &g, ea, pa);
		double mb = boot_median(b, &g, eb, pb);

		lr[i] = log(mb / ma);
		sum += lr[i];
	}
	for (i = 0; i < nb; i++)
		ss += (lr[i] - sum / nb) * (lr[i] - sum / nb);
	r->se = sqrt(ss / (nb - 1));
	qsort(lr, nb, sizeof(double), dbl_cmp);
	r->ci_lo = exp(stats_quantile_sorted(lr, nb, 0.025));
	r->ci_hi = exp(stats_quantile_sorted(lr, nb, 0.975));
	free(lr);
	free(pa);
	free(pb);
	return 0;
}

const char *
cmp_verdict(const struct cmp_result *r, double threshold)
{
	if (r->ci_lo > 1)
		return "faster";
	if (r->ci_hi < 1)
		return "slower";
	if (r->ci_lo >= 1 - threshold && r->ci_hi <= 1 / (1 - threshold))
		return "same";
	return "inconclusive";
}

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

/*
 * Works on d = log(ratio) with its bootstrap standard error se. The
 * one-sided bounds are d -/+ z(1-alpha)·se. Processes needed: every
 * noise component shrinks as 1/K, so se(K) = se·sqrt(K0/K).
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
	d->below_floor = z * r->se > t;
	if (lr + z * r->se < 0 && lr <= -t)
		d->verdict = GATE_REGRESSION;
	else if (lr - z * r->se > -t)   /* confidently within: both modes */
		d->verdict = GATE_PASS;
	else if (mode == GATE_DETECT)
		d->verdict = d->below_floor ? GATE_INCONCLUSIVE : GATE_PASS;
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

/* ---- pairing store rows into workloads ---- */
#include "evidence/store.h"

static void workload_release(struct cmp_workload *w);

static int
row_ok(const struct store_result *r)
{
	return !strcmp(r->run_status, "ok") && r->n > 0;
}

/* Distinct "target/variant" of the usable rows, as a sorted, joined
 * string (caller frees); *count gets how many. */
static char *
variant_set(const struct store_result *r, size_t n, size_t *count)
{
	char **v = NULL;
	size_t nv = 0, i, j;
	struct buf b = BUF_INIT;

	for (i = 0; i < n; i++) {
		char *k;

		if (!row_ok(&r[i]))
			continue;
		k = xstrfmt("%s/%s", r[i].target, r[i].variant);
		for (j = 0; j < nv && strcmp(v[j], k); j++)
			;
		if (j < nv) {
			free(k);
			continue;
		}
		v = xrealloc(v, (nv + 1) * sizeof(*v));
		v[nv++] = k;
	}
	for (i = 1; i < nv; i++)   /* insertion sort: few variants */
		for (j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			char *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	for (i = 0; i < nv; i++) {
		buf_addf(&b, "%s%s", i ? ", " : "", v[i]);
		free(v[i]);
	}
	free(v);
	*count = nv;
	return buf_detach(&b, NULL);
}

static int
same_key(const struct store_result *x, const struct cmp_workload *w,
	 int by_variant)
{
	if (strcmp(x->model, w->model) || strcmp(x->test, w->test))
		return 0;
	return !by_variant ||
	       (!strcmp(x->target, w->target) && !strcmp(x->variant, w->variant));
}

static void
add_row(struct cmp_side *s, const struct store_result *r)
{
	size_t i;

	/* Several rows of one run with the same test: one process. */
	for (i = 0; i < s->nproc; i++)
		if (s->run_id[i] == r->run_id) {
			s->x[i] = xrealloc(s->x[i], (s->len[i] + r->n) *
					   sizeof(double));
			memcpy(s->x[i] + s->len[i], r->ts, r->n * sizeof(double));
			s->len[i] += r->n;
			return;
		}
	cmp_side_add(s, r->run_id, r->ts, r->n);
}

int
cmp_match(const struct store_result *ra, size_t na,
	  const struct store_result *rb, size_t nb,
	  struct cmp_workload **out, size_t *n, size_t *only_a, size_t *only_b)
{
	struct cmp_workload *w = NULL;
	size_t nw = 0, ca, cb, i, j, k;
	char *va = variant_set(ra, na, &ca), *vb = variant_set(rb, nb, &cb);
	int by_variant = 0, ret = -1;

	*out = NULL;
	*n = *only_a = *only_b = 0;
	if (ca > 1 || cb > 1) {
		if (strcmp(va, vb)) {
			error("the %s selection mixes variants (%s); narrow it, "
			      "e.g. with variant=NAME",
			      ca > 1 ? "baseline" : "candidate", ca > 1 ? va : vb);
			goto cleanup;
		}
		by_variant = 1;
	}
	for (i = 0; i < na; i++) {
		if (!row_ok(&ra[i]))
			continue;
		for (j = 0; j < nw && !same_key(&ra[i], &w[j], by_variant); j++)
			;
		if (j == nw) {
			w = xrealloc(w, (nw + 1) * sizeof(*w));
			memset(&w[nw], 0, sizeof(*w));
			w[nw].target = xstrdup(ra[i].target);
			w[nw].variant = xstrdup(ra[i].variant);
			w[nw].model = xstrdup(ra[i].model);
			w[nw].model_label = xstrdup(*ra[i].model_label ?
						    ra[i].model_label : ra[i].model);
			w[nw].test = xstrdup(ra[i].test);
			w[nw].name = by_variant ?
				xstrfmt("%s: %s %s", ra[i].variant, ra[i].model, ra[i].test) :
				xstrfmt("%s %s", ra[i].model, ra[i].test);
			w[nw].identity_a = xstrdup(ra[i].identity);
			w[nw].os_build_a = xstrdup(ra[i].os_build);
			w[nw].session_a = ra[i].session_id;
			nw++;
		}
		add_row(&w[j].a, &ra[i]);
	}
	for (i = 0; i < nb; i++) {
		if (!row_ok(&rb[i]))
			continue;
		for (j = 0; j < nw && !same_key(&rb[i], &w[j], by_variant); j++)
			;
		if (j == nw) {
			(*only_b)++;
			continue;
		}
		if (!w[j].b.nproc) {
			w[j].identity_b = xstrdup(rb[i].identity);
			w[j].os_build_b = xstrdup(rb[i].os_build);
			w[j].session_b = rb[i].session_id;
		}
		add_row(&w[j].b, &rb[i]);
	}
	/* Keep the workloads with both sides, in baseline order. */
	for (i = k = 0; i < nw; i++) {
		if (!w[i].b.nproc) {
			(*only_a)++;
			workload_release(&w[i]);
			continue;
		}
		w[k++] = w[i];
	}
	*out = w;
	*n = k;
	w = NULL;
	nw = 0;
	ret = 0;
cleanup:
	cmp_workloads_free(w, nw);
	free(va);
	free(vb);
	return ret;
}

static void
workload_release(struct cmp_workload *w)
{
	free(w->target);
	free(w->variant);
	free(w->model);
	free(w->model_label);
	free(w->test);
	free(w->name);
	free(w->identity_a);
	free(w->identity_b);
	free(w->os_build_a);
	free(w->os_build_b);
	cmp_side_release(&w->a);
	cmp_side_release(&w->b);
}

void
cmp_workloads_free(struct cmp_workload *w, size_t n)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < n; i++)
		workload_release(&w[i]);
	free(w);
}

double
cmp_calibrated(struct store *s, const struct cmp_workload *w)
{
	const char *ids[2] = { w->identity_b, w->identity_a };
	double between, within;
	int i;

	for (i = 0; i < 2; i++)
		if (ids[i] && *ids[i] &&
		    store_noise_get(s, ids[i], w->model, w->test, &between,
				    &within, NULL) == 1)
			return between;
	return -1;
}

/* Loads the rows of one selection; -1 after error(). */
int
cmp_load(struct store *s, const char *text, struct store_result **rows,
	 size_t *n)
{
	struct selection sel;
	int ret;

	if (selection_parse(text, &sel) < 0)
		return -1;
	ret = store_query_results(s, &sel, rows, n);
	selection_free(&sel);
	return ret;
}
