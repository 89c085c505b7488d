#define _POSIX_C_SOURCE 200809L
#include "analysis/compare.h"
#include "analysis/stats.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

double *
cmp_side_pool(const struct cmp_side *s, size_t *n)
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

double
cmp_norm_cdf(double z)
{
	return stats_norm_cdf(z);
}

double
cmp_norm_quantile(double p)
{
	return stats_norm_quantile(p);
}

/* Sorted copy of x[0..n) (caller frees). */
static double *
sorted_copy(const double *x, size_t n)
{
	double *c = xmalloc((n ? n : 1) * sizeof(double));

	memcpy(c, x, n * sizeof(double));
	stats_sort(c, n);
	return c;
}

/*
 * A total order of doubles as unsigned integers: key(x) < key(y) iff
 * x < y, for everything but NaN (and -0 just below +0).
 */
static uint64_t
dkey(double x)
{
	uint64_t u;

	memcpy(&u, &x, sizeof(u));
	return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

static double
dval(uint64_t k)
{
	uint64_t u = k >> 63 ? k & ~(UINT64_C(1) << 63) : ~k;
	double x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/*
 * How many pairs have b[j] - a[i] <= d (as computed in doubles), for
 * sorted a and b: for a growing a[i] the qualifying b[j] are a growing
 * prefix, so one pass. Rounding is monotone, so the computed differences
 * keep that order.
 */
static uint64_t
pairs_at_most(const double *a, size_t na, const double *b, size_t nb,
	      double d)
{
	uint64_t c = 0;
	size_t i, j = 0;

	for (i = 0; i < na; i++) {
		while (j < nb && b[j] - a[i] <= d)
			j++;
		c += j;
	}
	return c;
}

/*
 * The k-th smallest (1-based) of the pairwise differences b[j] - a[i]:
 * the smallest double d with at least k differences <= d, by bisection
 * over the doubles' order (at most 64 passes of O(na + nb)). The count
 * changes only at differences, so d is one of them, exactly.
 */
static double
kth_difference(const double *a, size_t na, const double *b, size_t nb,
	       uint64_t k)
{
	uint64_t lo = dkey(b[0] - a[na - 1]), hi = dkey(b[nb - 1] - a[0]);

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (pairs_at_most(a, na, b, nb, dval(mid)) >= k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return dval(lo) + 0.0;   /* + 0.0: -0 becomes 0 */
}

/*
 * Hodges–Lehmann: the median of all pairwise differences b_j - a_i,
 * exactly as the median of the n_a·n_b differences would be, in
 * O((n_a + n_b) log) time and O(n_a + n_b) memory, never the pairs
 * themselves. NAN when a side is empty or a sample is not finite.
 */
double
cmp_hl_shift_sorted(const double *sa, size_t na, const double *sb, size_t nb)
{
	uint64_t n = (uint64_t)na * nb, k;
	double m;

	if (!na || !nb || !isfinite(sa[0]) || !isfinite(sa[na - 1]) ||
	    !isfinite(sb[0]) || !isfinite(sb[nb - 1]))
		return NAN;
	k = (n + 1) / 2;
	m = kth_difference(sa, na, sb, nb, k);
	if (n % 2 == 0) {
		double next = m;

		if (pairs_at_most(sa, na, sb, nb, m) < k + 1)
			next = kth_difference(sa, na, sb, nb, k + 1);
		m = m / 2 + next / 2;
	}
	return m;
}

double
cmp_hl_shift(const double *a, size_t na, const double *b, size_t nb)
{
	double *sa, *sb, m;
	size_t i;

	if (!na || !nb)
		return NAN;
	for (i = 0; i < na; i++)
		if (!isfinite(a[i]))
			return NAN;
	for (i = 0; i < nb; i++)
		if (!isfinite(b[i]))
			return NAN;
	sa = sorted_copy(a, na);
	sb = sorted_copy(b, nb);
	m = cmp_hl_shift_sorted(sa, na, sb, nb);
	free(sa);
	free(sb);
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
		/* The variance of a process median holds pi/2 * w^2 / r
		 * of within-process noise; the rest is the process effect. */
		v -= stats_median_var(*within, rbar > 0 ? rbar : 1);
		*between = v > 0 ? sqrt(v) : 0;
	}
	free(lm);
}

/*
 * Bounded draws for the bootstrap, which makes two of them per sample
 * and side and iteration (4e8 for 100,000 samples per side): uniform in
 * [0, n) for n < 2^32 by Lemire's multiply-and-shift with rejection
 * ("Fast random integer generation in an interval", ACM TOMACS 2019),
 * unbiased like rng_below() but without its two 64-bit divisions, and
 * two draws from each 64-bit output of the one PRNG.
 */
struct draws {
	struct rng *g;
	uint64_t bits;
	int left;
};

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

static inline uint32_t
draw_below(struct draws *d, uint32_t n)
{
	for (;;) {
		uint64_t m;
		uint32_t x;

		if (!d->left) {
			d->bits = rng_next(d->g);
			d->left = 2;
		}
		x = (uint32_t)(d->bits >> (32 * --d->left));
		m = (uint64_t)x * n;
		if ((uint32_t)m >= n || (uint32_t)m >= (uint32_t)-n % n)
			return (uint32_t)(m >> 32);
	}
}

/*
 * A side prepared for the bootstrap. A resample is a multiset of the
 * side's samples: K processes drawn with replacement, each drawn process
 * with len draws of its samples, times its own factor. Each process's
 * samples are sorted once; drawing a uniform index into the sorted array
 * is drawing a uniform sample.
 *
 * When every drawn process has the same factor (no process effect to
 * add, or a single process) the median is read off counts: each sample
 * has its rank in the side's sorted samples, a draw counts its rank, one
 * scan finds the middle, the factor multiplies it (rounding is
 * monotone: the same value as sorting the scaled resample).
 *
 * Otherwise, with few drawn processes (up to BOOT_LISTS), each counts
 * its draws per index (cumulated), and a quickselect over the K scaled
 * sorted lists finds the middle: pivots placed from a sample of the
 * draws, a binary search per list per round.
 *
 * With many, the resample is built, and while it is drawn, the values in
 * a window around the medians of the earlier draws are kept apart with
 * the count of those below it; when the middle falls in the window (it
 * almost always does), it is selected among those few values, else among
 * all. The window only saves time.
 *
 * Every path gives exactly the median that sorting the scaled resample
 * would (cmp_boot_check() tests it).
 */
#define BOOT_WARMUP 8        /* draws selected in full to place the window */
#define BOOT_LISTS 1000      /* most processes for the lists */
#define LISTS_GATHER 2048    /* draws left when they are gathered */
#define LISTS_SAMPLE 256     /* draws sampled to place two pivots */

enum boot_path { BOOT_COUNT, BOOT_SELECT_LISTS, BOOT_POOL };

struct boot_side {
	const struct cmp_side *s;
	size_t m;            /* processes drawn per resample (<= nproc) */
	double effect;
	enum boot_path path;
	int clone;           /* shares xs, off, sorted and rank */
	size_t n, most;
	double *xs;          /* each process's samples sorted, at off[p] */
	size_t *off;
	double *sorted;      /* counting, several processes: all, ascending */
	uint32_t *rank;      /* ... and the rank of xs[off[p] + j] */
	uint32_t *count;     /* counting: draws per rank in one resample */
	/* lists: per instance its process, factor, index range, counts */
	size_t *ip, *ilo, *ihi, *icum, *il, *im, *act, *pw;
	double *ifac;
	uint32_t *cum;       /* instance i: cum[icum[i] + j], j = 0..len */
	double *ival;        /* its scaled values: ival[icum[i] + j] */
	size_t ncum, cap;
	double *gather, *sample;
	double *pool, *mid;  /* pool: one resample; its window part */
	size_t k;            /* the size of the last resample */
	double f;            /* counting: the factor of the last resample */
	double lo, hi;       /* the window */
	double mmin, mmax;   /* the medians seen */
	int seen;
};

struct ranked_at { double v; uint32_t at; };

static int
ranked_at_cmp(const void *a, const void *b)
{
	double x = ((const struct ranked_at *)a)->v;
	double y = ((const struct ranked_at *)b)->v;

	return (x > y) - (x < y);
}

/* The global ranks of the sorted per-process samples (counting). */
static void
boot_side_ranks(struct boot_side *b)
{
	struct ranked_at *all = xmalloc((b->n + 1) * sizeof(*all));
	size_t k;

	for (k = 0; k < b->n; k++)
		all[k] = (struct ranked_at){ b->xs[k], (uint32_t)k };
	xqsort(all, b->n, sizeof(*all), ranked_at_cmp);
	b->sorted = xmalloc((b->n + 1) * sizeof(double));
	b->rank = xmalloc((b->n + 1) * sizeof(uint32_t));
	for (k = 0; k < b->n; k++) {
		b->sorted[k] = all[k].v;
		b->rank[all[k].at] = (uint32_t)k;
	}
	free(all);
}

/* The per-draw buffers of b (data already set). */
static void
boot_side_scratch(struct boot_side *b)
{
	size_t most = b->s->nproc * b->most + 1;

	size_t np = b->s->nproc + 1;

	if (b->path == BOOT_COUNT) {
		b->count = xmalloc((b->n + 1) * sizeof(uint32_t));
	} else if (b->path == BOOT_POOL) {
		b->pool = xmalloc(most * sizeof(double));
		b->mid = xmalloc(most * sizeof(double));
	} else {
		b->ip = xmalloc(np * sizeof(size_t));
		b->ilo = xmalloc(np * sizeof(size_t));
		b->ihi = xmalloc(np * sizeof(size_t));
		b->icum = xmalloc(np * sizeof(size_t));
		b->act = xmalloc(np * sizeof(size_t));
		b->pw = xmalloc((np + 1) * sizeof(size_t));
		b->il = xmalloc(np * sizeof(size_t));
		b->im = xmalloc(np * sizeof(size_t));
		b->ifac = xmalloc(np * sizeof(double));
		b->cap = b->n + np;
		b->cum = xmalloc(b->cap * sizeof(uint32_t));
		b->ival = xmalloc(b->cap * sizeof(double));
		b->gather = xmalloc(LISTS_GATHER * sizeof(double));
		b->sample = xmalloc(LISTS_SAMPLE * sizeof(double));
	}
}

static void
boot_side_init(struct boot_side *b, const struct cmp_side *s, double effect,
	       size_t m)
{
	size_t i, k = 0;

	memset(b, 0, sizeof(*b));
	b->s = s;
	b->m = m;
	b->effect = effect;
	b->n = cmp_side_samples(s);
	b->xs = xmalloc((b->n + 1) * sizeof(double));
	b->off = xmalloc((s->nproc + 1) * sizeof(size_t));
	for (i = 0; i < s->nproc; i++) {
		b->off[i] = k;
		memcpy(b->xs + k, s->x[i], s->len[i] * sizeof(double));
		stats_sort(b->xs + k, s->len[i]);
		k += s->len[i];
		if (s->len[i] > b->most)
			b->most = s->len[i];
	}
	/* counting scans every rank per draw: not for m of many processes */
	b->path = m < s->nproc ? BOOT_POOL :
		  effect <= 0 || s->nproc == 1 ? BOOT_COUNT :
		  s->nproc <= BOOT_LISTS ? BOOT_SELECT_LISTS : BOOT_POOL;
	if (b->path == BOOT_COUNT && s->nproc > 1)
		boot_side_ranks(b);
	boot_side_scratch(b);
}

/* A copy of b that shares its data and has buffers of its own. */
static void
boot_side_clone(struct boot_side *dst, const struct boot_side *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->s = src->s;
	dst->m = src->m;
	dst->effect = src->effect;
	dst->path = src->path;
	dst->n = src->n;
	dst->most = src->most;
	dst->xs = src->xs;
	dst->off = src->off;
	dst->sorted = src->sorted;
	dst->rank = src->rank;
	dst->clone = 1;
	boot_side_scratch(dst);
}

static void
boot_side_release(struct boot_side *b)
{
	if (!b->clone) {
		free(b->xs);
		free(b->off);
		free(b->sorted);
		free(b->rank);
	}
	free(b->count);
	free(b->pool);
	free(b->mid);
	free(b->ip);
	free(b->ilo);
	free(b->ihi);
	free(b->icum);
	free(b->act);
	free(b->pw);
	free(b->sample);
	free(b->il);
	free(b->im);
	free(b->ifac);
	free(b->cum);
	free(b->ival);
	free(b->gather);
}

/* The median of a counted resample of k draws, times f. */
static double
count_median(const struct boot_side *b, size_t k, double f)
{
	size_t lo = (k - 1) / 2, cum = 0, r = 0;
	double v1, v2;

	const double *sorted = b->sorted ? b->sorted : b->xs;

	while (cum <= lo)
		cum += b->count[r++];
	v1 = sorted[r - 1] * f;
	if (k % 2)
		return v1;
	while (cum <= lo + 1)
		cum += b->count[r++];
	v2 = sorted[r - 1] * f;
	return v1 / 2 + v2 / 2;
}

/*
 * Instance i: element j of its process's sorted samples, scaled (a copy
 * laid out like the counts, for locality); the draws of elements before
 * j; its process's length.
 */
#define IVAL(b, i, j) ((b)->ival[(b)->icum[i] + (j)])
#define ICUM(b, i, j) ((b)->cum[(b)->icum[i] + (j)])
#define ILEN(b, i) ((b)->s->len[(b)->ip[i]])

/* First index in [lo, hi) of instance i whose value is > v (gt) or >= v. */
static size_t
ibound(const struct boot_side *b, size_t i, size_t lo, size_t hi, double v,
       int gt)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		double x = IVAL(b, i, mid);

		if (gt ? x <= v : x < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A uniformly random draw of the active ranges, whose draws before
 * active instance a are pw[a]: its value.
 */
static double
lists_sample(const struct boot_side *b, size_t nact, size_t w,
	     struct draws *d)
{
	size_t r = draw_below(d, (uint32_t)w), lo = 0, hi = nact, i, j;

	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->pw[mid] <= r)
			lo = mid;
		else
			hi = mid;
	}
	i = b->act[lo];
	r = r - b->pw[lo] + ICUM(b, i, b->ilo[i]);
	lo = b->ilo[i];
	hi = b->ihi[i];
	while (lo + 1 < hi) {      /* the j with cum[j] <= r < cum[j + 1] */
		j = lo + (hi - lo) / 2;
		if (ICUM(b, i, j) <= r)
			lo = j;
		else
			hi = j;
	}
	return IVAL(b, i, lo);
}

/*
 * One round: splits the active ranges into values below lo_v, in
 * [lo_v, hi_v] and above hi_v, and keeps the part holding position t
 * (t and w follow). 1 when position t is found (lo_v == hi_v and t in
 * the middle: *v), 0 otherwise.
 */
static int
lists_round(struct boot_side *b, size_t *nact, size_t *w, size_t *t,
	    double lo_v, double hi_v, double *v)
{
	size_t a, k, below = 0, mid = 0;
	int part;

	for (a = 0; a < *nact; a++) {
		size_t i = b->act[a];

		b->il[i] = ibound(b, i, b->ilo[i], b->ihi[i], lo_v, 0);
		b->im[i] = ibound(b, i, b->il[i], b->ihi[i], hi_v, 1);
		below += ICUM(b, i, b->il[i]) - ICUM(b, i, b->ilo[i]);
		mid += ICUM(b, i, b->im[i]) - ICUM(b, i, b->il[i]);
	}
	part = *t < below ? 0 : *t < below + mid ? 1 : 2;
	if (part == 1 && lo_v == hi_v) {
		*v = lo_v;
		return 1;
	}
	*w = part == 0 ? below : part == 1 ? mid : *w - below - mid;
	*t -= part == 0 ? 0 : part == 1 ? below : below + mid;
	for (a = k = 0; a < *nact; a++) {
		size_t i = b->act[a];

		if (part == 0)
			b->ihi[i] = b->il[i];
		else if (part == 1) {
			b->ilo[i] = b->il[i];
			b->ihi[i] = b->im[i];
		} else
			b->ilo[i] = b->im[i];
		if (ICUM(b, i, b->ihi[i]) > ICUM(b, i, b->ilo[i]))
			b->act[k++] = i;        /* keep the non-empty */
	}
	*nact = k;
	return 0;
}

/*
 * The value at position t (0-based) of the w draws of the nin
 * instances: a selection over their scaled sorted lists. Each round
 * places two pivots around the expected rank from a sample of the draws
 * (after Floyd and Rivest), then keeps the part holding t; a round that
 * keeps everything splits at one pivot instead. The last few draws are
 * gathered and selected.
 */
static double
lists_select(struct boot_side *b, size_t nin, size_t w, size_t t,
	     struct draws *d)
{
	size_t nact = nin, a, k = 0, j, c;
	double v;

	for (a = 0; a < nin; a++)
		b->act[a] = a;
	while (w > LISTS_GATHER) {
		size_t before = w, q;

		for (a = 0, b->pw[0] = 0; a < nact; a++)
			b->pw[a + 1] = b->pw[a] +
				ICUM(b, b->act[a], b->ihi[b->act[a]]) -
				ICUM(b, b->act[a], b->ilo[b->act[a]]);
		for (a = 0; a < LISTS_SAMPLE; a++)
			b->sample[a] = lists_sample(b, nact, w, d);
		stats_sort(b->sample, LISTS_SAMPLE);
		q = (size_t)((double)t / (double)w * LISTS_SAMPLE);
		q = q < LISTS_SAMPLE ? q : LISTS_SAMPLE - 1;
		if (lists_round(b, &nact, &w, &t,
				b->sample[q > 32 ? q - 32 : 0],
				b->sample[q + 32 < LISTS_SAMPLE ? q + 32 :
					  LISTS_SAMPLE - 1], &v))
			return v;
		if (w == before &&
		    lists_round(b, &nact, &w, &t, b->sample[q], b->sample[q], &v))
			return v;
	}
	for (a = 0; a < nact; a++) {
		size_t i = b->act[a];

		for (j = b->ilo[i]; j < b->ihi[i]; j++)
			for (c = ICUM(b, i, j + 1) - ICUM(b, i, j); c; c--)
				b->gather[k++] = IVAL(b, i, j);
	}
	return stats_select(b->gather, w, t);
}

/*
 * The value at position t + 1 when position t holds v: v again when
 * more than t + 1 draws are <= v, else the smallest draw above v.
 */
static double
lists_next(const struct boot_side *b, size_t nin, size_t t, double v)
{
	size_t i, le = 0;
	double next = INFINITY;

	for (i = 0; i < nin; i++) {
		size_t n = ILEN(b, i), j = ibound(b, i, 0, n, v, 1);

		le += ICUM(b, i, j);
		while (j < n && ICUM(b, i, j + 1) == ICUM(b, i, j))
			j++;
		if (j < n && IVAL(b, i, j) < next)
			next = IVAL(b, i, j);
	}
	return le > t + 1 ? v : next;
}

/* Instance i of a resample: len draws of process p, scaled by f. */
static void
lists_add(struct boot_side *b, size_t i, size_t p, double f, struct draws *d)
{
	uint32_t len = (uint32_t)b->s->len[p], j;
	const double *x = b->xs + b->off[p];
	uint32_t *cum;
	double *val;

	if (b->ncum + len + 1 > b->cap) {
		b->cap = 2 * (b->ncum + len + 1);
		b->cum = xrealloc(b->cum, b->cap * sizeof(uint32_t));
		b->ival = xrealloc(b->ival, b->cap * sizeof(double));
	}
	b->ip[i] = p;
	b->ifac[i] = f;
	b->icum[i] = b->ncum;
	b->ilo[i] = 0;
	b->ihi[i] = len;
	cum = b->cum + b->ncum;
	val = b->ival + b->ncum;
	memset(cum, 0, (len + 1) * sizeof(uint32_t));
	for (j = 0; j < len; j++)
		cum[1 + draw_below(d, len)]++;
	for (j = 0; j < len; j++) {
		cum[j + 1] += cum[j];
		val[j] = x[j] * f;
	}
	b->ncum += len + 1;
}

/*
 * The median of the resample in b->pool[0..k): within the window when
 * it holds the middle (below of the values lie under it, m in it), else
 * of the whole resample. Then the window follows the medians seen.
 */
static double
pool_median(struct boot_side *b, size_t k, size_t below, size_t m)
{
	size_t t = (k - 1) / 2, i;
	double v1, v2, med, span;

	if (b->seen >= BOOT_WARMUP && below <= t && t + 1 - k % 2 < below + m) {
		v1 = stats_select(b->mid, m, t - below);
		v2 = v1;
		if (k % 2 == 0)
			for (i = t - below + 1, v2 = INFINITY; i < m; i++)
				v2 = b->mid[i] < v2 ? b->mid[i] : v2;
		med = k % 2 ? v1 : v1 / 2 + v2 / 2;
	} else {
		memcpy(b->mid, b->pool, k * sizeof(double));
		med = stats_median_inplace(b->mid, k);
	}
	if (!b->seen || med < b->mmin)
		b->mmin = med;
	if (!b->seen || med > b->mmax)
		b->mmax = med;
	b->seen++;
	span = b->mmax - b->mmin;
	b->lo = b->mmin - span;
	b->hi = b->mmax + span;
	return med;
}

/*
 * One bootstrap draw of a side's median: processes with replacement,
 * then samples within each; every drawn process is scaled by
 * exp(N(0, effect)) for the process effect the data cannot show.
 */
static double
boot_median(struct boot_side *b, struct draws *d)
{
	const struct cmp_side *s = b->s;
	size_t i, j, k = 0, below = 0, m = 0;
	double f = 1, v1;

	if (b->path == BOOT_COUNT)
		memset(b->count, 0, b->n * sizeof(uint32_t));
	b->ncum = 0;
	for (i = 0; i < b->m; i++) {
		size_t p = s->nproc > 1 ? rng_below(d->g, s->nproc) : 0;
		uint32_t len = (uint32_t)s->len[p];
		const double *x = b->xs + b->off[p];

		/* a random process's samples are rarely in cache: ask for
		 * them while the factor is drawn */
		PREFETCH(x);
		PREFETCH(x + len - 1);
		f = b->effect > 0 ? exp(b->effect * rng_normal(d->g)) : 1;
		if (b->path == BOOT_COUNT && !b->rank) { /* rank = index */
			for (j = 0; j < len; j++)
				b->count[draw_below(d, len)]++;
		} else if (b->path == BOOT_COUNT) {
			const uint32_t *rank = b->rank + b->off[p];

			for (j = 0; j < len; j++)
				b->count[rank[draw_below(d, len)]]++;
		} else if (b->path == BOOT_SELECT_LISTS) {
			lists_add(b, i, p, f, d);
		} else {
			for (j = 0; j < len; j++) {
				double v = x[draw_below(d, len)] * f;

				b->pool[k + j] = v;
				if (v < b->lo)
					below++;
				else if (v <= b->hi)
					b->mid[m++] = v;
			}
		}
		k += len;
	}
	b->k = k;
	b->f = f;
	if (!k)
		return NAN;
	if (b->path == BOOT_COUNT)
		return count_median(b, k, f);
	if (b->path == BOOT_POOL)
		return pool_median(b, k, below, m);
	v1 = lists_select(b, s->nproc, k, (k - 1) / 2, d);
	if (k % 2)
		return v1;
	return v1 / 2 + lists_next(b, s->nproc, (k - 1) / 2, v1) / 2;
}

/* The resample of the last boot_median() of b, gathered, and its median. */
static double
boot_resample_median(const struct boot_side *b, double f)
{
	double *all = xmalloc((b->k + 1) * sizeof(double)), m;
	size_t i, j, k = 0, c;

	if (b->path == BOOT_COUNT) {
		for (i = 0; i < b->n; i++)     /* one factor for all */
			for (c = b->count[i]; c; c--)
				all[k++] = (b->sorted ? b->sorted : b->xs)[i] * f;
	} else if (b->path == BOOT_POOL) {
		memcpy(all, b->pool, b->k * sizeof(double));
		k = b->k;
	} else {
		for (i = 0; i < b->s->nproc; i++)
			for (j = 0; j < ILEN(b, i); j++)
				for (c = ICUM(b, i, j + 1) - ICUM(b, i, j); c; c--)
					all[k++] = IVAL(b, i, j);
	}
	m = stats_median(all, k);
	free(all);
	return m;
}

int
cmp_boot_check(const struct cmp_side *s, double effect, uint64_t seed, int n)
{
	struct boot_side b;
	struct rng g;
	struct draws d;
	int i, bad = 0;

	boot_side_init(&b, s, effect, s->nproc);
	rng_seed(&g, seed);
	d = (struct draws){ &g, 0, 0 };
	for (i = 0; i < n; i++) {
		double m = boot_median(&b, &d);

		bad += !(m == boot_resample_median(&b, b.f));
	}
	boot_side_release(&b);
	return bad;
}

/*
 * Draw i of the bootstrap has a PRNG stream of its own, seeded from
 * (seed, i) through splitmix64, so the draws can be shared among threads
 * and the result does not depend on how many there are.
 */
static uint64_t
draw_seed(uint64_t seed, int i)
{
	uint64_t st = seed ^ UINT64_C(0x6a09e667f3bcc909);

	st += (uint64_t)i * UINT64_C(0x9e3779b97f4a7c15);
	return splitmix64(&st);
}

struct boot_job {
	struct boot_side a, b;
	uint64_t seed;
	int from, to;
	double *da, *db;      /* each draw's deviation of a side's log median */
	double lma, lmb;      /* log medians of the whole sides */
	double sa, sb;        /* sqrt(m / K) per side (1: every process) */
	pthread_t tid;
	int started;
};

static void *
boot_run(void *arg)
{
	struct boot_job *j = arg;
	int i;

	for (i = j->from; i < j->to; i++) {
		struct rng g;
		struct draws d = { &g, 0, 0 };
		double ma, mb;

		rng_seed(&g, draw_seed(j->seed, i));
		ma = boot_median(&j->a, &d);
		mb = boot_median(&j->b, &d);
		/* m of K processes: each side's deviation scaled by sqrt(m/K)
		 * (with m = K the draw's log ratio is exactly log(mb / ma)) */
		j->da[i] = j->sa * (log(ma) - j->lma);
		j->db[i] = j->sb * (log(mb) - j->lmb);
	}
	return NULL;
}

/* Threads for a bootstrap of nb draws over n samples: 1 when small. */
static int
boot_threads(size_t n, int nb)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if ((double)n * nb < 4e6 || cpus < 2)
		return 1;
	return cpus > 8 ? 8 : (int)cpus;
}

