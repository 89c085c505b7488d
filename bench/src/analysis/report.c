#define _POSIX_C_SOURCE 200809L
#include "analysis/report.h"
#include "analysis/plot.h"
#include "analysis/render.h"
#include "evidence/store.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runtimes as the published tables name them. */
static const char *
runtime_display(const char *runtime)
{
	return !strcmp(runtime, "mlx-lm") ? "MLX-LM" : runtime;
}

static void
cell_add(struct rep_cell *c, const struct store_result *r, int new_run)
{
	if (!c->variant) {
		c->variant = xstrdup(r->variant);
		c->role = xstrdup(r->role);
	} else if (!strstr(c->variant, r->variant)) {
		char *v = xstrfmt("%s+%s", c->variant, r->variant);
		free(c->variant);
		c->variant = v;
	}
	c->ts = xrealloc(c->ts, (c->n + r->n + 1) * sizeof(double));
	memcpy(c->ts + c->n, r->ts, r->n * sizeof(double));
	c->n += r->n;
	c->runs += new_run;
}

static void
cell_release(struct rep_cell *c)
{
	free(c->variant);
	free(c->role);
	free(c->ts);
}

static struct rep_workload *
workload_for(struct report *rep, const struct store_result *r)
{
	struct rep_workload *w;
	size_t i;

	for (i = 0; i < rep->n; i++) {
		w = &rep->w[i];
		if (!strcmp(w->model, r->model) &&
		    !strcmp(w->runtime, r->runtime) && !strcmp(w->test, r->test))
			return w;
	}
	rep->w = xrealloc(rep->w, (rep->n + 1) * sizeof(*w));
	w = &rep->w[rep->n++];
	memset(w, 0, sizeof(*w));
	w->model = xstrdup(r->model);
	w->label = xstrdup(*r->model_label ? r->model_label : r->model);
	w->runtime = xstrdup(r->runtime);
	w->test = xstrdup(r->test);
	return w;
}

static struct rep_cell *
cell_for(struct rep_workload *w, const struct store_result *r)
{
	struct rep_cell *c;
	size_t i;

	if (!strcmp(r->role, "bare-metal"))
		return &w->host;
	if (!strcmp(r->role, "stock"))
		return &w->stock;
	if (!strcmp(r->role, "shim"))
		return &w->shim;
	for (i = 0; i < w->nothers; i++)
		if (!strcmp(w->others[i].variant, r->variant))
			return &w->others[i];
	w->others = xrealloc(w->others, (w->nothers + 1) * sizeof(*c));
	c = &w->others[w->nothers++];
	memset(c, 0, sizeof(*c));
	return c;
}

static int
cmp_workload(const void *a, const void *b)
{
	const struct rep_workload *x = a, *y = b;
	int c = strcmp(x->label, y->label);

	if (!c)
		c = strcmp(x->runtime, y->runtime);
	return c ? c : strcmp(x->test, y->test);
}

int
report_build(struct store *s, const struct selection *sel, struct report *out)
{
	struct store_result *rows;
	size_t n, i, j;
	int64_t last_run = -1;

	memset(out, 0, sizeof(*out));
	if (store_query_results(s, sel, &rows, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const struct store_result *r = &rows[i];
		struct rep_workload *w;

		if (!strcmp(r->verification, "unverified")) {
			struct rep_excluded *e;
			if (r->run_id == last_run)
				continue;
			out->ex = xrealloc(out->ex,
					   (out->nex + 1) * sizeof(*e));
			e = &out->ex[out->nex++];
			e->session = (long long)r->session_id;
			e->run = (long long)r->run_id;
			e->variant = xstrdup(r->variant);
			e->workload = xstrfmt("%s (%s)", *r->model_label ?
					      r->model_label : r->model,
					      runtime_display(r->runtime));
			e->reason = xstrdup("injection not verified");
			last_run = r->run_id;
			continue;
		}
		w = workload_for(out, r);
		w->tampered |= r->session_tampered;
		cell_add(cell_for(w, r), r, 1);
	}
	store_results_free(rows, n);
	for (i = 0; i < out->n; i++) {
		struct rep_workload *w = &out->w[i];
		stats_summary(w->host.ts, w->host.n, &w->host.sum);
		stats_summary(w->stock.ts, w->stock.n, &w->stock.sum);
		stats_summary(w->shim.ts, w->shim.n, &w->shim.sum);
		for (j = 0; j < w->nothers; j++)
			stats_summary(w->others[j].ts, w->others[j].n,
				      &w->others[j].sum);
	}
	qsort(out->w, out->n, sizeof(*out->w), cmp_workload);
	return 0;
}

void
report_release(struct report *r)
{
	size_t i, j;

	for (i = 0; i < r->n; i++) {
		struct rep_workload *w = &r->w[i];
		free(w->model);
		free(w->label);
		free(w->runtime);
		free(w->test);
		cell_release(&w->host);
		cell_release(&w->stock);
		cell_release(&w->shim);
		for (j = 0; j < w->nothers; j++)
			cell_release(&w->others[j]);
		free(w->others);
	}
	for (i = 0; i < r->nex; i++) {
		free(r->ex[i].variant);
		free(r->ex[i].workload);
		free(r->ex[i].reason);
	}
	free(r->w);
	free(r->ex);
	memset(r, 0, sizeof(*r));
}

const struct rep_workload *
report_find(const struct report *r, const char *model, const char *test)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if ((!strcmp(r->w[i].model, model) ||
		     !strcmp(r->w[i].label, model)) &&
		    !strcmp(r->w[i].test, test))
			return &r->w[i];
	return NULL;
}

