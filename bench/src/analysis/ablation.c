#define _POSIX_C_SOURCE 200809L
#include "analysis/ablation.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "analysis/table.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROLE_ABLATION "ablation"

int
ablation_present(const struct report *r)
{
	size_t i, j;

	for (i = 0; i < r->n; i++)
		for (j = 0; j < r->w[i].nothers; j++)
			if (r->w[i].others[j].role &&
			    !strcmp(r->w[i].others[j].role, ROLE_ABLATION))
				return 1;
	return 0;
}

/* Whether the space-separated list holds token tok. */
static int
has_token(const char *list, const char *tok, size_t len)
{
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ' ');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == len && !memcmp(p, tok, len))
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/*
 * What a row took away, in words: the marker parameters of cfg that the
 * reference (the shim variant's marker) does not have, without the
 * profile's name and with "hide=" dropped (caller frees).
 */
static char *
taken_away(const char *cfg, const char *ref)
{
	struct buf b = BUF_INIT;
	const char *p = cfg;

	if (!cfg)
		return xstrdup("(no shim marker)");
	if (strstr(cfg, " | "))
		return xstrfmt("(its runs differ: %s)", cfg);
	while (*p) {
		const char *end = strchr(p, ' ');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (strncmp(p, "profile=", 8) && !(ref && has_token(ref, p, n))) {
			if (!strncmp(p, "hide=", 5)) {
				p += 5;
				n -= 5;
			}
			buf_addf(&b, "%s%.*s", b.len ? " " : "", (int)n, p);
		}
		p = end ? end + 1 : p + n;
	}
	if (!b.len)
		buf_adds(&b, "(nothing: the same marker as the shim)");
	return buf_detach(&b, NULL);
}

/* One row: a cell and its percent of bare. */
struct row {
	const struct rep_cell *c;
	char *what;
	double pct, lo, hi;      /* NAN unknown */
};

static void
row_compute(struct row *x, const struct rep_workload *w)
{
	double ratio, lo, hi;

	x->pct = x->lo = x->hi = NAN;
	if (!w->host.n || !x->c->n)
		return;
	if (plot_ratio_ci(x->c, &w->host, &ratio, &lo, &hi) < 0)
		return;
	x->pct = 100 * ratio;
	x->lo = 100 * lo;
	x->hi = 100 * hi;
}

/* Larger cost first; unknown last. */
static int
cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (isnan(x->pct) || isnan(y->pct))
		return isnan(x->pct) - isnan(y->pct);
	return x->pct < y->pct ? -1 : x->pct > y->pct;
}

/* The rows of workload w: shim, the ablation rows by cost, stock. */
static struct row *
workload_rows(const struct rep_workload *w, size_t *n)
{
	struct row *v = xcalloc(w->nothers + 3, sizeof(*v));
	size_t k = 0, j, first;

	*n = 0;
	for (j = 0; j < w->nothers; j++)
		if (w->others[j].role && !strcmp(w->others[j].role, ROLE_ABLATION))
			break;
	if (j == w->nothers)
		return v;
	if (w->shim.variant) {
		v[k].c = &w->shim;
		v[k++].what = xstrdup("nothing (shim)");
	}
	first = k;
	for (j = 0; j < w->nothers; j++) {
		const struct rep_cell *c = &w->others[j];

		if (!c->role || strcmp(c->role, ROLE_ABLATION))
			continue;
		v[k].c = c;
		v[k++].what = taken_away(c->shim_config, w->shim.variant ?
					 w->shim.shim_config : NULL);
	}
	for (j = 0; j < k; j++)
		row_compute(&v[j], w);
	qsort(v + first, k - first, sizeof(*v), cmp_rows);
	if (w->stock.variant) {
		v[k].c = &w->stock;
		v[k].what = xstrdup("everything (stock)");
		row_compute(&v[k], w);
		k++;
	}
	*n = k;
	return v;
}

static void
pct_cells(char *pct, char *cost, size_t size, const struct row *x)
{
	if (isnan(x->pct)) {
		snprintf(pct, size, "–");
		snprintf(cost, size, "–");
		return;
	}
	snprintf(pct, size, "%.1f %% (%.1f–%.1f)", x->pct, x->lo, x->hi);
	snprintf(cost, size, "%.1f %% (%.1f–%.1f)", 100 - x->pct,
		 100 - x->hi, 100 - x->lo);
}

static void
num_cell(char *out, size_t size, double v, int decimals)
{
	if (isnan(v))
		out[0] = '\0';
	else
		fmt_num(out, size, v, decimals);
}

