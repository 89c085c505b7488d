#define _POSIX_C_SOURCE 200809L
#include "analysis/render.h"
#include "analysis/report.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The report in one sentence and its footnotes, computed from the rows
 * (never a literal): what a first screen leads with.
 */

/* 1 for a prompt test (pp512, pp512 @ d1024), 2 generation, else 0. */
static int
test_kind(const char *test)
{
	if (!strncmp(test, "pp", 2))
		return 1;
	if (!strncmp(test, "tg", 2))
		return 2;
	return 0;
}

/* 1 when a and b are one model of one runtime in one session. */
static int
same_group(const struct rep_workload *a, const struct rep_workload *b)
{
	return !strcmp(a->label, b->label) && !strcmp(a->runtime, b->runtime) &&
	       a->session == b->session;
}

/* "LABEL", with the runtime when it is not llama.cpp and the session
 * when the report keeps sessions apart. */
static void
group_name(struct buf *b, const struct rep_workload *w)
{
	buf_adds(b, w->label);
	if (strcmp(w->runtime, "llama.cpp"))
		buf_addf(b, " (%s)", report_runtime_display(w->runtime));
	if (w->session)
		buf_addf(b, " (session %lld)", (long long)w->session);
}

char *
report_headline_sentence(const struct report *r)
{
	struct buf b = BUF_INIT;
	double lo = NAN, hi = NAN;
	size_t i, j, groups = 0, more = 0;

	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		double pp = NAN, tg = NAN;
		char pps[32], tgs[32];

		for (j = 0; j < i && !same_group(&r->w[j], w); j++)
			;
		if (j < i)
			continue;   /* this model was said */
		for (j = i; j < r->n; j++) {
			const struct rep_workload *x = &r->w[j];
			double g = report_guest_ratio(x);

			if (!same_group(x, w) || isnan(g))
				continue;
			if (test_kind(x->test) == 1 && isnan(pp))
				pp = g;
			else if (test_kind(x->test) == 2 && isnan(tg))
				tg = g;
		}
		if (isnan(pp) && isnan(tg))
			continue;
		if (groups == 4) {
			more++;
			continue;
		}
		snprintf(pps, sizeof(pps), isnan(pp) ? "–" : "%.2f×", pp);
		snprintf(tgs, sizeof(tgs), isnan(tg) ? "–" : "%.2f×", tg);
		buf_adds(&b, groups ? "; " : "");
		group_name(&b, w);
		if (groups++)
			buf_addf(&b, " %s / %s", pps, tgs);
		else
			buf_addf(&b, ": %s prompt, %s generation with the shim",
				 pps, tgs);
	}
	if (more)
		buf_addf(&b, "; %zu model%s more", more, more == 1 ? "" : "s");
	for (i = 0; i < r->n; i++) {
		double x = report_shim_to_host(&r->w[i]);

		if (isnan(x) || test_kind(r->w[i].test) != 1)
			continue;
		lo = isnan(lo) || x < lo ? x : lo;
		hi = isnan(hi) || x > hi ? x : hi;
	}
	if (!isnan(lo) && hi - lo < 0.005)
		buf_addf(&b, "%sshim at %.2f %% of bare metal for prompts",
			 b.len ? "; " : "", lo);
	else if (!isnan(lo))
		buf_addf(&b, "%sshim at %.2f–%.2f %% of bare metal for prompts",
			 b.len ? "; " : "", lo, hi);
	if (b.len)
		buf_addch(&b, '.');
	return buf_detach(&b, NULL);
}

char *
report_no_host_note(const struct report *r)
{
	struct buf b = BUF_INIT, names = BUF_INIT, sess = BUF_INIT;
	int64_t seen[16];
	size_t i, j, n = 0, ns = 0, hosts = 0;

	for (i = 0; i < r->n; i++)
		hosts += r->w[i].host.variant != NULL;
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		const struct rep_cell *c[2] = { &w->stock, &w->shim };
		size_t k;

		if (w->host.variant || (!w->stock.variant && !w->shim.variant))
			continue;
		for (j = 0; j < i; j++)
			if (!r->w[j].host.variant && same_group(&r->w[j], w))
				break;
		if (j == i) {
			buf_adds(&names, n++ ? ", " : "");
			group_name(&names, w);
		}
		for (k = 0; k < 2; k++)
			for (j = 0; j < c[k]->nsessions; j++) {
				size_t q;

				for (q = 0; q < ns && seen[q] != c[k]->sessions[j]; q++)
					;
				if (q == ns && ns < ARRAY_SIZE(seen)) {
					seen[ns++] = c[k]->sessions[j];
					buf_addf(&sess, "%s%lld", ns > 1 ? ", " : "",
						 (long long)c[k]->sessions[j]);
				}
			}
	}
	/* only where the report has bare metal for other rows: the "–" is
	 * then a gap to explain, not the shape of the whole study */
	if (n && hosts)
		buf_addf(&b, "† No bare-metal run of %s is among the sessions "
			 "shown: session%s %s measured %s in the guest only "
			 "(stock and shim), so %s no percent of bare metal.",
			 names.buf, ns == 1 ? "" : "s", sess.buf,
			 n == 1 ? "it" : "them", n == 1 ? "it has" : "they have");
	buf_release(&names);
	buf_release(&sess);
	return buf_detach(&b, NULL);
}
