#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/published.h"
#include "analysis/table.h"
#include "analysis/report.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reproduce_opts {
	const char *figures, *study, *select, *format;
	int exact, require_all;
};

#define RO struct reproduce_opts
static const struct opt reproduce_opts[] = {
	OPT_S("figures", 0, RO, figures, "FILE",
	      "the published figures and their tolerances (default "
	      "evidence/published/figures.json)"),
	OPT_S("study", 0, RO, study, "NAME",
	      "only the figures of this study"),
	OPT_S("select", 0, RO, select, "SEL",
	      "key=value[,key=value...]: only these stored runs (default: "
	      "everything stored)"),
	OPT_F("exact", 0, RO, exact,
	      "require agreement to the published precision (for "
	      "re-deriving the figures from the raw evidence)"),
	OPT_F("require-all", 0, RO, require_all,
	      "a figure without stored data fails too"),
	OPT_C("format", 'f', RO, format, "F", "md|csv|json",
	      "md (default), csv or json"),
	OPT_END
};

static int reproduce_main(int argc, char **argv, struct cmd_ctx *ctx);

const struct command cmd_reproduce = {
	.name = "reproduce",
	.fn = reproduce_main,
	.summary = "compare stored runs with the published figures",
	.synopsis = "[--figures FILE] [--study NAME]\n"
		"                           [--select SEL] [--exact] [--require-all]\n"
		"                           [--format md|csv|json]",
	.description =
		"Compares the stored runs with the published headline figures\n"
		"(evidence/published/figures.json) and prints, per figure, the\n"
		"published and measured values, the delta, the tolerance and\n"
		"PASS, FAIL or MISSING. Tolerances are stated in the figures file:\n"
		"medians within 10 %, guest speedups within 15 %, percent of bare\n"
		"metal within 5 points.\n",
	.opts = reproduce_opts,
	.epilogue =
		"Exit: 0 every measured figure passes, 1 a figure missed (or, with\n"
		"--require-all, is missing), 2 usage (an unknown selection key), 3\n"
		"nothing matched the selection or nothing to compare, 4 a figure\n"
		"matches several configurations (never pooled: select one).\n"
		"Tampered imports, failed, interrupted or unfinished sessions and runs\n"
		"that did not end ok are left out unless --select includes them\n"
		"(include=...), and then the output says so.\n",
	.max_args = 0,
};

static const char *
kind_unit(enum pub_kind k)
{
	return k == PUB_MEDIAN ? "tok/s" : k == PUB_RATIO ? "x" : "%";
}

static double
measured(const struct rep_workload *w, const char *field)
{
	const struct rep_cell *c = NULL;

	if (!strcmp(field, "bare_metal"))
		c = &w->host;
	else if (!strcmp(field, "stock"))
		c = &w->stock;
	else if (!strcmp(field, "shim"))
		c = &w->shim;
	if (c)
		return c->sum.n ? c->sum.median : NAN;
	if (!strcmp(field, "guest_ratio"))
		return report_guest_ratio(w);
	if (!strcmp(field, "shim_to_host_percent"))
		return report_shim_to_host(w);
	return NAN;
}

struct tally {
	int pass, fail, missing, ambiguous;
};

/* One published figure against the report: its table row and verdict. */
static void
figure_row(const struct published *pub, const struct pub_figure *f,
	   const struct report *rep, int exact, struct table *t,
	   struct tally *n)
{
	const struct rep_workload *w = NULL;
	char v[4][64], amb[64];
	const char *verdict, *row[8];
	double m = NAN, tol, delta = NAN;
	size_t k, nconf;

