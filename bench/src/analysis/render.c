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
	snprintf(out, size, "%.2f", c->sum.median);
}

/* The spread of a cell: "min–max, n=N" ("" without samples). */
static void
cell_spread(char *out, size_t size, const struct rep_cell *c)
{
	if (!c->sum.n)
		snprintf(out, size, "%s", "");
	else
		snprintf(out, size, "%.2f–%.2f, n=%zu", c->sum.min,
			 c->sum.max, c->sum.n);
}

/* A table's avg ± stddev of a cell without samples, as csv cells. */
static void
table_cells(char *avg, char *sd, const struct rep_cell *c)
{
	int one = !c->sum.n && c->table_rows == 1 && isfinite(c->table_avg);

	num(avg, 64, one ? c->table_avg : NAN, 6);
	num(sd, 64, one && isfinite(c->table_sd) ? c->table_sd : NAN, 6);
}

/*
 * The medians of samples, then (issue 20) the means a llama-bench
 * table printed for cells without samples: md, csv and sql imports are
 * in the csv too, never under a median's name.
 */
static void
render_csv(const struct report *r, struct buf *out)
{
	static const char *const cols[] = {
		"workload", "metric", "unit", "host_baremetal#", "stock_guest#",
		"safe_shim_guest#", "guest_ratio#", "shim_to_host_percent#",
		"host_table_avg#", "host_table_sd#", "stock_table_avg#",
		"stock_table_sd#", "shim_table_avg#", "shim_table_sd#",
	};
	struct table t;
	char v[11][64];
	size_t i;

	table_init(&t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		char *name = report_workload_name(w);
		const char *row[14];
		size_t k;

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
		table_cells(v[5], v[6], &w->host);
		table_cells(v[7], v[8], &w->stock);
		table_cells(v[9], v[10], &w->shim);
		for (k = 5; k < 11; k++)
			row[k + 3] = v[k];
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

/* The sessions a workload's cells hold: "3", or "1, 2" where pooled. */
static void
sessions_of(char *out, size_t size, const struct rep_workload *w)
{
	int64_t ids[8];
	size_t n = 0, i, j, k, len = 0;
	const struct rep_cell *c[3] = { &w->host, &w->stock, &w->shim };

	out[0] = '\0';
	if (w->session) {
		snprintf(out, size, "%lld", (long long)w->session);
		return;
	}
	for (i = 0; i < 3 + w->nothers; i++) {
		const struct rep_cell *x = i < 3 ? c[i] : &w->others[i - 3];

		for (j = 0; j < x->nsessions; j++) {
			for (k = 0; k < n && ids[k] != x->sessions[j]; k++)
				;
			if (k == n && n < ARRAY_SIZE(ids))
				ids[n++] = x->sessions[j];
		}
	}
	for (i = 0; i < n && len + 24 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%lld",
					i ? ", " : "", (long long)ids[i]);
}

/* 1 when the report shows a workload once per session. */
static int
any_session(const struct report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->w[i].session)
			return 1;
	return 0;
}

/*
 * A table of columns head[0..nh), the varying fields, then tail[]: the
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
	static const char *const head[] = { "Workload", "Test", "Session" };
	/* host and guest only where a target is a VM */
	static const char *const vm_tail[] = {
		"Bare-metal host#", "Stock guest#", "Shim guest#",
		"Guest speedup#", "Shim/host#", "Stock/host#",
		"Bare-metal spread#", "Stock spread#", "Shim spread#",
	};
	static const char *const tail[] = {
		"Bare#", "Stock#", "Shim#", "Shim ÷ stock#", "Shim ÷ bare#",
		"Stock ÷ bare#", "Bare spread#", "Stock spread#", "Shim spread#",
	};
	char **vary = varying_fields(r), **cols;
	size_t nv = 0, ncols, i, j;
	char v[9][96], sess[32];
	size_t nh = any_session(r) ? 3 : 2;
	double x;

	size_t hosts = 0;

	while (vary[nv])
		nv++;
	for (i = 0; i < r->n; i++)
		hosts += r->w[i].host.variant != NULL;
	cols = columns(head, nh, vary, r->guest ? vm_tail : tail,
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
		name = nv || nh > 2 ? report_workload_short_name(w) :
			    report_workload_name(w);
		sessions_of(sess, sizeof(sess), w);
		cell_md(v[0], 96, &w->host);
		if (!w->host.variant && hosts)   /* report_no_host_note() */
			snprintf(v[0], 96, "–†");
		cell_md(v[1], 96, &w->stock);
		cell_md(v[2], 96, &w->shim);
		x = report_guest_ratio(w);
		snprintf(v[3], 96, isnan(x) ? "–" : "%.2f×", x);
		x = report_shim_to_host(w);
		snprintf(v[4], 96, isnan(x) ? "–" : "%.2f %%", x);
		x = report_stock_to_host(w);
		snprintf(v[5], 96, isnan(x) ? "–" : "%.2f %%", x);
		cell_spread(v[6], 96, &w->host);
		cell_spread(v[7], 96, &w->stock);
		cell_spread(v[8], 96, &w->shim);
		row[0] = name;
		row[1] = w->test;
		row[2] = sess;   /* overwritten unless a Session column */
		for (j = 0; j < nv; j++)
			row[nh + j] = store_config_value(&w->config, vary[j]);
		for (j = 0; j < ARRAY_SIZE(tail); j++)
			row[nh + nv + j] = v[j];
		table_add_row(t, row);
		free(row);
		free(name);
	}
	for (j = 6; j < ARRAY_SIZE(tail); j++)
		table_wide_only(t, t->head[nh + nv + j]);
	strv_free(cols);
	strv_free(vary);
}

