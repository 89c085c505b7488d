#define _POSIX_C_SOURCE 200809L
#include "analysis/report.h"
#include "analysis/provenance.h"
#include "evidence/store.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
report_runtime_display(const char *runtime)
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
	if (new_run || !c->runs) {
		c->run_n = xrealloc(c->run_n, (c->runs + 1) * sizeof(size_t));
		c->run_n[c->runs++] = r->n;
	} else {
		c->run_n[c->runs - 1] += r->n;
	}
}

static void
cell_release(struct rep_cell *c)
{
	free(c->variant);
	free(c->role);
	free(c->ts);
	free(c->run_n);
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
					      report_runtime_display(r->runtime));
			e->reason = xstrdup("injection not verified");
			last_run = r->run_id;
			continue;
		}
		w = workload_for(out, r);
		w->tampered |= r->session_tampered;
		cell_add(cell_for(w, r), r, 1);
	}
	if (provenance_from_results(s, rows, n, &out->prov) < 0) {
		store_results_free(rows, n);
		return -1;
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
	provenance_free(r->prov);
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

double
report_ratio(const struct rep_cell *a, const struct rep_cell *b)
{
	if (!a->sum.n || !b->sum.n || b->sum.median == 0)
		return NAN;
	return a->sum.median / b->sum.median;
}

double
report_guest_ratio(const struct rep_workload *w)
{
	return report_ratio(&w->shim, &w->stock);
}

double
report_shim_to_host(const struct rep_workload *w)
{
	return 100 * report_ratio(&w->shim, &w->host);
}

double
report_stock_to_host(const struct rep_workload *w)
{
	return 100 * report_ratio(&w->stock, &w->host);
}


char *
report_workload_name(const struct rep_workload *w)
{
	return xstrfmt("%s (%s)%s", w->label, report_runtime_display(w->runtime),
		       w->tampered ? " [tampered]" : "");
}
