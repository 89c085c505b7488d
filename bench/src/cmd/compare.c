#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/outliers.h"
#include "analysis/table.h"
#include "analysis/workload.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct compare_opts {
	const char *format, *output;
	long seed, boot;
	double threshold;
	int wide;
};

#define CO struct compare_opts
static const struct opt compare_opts[] = {
	OPT_C("format", 'f', CO, format, "F", "md|csv|json",
	      "md (default), csv or json"),
	OPT_I("seed", 0, CO, seed, "N", 0, 9223372036854775807.0,
	      "bootstrap seed (default 1): same seed, same output"),
	OPT_I("boot", 0, CO, boot, "N", 100, 1000000,
	      "bootstrap iterations (default 2000)"),
	OPT_D("threshold", 0, CO, threshold, "P", 0, 100,
	      "'same' when the CI lies within +-P % (default 5; 0 < P < 100)"),
	OPT_S("output", 'o', CO, output, "FILE",
	      "write to FILE instead of standard output"),
	OPT_F("wide", 0, CO, wide, "md: every column (default: those that "
	      "fit 160 characters)"),
	OPT_END
};

static int compare_main(int argc, char **argv, struct cmd_ctx *ctx);

const struct command cmd_compare = {
	.name = "compare",
	.fn = compare_main,
	.summary = "per-workload ratio with bootstrap CI, p-value and verdict",
	.synopsis = "[--format md|csv|json] [--seed N]\n"
		"                         [--boot N] [--threshold PCT] "
		"[-o FILE] A B",
	.description =
		"Per workload (model x test x configuration: rows that differ in a\n"
		"llama-bench field that changes the measurement are never pooled;\n"
		"also variant when both selections hold the same several variants):\n"
		"the ratio B / A of the median tokens/s\n"
		"with a seeded bootstrap 95 % confidence interval (processes are\n"
		"resampled first, then samples within each), the Mann-Whitney U\n"
		"p-value, the Hodges-Lehmann shift, sample and process counts, the\n"
		"minimum detectable effect and a verdict: faster, slower, same or\n"
		"inconclusive. A and B are selections key=value[,key=value...] over\n"
		"session, variant, target, model, role, test, os_build, ...\n"
		"\n"
		"A single process per side cannot show how much the process itself\n"
		"shifts its samples; the noise floor stored by `shimbench calibrate`\n"
		"for the fingerprint is used for that, else the other side's spread\n"
		"of processes, else a conservative 10 % (column noise says which).\n"
		"With few processes the interval takes Student's t. Fewer than 2\n"
		"samples a side: inconclusive. The p-value is exact (ties too) unless\n"
		"a warning says it is the normal approximation.\n"
		"\n"
		"Warnings (column warnings; md: a list): a first sample far below the\n"
		"rest of its process, a process far from its siblings, a difference\n"
		"smaller than the spread of the samples, a side that pools sessions\n"
		"of different fingerprints (thresholds: docs/statistics.md).\n"
		"\n"
		"md shows the configuration fields that tell workloads apart as\n"
		"columns and leaves out the columns that do not fit 160 characters\n"
		"(a line says which; --wide shows them); csv and json hold every\n"
		"column, the workload named with its differing fields.\n",
	.opts = compare_opts,
	.epilogue = "exit: 0 compared, 2 bad input (an unknown selection key), "
		"3 no store, nothing matched\na selection or nothing comparable\n",
	.min_args = 0,
	.max_args = 2,
};

static const char *const compare_cols[] = {
	"workload", "a_median#", "b_median#", "ratio#", "ci95_lo#",
	"ci95_hi#", "p_mwu#", "hl_shift#", "hl_pct#", "a_samples#",
	"a_processes#", "b_samples#", "b_processes#", "noise",
	"between_cv_pct#", "mde_pct#", "verdict", "warnings",
};

static void
pct(char *out, size_t size, double v)
{
	fmt_num(out, size, v * 100, 2);
}

/*
 * One table row: the comparison of w (its MDE from the default gate). A
 * p below CMP_P_MIN is written "<1e-300", in JSON the number 1e-300 (a
 * number column stays numbers); never 0.
 */
/* The warnings of one workload (outliers, spread, pooling) into w. */
static void
workload_warnings(const struct workload *wl, const struct cmp_result *r,
		  struct warnings *w)
{
	char *what = xstrfmt("%s (A)", wl->name);
	double *xa, *xb;
	size_t na, nb;

