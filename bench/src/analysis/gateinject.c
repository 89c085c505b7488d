#define _POSIX_C_SOURCE 200809L
/*
 * The gate's verdict on injection (issue 19 §1): a macOS update that
 * stops the capability shim from taking effect leaves shim runs without
 * their markers. `run` stores them unverified and fails the session;
 * the default CI call (gate --baseline auto --candidate session=latest)
 * must still say FAIL, per variant, that injection stopped, and gate
 * the other variants of that session against the same variants.
 */
#include "analysis/gate-internal.h"
#include "analysis/stats.h"
#include "analysis/workload.h"
#include "evidence/runrec.h"
#include "evidence/selection.h"
#include "evidence/state.h"
#include "evidence/store.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
is_unverified(const struct store_result *r)
{
	return verify_state_of(r->verification) == VERIFY_UNVERIFIED;
}

/* 1 when session id failed only because injection was not verified:
 * every run of it ended ok and at least one was stored unverified (from
 * its runs, whatever the selection selects of it); -1 on error. */
static int
injection_only_failure(struct store *s, int64_t id)
{
	struct run_rec *runs = NULL;
	size_t n = 0, i;
	int unverified = 0, ok = 1;

	if (store_runs_get(s, id, &runs, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (run_state_of(runs[i].status) != RUN_STATE_OK)
			ok = 0;
		if (verify_state_of(runs[i].verification) == VERIFY_UNVERIFIED)
			unverified = 1;
	}
	store_runs_free(runs, n);
	return ok && unverified;
}

int
gate_has_unverified(const struct workload_rows *rb)
{
	size_t i;

	for (i = 0; i < rb->n; i++)
		if (is_unverified(&rb->r[i]))
			return 1;
	return 0;
}

int
gate_count_injection_failures(struct store *s, const struct selection *cand,
			      struct workload_rows *rb, struct gate_report *rep)
{
	struct selection sel = { 0 };
	struct workload_rows more;
	struct buf ids = BUF_INIT;
	size_t i, nfailed = 0;
	int ok = 1, ret;

	if (cand->include & SEL_FAILED)
		return 0;
	for (i = 0; i < rb->nlo; i++)
		if (session_state_of(rb->lo[i].session_status) ==
		    SESSION_STATE_FAILED && !rb->lo[i].tampered)
			nfailed++;
	if (!nfailed)
		return 0;
	/* every failed session the default left out must qualify */
	for (i = 0; i < rb->nlo && ok; i++) {
		const struct store_left_out *l = &rb->lo[i];
		int q;

		if (session_state_of(l->session_status) != SESSION_STATE_FAILED)
			continue;
		if (l->tampered || (q = injection_only_failure(s, l->session)) == 0) {
			ok = 0;
			break;
		}
		if (q < 0) {
			buf_release(&ids);
			return -1;
		}
		if (!strstr(ids.buf, "session"))
			buf_addf(&ids, "session %lld", (long long)l->session);
		else
			buf_addf(&ids, ", %lld", (long long)l->session);
	}
	if (!ok) {
		buf_release(&ids);
		return 0;
	}
	selection_copy(&sel, cand);
	selection_set_include(&sel, SEL_FAILED);
	ret = workload_load(s, &sel, &more);
	selection_free(&sel);
	if (ret < 0) {
		workload_rows_release(&more);
		buf_release(&ids);
		return -1;
	}
	free(more.text);
	more.text = xstrdup(rb->text);
	more.include = rb->include;
	workload_rows_release(rb);
	*rb = more;
	warnings_add(&rep->warn, xstrfmt(
		"candidate: %s failed only because shim runs were not "
		"injection-verified (every run ended ok): its verified runs are "
		"gated, its unverified ones fail the gate as injection stopped",
		ids.buf));
	buf_release(&ids);
	return 0;
}

/* The median of the samples of the usable rows of r[0..n) of variant
 * and x's workload; NAN when none. *runs gets how many runs. */
static double
median_of(const struct store_result *r, size_t n, const char *variant,
	  const struct store_result *x, int usable, size_t *runs)
{
	double *v = NULL, m;
	size_t nv = 0, i;
	int64_t last = 0;

	*runs = 0;
	for (i = 0; i < n; i++) {
		const struct store_result *y = &r[i];

		if (strcmp(y->variant, variant) || !workload_same(y, x) ||
		    !y->n || (usable ? !workload_row_usable(y) :
			      !is_unverified(y)))
			continue;
		if (y->run_id != last)
			(*runs)++;
		last = y->run_id;
		v = xrealloc(v, (nv + y->n) * sizeof(double));
		memcpy(v + nv, y->ts, y->n * sizeof(double));
		nv += y->n;
	}
	m = nv ? stats_median_inplace(v, nv) : NAN;
	free(v);
	return m;
}

/* The speed of the unverified rows of variant against the baseline's,
 * per workload ("tiny pp512 at 0.14× the baseline (812 vs 5800 t/s)"). */
static void
speed_words(const struct workload_rows *ra, const struct workload_rows *rb,
	    const char *variant, struct buf *b)
{
	size_t i, j, shown = 0, runs;

	for (i = 0; i < rb->n && shown < 6; i++) {
		const struct store_result *x = &rb->r[i];
		double mb, ma;
		char ratio[32], sa[32], sb[32];

		if (strcmp(x->variant, variant) || !is_unverified(x) || !x->n)
			continue;
		for (j = 0; j < i; j++)
			if (!strcmp(rb->r[j].variant, variant) &&
			    is_unverified(&rb->r[j]) &&
			    workload_same(&rb->r[j], x))
				break;
		if (j < i)
			continue;       /* named once */
		mb = median_of(rb->r, rb->n, variant, x, 0, &runs);
		ma = median_of(ra->r, ra->n, variant, x, 1, &runs);
		fmt_num(sb, sizeof(sb), mb, 2);
		if (!runs || !(ma > 0)) {
			buf_addf(b, "%s%s %s %s t/s (the baseline has no verified "
				 "run of it)", shown ? "; " : "", x->model,
				 x->test, sb);
		} else {
			fmt_num(ratio, sizeof(ratio), mb / ma, 3);
			fmt_num(sa, sizeof(sa), ma, 2);
			buf_addf(b, "%s%s %s at %s× the baseline (%s vs %s t/s)",
				 shown ? "; " : "", x->model, x->test, ratio, sb,
				 sa);
		}
		shown++;
	}
}

/* Distinct runs of r[0..n) of variant; unverified: only those. */
static size_t
runs_of(const struct store_result *r, size_t n, const char *variant,
	int unverified, int verified, char **sessions)
{
	size_t i, k = 0;
	int64_t last = 0, last_s = 0;
	struct buf b = BUF_INIT;

	for (i = 0; i < n; i++) {
		if (strcmp(r[i].variant, variant))
			continue;
		if (unverified && !is_unverified(&r[i]))
			continue;
		if (verified && (verify_state_of(r[i].verification) !=
				 VERIFY_VERIFIED || !workload_row_usable(&r[i])))
			continue;
		if (r[i].run_id != last)
			k++;
		last = r[i].run_id;
		if (r[i].session_id != last_s && !strstr(b.buf, "session"))
			buf_addf(&b, "session %lld", (long long)r[i].session_id);
		else if (r[i].session_id != last_s)
			buf_addf(&b, ", %lld", (long long)r[i].session_id);
		last_s = r[i].session_id;
	}
	*sessions = buf_detach(&b, NULL);
	return k;
}

void
gate_injection_checks(const struct workload_rows *ra,
		      const struct workload_rows *rb, struct gate_report *rep)
{
	size_t i, j;

	for (i = 0; i < rb->n; i++) {
		const char *variant = rb->r[i].variant;
		char *cs, *bs, *name;
		size_t bad, all, based;
		struct buf m = BUF_INIT;

		if (!is_unverified(&rb->r[i]))
			continue;
		for (j = 0; j < i; j++)
			if (is_unverified(&rb->r[j]) &&
			    !strcmp(rb->r[j].variant, variant))
				break;
		if (j < i)
			continue;       /* one check per variant */
		based = runs_of(ra->r, ra->n, variant, 0, 1, &bs);
		if (!based) {
			free(bs);
			if (runs_of(ra->r, ra->n, variant, 0, 0, &bs)) {
				/* the baseline's runs of it were unverified
				 * too: it never took effect, nothing stopped */
				warnings_add(&rep->warn, xstrfmt(
					"variant '%s': its runs lack the markers "
					"in the baseline (%s) and in the candidate "
					"alike: not gated", variant, bs));
				free(bs);
				continue;
			}
		}
		bad = runs_of(rb->r, rb->n, variant, 1, 0, &cs);
		free(cs);
		all = runs_of(rb->r, rb->n, variant, 0, 0, &cs);
		buf_addf(&m, "injection stopped: %zu of %zu runs of variant '%s' "
			 "in the candidate (%s) lack the markers the variant "
			 "expects (stored unverified: the injected library did "
			 "not take effect)", bad, all, variant, cs);
		if (based)
			buf_addf(&m, ", where the baseline's %zu run%s of it "
				 "(%s) carried them", based, based == 1 ? "" : "s",
				 bs);
		else
			buf_adds(&m, "; the baseline has no verified run of it");
		buf_adds(&m, "; measured without them: ");
		speed_words(ra, rb, variant, &m);
		name = xstrfmt("%s: injection stopped", variant);
		gate_add_check(rep, "injection", name, GATE_REGRESSION,
			       buf_detach(&m, NULL));
		free(name);
		free(cs);
		free(bs);
	}
}
