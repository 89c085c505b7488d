#define _POSIX_C_SOURCE 200809L
#include "analysis/render.h"
#include "analysis/ablation.h"
#include "analysis/captable.h"
#include "analysis/provenance.h"
#include "analysis/report.h"
#include "analysis/table.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
num(char *out, size_t size, double v, int decimals)
{
	if (isnan(v))
		out[0] = '\0';
	else
		fmt_num(out, size, v, decimals);
}

static void
cell_md(char *out, size_t size, const struct rep_cell *c)
{
	if (!c->sum.n && c->table_rows == 1 && isfinite(c->table_avg)) {
		/* llama-bench's mean from a table, never a median of samples */
		snprintf(out, size, "avg %.2f ± %.2f (table, no samples)",
			 c->table_avg, isfinite(c->table_sd) ? c->table_sd : 0);
		return;
	}
	if (!c->sum.n) {
		snprintf(out, size, "–");
		return;
	}
	snprintf(out, size, "%.2f (%.2f–%.2f, n=%zu)", c->sum.median,
		 c->sum.min, c->sum.max, c->sum.n);
}

static void
render_csv(const struct report *r, struct buf *out)
{
	static const char *const cols[] = {
		"workload", "metric", "unit", "host_baremetal#", "stock_guest#",
		"safe_shim_guest#", "guest_ratio#", "shim_to_host_percent#",
	};
	struct table t;
	char v[5][64];
	size_t i;

	table_init(&t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		char *name = report_workload_name(w);
		const char *row[8];

		num(v[0], 64, w->host.sum.n ? w->host.sum.median : NAN, 6);
		num(v[1], 64, w->stock.sum.n ? w->stock.sum.median : NAN, 6);
		num(v[2], 64, w->shim.sum.n ? w->shim.sum.median : NAN, 6);
		num(v[3], 64, report_guest_ratio(w), 6);
		num(v[4], 64, report_shim_to_host(w), 6);
		row[0] = name;
		row[1] = w->test;
		row[2] = "tokens/s";
		row[3] = v[0];
		row[4] = v[1];
		row[5] = v[2];
		row[6] = v[3];
		row[7] = v[4];
		table_add_row(&t, row);
		free(name);
	}
	table_render_csv(&t, out);
	table_release(&t);
}

/* The configuration fields that vary among the workloads of any one
 * runtime of the report (sorted, strv_free()). */
static char **
varying_fields(const struct report *r)
{
	char **all = xcalloc(1, sizeof(char *)), **rts = xcalloc(1, sizeof(char *));
	size_t na = 0, nr = 0, i, j, k;

	for (i = 0; i < r->n; i++) {
		for (j = 0; j < nr && strcmp(rts[j], r->w[i].runtime); j++)
			;
		if (j == nr)
			rts = strv_push(rts, &nr, xstrdup(r->w[i].runtime));
	}
	for (j = 0; j < nr; j++) {
		char **vary, **same;

		report_config_fields(r, rts[j], &vary, &same);
		for (i = 0; vary[i]; i++) {
			for (k = 0; k < na && strcmp(all[k], vary[i]); k++)
				;
			if (k == na)
				all = strv_push(all, &na, xstrdup(vary[i]));
		}
		strv_free(vary);
		strv_free(same);
	}
	strv_free(rts);
	return all;
}

/*
 * A table of columns head[0..2), the varying fields, then tail[]: the
 * names built here (the caller frees them with strv_free()).
 */
static char **
columns(const char *const *head, size_t nh, char *const *vary,
	const char *const *tail, size_t nt, size_t *ncols)
{
	char **c = xcalloc(1, sizeof(char *));
	size_t n = 0, i;

	for (i = 0; i < nh; i++)
		c = strv_push(c, &n, xstrdup(head[i]));
	for (i = 0; vary[i]; i++)
		c = strv_push(c, &n, xstrdup(vary[i]));
	for (i = 0; i < nt; i++)
		c = strv_push(c, &n, xstrdup(tail[i]));
	*ncols = n;
	return c;
}