	outliers_side(&wl->a, what, w);
	free(what);
	what = xstrfmt("%s (B)", wl->name);
	outliers_side(&wl->b, what, w);
	free(what);
	xa = cmp_side_pool(&wl->a, &na);
	xb = cmp_side_pool(&wl->b, &nb);
	outliers_effect(xa, na, xb, nb, r->ratio, wl->name, "A", "B", w);
	free(xa);
	free(xb);
	if (!r->p_exact && isfinite(r->p_mwu))
		warnings_add(w, xstrfmt("%s: the Mann-Whitney p is the normal "
					"approximation (%zu and %zu samples: too "
					"many to count exactly)", wl->name, r->na,
					r->nb));
	if (wl->idents_a > 1)
		warnings_add(w, xstrfmt("%s: A pools sessions %s of %zu "
					"different fingerprints", wl->name,
					wl->sessions_a, wl->idents_a));
	if (wl->idents_b > 1)
		warnings_add(w, xstrfmt("%s: B pools sessions %s of %zu "
					"different fingerprints", wl->name,
					wl->sessions_b, wl->idents_b));
}

/* The columns md leaves out when the table does not fit. */
static const char *const compare_wide[] = {
	"hl_shift", "hl_pct", "a_samples", "b_samples", "noise",
	"between_cv_pct", "warnings",
};

/*
 * The table: compare_cols with, after the workload, a column for each
 * configuration field in vary (the fields that tell workloads apart).
 */
static void
compare_table(struct table *t, char *const *vary)
{
	const char **cols;
	size_t nv = 0, i, n = 0;

	while (vary[nv])
		nv++;
	cols = xcalloc(ARRAY_SIZE(compare_cols) + nv, sizeof(char *));
	cols[n++] = compare_cols[0];
	for (i = 0; i < nv; i++)
		cols[n++] = vary[i];
	for (i = 1; i < ARRAY_SIZE(compare_cols); i++)
		cols[n++] = compare_cols[i];
	table_init(t, n, cols);
	for (i = 0; i < ARRAY_SIZE(compare_wide); i++)
		table_wide_only(t, compare_wide[i]);
	free(cols);
}

static void
compare_row(struct table *t, const struct workload *w, char *const *vary,
	    const struct cmp_result *r, double threshold, int json, int md,
	    const char *warn)
{
	struct gate_decision d;
	char cell[ARRAY_SIZE(compare_cols)][64];
	const char **row = xcalloc(t->ncols, sizeof(char *));
	size_t k, nv = 0;

	while (vary[nv])
		nv++;
	gate_decide(r, threshold, 0.005, GATE_DETECT, &d);
	fmt_num(cell[1], 64, r->med_a, 2);
	fmt_num(cell[2], 64, r->med_b, 2);
	fmt_num(cell[3], 64, r->ratio, 4);
	fmt_num(cell[4], 64, r->ci_lo, 4);
	fmt_num(cell[5], 64, r->ci_hi, 4);
	if (r->p_mwu <= CMP_P_MIN)
		snprintf(cell[6], 64, "%s%.0e", json ? "" : "<", CMP_P_MIN);
	else if (isfinite(r->p_mwu))
		snprintf(cell[6], 64, "%.3g", r->p_mwu);
	else
		cell[6][0] = 0;
	fmt_num(cell[7], 64, r->hl, 2);
	pct(cell[8], 64, r->hl_rel);
	snprintf(cell[9], 64, "%zu", r->na);
	snprintf(cell[10], 64, "%zu", r->ka);
	snprintf(cell[11], 64, "%zu", r->nb);
	snprintf(cell[12], 64, "%zu", r->kb);
	pct(cell[14], 64, r->between_cv);
	pct(cell[15], 64, d.mde);
	for (k = 1; k < ARRAY_SIZE(compare_cols); k++)
		row[nv + k] = cell[k];
	/* md names the fields in their columns; csv and json keep the
	 * whole name, as scripts read it */
	row[0] = md ? w->short_name : w->name;
	for (k = 0; k < nv; k++)
		row[1 + k] = store_config_value(w->config, vary[k]);
	row[nv + 13] = cmp_noise_name(r->noise);
	row[nv + 16] = cmp_verdict(r, threshold);
	row[nv + 17] = warn;
	table_add_row(t, row);
	free(row);
}

