#define _POSIX_C_SOURCE 200809L
#include "analysis/workload.h"
#include "analysis/changepoint.h"
#include "analysis/stats.h"
#include "evidence/store.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static void workload_release(struct workload *w);

static int
row_ok(const struct store_result *r)
{
	return !strcmp(r->run_status, "ok") && r->n > 0;
}

/* Distinct "target/variant" of the usable rows, as a sorted, joined
 * string (caller frees); *count gets how many. */
static char *
variant_set(const struct store_result *r, size_t n, size_t *count)
{
	char **v = NULL;
	size_t nv = 0, i, j;
	struct buf b = BUF_INIT;

	for (i = 0; i < n; i++) {
		char *k;

		if (!row_ok(&r[i]))
			continue;
		k = xstrfmt("%s/%s", r[i].target, r[i].variant);
		for (j = 0; j < nv && strcmp(v[j], k); j++)
			;
		if (j < nv) {
			free(k);
			continue;
		}
		v = xrealloc(v, (nv + 1) * sizeof(*v));
		v[nv++] = k;
	}
	for (i = 1; i < nv; i++)   /* insertion sort: few variants */
		for (j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			char *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	for (i = 0; i < nv; i++) {
		buf_addf(&b, "%s%s", i ? ", " : "", v[i]);
		free(v[i]);
	}
	free(v);
	*count = nv;
	return buf_detach(&b, NULL);
}

static int
same_key(const struct store_result *x, const struct workload *w,
	 int by_variant)
{
	if (strcmp(x->model, w->model) || strcmp(x->test, w->test))
		return 0;
	return !by_variant ||
	       (!strcmp(x->target, w->target) && !strcmp(x->variant, w->variant));
}

static void
add_row(struct cmp_side *s, const struct store_result *r)
{
	size_t i;

	/* Several rows of one run with the same test: one process. */
	for (i = 0; i < s->nproc; i++)
		if (s->run_id[i] == r->run_id) {
			s->x[i] = xrealloc(s->x[i], (s->len[i] + r->n) *
					   sizeof(double));
			memcpy(s->x[i] + s->len[i], r->ts, r->n * sizeof(double));
			s->len[i] += r->n;
			return;
		}
	cmp_side_add(s, r->run_id, r->ts, r->n);
}

int
workload_match(const struct store_result *ra, size_t na,
	  const struct store_result *rb, size_t nb,
	  struct workload **out, size_t *n, size_t *only_a, size_t *only_b)
{
	struct workload *w = NULL;
	size_t nw = 0, ca, cb, i, j, k;
	char *va = variant_set(ra, na, &ca), *vb = variant_set(rb, nb, &cb);
	int by_variant = 0, ret = -1;

	*out = NULL;
	*n = *only_a = *only_b = 0;
	if (ca > 1 || cb > 1) {
		if (strcmp(va, vb)) {
			error("the %s selection mixes variants (%s); narrow it, "
			      "e.g. with variant=NAME",
			      ca > 1 ? "baseline" : "candidate", ca > 1 ? va : vb);
			goto cleanup;
		}
		by_variant = 1;
	}
	for (i = 0; i < na; i++) {
		if (!row_ok(&ra[i]))
			continue;
		for (j = 0; j < nw && !same_key(&ra[i], &w[j], by_variant); j++)
			;
		if (j == nw) {
			w = xrealloc(w, (nw + 1) * sizeof(*w));
			memset(&w[nw], 0, sizeof(*w));
			w[nw].target = xstrdup(ra[i].target);
			w[nw].variant = xstrdup(ra[i].variant);
			w[nw].model = xstrdup(ra[i].model);
			w[nw].model_label = xstrdup(*ra[i].model_label ?
						    ra[i].model_label : ra[i].model);
			w[nw].test = xstrdup(ra[i].test);
			w[nw].name = by_variant ?
				xstrfmt("%s: %s %s", ra[i].variant, ra[i].model, ra[i].test) :
				xstrfmt("%s %s", ra[i].model, ra[i].test);
			w[nw].identity_a = xstrdup(ra[i].identity);
			w[nw].os_build_a = xstrdup(ra[i].os_build);
			w[nw].session_a = ra[i].session_id;
			nw++;
		}
		add_row(&w[j].a, &ra[i]);
	}
	for (i = 0; i < nb; i++) {
		if (!row_ok(&rb[i]))
			continue;
		for (j = 0; j < nw && !same_key(&rb[i], &w[j], by_variant); j++)
			;
		if (j == nw) {
			(*only_b)++;
			continue;
		}
		if (!w[j].b.nproc) {
			w[j].identity_b = xstrdup(rb[i].identity);
			w[j].os_build_b = xstrdup(rb[i].os_build);
			w[j].session_b = rb[i].session_id;
		}
		add_row(&w[j].b, &rb[i]);
	}
	/* Keep the workloads with both sides, in baseline order. */
	for (i = k = 0; i < nw; i++) {
		if (!w[i].b.nproc) {
			(*only_a)++;
			workload_release(&w[i]);
			continue;
		}
		w[k++] = w[i];
	}
	*out = w;
	*n = k;
	w = NULL;
	nw = 0;
	ret = 0;
cleanup:
	workloads_free(w, nw);
	free(va);
	free(vb);
	return ret;
}

static void
workload_release(struct workload *w)
{
	free(w->target);
	free(w->variant);
	free(w->model);
	free(w->model_label);
	free(w->test);
	free(w->name);
	free(w->identity_a);
	free(w->identity_b);
	free(w->os_build_a);
	free(w->os_build_b);
	cmp_side_release(&w->a);
	cmp_side_release(&w->b);
}

void
workloads_free(struct workload *w, size_t n)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < n; i++)
		workload_release(&w[i]);
	free(w);
}

