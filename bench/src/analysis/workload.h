#ifndef ANALYSIS_WORKLOAD_H
#define ANALYSIS_WORKLOAD_H

/*
 * From a selection to the samples the statistics work on: a selection's
 * store rows (workload_load), the workloads two selections share, each
 * with its baseline and candidate processes (workload_match), the
 * groups of one selection that calibration measures (workload_groups),
 * and the series of sessions that history searches for change points
 * (workload_series). The statistics themselves (analysis/compare.h)
 * never see the store.
 *
 * A workload is model x runtime x test x configuration: the model is its
 * SHA-256 when both rows know it (rows whose hashes differ are different
 * workloads), else its name; the configuration is every field of the
 * llama-bench row that changes the measurement (the fields of role
 * LB_CONFIG in evidence/lbfields.h, as the store keeps them in
 * store_config: backend, build, devices, n_gpu_layers, n_threads,
 * n_batch, n_ubatch, type_k/type_v, flash_attn, split_mode, ...). Rows
 * that differ in any of them are never pooled.
 *
 * What counts: the rows a selection selects (by default runs with status
 * ok of sessions with status ok, not tampered; selection.h says how a
 * selection includes more), each run one llama-bench process, with at
 * least one sample and an injection that was not found unverified.
 */

#include "analysis/compare.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Return codes beyond RC_OK, RC_ERROR, RC_USAGE and RC_NOTHING
 * (base/util.h): the selections hold data, but none in common.
 */
enum {
	WORKLOAD_INCOMPARABLE = -4,   /* after error(): nothing comparable */
};

struct store;
struct selection;
struct store_result;
struct store_config;
struct store_left_out;
struct cp_change;

/* The rows of a selection and what its default left out. */
struct workload_rows {
	struct store_result *r;
	size_t n;
	struct store_left_out *lo;
	size_t nlo;
	unsigned include;            /* SEL_* the selection counts beyond
					the default */
	char *text;                  /* the selection as given ("" all) */
};
/*
 * Loads the rows of a selection (evidence/selection.h). 0; -1 after
 * error(); RC_USAGE after error() when a key of the selection is
 * unknown to the store (a usage error). Nothing matched: n == 0 and
 * nlo == 0. Release whatever the return.
 */
int workload_load(struct store *s, const struct selection *sel,
		  struct workload_rows *out);
void workload_rows_release(struct workload_rows *w);
/*
 * In words, what the default left out ("session 4 (imported as
 * tampered): 2 runs, 4 results; ..."), and what counts although the
 * default would leave it out ("session 5 ended 'failed'"); "" when
 * nothing (caller frees).
 */
char *workload_left_out_words(const struct workload_rows *w);
char *workload_included_words(const struct store_result *r, size_t n);
/*
 * The message for a selection whose rows hold nothing to count: "nothing
 * matched the selection 'X'" or, when the default left rows out, what it
 * left out and how to include it (caller frees).
 */
char *workload_nothing_words(const struct workload_rows *w);
/* 1 when a row counts in a figure (samples, injection not unverified). */
int workload_row_usable(const struct store_result *r);

/* 1 when two rows measure the same workload (model, runtime, test and
 * configuration; variant and target not compared). */
int workload_same(const struct store_result *a, const struct store_result *b);
/*
 * 1 when two rows measure the same model: by SHA-256 when both know it,
 * else by the run's model name; rows of runs that name no model by the
 * row's own model facts (type, file, size, parameters) where both rows
 * show them: the models of one `llama-bench -m a.gguf -m b.gguf` are
 * never pooled (and a run that names its model holds only one).
 */
int workload_same_model(const struct store_result *a,
			const struct store_result *b);
/*
 * 1 when two configurations are one: equal, or, for rows of different
 * targets, equal but for the per-host fields (gpu_info: a host and its
 * guest name their GPU differently; lbfields.h LB_PER_HOST). Rows of
 * one target that differ in gpu_info (RADV and AMDVLK) are never one.
 */
int workload_same_config(const struct store_config *a, const char *target_a,
			 const struct store_config *b, const char *target_b);
/*
 * The configuration fields whose values differ among cfg[0..n) (a field
 * one lacks counts as differing), sorted (strv_free()), and the words
 * "key=value, ..." of c for keys (caller frees; "" when none).
 */
char **workload_varying_keys(const struct store_config *const *cfg, size_t n);
/*
 * The fields that tell rows apart: the union over the groups of cfg that
 * share a group key (group[i] is cfg[i]'s, from workload_group_key()) of
 * the fields that vary within a group (strv_free()).
 */
char **workload_distinct_keys(const struct store_config *const *cfg,
			      const char *const *group, size_t n);
/* "model, runtime, test[, extra]" as one key (caller frees). */
char *workload_group_key(const char *model, const char *runtime,
			 const char *test, const char *extra);
char *workload_config_words(const struct store_config *c, char *const *keys);

/*
 * A workload present in a baseline and a candidate selection, paired by
 * (model, runtime, test, configuration), and also by (target, variant)
 * when both selections hold several variants (a plan's session against
 * the previous one: each variant against the same variant; rows that do
 * not count, such as runs whose injection was not verified, still name
 * their variant).
 */
struct workload {
	char *target, *variant, *model, *model_label, *test, *runtime;
	char *name;        /* "model test", "variant: model test", with
			      "[field=value, ...]" when configurations vary */
	char *short_name;  /* the same without the configuration (tables
			      show the fields that vary in columns) */
	const struct store_config *config;   /* owned by the store */
	char *identity_a, *identity_b;
	char *os_build_a, *os_build_b;
	int64_t session_a, session_b;
	size_t idents_a, idents_b;           /* distinct fingerprints pooled */
	char *sessions_a, *sessions_b;       /* "1, 2, 5" (at most 8 named) */
	struct cmp_side a, b;
};

