#define _POSIX_C_SOURCE 200809L
#include "analysis/gateseq.h"
#include "analysis/baseline.h"
#include "analysis/workload.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rows of the candidate's sessions, each loaded with the default of
 * what counts, and one shallow array over all of them. */
struct rounds {
	struct workload_rows *rows;
	size_t n;
	struct store_result *all;     /* shallow: owned by rows */
	size_t nall;
};

static void
rounds_release(struct rounds *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		workload_rows_release(&r->rows[i]);
	free(r->rows);
	free(r->all);
	memset(r, 0, sizeof(*r));
}

static int
rounds_load(struct store *s, const int64_t *sessions, size_t n,
	    struct rounds *r)
{
	size_t i, k = 0;

	memset(r, 0, sizeof(*r));
	r->rows = xcalloc(n ? n : 1, sizeof(*r->rows));
	for (i = 0; i < n; i++) {
		struct selection sel = { 0 };
		char num[32];
		int ret;

		snprintf(num, sizeof(num), "%lld", (long long)sessions[i]);
		selection_add(&sel, "session", num);
		ret = workload_load(s, &sel, &r->rows[r->n++]);
		selection_free(&sel);
		if (ret < 0)
			return ret;
		r->nall += r->rows[i].n;
	}
	r->all = xcalloc(r->nall ? r->nall : 1, sizeof(*r->all));
	for (i = 0; i < r->n; i++) {
		memcpy(r->all + k, r->rows[i].r, r->rows[i].n * sizeof(*r->all));
		k += r->rows[i].n;
	}
	for (i = 0; i < r->nall && !workload_row_usable(&r->all[i]); i++)
		;
	if (i == r->nall)
		return error("the sessions of the sequential gate hold nothing "
			     "that counts (no run ended ok with samples)"),
		       RC_NOTHING;
	return 0;
}

/* The baseline selection: base, or --baseline auto's pick. */
static int
baseline_of(struct store *s, const struct selection *base, int64_t first,
	    const struct rounds *r, struct gate_seq_report *out,
	    struct selection *sel)
{
	struct selection cand = { 0 };
	struct baseline_pick p;
	char num[32];
	int rc;

	if (base) {
		selection_copy(sel, base);
		out->baseline = xstrdup(sel->text ? sel->text : "");
		return 0;
	}
	snprintf(num, sizeof(num), "%lld", (long long)first);
	selection_add(&cand, "session", num);
	rc = baseline_auto(s, &cand, r->all, r->nall, &p);
	selection_free(&cand);
	if (rc == 0) {
		*sel = p.sel;
		memset(&p.sel, 0, sizeof(p.sel));
		out->baseline = xstrdup(sel->text);
		out->baseline_why = p.reason;
		p.reason = NULL;
	} else if (rc == RC_NOTHING) {
		out->auto_none = p.none;
	}
	baseline_pick_release(&p);
	return rc;
}

int
gate_seq_evaluate(struct store *s, const struct selection *base,
		  const int64_t *sessions, size_t n, const struct seq_opts *o,
		  struct gate_seq_report *out)
{
	struct rounds r;
	struct workload_rows ra;
	struct selection bsel = { 0 };
	struct workload *w = NULL;
	size_t nw = 0, oa = 0, ob = 0, i;
	char *why = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&ra, 0, sizeof(ra));
	if (store_read_begin(s) < 0)
		return -1;
	ret = rounds_load(s, sessions, n, &r);
	if (ret == 0)
		ret = baseline_of(s, base, n ? sessions[0] : 0, &r, out, &bsel);
	if (ret == 0)
		ret = workload_load(s, &bsel, &ra);
	if (ret < 0)
		goto cleanup;
	ret = workload_match(ra.r, ra.n, r.all, r.nall, &w, &nw, &oa, &ob,
			     &why);
	if (ret < 0)
		goto cleanup;
	if (!nw) {
		error("nothing comparable between the baseline '%s' and the "
		      "sequential gate's sessions%s%s", out->baseline,
		      *why ? ": " : "", why);
		ret = WORKLOAD_INCOMPARABLE;
		goto cleanup;
	}
	out->only_baseline = oa;
	if (oa || ob)
		warnings_add(&out->warn, xstrfmt(
			"%zu workloads only in the baseline, %zu only in the "
			"candidate: not gated%s%s", oa, ob, *why ? " (" : "",
			*why ? why : ""));
	out->c = xcalloc(nw, sizeof(*out->c));
	for (i = 0; i < nw; i++) {
		struct seq_opts wo = *o;
		struct gate_seq_check *c = &out->c[out->n++];

		wo.between_cv = workload_calibrated(s, &w[i], &wo.between_df);
		c->name = xstrdup(w[i].name);
		c->variant = xstrdup(w[i].variant);
		c->model = xstrdup(w[i].model);
		if (seq_decide(&w[i].a, &w[i].b, &wo, &c->d) < 0) {
			ret = RC_USAGE;
			goto cleanup;
		}
		out->regressions += c->d.verdict == SEQ_REGRESSION;
		out->passes += c->d.verdict == SEQ_PASS;
		out->more += c->d.verdict == SEQ_MORE;
		out->capped += c->d.verdict == SEQ_CAPPED;
	}
	ret = 0;
cleanup:
	store_read_end(s);
	free(why);
	workloads_free(w, nw);
	workload_rows_release(&ra);
	selection_free(&bsel);
	rounds_release(&r);
	return ret;
}

void
gate_seq_report_release(struct gate_seq_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->c[i].name);
		free(r->c[i].variant);
		free(r->c[i].model);
	}
	free(r->c);
	free(r->baseline);
	free(r->baseline_why);
	warnings_release(&r->warn);
	memset(r, 0, sizeof(*r));
}

int
gate_seq_batch(const struct seq_decision *d, int cap)
{
	int room = cap - (int)d->kb, need = d->more_b;

	if (d->verdict != SEQ_MORE || room < 1)
		return 0;
	if (need < 1)
		need = 1;
	return need < room ? need : room;
}