/* The configuration fields that tell the compared workloads apart. */
static char **
compare_vary(const struct workload_comparison *c)
{
	const struct store_config **cfg = xcalloc(c->n + 1, sizeof(*cfg));
	char **grp = xcalloc(c->n + 1, sizeof(*grp));
	char **vary;
	size_t i;

	for (i = 0; i < c->n; i++) {
		cfg[i] = c->w[i].config;
		grp[i] = workload_group_key(c->w[i].model, c->w[i].runtime,
					    c->w[i].test, c->w[i].variant);
	}
	vary = workload_distinct_keys(cfg, (const char *const *)grp, c->n);
	free(cfg);
	strv_free(grp);
	return vary;
}

static int
compare_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct compare_opts co = { .format = "md", .seed = 1, .boot = 2000,
				   .threshold = 5 };
	struct cmp_opts o = CMP_OPTS_INIT;
	struct workload_comparison cmp = { 0 };
	const char **args = NULL;
	size_t nargs = 0, i;
	struct store *s = NULL;
	struct table t;
	struct buf out = BUF_INIT;
	struct warnings warn = { 0 };
	struct selection sel[2] = { { 0 }, { 0 } };
	char **vary = NULL;
	int ret = EXIT_OK, rc;

	rc = cmd_parse(ctx, argc, argv, &co, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (nargs != 2) {
		free(args);
		return cmd_usage_error(ctx, "need two selections, A and B");
	}
	if (co.threshold <= 0 || co.threshold >= 100) {
		free(args);
		return cmd_usage_error(ctx, "--threshold %g is not a percentage "
				       "(0 < P < 100)", co.threshold);
	}
	for (i = 0; i < 2; i++)
		if (selection_parse(args[i], &sel[i]) < 0) {
			selection_free(&sel[0]);
			free(args);
			return EXIT_USAGE;
		}
	o.seed = (uint64_t)co.seed;
	o.boot = (int)co.boot;
	if (co.wide)
		table_md_width(0);
	if (cmd_open_store_readonly(ctx, &s) < 0)
		ret = EXIT_ENV;
	else if ((rc = workload_compare(s, &sel[0], &sel[1], &o, &cmp)) < 0)
		ret = rc == RC_USAGE ? EXIT_USAGE : EXIT_ENV;
	vary = ret ? xcalloc(1, sizeof(char *)) : compare_vary(&cmp);
	compare_table(&t, vary);
	if (!ret && *cmp.left_out)
		warnings_add(&warn, xstrfmt("left out by default: %s",
					    cmp.left_out));
	if (!ret && *cmp.included)
		warnings_add(&warn, xstrfmt("counts what the defaults leave "
					    "out, because the selection asks "
					    "for it: %s", cmp.included));
	for (i = 0; !ret && i < cmp.n; i++) {
		struct warnings ww = { 0 };
		struct buf wj = BUF_INIT;
		size_t k;

		if (!cmp.ok[i])
			continue;
		workload_warnings(&cmp.w[i], &cmp.r[i], &ww);
		for (k = 0; k < ww.n; k++) {
			buf_addf(&wj, "%s%s", k ? "; " : "", ww.v[k]);
			warnings_add(&warn, xstrdup(ww.v[k]));
		}
		compare_row(&t, &cmp.w[i], vary, &cmp.r[i], co.threshold / 100,
			    !strcmp(co.format, "json"), !strcmp(co.format, "md"),
			    wj.buf);
		buf_release(&wj);
		warnings_release(&ww);
	}
	if (!ret && table_render(&t, co.format, &out) < 0)
		ret = EXIT_USAGE;
	if (!ret && !strcmp(co.format, "md") && warn.n) {
		buf_adds(&out, "\nWarnings:\n\n");
		for (i = 0; i < warn.n; i++)
			buf_addf(&out, "- %s\n", warn.v[i]);
	} else if (!ret) {
		/* csv and json keep their columns: the general ones here */
		for (i = 0; i < warn.n; i++)
			if (!strncmp(warn.v[i], "left out", 8) ||
			    !strncmp(warn.v[i], "counts what", 11))
				warning("%s", warn.v[i]);
	}
	if (!ret && co.output) {
		if (write_file_atomic(co.output, out.buf, out.len) < 0)
			ret = EXIT_ENV;
	} else if (!ret) {
		fwrite(out.buf, 1, out.len, stdout);
	}
	if (!ret && !ctx->quiet && (cmp.only_a || cmp.only_b))
		fprintf(stderr, "note: %zu workloads only in A, %zu only in B\n",
			cmp.only_a, cmp.only_b);
	warnings_release(&warn);
	workload_comparison_release(&cmp);
	table_release(&t);
	strv_free(vary);
	buf_release(&out);
	store_close(s);
	selection_free(&sel[0]);
	selection_free(&sel[1]);
	free(args);
	return ret;
}