/*
 * Fills *out with the workloads present on both sides (*n of them, in
 * baseline order) and counts in *only_a / *only_b those present on one
 * side only; why (when a side holds the same model and test in another
 * configuration: the fields that differ) goes to *why (caller frees;
 * NULL allowed). Returns 0, or RC_USAGE after error() when a selection
 * mixes variants that cannot be paired (several against one). Free with workloads_free().
 */
int workload_match(const struct store_result *ra, size_t na,
		   const struct store_result *rb, size_t nb,
		   struct workload **out, size_t *n,
		   size_t *only_a, size_t *only_b, char **why);
void workloads_free(struct workload *w, size_t n);

/*
 * The calibrated process effect (between-process CV) for a workload:
 * the floor of exactly its measurement (fingerprint identity, test,
 * model, variant and configuration: store_noise_get()), the
 * candidate's identity first, then the baseline's; -1 when neither was
 * calibrated (or the lookup failed). *df (NULL allowed) gets its
 * degrees of freedom, the calibration's processes less one (0:
 * unknown). workload_floors_elsewhere(): how many floors the same
 * fingerprint and test hold for other models, variants or
 * configurations (none of which stands in), for the words.
 */
double workload_calibrated(struct store *s, const struct workload *w,
			   double *df);
long workload_floors_elsewhere(struct store *s, const struct workload *w);

/*
 * The processes of one configuration for calibration: rows grouped by
 * fingerprint identity, target, variant, model, test and configuration
 * (in order of first appearance); a run contributes its first row of a
 * test only.
 */
struct workload_group {
	char *identity, *target, *variant, *model, *test;
	const struct store_config *config;
	struct store_result *rep;    /* its first row, without samples (the
					strings are the store's) */
	int64_t session;             /* of the first row */
	struct cmp_side side;
};
/*
 * Groups rows[0..n) into *out (*ng of them; free with
 * workload_groups_free). RC_USAGE after error() naming what differs
 * when two groups measure the same model and test (the selection mixes
 * configurations: variants, targets, fingerprints or llama-bench
 * fields); 0 otherwise.
 */
int workload_groups(const struct store_result *rows, size_t n,
		    struct workload_group **out, size_t *ng);
void workload_groups_free(struct workload_group *g, size_t n);

/*
 * Adds to *side every usable row of rows[0..n) of the group's model,
 * test and configuration, one process per run (a candidate for
 * calibrate --power).
 */
void workload_side_of(const struct store_result *rows, size_t n,
		      const struct workload_group *g, struct cmp_side *side);

/*
 * History: one series per target, variant, model, test, configuration
 * and fingerprint without OS version and build; one point per session,
 * in order of measurement (the runs' own dates, never the import's),
 * holding the session's samples process after process.
 */
struct workload_point {
	int64_t session;
	char *started, *os_build;    /* started: when it was measured */
	double *x;
	size_t n;
	size_t *plen;                /* samples of each process */
	size_t nproc;
	int64_t last_run;
};
struct workload_series {
	char *key;                   /* "target/variant model test [base]" */
	char *base;                  /* base identity, or NULL */
	char *model, *runtime, *test, *label;
	const struct store_config *config;
	struct workload_point *p;
	size_t np;
};
/* Builds the series of rows[0..n) into *out (*ns of them). Free with
 * workload_series_free(). */
void workload_series(struct store *s, const struct store_result *rows,
		     size_t n, struct workload_series **out, size_t *ns);
void workload_series_free(struct workload_series *sr, size_t n);
/* The change points of a series (changepoint.h cp_sessions at level p):
 * *cp (caller frees), indexes into sr->p. */
void workload_changepoints(const struct workload_series *sr, double p,
			   struct cp_change **cp, size_t *ncp);

/*
 * compare: the workloads two selections share, each compared (b against
 * a) with o and the workload's calibrated process effect. ok[i] is 0
 * when workload i could not be compared (error() said why). Returns 0;
 * -1 after error() when the store fails; RC_USAGE after error() when a
 * selection is bad or mixes variants that cannot be paired; RC_NOTHING
 * after error() when a selection holds nothing that counts;
 * WORKLOAD_INCOMPARABLE after error()
 * when nothing is comparable. Release with workload_comparison_release()
 * whatever the return.
 */
struct workload_comparison {
	struct workload *w;
	struct cmp_result *r;
	int *ok;
	size_t n, only_a, only_b;
	char *left_out;              /* what the defaults left out, in words */
	char *included;              /* what counts beyond them, in words */
};
int workload_compare(struct store *s, const struct selection *a,
		     const struct selection *b, const struct cmp_opts *o,
		     struct workload_comparison *out);
void workload_comparison_release(struct workload_comparison *c);

/*
 * history: the series of a selection, the median of each point, and the
 * change points of each series (workload_changepoints at level p). 0; -1
 * after error(); RC_USAGE a bad selection; RC_NOTHING nothing that
 * counts (error() said so). Release with workload_history_release()
 * whatever the return.
 */
struct workload_history {
	struct workload_series *sr;
	size_t ns;
	double **median;             /* median[j][k]: point k of series j */
	struct cp_change **cp;       /* the change points of series j */
	size_t *ncp;
	char *left_out, *included;   /* in words, "" when nothing */
};
int workload_history(struct store *s, const struct selection *selection,
		     double p, struct workload_history *h);
void workload_history_release(struct workload_history *h);

#endif