double
workload_calibrated(struct store *s, const struct workload *w)
{
	const char *ids[2] = { w->identity_b, w->identity_a };
	double between, within;
	int i;

	for (i = 0; i < 2; i++)
		if (ids[i] && *ids[i] &&
		    store_noise_get(s, ids[i], w->model, w->test, &between,
				    &within, NULL) == 1)
			return between;
	return -1;
}

int
workload_load(struct store *s, const char *text, struct store_result **rows,
	 size_t *n)
{
	struct selection sel;
	int ret;

	if (selection_parse(text, &sel) < 0)
		return -1;
	ret = store_query_results(s, &sel, rows, n);
	selection_free(&sel);
	return ret;
}

void
workload_groups(const struct store_result *rows, size_t n,
		struct workload_group **out, size_t *ng)
{
	struct workload_group *gr = NULL;
	size_t i, j, k = 0;

	for (i = 0; i < n; i++) {
		const struct store_result *r = &rows[i];
		struct cmp_side *sd;
		size_t p;

		if (!row_ok(r))
			continue;
		for (j = 0; j < k; j++)
			if (!strcmp(gr[j].identity, r->identity) &&
			    !strcmp(gr[j].target, r->target) &&
			    !strcmp(gr[j].model, r->model) &&
			    !strcmp(gr[j].test, r->test))
				break;
		if (j == k) {
			gr = xrealloc(gr, (k + 1) * sizeof(*gr));
			memset(&gr[k], 0, sizeof(*gr));
			gr[k].identity = xstrdup(r->identity);
			gr[k].target = xstrdup(r->target);
			gr[k].model = xstrdup(r->model);
			gr[k].test = xstrdup(r->test);
			gr[k].session = r->session_id;
			k++;
		}
		sd = &gr[j].side;
		for (p = 0; p < sd->nproc && sd->run_id[p] != r->run_id; p++)
			;
		if (p == sd->nproc)
			cmp_side_add(sd, r->run_id, r->ts, r->n);
	}
	*out = gr;
	*ng = k;
}

void
workload_groups_free(struct workload_group *g, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(g[i].identity);
		free(g[i].target);
		free(g[i].model);
		free(g[i].test);
		cmp_side_release(&g[i].side);
	}
	free(g);
}

void
workload_side_of(const struct store_result *rows, size_t n,
		 const char *model, const char *test, struct cmp_side *side)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (row_ok(&rows[i]) && !strcmp(rows[i].model, model) &&
		    !strcmp(rows[i].test, test))
			cmp_side_add(side, rows[i].run_id, rows[i].ts, rows[i].n);
}

/* The series of key in sr[0..*ns), appended when new (takes key, base). */
static struct workload_series *
series_for(struct workload_series **sr, size_t *ns, char *key, char *base)
{
	size_t j;

	for (j = 0; j < *ns && strcmp((*sr)[j].key, key); j++)
		;
	if (j < *ns) {
		free(key);
		free(base);
		return &(*sr)[j];
	}
	*sr = xrealloc(*sr, (*ns + 1) * sizeof(**sr));
	memset(&(*sr)[j], 0, sizeof(**sr));
	(*sr)[j].key = key;
	(*sr)[j].base = base;
	(*ns)++;
	return &(*sr)[j];
}

void
workload_series(struct store *s, const struct store_result *rows, size_t n,
		struct workload_series **out, size_t *ns)
{
	size_t i;