/* What the bootstrap gives: the variance of each side's log median, the
 * standard error of the log ratio and its 2.5 % and 97.5 % quantiles. */
struct boot_out {
	double va, vb, se, q_lo, q_hi;
};

static double
variance(const double *x, int n)
{
	double sum = 0, ss = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += x[i];
	for (i = 0; i < n; i++)
		ss += (x[i] - sum / n) * (x[i] - sum / n);
	return ss / (n - 1);
}

/*
 * The seeded bootstrap of log(median b / median a). Large ones run on
 * several threads, each with the sides' data shared and buffers of its
 * own. A side of more than CMP_BOOT_KMAX processes is resampled m out
 * of n: CMP_BOOT_KMAX processes per draw, the draw's deviation of its
 * log median from the whole side's scaled by sqrt(m / K), so the cost
 * stays bounded (a compare over 10,000 sessions: 30,000 processes a
 * side).
 */
static void
bootstrap(const struct cmp_side *a, const struct cmp_side *b, double ea,
	  double eb, uint64_t seed, int nb, const struct cmp_result *r,
	  struct boot_out *out)
{
	size_t ma = a->nproc > CMP_BOOT_KMAX ? CMP_BOOT_KMAX : a->nproc;
	size_t mb = b->nproc > CMP_BOOT_KMAX ? CMP_BOOT_KMAX : b->nproc;
	size_t work = cmp_side_samples(a) * ma / (a->nproc ? a->nproc : 1) +
		      cmp_side_samples(b) * mb / (b->nproc ? b->nproc : 1);
	int nt = boot_threads(work, nb);
	struct boot_job *job = xcalloc((size_t)nt, sizeof(*job));
	double *da = xmalloc(nb * sizeof(double));
	double *db = xmalloc(nb * sizeof(double));
	double *lr = xmalloc(nb * sizeof(double));
	int i;