static double
ratio(const struct rep_cell *a, const struct rep_cell *b)
{
	if (!a->sum.n || !b->sum.n || b->sum.median == 0)
		return NAN;
	return a->sum.median / b->sum.median;
}

double
report_guest_ratio(const struct rep_workload *w)
{
	return ratio(&w->shim, &w->stock);
}

double
report_shim_to_host(const struct rep_workload *w)
{
	return 100 * ratio(&w->shim, &w->host);
}

double
report_stock_to_host(const struct rep_workload *w)
{
	return 100 * ratio(&w->stock, &w->host);
}

static char *
workload_name(const struct rep_workload *w)
{
	return xstrfmt("%s (%s)%s", w->label, runtime_display(w->runtime),
		       w->tampered ? " [tampered]" : "");
}

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
		char *name = workload_name(w);
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

/* The headline table: one row per workload with a bare-metal, stock or
 * shim run. */
static void
headline_table(const struct report *r, struct table *t)
{
	static const char *const cols[] = {
		"Workload", "Test", "Bare-metal host#", "Stock guest#",
		"Shim guest#", "Guest speedup#", "Shim/host#", "Stock/host#",
	};
	char v[6][96];
	size_t i, j;
	double x;

	table_init(t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		char *name;
		const char *row[8];

		if (!w->host.sum.n && !w->stock.sum.n && !w->shim.sum.n)
			continue;
		name = workload_name(w);
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
		for (j = 0; j < 6; j++)
			row[2 + j] = v[j];
		table_add_row(t, row);
		free(name);
	}
}

/* Variants whose role is none of bare-metal, stock and shim. */
static void
others_table(const struct report *r, struct table *t)
{
	static const char *const cols[] = {
		"Workload", "Test", "Variant", "Role", "Median t/s#",
		"Min–max#", "n#", "÷ stock#",
	};
	char v[4][96];
	size_t i, j;
	double x;

	table_init(t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		for (j = 0; j < w->nothers; j++) {
			const struct rep_cell *c = &w->others[j];
			char *name = workload_name(w);
			const char *row[8];

			snprintf(v[0], 96, "%.2f", c->sum.median);
			snprintf(v[1], 96, "%.2f–%.2f", c->sum.min, c->sum.max);
			snprintf(v[2], 96, "%zu", c->sum.n);
			x = ratio(c, &w->stock);
			snprintf(v[3], 96, isnan(x) ? "–" : "%.2f×", x);
			row[0] = name;
			row[1] = w->test;
			row[2] = c->variant;
			row[3] = c->role;
			row[4] = v[0];
			row[5] = v[1];
			row[6] = v[2];
			row[7] = v[3];
			table_add_row(t, row);
			free(name);
		}
	}
}

static const char values_note[] =
	"Values: median tokens/s of all samples_ts (min–max, sample count). "
	"Guest speedup = shim ÷ stock.";

