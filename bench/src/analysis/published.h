#ifndef PUBLISHED_H
#define PUBLISHED_H

/*
 * The published headline figures (evidence/published/figures.json), kept
 * as data with their tolerances.
 */

#include <stddef.h>

enum pub_kind { PUB_MEDIAN, PUB_RATIO, PUB_PERCENT };

struct pub_figure {
	char *study, *model, *runtime, *test;
	char *field;        /* bare_metal, stock, shim, guest_ratio, shim_to_host_percent */
	enum pub_kind kind;
	double value;
	int decimals;       /* as published, for --exact */
};

struct published {
	struct pub_figure *f;
	size_t n;
	double tol_median_rel, tol_ratio_rel, tol_percent_abs;
};

/* Loads the file; 0, or -1 with error() naming the bad entry. */
int published_load(const char *path, struct published *out);
void published_release(struct published *p);

#endif
