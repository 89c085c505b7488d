#define _POSIX_C_SOURCE 200809L
#include "analysis/baseline.h"
#include "analysis/workload.h"
#include "evidence/state.h"
#include "evidence/store.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The candidate's selection for session id, without its OS keys. */
static void
baseline_selection(const struct selection *cand, int64_t id,
		   struct selection *out)
{
	char num[32];
	size_t i;

	memset(out, 0, sizeof(*out));
	snprintf(num, sizeof(num), "%lld", (long long)id);
	selection_add(out, "session", num);
	for (i = 0; i < cand->n; i++) {
		enum sel_key k = cand->t[i].key;

		if (k == SEL_KEY_SESSION || k == SEL_KEY_OS_BUILD ||
		    k == SEL_KEY_OS_VERSION || k == SEL_KEY_IDENTITY)
			continue;
		selection_add(out, cand->t[i].name, cand->t[i].value);
	}
}

/*
 * Whether session b shares a workload with the candidate rows rb[0..nb)
 * when selected as a baseline of cand: 1 yes, 0 no (*why, caller frees,
 * says what differs), -1 after error() when the store fails.
 */
static int
comparable(struct store *s, const struct selection *cand, int64_t id,
	   const struct store_result *rb, size_t nb, char **why)
{
	struct selection sel;
	struct workload_rows ra;
	struct workload *w = NULL;
	size_t nw = 0, oa = 0, ob = 0;
	char *d = NULL;
	int ret;

	*why = NULL;
	baseline_selection(cand, id, &sel);
	error_silent++;         /* a probe: its refusals are reasons, below */
	ret = workload_load(s, &sel, &ra);
	selection_free(&sel);
	if (ret == RC_USAGE) {
		ret = 0;        /* a key this session lacks: not comparable */
		d = xstrdup(error_last());
	} else if (ret == 0 && workload_match(ra.r, ra.n, rb, nb, &w, &nw,
					      &oa, &ob, &d) < 0) {
		nw = 0;         /* variants that cannot be paired */
		d = xstrdup(error_last());
	}
	error_silent--;
	if (ret < 0) {
		char *m = xstrdup(error_last());

		error("%s", m);         /* the store failed: said after all */
		free(m);
		free(d);
		workload_rows_release(&ra);
		return -1;
	}
	if (!nw)
		*why = xstrfmt("nothing comparable%s%s", d && *d ? ": " : "",
			       d && *d ? d : "");
	free(d);
	workloads_free(w, nw);
	workload_rows_release(&ra);
	return nw > 0;
}

/*
 * The first session of v[0..n) that counts and shares a workload with
 * the candidate, measured no later than before unless any (before "" :
 * no limit); the ones passed over before it go to *skipped. NULL when
 * none (or, *failed set, when the store failed).
 */
static const struct store_base_session *
first_counted(struct store *s, const struct selection *cand,
	      const struct store_result *rb, size_t nb,
	      const struct store_base_session *v, size_t n,
	      const char *before, int any, struct buf *skipped, long *nskipped,
	      long *incomparable, int *failed)
{
	size_t i;

	buf_reset(skipped);
	*nskipped = *incomparable = 0;
	for (i = 0; i < n; i++) {
		const struct store_base_session *b = &v[i];
		char *why = NULL;
		int c;

		if (!any && *before && strcmp(b->measured, before) > 0)
			continue;
		if (selection_counts(0, b->status, b->tampered,
				     run_state_name(RUN_STATE_OK))) {
			c = comparable(s, cand, b->id, rb, nb, &why);
			if (c < 0) {
				*failed = 1;
				return NULL;
			}
			if (c)
				return b;
			(*incomparable)++;
		}
		if ((*nskipped)++ < 5)
			buf_addf(skipped, "%ssession %lld (%s)",
				 skipped->len ? ", " : "", (long long)b->id,
				 why ? why : b->tampered ? "imported as tampered" :
				 *b->status ? b->status : "no status");
		free(why);
	}
	return NULL;
}

int
baseline_auto(struct store *s, const struct selection *cand,
	      const struct store_result *rb, size_t nb,
	      struct baseline_pick *out)
{
	struct store_base_session *v = NULL;
	const struct store_base_session *pick = NULL;
	struct buf skipped = BUF_INIT;
	const char *measured = "";
	size_t n = 0, i, e;
	long incomparable = 0;
	int pass, failed = 0;

	memset(out, 0, sizeof(*out));
	for (e = 0; e < nb && !(rb[e].environment_id && *rb[e].base_identity);
	     e++)
		;
	if (e == nb)
		return out->none = "no-fingerprint", error("--baseline auto: the candidate has no "
			     "fingerprint to pair on"), RC_NOTHING;
	for (i = 0; i < nb; i++)
		if (strcmp(rb[i].measured_at, measured) > 0)
			measured = rb[i].measured_at;
	if (store_sessions_of_base(s, rb[e].base_identity, rb[e].os_build,
				   rb[e].session_id, &v, &n) < 0)
		return -1;
	/* pass 0: measured no later than the candidate; pass 1: any */
	for (pass = 0; pass < 2 && !pick && !failed; pass++)
		pick = first_counted(s, cand, rb, nb, v, n, measured, pass,
				     &skipped, &out->nskipped, &incomparable,
				     &failed);
	if (failed) {
		store_base_sessions_free(v, n);
		buf_release(&skipped);
		return -1;
	}
	if (out->nskipped > 5)
		buf_addf(&skipped, " and %ld more", out->nskipped - 5);
	out->skipped = buf_detach(&skipped, NULL);
	out->cand_os_build = xstrdup(rb[e].os_build);
	out->base = xstrdup(rb[e].base_identity);
	if (!pick) {
		store_base_sessions_free(v, n);
		if (incomparable) {
			out->none = "nothing-comparable";
			error("--baseline auto: no session with the candidate's "
			      "fingerprint and another OS build that counts "
			      "shares a workload with it; passed over: %s",
			      out->skipped);
		} else {
			out->none = "no-other-os-build";
			error("--baseline auto: no other session has the "
			      "candidate's fingerprint with another OS build and "
			      "counts (status ok, not tampered)%s%s",
			      *out->skipped ? "; passed over: " : "",
			      out->skipped);
		}
		return RC_NOTHING;
	}
	out->session = pick->id;
	out->os_build = xstrdup(pick->os_build);
	out->measured = xstrdup(pick->measured);
	store_base_sessions_free(v, n);
	baseline_selection(cand, out->session, &out->sel);
	out->reason = xstrfmt(
		"the most recently measured session (%s, OS build %s) with the "
		"candidate's base fingerprint %.12s and another OS build than "
		"%s that counts (status ok, not tampered) and shares a workload "
		"with it%s%s",
		*out->measured ? out->measured : "date unknown", out->os_build,
		out->base, out->cand_os_build,
		*out->skipped ? "; passed over: " : "", out->skipped);
	return 0;
}

void
baseline_pick_release(struct baseline_pick *p)
{
	free(p->os_build);
	free(p->measured);
	free(p->cand_os_build);
	free(p->base);
	free(p->skipped);
	free(p->reason);
	selection_free(&p->sel);
	memset(p, 0, sizeof(*p));
}