static void
render_md(const struct report *r, struct buf *out)
{
	struct table t;
	size_t i;

	buf_adds(out, "## llama-bench: speedup and percent of bare metal\n\n");
	headline_table(r, &t);
	if (t.nrows)
		table_render_md(&t, out);
	else
		buf_adds(out, "(no bare-metal, stock or shim runs selected)\n");
	buf_addf(out, "\n%s\n", values_note);
	table_release(&t);
	others_table(r, &t);
	if (t.nrows) {
		buf_adds(out, "\n### Other variants\n\n");
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
}

/*
 * A self-contained HTML page: the tables, and the charts as inline SVG
 * when gnuplot is installed (a note says so when it is not).
 */
static void
render_html(const struct report *r, struct buf *out)
{
	struct table t;
	char now[21];
	size_t i, c;
	int charts = 0;

	utc_now(now);
	buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
		 "<meta charset=\"utf-8\">\n<title>shimbench report</title>\n"
		 "<style>\nbody{font-family:sans-serif;margin:2em;color:#222}\n"
		 "table{border-collapse:collapse;margin:1em 0}\n"
		 "th,td{border:1px solid #bbb;padding:4px 8px}\n"
		 "th{background:#eee}\ntd.num{text-align:right;"
		 "font-variant-numeric:tabular-nums}\n"
		 ".note{color:#555}\n.chart svg{max-width:100%;height:auto}\n"
		 "</style>\n</head>\n<body>\n<h1>shimbench report</h1>\n");
	buf_addf(out, "<p class=\"note\">Generated %s by shimbench %s. ",
		 now, SHIMBENCH_VERSION);
	html_escape(out, values_note);
	buf_adds(out, "</p>\n<h2>Speedup and percent of bare metal</h2>\n");
	headline_table(r, &t);
	if (t.nrows)
		table_render_html(&t, out);
	else
		buf_adds(out, "<p>No bare-metal, stock or shim runs selected.</p>\n");
	table_release(&t);
	buf_adds(out, "<h2>Charts</h2>\n");
	for (c = 0; plot_charts[c]; c++) {
		struct buf svg = BUF_INIT;
		int rc = plot_chart(r, plot_charts[c], "svg", &svg);
		const char *start = strstr(svg.buf, "<svg");

		if (rc == -2) {
			buf_adds(out, "<p class=\"note\">Charts need gnuplot, "
				 "which is not installed.</p>\n");
			buf_release(&svg);
			break;
		}
		if (rc == 0 && start) {
			buf_addf(out, "<div class=\"chart\" id=\"chart-%s\">\n",
				 plot_charts[c]);
			buf_adds(out, start);
			buf_adds(out, "</div>\n");
			charts++;
		} else if (rc < 0) {
			buf_adds(out, "<p class=\"note\">A chart failed: ");
			html_escape(out, error_last());
			buf_adds(out, "</p>\n");
		}
		buf_release(&svg);
	}
	if (!charts)
		buf_adds(out, "<p class=\"note\">Nothing to chart.</p>\n");
	others_table(r, &t);
	if (t.nrows) {
		buf_adds(out, "<h2>Other variants</h2>\n");
		table_render_html(&t, out);
	}
	table_release(&t);
	if (r->nex) {
		buf_adds(out, "<h2>Excluded: injection not verified</h2>\n<ul>\n");
		for (i = 0; i < r->nex; i++) {
			char *line = xstrfmt("session %lld run %lld, variant "
					     "'%s', %s: %s", r->ex[i].session,
					     r->ex[i].run, r->ex[i].variant,
					     r->ex[i].workload, r->ex[i].reason);
			buf_adds(out, "<li>");
			html_escape(out, line);
			buf_adds(out, "</li>\n");
			free(line);
		}
		buf_adds(out, "</ul>\n");
	}
	buf_adds(out, "</body>\n</html>\n");
}

static cJSON *
cell_json(const struct rep_cell *c)
{
	cJSON *o;

	if (!c->sum.n)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "variant", c->variant);
	cJSON_AddStringToObject(o, "role", c->role);
	cJSON_AddNumberToObject(o, "median", c->sum.median);
	cJSON_AddNumberToObject(o, "min", c->sum.min);
	cJSON_AddNumberToObject(o, "max", c->sum.max);
	cJSON_AddNumberToObject(o, "mad", c->sum.mad);
	cJSON_AddNumberToObject(o, "cv", c->sum.cv);
	cJSON_AddNumberToObject(o, "n", (double)c->sum.n);
	cJSON_AddNumberToObject(o, "runs", c->runs);
	return o;
}

static void
add_ratio(cJSON *o, const char *key, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, v);
}

static void
render_json(const struct report *r, struct buf *out)
{
	cJSON *root = cJSON_CreateObject(), *arr, *ex;
	char *text;
	size_t i, j;

	arr = cJSON_AddArrayToObject(root, "workloads");
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		cJSON *o = cJSON_CreateObject(), *others;

		cJSON_AddStringToObject(o, "model", w->model);
		cJSON_AddStringToObject(o, "label", w->label);
		cJSON_AddStringToObject(o, "runtime", w->runtime);
		cJSON_AddStringToObject(o, "test", w->test);
		cJSON_AddBoolToObject(o, "tampered", w->tampered);
		cJSON_AddItemToObject(o, "bare_metal", cell_json(&w->host));
		cJSON_AddItemToObject(o, "stock", cell_json(&w->stock));
		cJSON_AddItemToObject(o, "shim", cell_json(&w->shim));
		add_ratio(o, "guest_ratio", report_guest_ratio(w));
		add_ratio(o, "shim_to_host_percent", report_shim_to_host(w));
		add_ratio(o, "stock_to_host_percent", report_stock_to_host(w));
		others = cJSON_AddArrayToObject(o, "others");
		for (j = 0; j < w->nothers; j++)
			cJSON_AddItemToArray(others, cell_json(&w->others[j]));
		cJSON_AddItemToArray(arr, o);
	}
	ex = cJSON_AddArrayToObject(root, "excluded");
	for (i = 0; i < r->nex; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "session", (double)r->ex[i].session);
		cJSON_AddNumberToObject(o, "run", (double)r->ex[i].run);
		cJSON_AddStringToObject(o, "variant", r->ex[i].variant);
		cJSON_AddStringToObject(o, "workload", r->ex[i].workload);
		cJSON_AddStringToObject(o, "reason", r->ex[i].reason);
		cJSON_AddItemToArray(ex, o);
	}
	text = cJSON_Print(root);
	if (!text)
		die("out of memory printing the report");
	buf_adds(out, text);
	buf_addch(out, '\n');
	cJSON_free(text);
	cJSON_Delete(root);
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
	else if (!strcmp(format, "html"))
		render_html(r, out);
	else
		return error("unknown format '%s' (md, csv, json or html)",
			     format);
	return 0;
}