/* The headline table: one row per workload with a bare-metal, stock or
 * shim run; the configuration fields that vary are columns. */
void
report_headline_table(const struct report *r, struct table *t)
{
	static const char *const head[] = { "Workload", "Test" };
	/* host and guest only where a target is a VM */
	static const char *const vm_tail[] = {
		"Bare-metal host#", "Stock guest#", "Shim guest#",
		"Guest speedup#", "Shim/host#", "Stock/host#",
	};
	static const char *const tail[] = {
		"Bare#", "Stock#", "Shim#", "Shim ÷ stock#", "Shim ÷ bare#",
		"Stock ÷ bare#",
	};
	char **vary = varying_fields(r), **cols;
	size_t nv = 0, ncols, i, j;
	char v[6][96];
	double x;

	while (vary[nv])
		nv++;
	cols = columns(head, 2, vary, r->guest ? vm_tail : tail,
		       ARRAY_SIZE(tail), &ncols);
	table_init(t, ncols, (const char *const *)cols);
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		const char **row = xcalloc(ncols, sizeof(char *));
		char *name;

		/* a role that ran without samples (-r 0) shows "–" */
		if (!w->host.variant && !w->stock.variant && !w->shim.variant) {
			free(row);
			continue;
		}
		name = nv ? report_workload_short_name(w) :
			    report_workload_name(w);
		cell_md(v[0], 96, &w->host);
		cell_md(v[1], 96, &w->stock);
		cell_md(v[2], 96, &w->shim);
		x = report_guest_ratio(w);
		snprintf(v[3], 96, isnan(x) ? "–" : "%.2f×", x);
		x = report_shim_to_host(w);
		snprintf(v[4], 96, isnan(x) ? "–" : "%.2f %%", x);
		x = report_stock_to_host(w);
		snprintf(v[5], 96, isnan(x) ? "–" : "%.2f %%", x);
		row[0] = name;
		row[1] = w->test;
		for (j = 0; j < nv; j++)
			row[2 + j] = store_config_value(&w->config, vary[j]);
		for (j = 0; j < 6; j++)
			row[2 + nv + j] = v[j];
		table_add_row(t, row);
		free(row);
		free(name);
	}
	strv_free(cols);
	strv_free(vary);
}

/* Variants whose role is none of bare-metal, stock and shim. */
void
report_others_table(const struct report *r, struct table *t)
{
	static const char *const head[] = { "Workload", "Test" };
	static const char *const tail[] = {
		"Variant", "Role", "Median t/s#", "Min–max#", "n#", "÷ stock#",
	};
	char **vary = varying_fields(r), **cols;
	size_t nv = 0, ncols, i, j, k;
	char v[4][96];
	double x;

	while (vary[nv])
		nv++;
	cols = columns(head, 2, vary, tail, ARRAY_SIZE(tail), &ncols);
	table_init(t, ncols, (const char *const *)cols);
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		for (j = 0; j < w->nothers; j++) {
			const struct rep_cell *c = &w->others[j];
			char *name = nv ? report_workload_short_name(w) :
				     report_workload_name(w);
			const char **row = xcalloc(ncols, sizeof(char *));

			if (c->sum.n) {
				snprintf(v[0], 96, "%.2f", c->sum.median);
				snprintf(v[1], 96, "%.2f–%.2f", c->sum.min,
					 c->sum.max);
			} else {
				snprintf(v[0], 96, "–");
				snprintf(v[1], 96, "–");
			}
			snprintf(v[2], 96, "%zu", c->sum.n);
			x = report_ratio(c, &w->stock);
			snprintf(v[3], 96, isnan(x) ? "–" : "%.2f×", x);
			row[0] = name;
			row[1] = w->test;
			for (k = 0; k < nv; k++)
				row[2 + k] = store_config_value(&w->config,
								vary[k]);
			row[2 + nv] = c->variant;
			row[3 + nv] = c->role;
			row[4 + nv] = v[0];
			row[5 + nv] = v[1];
			row[6 + nv] = v[2];
			row[7 + nv] = v[3];
			table_add_row(t, row);
			free(row);
			free(name);
		}
	}
	strv_free(cols);
	strv_free(vary);
}

