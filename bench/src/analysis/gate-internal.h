#ifndef ANALYSIS_GATE_INTERNAL_H
#define ANALYSIS_GATE_INTERNAL_H

/*
 * Shared between the files of the gate (gate.c, gateinject.c); not for
 * other callers.
 */

#include "analysis/gate.h"

struct workload_rows;

/* Appends a check to rep; it takes message (NULL allowed). */
struct gate_check *gate_add_check(struct gate_report *rep, const char *suite,
				  const char *name, enum gate_verdict v,
				  char *message);

/*
 * A candidate whose session failed only because injection was not
 * verified (every run of it ended ok, at least one shim run lacks its
 * markers: a macOS update that stopped the shim) still holds a verdict:
 * when every failed session the candidate's selection left out is such
 * a session, *rb is reloaded counting them, and a warning says so.
 * Nothing changes when the selection counts failed sessions already or
 * any left-out session failed otherwise. 0, or -1 after error().
 */
int gate_count_injection_failures(struct store *s, const struct selection *cand,
				  struct workload_rows *rb,
				  struct gate_report *rep);

/* 1 when some row of rb was stored unverified. */
int gate_has_unverified(const struct workload_rows *rb);

/*
 * One regression check per variant whose candidate runs were stored
 * unverified ("VARIANT: injection stopped"), in words: how many runs
 * lack the markers, whether the baseline's runs of the variant carried
 * them, and the speed measured without them against the baseline's
 * runs of the same variant and workload.
 */
void gate_injection_checks(const struct workload_rows *ra,
			   const struct workload_rows *rb,
			   struct gate_report *rep);

#endif
