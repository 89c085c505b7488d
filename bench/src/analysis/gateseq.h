#ifndef ANALYSIS_GATESEQ_H
#define ANALYSIS_GATESEQ_H

/*
 * The sequential gate over a store (issue 19 §8): the candidate is the
 * sessions of a `run --until-decided` loop so far (each round its own
 * session), pooled; the baseline a selection or --baseline auto's pick
 * (analysis/baseline.h); each workload (variant by variant, as the fixed
 * gate pairs them) decided by seq_decide() (analysis/sequential.h) with
 * the workload's noise floor when one is stored. The loop in
 * cmd/run-until.c asks after every round and runs more processes of the
 * workloads that need them, up to the cap.
 */

#include "analysis/outliers.h"
#include "analysis/sequential.h"

#include <stddef.h>
#include <stdint.h>

struct store;
struct selection;

struct gate_seq_check {
	char *name;               /* "variant: model test [config]" */
	char *variant, *model;
	struct seq_decision d;
};

struct gate_seq_report {
	struct gate_seq_check *c;
	size_t n;
	int regressions, passes, more, capped;
	size_t only_baseline;     /* baseline workloads the rounds lack */
	char *baseline;           /* the baseline selection used */
	char *baseline_why;       /* --baseline auto: why that one */
	const char *auto_none;    /* auto found none: why (baseline.h) */
	struct warnings warn;
};

/*
 * Decides every workload of the candidate sessions sessions[0..n)
 * against base (NULL: --baseline auto) with o (its between_cv is
 * replaced by each workload's floor). 0; -1 after error() when the store
 * fails; RC_USAGE after error() for a bad selection or variants that
 * cannot be paired; RC_NOTHING after error() when a side holds nothing
 * that counts or auto finds no baseline (auto_none says why);
 * WORKLOAD_INCOMPARABLE after error() when nothing is comparable.
 * Release with gate_seq_report_release() whatever the return.
 */
int gate_seq_evaluate(struct store *s, const struct selection *base,
		      const int64_t *sessions, size_t n,
		      const struct seq_opts *o, struct gate_seq_report *out);
void gate_seq_report_release(struct gate_seq_report *r);

/*
 * The loop's rule for the next round of one undecided workload (d
 * SEQ_MORE): the processes of the candidate seq_decide() says would
 * likely decide it, at least 1 and no more than the room left under the
 * cap; 0 when d is decided or at the cap. run --until-decided and the
 * simulation (bench/scripts/seq-sim.c, "the CLI loop") both use it.
 */
int gate_seq_batch(const struct seq_decision *d, int cap);

#endif
