#ifndef ANALYSIS_OUTLIERS_H
#define ANALYSIS_OUTLIERS_H

/*
 * Warnings about the samples behind a figure, as hyperfine gives them,
 * with robust statistics (median and MAD; docs/statistics.md states the
 * thresholds):
 *   first sample   a process's first sample far below the rest of that
 *                  process (shader compilation, cold caches)
 *   process        a process whose median sits far from its siblings'
 *                  (three processes or more)
 *   spread         a difference between two sides smaller than the
 *                  spread of their samples
 * "Far": at least OUTLIER_Z robust standard deviations (1.4826 MAD,
 * never less than OUTLIER_MAD_FLOOR of the median) and at least
 * OUTLIER_REL of the median.
 */

#include <stddef.h>

#define OUTLIER_Z 5.0
#define OUTLIER_REL 0.05
#define OUTLIER_MAD_FLOOR 0.005

struct cmp_side;

/* A growing list of warnings (strings owned; NULL-terminated v). */
struct warnings {
	char **v;
	size_t n;
};
void warnings_add(struct warnings *w, char *msg);   /* takes msg */
void warnings_release(struct warnings *w);

/*
 * The first-sample and process warnings of nproc processes, process i
 * holding plen[i] samples x[off..off+plen[i]) in measured order; what
 * names them ("TinyLlama pp512, stock"). Appends to w.
 */
void outliers_processes(const double *x, const size_t *plen, size_t nproc,
			const char *what, struct warnings *w);
/* The same for a comparison side. */
void outliers_side(const struct cmp_side *s, const char *what,
		   struct warnings *w);
/*
 * The spread warning: when |ratio - 1| is smaller than the robust CV
 * (1.4826 MAD / median) of either side's samples. Returns 1 when it
 * warned.
 */
int outliers_effect(const double *a, size_t na, const double *b, size_t nb,
		    double ratio, const char *what, const char *name_a,
		    const char *name_b, struct warnings *w);

#endif