	boot_side_init(&job[0].a, a, ea, ma);
	boot_side_init(&job[0].b, b, eb, mb);
	for (i = 0; i < nt; i++) {
		job[i].lma = log(r->med_a);
		job[i].lmb = log(r->med_b);
		job[i].sa = sqrt((double)ma / (double)(a->nproc ? a->nproc : 1));
		job[i].sb = sqrt((double)mb / (double)(b->nproc ? b->nproc : 1));
		if (i) {
			boot_side_clone(&job[i].a, &job[0].a);
			boot_side_clone(&job[i].b, &job[0].b);
		}
		job[i].seed = seed;
		job[i].from = (int)((long)nb * i / nt);
		job[i].to = (int)((long)nb * (i + 1) / nt);
		job[i].da = da;
		job[i].db = db;
		if (i && pthread_create(&job[i].tid, NULL, boot_run, &job[i]) == 0)
			job[i].started = 1;
	}
	boot_run(&job[0]);
	for (i = nt - 1; i > 0; i--) {
		if (job[i].started)
			pthread_join(job[i].tid, NULL);
		else
			boot_run(&job[i]);     /* no thread: here */
		boot_side_release(&job[i].a);
		boot_side_release(&job[i].b);
	}
	boot_side_release(&job[0].a);
	boot_side_release(&job[0].b);
	free(job);
	for (i = 0; i < nb; i++)
		lr[i] = (log(r->med_b) - log(r->med_a)) + db[i] - da[i];
	out->va = variance(da, nb);
	out->vb = variance(db, nb);
	out->se = sqrt(variance(lr, nb));
	stats_sort(lr, nb);
	out->q_lo = stats_quantile_sorted(lr, nb, 0.025);
	out->q_hi = stats_quantile_sorted(lr, nb, 0.975);
	free(lr);
	free(da);
	free(db);
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
 * The noise estimates a comparison stands on, each with its degrees of
 * freedom: a side's own spread of processes, the calibration, the
 * assumed floor. Each side's bootstrap variance (times its correction)
 * is added to the estimate it comes from; their degrees of freedom add
 * them.
 */
enum { EST_OWN_A, EST_OWN_B, EST_CALIBRATED, EST_ASSUMED, EST_N };

struct side_noise {
	double effect;   /* process effect the bootstrap adds per process */
	double infl;     /* the correction of its bootstrap variance */
	int est;         /* EST_* its variance counts against */
	double used;     /* the process effect it stands for */
};

/* 1 when a side shows its own process spread (2 processes or more). */
static int
shows_spread(const struct cmp_side *s, double between)
{
	return s->nproc >= 2 && between >= 0;
}

/*
 * The process effect of one side (s, with its within-process CV and
 * observed between-process CV; the other side's in other_*):
 *   calibrated  the floor, or the side's own spread when larger (its
 *               bootstrap variance then corrected by K / (K - 1)): the
 *               calibration's degrees of freedom
 *   own         uncalibrated, K >= 2: its spread, corrected, K - 1
 *   other's     uncalibrated, one process against K >= 2: the other
 *               side's spread (and its degrees of freedom)
 *   assumed     one process on each side, uncalibrated: the larger of
 *               CMP_ASSUMED_BETWEEN and its within-process CV
 * Resampling K processes sees (K - 1) / K of their variance, hence the
 * correction; a calibrated floor tops the spread up to the floor.
 */
static struct side_noise
side_noise(const struct cmp_side *s, int own_est, double calibrated,
	   double within, double between, const struct cmp_side *other,
	   int other_est, double other_between)
{
	struct side_noise n = { 0, 1, own_est, 0 };
	double k = (double)s->nproc, seen;

	if (calibrated >= 0) {
		n.est = EST_CALIBRATED;
		n.used = calibrated;
		if (!shows_spread(s, between)) {
			n.effect = calibrated;
			return n;
		}
		seen = between * between * (k - 1) / k;
		if (calibrated * calibrated > between * between) {
			n.effect = sqrt(calibrated * calibrated - seen);
			return n;
		}
		n.infl = k / (k - 1);
		n.used = between;
		return n;
	}
	if (shows_spread(s, between)) {
		n.infl = k / (k - 1);
		n.used = between;
		return n;
	}
	if (shows_spread(other, other_between)) {
		n.effect = other_between;
		n.est = other_est;
		n.used = other_between;
		return n;
	}
	n.est = EST_ASSUMED;
	n.effect = fmax(CMP_ASSUMED_BETWEEN, within);
	n.used = n.effect;
	return n;
}

/* The degrees of freedom of estimate e (INFINITY: exact or assumed). */
static double
est_df(int e, const struct cmp_side *a, const struct cmp_side *b,
       const struct cmp_opts *o)
{
	switch (e) {
	case EST_OWN_A: return (double)a->nproc - 1;
	case EST_OWN_B: return (double)b->nproc - 1;
	case EST_CALIBRATED: return o->between_df > 0 ? o->between_df : INFINITY;
	}
	return INFINITY;
}

/*
 * The corrected standard error, its degrees of freedom and the 95 %
 * interval from the bootstrap's: each side's variance times its
 * correction, summed per estimate; the degrees of freedom are those of
 * the estimates it stands on, added (the pooled two-sample t: both
 * sides measure one configuration, so their process spreads are taken
 * as one; Welch's data-driven degrees of freedom would make the
 * critical value itself random and the printed MDE optimistic); the
 * percentile interval's distances from the ratio scaled by the
 * corrected over the raw se and by t(0.975, df) / z(0.975), so that it
 * is the plain percentile interval when nothing needs correcting.
 */
static void
corrected(const struct boot_out *bo, const struct side_noise *na,
	  const struct side_noise *nb, const struct cmp_side *a,
	  const struct cmp_side *b, const struct cmp_opts *o,
	  struct cmp_result *r)
{
	double v[EST_N] = { 0 }, se2 = 0, df = 0, l = log(r->ratio), kappa;
	int e;