/* Variants whose role is none of bare-metal, stock and shim. */
void
report_others_table(const struct report *r, struct table *t)
{
	static const char *const head[] = { "Workload", "Test", "Session" };
	static const char *const tail[] = {
		"Variant", "Role", "Median t/s#", "Min–max#", "n#", "÷ stock#",
	};
	char **vary = varying_fields(r), **cols;
	size_t nv = 0, ncols, i, j, k;
	char v[4][96], sess[32];
	size_t nh = any_session(r) ? 3 : 2;
	double x;

	while (vary[nv])
		nv++;
	cols = columns(head, nh, vary, tail, ARRAY_SIZE(tail), &ncols);
	table_init(t, ncols, (const char *const *)cols);
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		for (j = 0; j < w->nothers; j++) {
			const struct rep_cell *c = &w->others[j];
			char *name = nv || nh > 2 ?
				     report_workload_short_name(w) :
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
			sessions_of(sess, sizeof(sess), w);
			row[0] = name;
			row[1] = w->test;
			row[2] = sess;   /* overwritten unless a Session column */
			for (k = 0; k < nv; k++)
				row[nh + k] = store_config_value(&w->config,
								 vary[k]);
			row[nh + nv] = c->variant;
			row[nh + 1 + nv] = c->role;
			row[nh + 2 + nv] = v[0];
			row[nh + 3 + nv] = v[1];
			row[nh + 4 + nv] = v[2];
			row[nh + 5 + nv] = v[3];
			table_add_row(t, row);
			free(row);
			free(name);
		}
	}
	strv_free(cols);
	strv_free(vary);
}

const char report_values_note[] =
	"Values: median tokens/s of all samples_ts; the spread columns give "
	"min–max and the sample count. Speedup = shim ÷ stock (the guest "
	"speedup where they run in a VM).";

/*
 * The fields every workload of a runtime shares: with the provenance, at
 * the end, one row per field (a study's 26 llama-bench fields above the
 * table hid the figures; the table's columns show the ones that differ).
 */
static void
render_constants(const struct report *r, struct buf *out)
{
	static const char *const cols[] = { "Runtime", "Field", "Value" };
	char **rts = xcalloc(1, sizeof(char *));
	size_t nr = 0, i, j;
	struct table t;

	table_init(&t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < r->n; i++) {
		for (j = 0; j < nr && strcmp(rts[j], r->w[i].runtime); j++)
			;
		if (j == nr)
			rts = strv_push(rts, &nr, xstrdup(r->w[i].runtime));
	}
	for (j = 0; j < nr; j++) {
		char **vary, **same;

		report_config_fields(r, rts[j], &vary, &same);
		for (i = 0; same[i]; i++) {
			char *eq = strchr(same[i], '=');
			const char *row[3];

			*eq = '\0';
			row[0] = report_runtime_display(rts[j]);
			row[1] = same[i];
			row[2] = eq + 1;
			table_add_row(&t, row);
		}
		strv_free(vary);
		strv_free(same);
	}
	if (t.nrows) {
		buf_adds(out, "\n### Configuration: the fields not shown as "
			 "columns\n\n");
		table_render_md(&t, out);
	}
	table_release(&t);
	strv_free(rts);
}

static void
render_md(const struct report *r, struct buf *out)
{
	struct table t;
	size_t i;

	char *line = report_headline_sentence(r);

	buf_adds(out, "## llama-bench: speedup and percent of bare metal\n\n");
	if (*line)
		buf_addf(out, "**Headline:** %s\n\n", line);
	free(line);
	if (r->nsessions > 1)
		buf_addf(out, "Sessions shown: %s (%zu sessions; see the "
			 "provenance below).\n\n", r->sessions, r->nsessions);
	report_headline_table(r, &t);
	if (t.nrows)
		table_render_md(&t, out);
	else
		buf_adds(out, "(no bare-metal, stock or shim runs selected)\n");
	line = report_no_host_note(r);
	if (*line)
		buf_addf(out, "\n%s\n", line);
	free(line);
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
	render_constants(r, out);
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
