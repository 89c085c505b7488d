#ifndef REPORT_H
#define REPORT_H

/*
 * The report: per workload (model x runtime x test x configuration: the
 * llama-bench fields that change the measurement, analysis/workload.h),
 * the median of all samples_ts per role (bare-metal, stock, shim) with
 * min-max and sample count, the guest speedup (shim / stock),
 * shim / bare-metal and stock / bare-metal percent; other variants
 * beside them; runs whose injection was not verified listed apart and
 * never in the figures. Rows of different configurations are never
 * pooled: each is its own workload, and the fields that vary among the
 * workloads are named with them. Warnings say what a figure must not be
 * read without: what the defaults left out, what counts although they
 * would leave it out, cells that pool sessions of different
 * fingerprints, outliers and differences smaller than their spread.
 */

#include <stddef.h>
#include "analysis/outliers.h"
#include "analysis/stats.h"
#include "evidence/store.h"

struct buf;

/* A cell whose fastest sample is this many times its slowest is said to
 * come from a machine that was not quiet (a warning). */
#define REPORT_SPREAD_WARN 3.0

struct rep_cell {
	char *variant;          /* variant names joined with "+" */
	char *role;
	double *ts;
	size_t n;
	int runs;
	size_t *run_n;          /* samples of each run, in ts order */
	struct summary sum;     /* sum.n == 0: no samples */
	double table_avg, table_sd;   /* a table's avg ± stddev when the cell
					 has no samples (one row), else NAN;
					 shown, never used in a ratio */
	int table_rows;
	char **idents;          /* the fingerprint identities pooled */
	size_t nidents;
	int64_t *sessions;      /* the sessions pooled */
	size_t nsessions;
	const char *seen_variant, *seen_ident;   /* the last row's (interned) */
	size_t ts_cap, run_cap;
	int64_t *run_ids;       /* the runs pooled, each once */
	size_t nrun_ids;
	char *facts;            /* what the runs' backends reported
				   (capfacts.h); NULL: nothing recorded */
	char *shim_config;      /* the shim marker's "key=value ..."; NULL:
				   no marker */
};

struct rep_workload {
	char *model, *label, *runtime, *test, *model_sha256;
	struct store_config config;   /* an owned copy */
	char *config_words;     /* "field=value, ..." of the fields that
				   vary among the report's workloads of its
				   runtime; "" none */
	struct rep_cell host, stock, shim;
	struct rep_cell *others;
	size_t nothers;
	int tampered;           /* data from a tampered import */
	int partial;            /* from runs, or sessions, that did not end ok */
	const struct store_result *seen;   /* a row of it, while building */
	size_t order;           /* its model's first row among the rows */
	int64_t session;        /* shown apart: the one session it holds
				   (a report that does not pool); else 0 */
	int64_t first_session;  /* the session of its first row */
};

struct rep_excluded {
	long long session, run;
	char *variant, *workload, *reason;
};

struct provenance;

struct report {
	struct rep_workload *w;
	size_t n;
	struct rep_excluded *ex;
	size_t nex;
	struct provenance *prov;    /* who and what was measured (owned) */
	struct warnings warn;       /* in words, each naming its workload */
	char *sessions;             /* "1, 2, 5": the sessions shown */
	int64_t *session_ids;
	size_t nsessions;
	size_t matched;             /* rows the selection matched */
	int guest;                  /* a target is a virtual machine: tables
				       say host and guest */
	char *nothing;              /* when no row counts: why, in words */
	int per_host_mixed;         /* a workload pairs rows of targets whose
				       per-host fields differ (gpu_info of a
				       host and its guest) */
};

/* 0; -1 after error(); RC_USAGE after error() when the selection is bad. */
int report_build(struct store *s, const struct selection *sel,
		 struct report *out);
/*
 * The same, pool 0: a workload measured by one variant in several
 * sessions is one row per session (named "[session N]"), never one
 * median of all; pool 1 (report_build) pools them, with a warning when
 * their fingerprints differ. A study whose roles come from different
 * sessions (host here, guest there) pools nothing and stays one row.
 */
int report_build_pooled(struct store *s, const struct selection *sel,
			int pool, struct report *out);
void report_release(struct report *r);

/* How many workloads of the report are that model, runtime and test. */
size_t report_count(const struct report *r, const char *model,
		    const char *runtime, const char *test);

/* "llama.cpp", or "MLX-LM" for mlx-lm: runtimes as tables name them. */
const char *report_runtime_display(const char *runtime);
/* "LABEL (RUNTIME)[ [field=value, ...]][ [tampered]][ [partial]]"
 * (caller frees). */
char *report_workload_name(const struct rep_workload *w);
/* The same without the configuration and the session (Markdown shows
 * them in columns). */
char *report_workload_short_name(const struct rep_workload *w);
/* a / b of the medians; NAN when a side is missing. */
double report_ratio(const struct rep_cell *a, const struct rep_cell *b);

/* Ratios: NAN when a side is missing. */
double report_guest_ratio(const struct rep_workload *w);
double report_shim_to_host(const struct rep_workload *w);
double report_stock_to_host(const struct rep_workload *w);

/*
 * The configuration fields of the workloads of runtime rt in the report
 * (rt NULL: all): those that tell rows of one model and test apart
 * (*vary: the table's columns) and every other field of the first
 * workload (*same, "field=value" each: the one value every workload has,
 * or "v1 (model, ...); v2 (model)" where models differ); strv_free() both.
 */
void report_config_fields(const struct report *r, const char *rt,
			  char ***vary, char ***same);

/* Natural order of test names and configuration values: digit runs
 * compare as numbers ("tg128 @ d8192" before "tg128 @ d16384"). */
int report_natcmp(const char *a, const char *b);

#endif