	v[na->est] += bo->va * na->infl;
	v[nb->est] += bo->vb * nb->infl;
	for (e = 0; e < EST_N; e++) {
		se2 += v[e];
		if (v[e] > 0)
			df += est_df(e, a, b, o);
	}
	r->se = sqrt(se2);
	r->df = df > 0 ? df : INFINITY;
	kappa = bo->se > 0 ? r->se / bo->se : 1;
	if (isfinite(r->df))
		kappa *= stats_t_quantile(0.975, r->df) / stats_norm_quantile(0.975);
	r->ci_lo = exp(l + (bo->q_lo - l) * kappa);
	r->ci_hi = exp(l + (bo->q_hi - l) * kappa);
}

static int
has_nan(const double *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (isnan(x[i]))
			return 1;
	return 0;
}

/* The median of sorted[0..n), n > 0: stats_median()'s value. */
static double
sorted_median(const double *sorted, size_t n)
{
	return n % 2 ? sorted[n / 2] : sorted[n / 2 - 1] / 2 + sorted[n / 2] / 2;
}

int
cmp_compute(const struct cmp_side *a, const struct cmp_side *b,
	    const struct cmp_opts *o, struct cmp_result *r)
{
	double *pa, *pb;
	double wa, wb, bta, btb;
	int nb = o->boot > 10 ? o->boot : 10, sorted;
	struct side_noise sna, snb;
	struct boot_out bo;

	memset(r, 0, sizeof(*r));
	r->df = INFINITY;
	r->p_mwu = NAN;
	pa = cmp_side_pool(a, &r->na);
	pb = cmp_side_pool(b, &r->nb);
	r->ka = a->nproc;
	r->kb = b->nproc;
	if (!r->na || !r->nb) {
		free(pa);
		free(pb);
		return error("no samples on the %s side",
			     r->na ? "candidate" : "baseline");
	}
	/* sorted once (issue 17): the medians, the Mann–Whitney groups and
	 * the Hodges–Lehmann shift all read the sorted pools; a NaN (whose
	 * order is undefined) takes the paths that do not sort */
	sorted = !has_nan(pa, r->na) && !has_nan(pb, r->nb);
	if (sorted) {
		stats_sort(pa, r->na);
		stats_sort(pb, r->nb);
		r->med_a = sorted_median(pa, r->na);
		r->med_b = sorted_median(pb, r->nb);
	} else {
		r->med_a = stats_median(pa, r->na);
		r->med_b = stats_median(pb, r->nb);
	}
	if (!(r->med_a > 0) || !(r->med_b > 0)) {
		free(pa);
		free(pb);
		return error("median throughput is not positive");
	}
	r->ratio = r->med_b / r->med_a;
	if (!o->no_mwu)
		r->p_mwu = sorted ?
			   cmp_mwu_p_sorted(pa, r->na, pb, r->nb, &r->p_exact) :
			   cmp_mwu_p_ex(pa, r->na, pb, r->nb, &r->p_exact);
	r->hl = sorted ? cmp_hl_shift_sorted(pa, r->na, pb, r->nb) :
			 cmp_hl_shift(pa, r->na, pb, r->nb);
	r->hl_rel = r->hl / r->med_a;
	free(pa);
	free(pb);
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
		return 0;
	}
	sna = side_noise(a, EST_OWN_A, o->between_cv, wa, bta, b, EST_OWN_B, btb);
	snb = side_noise(b, EST_OWN_B, o->between_cv, wb, btb, a, EST_OWN_A, bta);
	r->noise = sna.est == EST_CALIBRATED ? NOISE_CALIBRATED :
		   sna.est == EST_ASSUMED || snb.est == EST_ASSUMED ?
		   NOISE_ASSUMED : NOISE_OBSERVED;
	r->between_cv = fmax(sna.used, snb.used);
	bootstrap(a, b, sna.effect, snb.effect, o->seed, nb, r, &bo);
	corrected(&bo, &sna, &snb, a, b, o, r);
	return 0;
}

const char *
cmp_verdict(const struct cmp_result *r, double threshold)
{
	if (r->na < CMP_MIN_SAMPLES || r->nb < CMP_MIN_SAMPLES ||
	    !isfinite(r->ci_lo) || !isfinite(r->ci_hi) ||
	    (r->noise != NOISE_PAIRED && !(r->ci_hi > r->ci_lo)))
		return "inconclusive";
	if (r->ci_lo > 1)
		return "faster";
	if (r->ci_hi < 1)
		return "slower";
	if (r->ci_lo >= 1 - threshold && r->ci_hi <= 1 / (1 - threshold))
		return "same";
	return "inconclusive";
}
