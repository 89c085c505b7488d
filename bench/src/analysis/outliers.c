#define _POSIX_C_SOURCE 200809L
#include "analysis/outliers.h"
#include "analysis/compare.h"
#include "analysis/stats.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
warnings_add(struct warnings *w, char *msg)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (!strcmp(w->v[i], msg)) {
			free(msg);
			return;
		}
	w->v = strv_push(w->v, &w->n, msg);
}

void
warnings_release(struct warnings *w)
{
	strv_free(w->v);
	memset(w, 0, sizeof(*w));
}

/* The robust scale of values around med: 1.4826 MAD, floored. */
static double
scale_of(double mad, double med)
{
	return fmax(1.4826 * mad, OUTLIER_MAD_FLOOR * fabs(med));
}

/* 1 when v is "far" from med with that scale (by z and relatively). */
static int
far(double v, double med, double scale)
{
	return fabs(v - med) >= OUTLIER_Z * scale &&
	       fabs(v - med) >= OUTLIER_REL * fabs(med);
}

/* The robust CV of x[0..n): 1.4826 MAD / median; NAN when n == 0. */
static double
outliers_robust_cv(const double *x, size_t n)
{
	double med, mad = stats_mad(x, n, &med);

	return n && med > 0 ? 1.4826 * mad / med : NAN;
}

void
outliers_processes(const double *x, const size_t *plen, size_t nproc,
		   const char *what, struct warnings *w)
{
	double *med = xmalloc((nproc ? nproc : 1) * sizeof(double));
	size_t i, off = 0, first_low = 0;
	char example[160] = "";

	for (i = 0; i < nproc; i++) {
		const double *p = x + off;
		size_t n = plen[i];

		med[i] = stats_median(p, n);
		off += n;
		if (n >= 4) {
			double *rest = xmalloc((n - 1) * sizeof(double)), m, mad;

			/* the relative drop first: the MAD only when it is
			 * large enough to matter */
			memcpy(rest, p + 1, (n - 1) * sizeof(double));
			m = stats_median_inplace(rest, n - 1);
			free(rest);
			mad = p[0] < m && m - p[0] >= OUTLIER_REL * fabs(m) ?
			      stats_mad(p + 1, n - 1, NULL) : 0;
			if (p[0] < m && far(p[0], m, scale_of(mad, m))) {
				if (!first_low++)
					snprintf(example, sizeof(example),
						 "%.4g t/s against a median of "
						 "%.4g for the rest", p[0], m);
			}
		}
	}
	if (first_low)
		warnings_add(w, xstrfmt("%s: the first sample of %zu of %zu "
					"processes is far below the rest of its "
					"process (e.g. %s): shader compilation "
					"or cold caches; the median is robust "
					"to it, but a warm-up repetition would "
					"remove it", what, first_low, nproc,
					example));
	if (nproc >= 3) {
		double m, mad = stats_mad(med, nproc, &m);
		double sc = scale_of(mad, m);

		for (i = 0; i < nproc; i++)
			if (far(med[i], m, sc))
				warnings_add(w, xstrfmt(
					"%s: process %zu of %zu has a median of "
					"%.4g t/s, %+.1f %% from the median of "
					"its siblings' medians (%.4g): something "
					"disturbed it (other load, throttling)",
					what, i + 1, nproc, med[i],
					(med[i] / m - 1) * 100, m));
	}
	free(med);
}

void
outliers_side(const struct cmp_side *s, const char *what, struct warnings *w)
{
	size_t n = cmp_side_samples(s), i, off = 0;
	double *x = xmalloc((n ? n : 1) * sizeof(double));

	for (i = 0; i < s->nproc; i++) {
		memcpy(x + off, s->x[i], s->len[i] * sizeof(double));
		off += s->len[i];
	}
	outliers_processes(x, s->len, s->nproc, what, w);
	free(x);
}

int
outliers_effect(const double *a, size_t na, const double *b, size_t nb,
		double ratio, const char *what, const char *name_a,
		const char *name_b, struct warnings *w)
{
	double ca = outliers_robust_cv(a, na), cb = outliers_robust_cv(b, nb);
	double effect = fabs(ratio - 1), spread;
	const char *side;

	if (!isfinite(ratio) || !isfinite(ca) || !isfinite(cb))
		return 0;
	spread = fmax(ca, cb);
	side = ca >= cb ? name_a : name_b;
	if (!(effect < spread))
		return 0;
	warnings_add(w, xstrfmt("%s: the difference (%.2f %%) is smaller than "
				"the spread of the samples (robust CV %.2f %% "
				"in %s): a few samples more or less could "
				"reverse it", what, effect * 100, spread * 100,
				side));
	return 1;
}