const char report_values_note[] =
	"Values: median tokens/s of all samples_ts (min–max, sample count). "
	"Speedup = shim ÷ stock (the guest speedup where they run in a VM).";

/* The fields every workload of a runtime shares, once above the table. */
static void
render_constants(const struct report *r, struct buf *out)
{
	char **rts = xcalloc(1, sizeof(char *));
	size_t nr = 0, i, j;

	for (i = 0; i < r->n; i++) {
		for (j = 0; j < nr && strcmp(rts[j], r->w[i].runtime); j++)
			;
		if (j == nr)
			rts = strv_push(rts, &nr, xstrdup(r->w[i].runtime));
	}
	for (j = 0; j < nr; j++) {
		char **vary, **same;

		report_config_fields(r, rts[j], &vary, &same);
		if (same[0]) {
			buf_addf(out, "Configuration of every %s row: ",
				 report_runtime_display(rts[j]));
			for (i = 0; same[i]; i++)
				buf_addf(out, "%s`%s`", i ? ", " : "", same[i]);
			buf_adds(out, vary[0] ? ". Columns show the fields "
				 "that differ.\n\n" : ".\n\n");
		}
		strv_free(vary);
		strv_free(same);
	}
	strv_free(rts);
}

static void
render_md(const struct report *r, struct buf *out)
{
	struct table t;
	size_t i;

	buf_adds(out, "## llama-bench: speedup and percent of bare metal\n\n");
	if (r->nsessions > 1)
		buf_addf(out, "Sessions shown: %s (%zu sessions; see the "
			 "provenance below).\n\n", r->sessions, r->nsessions);
	render_constants(r, out);
	report_headline_table(r, &t);
	if (t.nrows)
		table_render_md(&t, out);
	else
		buf_adds(out, "(no bare-metal, stock or shim runs selected)\n");
	buf_addf(out, "\n%s\n", report_values_note);
	table_release(&t);
	report_others_table(r, &t);
	if (t.nrows) {
		buf_adds(out, "\n### Other variants\n\n");
		table_render_md(&t, out);
	}
	table_release(&t);
	if (ablation_present(r)) {
		buf_adds(out, "\n### Capability ablation: cost in % of bare\n\n");
		ablation_table(r, 0, &t);
		table_render_md(&t, out);
		table_release(&t);
		buf_addch(out, '\n');
		ablation_notes(r, out);
	}
	capfacts_table(r, &t);
	if (t.nrows) {
		buf_adds(out, "\n### Capabilities each variant reported\n\n");
		table_render_md(&t, out);
	}
	table_release(&t);
	if (r->nex) {
		buf_adds(out, "\n### Excluded: injection not verified\n\n");
		for (i = 0; i < r->nex; i++)
			buf_addf(out, "- session %lld run %lld, variant '%s', "
				 "%s: %s\n", r->ex[i].session, r->ex[i].run,
				 r->ex[i].variant, r->ex[i].workload,
				 r->ex[i].reason);
	}
	if (r->warn.n) {
		buf_adds(out, "\n### Warnings\n\n");
		for (i = 0; i < r->warn.n; i++)
			buf_addf(out, "- %s\n", r->warn.v[i]);
	}
	buf_addch(out, '\n');
	provenance_render_md(r->prov, NULL, 2, out);
}

static void
cell_value(struct jw *w, const struct rep_cell *c)
{
	if (!c->sum.n && c->table_rows == 1 && isfinite(c->table_avg)) {
		/* a table's mean and spread, not samples: no median */
		jw_object(w);
		jw_kstr(w, "variant", c->variant);
		jw_kstr(w, "role", c->role);
		jw_kstr(w, "spread_source", "table");
		jw_knum(w, "table_avg", c->table_avg);
		jw_knum(w, "table_stddev", c->table_sd);
		jw_end(w);
		return;
	}
	if (!c->sum.n) {
		jw_null(w);
		return;
	}
	jw_object(w);
	jw_kstr(w, "variant", c->variant);
	jw_kstr(w, "role", c->role);
	jw_knum(w, "median", c->sum.median);
	jw_knum(w, "min", c->sum.min);
	jw_knum(w, "max", c->sum.max);
	jw_knum(w, "mad", c->sum.mad);
	jw_knum(w, "cv", c->sum.cv);
	jw_kint(w, "n", (int64_t)c->sum.n);
	jw_kint(w, "runs", c->runs);
	jw_kstr(w, "capabilities", c->facts);
	jw_kstr(w, "shim_config", c->shim_config);
	jw_end(w);
}