	*out = NULL;
	*ns = 0;
	for (i = 0; i < n; i++) {
		const struct store_result *r = &rows[i];
		char *base = NULL, *osb = NULL, *key;
		struct workload_series *x;
		struct workload_point *pt;

		if (!row_ok(r))
			continue;
		if (r->environment_id)
			store_environment_base(s, r->environment_id, &base, &osb);
		free(osb);
		key = xstrfmt("%s/%s %s %s [%.8s]", r->target, r->variant,
			      r->model, r->test, base && *base ? base : "-");
		x = series_for(out, ns, key, base);
		if (!x->np || x->p[x->np - 1].session != r->session_id) {
			x->p = xrealloc(x->p, (x->np + 1) * sizeof(*x->p));
			pt = &x->p[x->np++];
			memset(pt, 0, sizeof(*pt));
			pt->session = r->session_id;
			pt->started = xstrdup(r->session_started);
			pt->os_build = xstrdup(r->os_build);
		}
		pt = &x->p[x->np - 1];
		pt->x = xrealloc(pt->x, (pt->n + r->n) * sizeof(double));
		memcpy(pt->x + pt->n, r->ts, r->n * sizeof(double));
		pt->n += r->n;
	}
}

void
workload_series_free(struct workload_series *sr, size_t n)
{
	size_t j, k;

	for (j = 0; j < n; j++) {
		for (k = 0; k < sr[j].np; k++) {
			free(sr[j].p[k].started);
			free(sr[j].p[k].os_build);
			free(sr[j].p[k].x);
		}
		free(sr[j].p);
		free(sr[j].key);
		free(sr[j].base);
	}
	free(sr);
}

int
workload_compare(struct store *s, const char *a, const char *b,
		 const struct cmp_opts *o, struct workload_comparison *out)
{
	struct store_result *ra = NULL, *rb = NULL;
	size_t na = 0, nb = 0, i;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (workload_load(s, a, &ra, &na) < 0 ||
	    workload_load(s, b, &rb, &nb) < 0)
		goto cleanup;
	if (workload_match(ra, na, rb, nb, &out->w, &out->n, &out->only_a,
			   &out->only_b) < 0) {
		ret = -2;
		goto cleanup;
	}
	if (!out->n) {
		error("nothing comparable: %zu workloads only in '%s', %zu only "
		      "in '%s'", out->only_a, a, out->only_b, b);
		goto cleanup;
	}
	out->r = xcalloc(out->n, sizeof(*out->r));
	out->ok = xcalloc(out->n, sizeof(*out->ok));
	for (i = 0; i < out->n; i++) {
		struct cmp_opts wo = *o;

		wo.between_cv = workload_calibrated(s, &out->w[i]);
		out->ok[i] = cmp_compute(&out->w[i].a, &out->w[i].b, &wo,
					 &out->r[i]) == 0;
		if (!out->ok[i])
			error("workload '%s' skipped", out->w[i].name);
	}
	ret = 0;
cleanup:
	store_results_free(ra, na);
	store_results_free(rb, nb);
	return ret;
}

void
workload_comparison_release(struct workload_comparison *c)
{
	workloads_free(c->w, c->n);
	free(c->r);
	free(c->ok);
	memset(c, 0, sizeof(*c));
}

int
workload_history(struct store *s, const char *selection, double p,
		 uint64_t seed, struct workload_history *h)
{
	struct store_result *rows = NULL;
	size_t nrows = 0, j, k;

	memset(h, 0, sizeof(*h));
	if (workload_load(s, selection, &rows, &nrows) < 0)
		return -1;
	workload_series(s, rows, nrows, &h->sr, &h->ns);
	store_results_free(rows, nrows);
	h->median = xcalloc(h->ns + 1, sizeof(*h->median));
	h->cp = xcalloc(h->ns + 1, sizeof(*h->cp));
	h->ncp = xcalloc(h->ns + 1, sizeof(*h->ncp));
	for (j = 0; j < h->ns; j++) {
		const struct workload_series *sr = &h->sr[j];

		h->median[j] = xmalloc((sr->np + 1) * sizeof(double));
		for (k = 0; k < sr->np; k++)
			h->median[j][k] = stats_median(sr->p[k].x, sr->p[k].n);
		cp_edivisive(h->median[j], sr->np, 1, p, 999, seed, &h->cp[j],
			     &h->ncp[j]);
	}
	return 0;
}

void
workload_history_release(struct workload_history *h)
{
	size_t j;

	for (j = 0; j < h->ns && h->median; j++) {
		free(h->median[j]);
		free(h->cp[j]);
	}
	free(h->median);
	free(h->cp);
	free(h->ncp);
	workload_series_free(h->sr, h->ns);
	memset(h, 0, sizeof(*h));
}