void
ablation_table(const struct report *r, int raw, struct table *t)
{
	static const char *const shown[] = {
		"Workload", "Test", "Taken away", "Variant", "Median t/s#",
		"% of bare (95 % CI)#", "Cost (95 % CI)#", "Capabilities reported",
	};
	static const char *const plain[] = {
		"workload", "test", "taken_away", "variant", "role",
		"median_ts#", "samples#", "percent_of_bare#", "percent_lo#",
		"percent_hi#", "cost_percent#", "cost_lo#", "cost_hi#",
		"capabilities", "shim_config",
	};
	size_t i, j, n;

	if (raw)
		table_init(t, ARRAY_SIZE(plain), plain);
	else
		table_init(t, ARRAY_SIZE(shown), shown);
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		struct row *v = workload_rows(w, &n);
		char *name = report_workload_name(w);

		for (j = 0; j < n; j++) {
			const struct rep_cell *c = v[j].c;
			char med[64], ns[32], f[6][64];

			if (raw)
				num_cell(med, sizeof(med), c->sum.n ?
					 c->sum.median : NAN, 6);
			else
				snprintf(med, sizeof(med), c->sum.n ? "%.2f" :
					 "–", c->sum.median);
			if (!raw) {
				const char *row[ARRAY_SIZE(shown)];

				pct_cells(f[0], f[1], sizeof(f[0]), &v[j]);
				row[0] = name;
				row[1] = w->test;
				row[2] = v[j].what;
				row[3] = c->variant;
				row[4] = med;
				row[5] = f[0];
				row[6] = f[1];
				row[7] = c->facts ? c->facts : "(none recorded)";
				table_add_row(t, row);
			} else {
				const char *row[ARRAY_SIZE(plain)];

				snprintf(ns, sizeof(ns), "%zu", c->sum.n);
				num_cell(f[0], 64, v[j].pct, 4);
				num_cell(f[1], 64, v[j].lo, 4);
				num_cell(f[2], 64, v[j].hi, 4);
				num_cell(f[3], 64, 100 - v[j].pct, 4);
				num_cell(f[4], 64, 100 - v[j].hi, 4);
				num_cell(f[5], 64, 100 - v[j].lo, 4);
				row[0] = name;
				row[1] = w->test;
				row[2] = v[j].what;
				row[3] = c->variant;
				row[4] = c->role;
				row[5] = med;
				row[6] = ns;
				memcpy(row + 7, (const char *const[]){ f[0], f[1],
				       f[2], f[3], f[4], f[5] }, 6 * sizeof(char *));
				row[13] = c->facts;
				row[14] = c->shim_config;
				table_add_row(t, row);
			}
		}
		for (j = 0; j < n; j++)
			free(v[j].what);
		free(v);
		free(name);
	}
}

void
ablation_notes(const struct report *r, struct buf *out)
{
	size_t i, n;

	buf_adds(out, "% of bare: median tokens/s of the row ÷ the bare-metal "
		 "variant's, with the 95 % bootstrap interval (processes "
		 "resampled, then samples); cost = 100 % − that. \"Taken "
		 "away\" is read from each row's own shim marker.\n");
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		struct row *v = workload_rows(w, &n);
		size_t j;

		if (n && !w->host.n) {
			char *name = report_workload_name(w);

			buf_addf(out, "\n%s %s has no bare-metal run: no "
				 "percentages (add a variant of role "
				 "bare-metal).\n", name, w->test);
			free(name);
		}
		for (j = 0; j < n; j++)
			free(v[j].what);
		free(v);
	}
}

int
ablation_render(const struct report *r, const char *format, struct buf *out)
{
	struct table t;

	if (strcmp(format, "md") && strcmp(format, "csv") &&
	    strcmp(format, "json") && strcmp(format, "html"))
		return error("unknown format '%s' (md, csv, json or html)",
			     format);
	ablation_table(r, !strcmp(format, "csv") || !strcmp(format, "json"),
		       &t);
	if (!strcmp(format, "csv")) {
		table_render_csv(&t, out);
	} else if (!strcmp(format, "json")) {
		table_render_json(&t, out);
	} else if (!strcmp(format, "html")) {
		table_render_html(&t, out);
		buf_adds(out, "<p>");
		{
			struct buf notes = BUF_INIT;

			ablation_notes(r, &notes);
			html_escape(out, notes.buf);
			buf_release(&notes);
		}
		buf_adds(out, "</p>\n");
	} else {
		buf_adds(out, "## Capability ablation: cost in % of bare\n\n");
		if (t.nrows)
			table_render_md(&t, out);
		else
			buf_adds(out, "(no ablation runs selected)\n");
		buf_addch(out, '\n');
		ablation_notes(r, out);
	}
	table_release(&t);
	return 0;
}