static void
cell_json(struct jw *w, const char *key, const struct rep_cell *c)
{
	jw_key(w, key);
	cell_value(w, c);
}

static void
render_json(const struct report *r, struct buf *out)
{
	struct jw w;
	size_t i, j;

	jw_init(&w, out, 1);
	jw_object(&w);
	jw_key(&w, "workloads");
	jw_array(&w);
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *wl = &r->w[i];

		jw_object(&w);
		jw_kstr(&w, "model", wl->model);
		jw_kstr(&w, "label", wl->label);
		jw_kstr(&w, "runtime", wl->runtime);
		jw_kstr(&w, "test", wl->test);
		jw_kbool(&w, "tampered", wl->tampered);
		jw_kbool(&w, "partial", wl->partial);
		jw_kstr(&w, "model_sha256", wl->model_sha256);
		jw_kstr(&w, "varying", wl->config_words);
		jw_key(&w, "config");
		jw_object(&w);
		for (j = 0; j < wl->config.n; j++)
			jw_kstr(&w, wl->config.keys[j], wl->config.values[j]);
		jw_end(&w);
		cell_json(&w, "bare_metal", &wl->host);
		cell_json(&w, "stock", &wl->stock);
		cell_json(&w, "shim", &wl->shim);
		jw_knum(&w, "guest_ratio", report_guest_ratio(wl));
		jw_knum(&w, "shim_to_host_percent", report_shim_to_host(wl));
		jw_knum(&w, "stock_to_host_percent", report_stock_to_host(wl));
		jw_key(&w, "others");
		jw_array(&w);
		for (j = 0; j < wl->nothers; j++)
			cell_value(&w, &wl->others[j]);
		jw_end(&w);
		jw_end(&w);
	}
	jw_end(&w);
	if (ablation_present(r)) {
		struct table t;
		struct buf raw = BUF_INIT;

		ablation_table(r, 1, &t);
		table_render_json(&t, &raw);
		table_release(&t);
		jw_key(&w, "ablation");
		if (jw_raw(&w, raw.buf) < 0)
			jw_null(&w);
		buf_release(&raw);
	}
	jw_key(&w, "excluded");
	jw_array(&w);
	for (i = 0; i < r->nex; i++) {
		jw_object(&w);
		jw_kint(&w, "session", r->ex[i].session);
		jw_kint(&w, "run", r->ex[i].run);
		jw_kstr(&w, "variant", r->ex[i].variant);
		jw_kstr(&w, "workload", r->ex[i].workload);
		jw_kstr(&w, "reason", r->ex[i].reason);
		jw_end(&w);
	}
	jw_end(&w);
	jw_key(&w, "warnings");
	jw_array(&w);
	for (i = 0; i < r->warn.n; i++)
		jw_str(&w, r->warn.v[i]);
	jw_end(&w);
	jw_key(&w, "sessions");
	jw_array(&w);
	for (i = 0; i < r->nsessions; i++)
		jw_int(&w, r->session_ids[i]);
	jw_end(&w);
	jw_key(&w, "provenance");
	provenance_json(r->prov, &w);
	jw_end(&w);
	buf_addch(out, '\n');
}

int
report_render(const struct report *r, const char *format, struct buf *out)
{
	if (!strcmp(format, "csv"))
		render_csv(r, out);
	else if (!strcmp(format, "md") || !strcmp(format, "markdown"))
		render_md(r, out);
	else if (!strcmp(format, "json"))
		render_json(r, out);
	else
		return error("unknown format '%s' (md, csv or json)", format);
	return 0;
}
