#ifndef ANALYSIS_BASELINE_H
#define ANALYSIS_BASELINE_H

/*
 * `gate --baseline auto`: the rule that picks the baseline session for a
 * candidate. The store only lists the sessions that could be one
 * (store_sessions_of_base()); the choice is made here.
 *
 * The rule: the candidate's first row with a fingerprint gives its base
 * identity (the fingerprint without OS version and build) and OS build.
 * Of the other sessions with an environment of that base identity and
 * another OS build, the most recently measured one that counts (status
 * ok, not tampered: the default of selection.h) and shares a workload
 * with the candidate (analysis/workload.h; one that shares none, another
 * backend say, is passed over and named) is the baseline;
 * sessions measured after the candidate (its newest row's date) come
 * only when no earlier one qualifies. The newer sessions passed over are
 * named with the reason. The baseline selection is the candidate's
 * selection with session=ID in place of its session and without its OS
 * and identity keys (those differ by design).
 */

#include <stddef.h>
#include <stdint.h>

#include "evidence/selection.h"

struct store;
struct store_result;

struct baseline_pick {
	int64_t session;            /* the session picked */
	char *os_build, *measured;  /* its OS build and date ("" unknown) */
	char *cand_os_build;        /* the candidate's OS build */
	char *base;                 /* and its base fingerprint identity */
	char *skipped;              /* "session 9 (imported as tampered),
				       session 8 (failed)"; "" none */
	long nskipped;
	char *reason;               /* why that one, in words */
	const char *none;           /* RC_NOTHING: "no-fingerprint" (the
				       candidate has none), "no-other-os-build"
				       (no session of its base fingerprint
				       with another OS build counts: no OS
				       update since), "nothing-comparable"
				       (some do, none shares a workload) */
	struct selection sel;       /* the baseline selection */
};

/*
 * Picks the baseline for the candidate selection cand, whose rows are
 * rb[0..nb), into *out (baseline_pick_release() it whatever the return).
 * 0; -1 after error() when the store fails; RC_NOTHING after error()
 * when the candidate has no fingerprint or no session qualifies (the
 * message names those passed over).
 */
int baseline_auto(struct store *s, const struct selection *cand,
		  const struct store_result *rb, size_t nb,
		  struct baseline_pick *out);
void baseline_pick_release(struct baseline_pick *p);

#endif