	for (k = 0; k < rep->n; k++)
		if (!strcmp(rep->w[k].model, f->model) &&
		    !strcmp(rep->w[k].runtime, f->runtime) &&
		    !strcmp(rep->w[k].test, f->test))
			w = &rep->w[k];
	nconf = report_count(rep, f->model, f->runtime, f->test);
	if (w && nconf == 1)
		m = measured(w, f->field);
	if (exact) {
		tol = 0.5 * pow(10, -f->decimals) + 1e-9;
		snprintf(v[3], 64, "±%g %s", tol, kind_unit(f->kind));
	} else if (f->kind == PUB_PERCENT) {
		tol = pub->tol_percent_abs;
		snprintf(v[3], 64, "±%g points", tol);
	} else {
		double rel = f->kind == PUB_MEDIAN ?
			pub->tol_median_rel : pub->tol_ratio_rel;
		tol = rel * fabs(f->value);
		snprintf(v[3], 64, "±%g %%", rel * 100);
	}
	if (nconf > 1) {
		/* several configurations: never one pooled figure */
		snprintf(amb, sizeof(amb), "AMBIGUOUS: %zu configurations",
			 nconf);
		verdict = amb;
		n->ambiguous++;
	} else if (isnan(m)) {
		verdict = "MISSING";
		n->missing++;
	} else {
		delta = m - f->value;
		verdict = fabs(delta) <= tol ? "PASS" : "FAIL";
		if (fabs(delta) <= tol)
			n->pass++;
		else
			n->fail++;
	}
	fmt_num(v[0], 64, f->value, 6);
	if (isnan(m)) {
		v[1][0] = v[2][0] = '\0';
	} else {
		fmt_num(v[1], 64, m, 6);
		snprintf(v[2], 64, "%+.4f", delta);
	}
	row[0] = f->study;
	row[1] = f->test;
	row[2] = f->field;
	row[3] = v[0];
	row[4] = v[1];
	row[5] = v[2];
	row[6] = v[3];
	row[7] = verdict;
	table_add_row(t, row);
}

static int
reproduce_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const char *const cols[] = {
		"Study", "Test", "Figure", "Published#", "Measured#", "Delta#",
		"Tolerance", "Verdict",
	};
	struct reproduce_opts o = { .format = "md" };
	const char **args = NULL;
	size_t nargs;
	const char *figures;
	char *figures_found = NULL;
	int ret = EXIT_OK, rc;
	struct tally tally = { 0 };
	struct selection sel = { 0 };
	struct published pub = { 0 };
	struct report rep = { 0 };
	struct store *s = NULL;
	struct buf out = BUF_INIT;
	struct table t;
	size_t i;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	free(args);
	if (selection_parse(o.select, &sel) < 0)
		return EXIT_USAGE;
	figures = o.figures;
	if (!figures)
		figures = figures_found =
			tool_data_path("evidence/published/figures.json");
	if (published_load(figures, &pub) < 0) {
		free(figures_found);
		selection_free(&sel);
		return EXIT_USAGE;
	}
	table_init(&t, ARRAY_SIZE(cols), cols);
	if (cmd_open_store_readonly(ctx, &s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	rc = report_build(s, &sel, &rep);
	if (rc < 0) {
		ret = rc == RC_USAGE ? EXIT_USAGE : EXIT_ENV;
		goto cleanup;
	}
	if (!rep.n) {
		error("%s", rep.nothing ? rep.nothing :
		      "nothing matched the selection");
		ret = EXIT_ENV;
		goto cleanup;
	}
	for (i = 0; i < pub.n; i++)
		if (!o.study || !strcmp(o.study, pub.f[i].study))
			figure_row(&pub, &pub.f[i], &rep, o.exact, &t, &tally);
	if (t.nrows == 0) {
		error("no published figure matches study '%s'",
		      o.study ? o.study : "");
		ret = EXIT_USAGE;
		goto cleanup;
	}
	table_render(&t, o.format, &out);
	fwrite(out.buf, 1, out.len, stdout);
	if (!strcmp(o.format, "md"))
		printf("\nfigures: %d pass, %d fail, %d missing%s%s\n",
		       tally.pass, tally.fail, tally.missing,
		       tally.missing ? " (no stored data for them)" : "",
		       tally.ambiguous ? "; some figures match several "
		       "configurations: select one with --select" : "");
	for (i = 0; i < rep.warn.n; i++)
		if (!strncmp(rep.warn.v[i], "these figures count", 19) ||
		    !strncmp(rep.warn.v[i], "left out", 8)) {
			if (!strcmp(o.format, "md"))
				printf("warning: %s\n", rep.warn.v[i]);
			else
				warning("%s", rep.warn.v[i]);
		}
	if (tally.fail || (o.require_all && tally.missing))
		ret = EXIT_CHECK;
	else if (tally.ambiguous)
		ret = EXIT_INCONCLUSIVE;
	else if (tally.pass == 0)
		ret = EXIT_ENV;
cleanup:
	table_release(&t);
	report_release(&rep);
	published_release(&pub);
	selection_free(&sel);
	buf_release(&out);
	store_close(s);
	free(figures_found);
	return ret;
}
