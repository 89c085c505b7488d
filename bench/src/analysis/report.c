#define _POSIX_C_SOURCE 200809L
#include "analysis/report.h"
#include "evidence/lbfields.h"
#include "evidence/state.h"
#include "analysis/provenance.h"
#include "analysis/capfacts.h"
#include "evidence/caps.h"
#include "analysis/workload.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/util.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
report_runtime_display(const char *runtime)
{
	return !strcmp(runtime, "mlx-lm") ? "MLX-LM" : runtime;
}

int
report_natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *ea = a, *eb = b;
			size_t la, lb;

			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (ea = a; isdigit((unsigned char)*ea); ea++)
				;
			for (eb = b; isdigit((unsigned char)*eb); eb++)
				;
			la = (size_t)(ea - a);
			lb = (size_t)(eb - b);
			if (la != lb)
				return la < lb ? -1 : 1;
			for (; a < ea; a++, b++)
				if (*a != *b)
					return *a < *b ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static void
push_unique_id(int64_t **v, size_t *n, int64_t id)
{
	size_t i;

	if (*n && (*v)[*n - 1] == id)
		return;
	/* rows come in session order: a larger id is a new one */
	for (i = 0; *n && id < (*v)[*n - 1] && i < *n; i++)
		if ((*v)[i] == id)
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = id;
}

static void
cell_add(struct rep_cell *c, const struct store_result *r)
{
	size_t i;

	if (!c->nrun_ids || c->run_ids[c->nrun_ids - 1] != r->run_id) {
		c->run_ids = xrealloc(c->run_ids,
				      (c->nrun_ids + 1) * sizeof(int64_t));
		c->run_ids[c->nrun_ids++] = r->run_id;
	}
	if (!c->variant) {
		c->variant = xstrdup(r->variant);
		c->role = xstrdup(r->role);
		c->seen_variant = r->variant;
	} else if (c->seen_variant != r->variant &&
		   !strstr(c->variant, r->variant)) {
		char *v = xstrfmt("%s+%s", c->variant, r->variant);
		free(c->variant);
		c->variant = v;
	}
	if (!r->n) {
		/* a run without samples: no figure; a table's avg ± stddev is
		 * kept to be shown as such */
		if (r->from_table && isfinite(r->avg_ts)) {
			c->table_avg = c->table_rows++ ? NAN : r->avg_ts;
			c->table_sd = c->table_rows > 1 ? NAN : r->stddev_ts;
		}
		return;
	}
	if (c->n + r->n + 1 > c->ts_cap) {
		c->ts_cap = 2 * (c->n + r->n + 1);
		c->ts = xrealloc(c->ts, c->ts_cap * sizeof(double));
	}
	memcpy(c->ts + c->n, r->ts, r->n * sizeof(double));
	c->n += r->n;
	if ((size_t)c->runs + 1 > c->run_cap) {
		c->run_cap = 2 * ((size_t)c->runs + 1);
		c->run_n = xrealloc(c->run_n, c->run_cap * sizeof(size_t));
	}
	c->run_n[c->runs++] = r->n;
	if (c->seen_ident != r->identity) {
		for (i = 0; i < c->nidents && strcmp(c->idents[i], r->identity);
		     i++)
			;
		if (i == c->nidents)
			c->idents = strv_push(c->idents, &c->nidents,
					      xstrdup(r->identity));
		c->seen_ident = r->identity;
	}
	push_unique_id(&c->sessions, &c->nsessions, r->session_id);
}

static void
cell_release(struct rep_cell *c)
{
	free(c->variant);
	free(c->role);
	free(c->ts);
	free(c->run_n);
	strv_free(c->idents);
	free(c->sessions);
	free(c->run_ids);
	free(c->facts);
	free(c->shim_config);
}

static void
config_copy(struct store_config *dst, const struct store_config *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	if (!src) {
		dst->canon = xstrdup("");
		return;
	}
	dst->id = src->id;
	dst->n = src->n;
	dst->keys = xcalloc(src->n + 1, sizeof(char *));
	dst->values = xcalloc(src->n + 1, sizeof(char *));
	for (i = 0; i < src->n; i++) {
		dst->keys[i] = xstrdup(src->keys[i]);
		dst->values[i] = xstrdup(src->values[i]);
	}
	dst->canon = xstrdup(src->canon);
}

static void
config_free(struct store_config *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->keys[i]);
		free(c->values[i]);
	}
	free(c->keys);
	free(c->values);
	free(c->canon);
}


static struct rep_workload *
workload_for(struct report *rep, const struct store_result *r,
	     int64_t session, size_t *last)
{
	struct rep_workload *w;
	size_t i;

	/* rows come grouped: the last workload first */
	for (i = 0; i <= rep->n; i++) {
		size_t k = i == 0 ? *last : i - 1;

		if (k >= rep->n || (i && k == *last))
			continue;
		w = &rep->w[k];
		if (w->session != session)
			continue;
		/* the row's strings are interned: the same pointers, the
		 * same workload as a row seen before */
		if (w->seen && w->seen->model == r->model &&
		    w->seen->model_sha256 == r->model_sha256 &&
		    w->seen->model_type == r->model_type &&
		    w->seen->model_file == r->model_file &&
		    w->seen->model_size == r->model_size &&
		    w->seen->model_n_params == r->model_n_params &&
		    w->seen->runtime == r->runtime && w->seen->test == r->test &&
		    w->seen->config == r->config) {
			*last = k;
			return w;
		}
		/* the model, and the configuration (per-host fields only
		 * among rows of one target): analysis/workload.h */
		if (workload_same_model(w->seen, r) &&
		    !strcmp(w->runtime, r->runtime) &&
		    !strcmp(w->test, r->test) &&
		    workload_same_config(&w->config, w->seen->target,
					 r->config, r->target)) {
			if (strcmp(w->config.canon,
				   r->config ? r->config->canon : ""))
				rep->per_host_mixed = 1;
			*last = k;
			return w;
		}
	}
	rep->w = xrealloc(rep->w, (rep->n + 1) * sizeof(*w));
	w = &rep->w[rep->n++];
	memset(w, 0, sizeof(*w));
	w->model = xstrdup(r->model);
	w->label = xstrdup(*r->model_label ? r->model_label :
			   *r->model ? r->model : "model not named");
	w->runtime = xstrdup(r->runtime);
	w->test = xstrdup(r->test);
	w->model_sha256 = xstrdup(r->model_sha256);
	w->seen = r;
	w->session = session;
	w->first_session = r->session_id;
	/* the study's order: a model where its first row came (rows come
	 * in session, run and row order: the plan's or mapping's) */
	w->order = rep->n - 1;
	for (i = 0; i + 1 < rep->n; i++)
		if (!strcmp(rep->w[i].label, w->label) &&
		    !strcmp(rep->w[i].runtime, w->runtime)) {
			w->order = rep->w[i].order;
			break;
		}
	config_copy(&w->config, r->config);
	*last = rep->n - 1;
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
	int c = (x->order > y->order) - (x->order < y->order);

	if (!c)
		c = (x->first_session > y->first_session) -
		    (x->first_session < y->first_session);
	if (!c)
		c = report_natcmp(x->test, y->test);
	return c ? c : report_natcmp(x->config.canon, y->config.canon);
}

/* The fields that vary among the workloads of each runtime, as words
 * (worked out once per runtime: once per workload cost n^3). */
static void
name_configs(struct report *rep)
{
	const char **rt = xcalloc(rep->n + 1, sizeof(*rt));
	char ***vary = xcalloc(rep->n + 1, sizeof(*vary));
	size_t i, k, nrt = 0;

	for (i = 0; i < rep->n; i++) {
		struct rep_workload *w = &rep->w[i];
		char **same;

		size_t j;

		for (k = 0; k < nrt && strcmp(rt[k], w->runtime); k++)
			;
		if (k == nrt) {
			rt[nrt] = w->runtime;
			report_config_fields(rep, w->runtime, &vary[nrt], &same);
			strv_free(same);
			nrt++;
		}
		/* named only where another row of its model and test has
		 * another configuration: nothing else needs telling apart */
		for (j = 0; j < rep->n; j++) {
			const struct rep_workload *x = &rep->w[j];

			if (x != w && !strcmp(x->runtime, w->runtime) &&
			    !strcmp(x->test, w->test) &&
			    !strcmp(*x->model_sha256 ? x->model_sha256 : x->model,
				    *w->model_sha256 ? w->model_sha256 : w->model) &&
			    strcmp(x->config.canon, w->config.canon))
				break;
		}
		w->config_words = j < rep->n ?
			workload_config_words(&w->config, vary[k]) : xstrdup("");
	}
	for (k = 0; k < nrt; k++)
		strv_free(vary[k]);
	free(vary);
	free(rt);
}

/*
 * The value of key among the workloads w[0..n) of one runtime in words:
 * the one value, or each value with the models that have it ("8 (A, B);
 * 2 (C)"); caller frees.
 */
static char *
config_value_words(const struct rep_workload *const *w, size_t n,
		   const char *key)
{
	struct buf b = BUF_INIT;
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		const char *v = store_config_value(&w[i]->config, key);
		int first = 1;

		v = v ? v : "–";
		for (j = 0; j < i; j++) {
			const char *u = store_config_value(&w[j]->config, key);

			if (!strcmp(u ? u : "–", v))
				break;
		}
		if (j < i)
			continue;   /* this value was said */
		buf_addf(&b, "%s%s", b.len ? "; " : "", v);
		for (j = i; j < n; j++) {
			const char *u = store_config_value(&w[j]->config, key);

			if (strcmp(u ? u : "–", v))
				continue;
			for (k = i; k < j; k++) {
				const char *x = store_config_value(&w[k]->config,
								   key);
				if (!strcmp(x ? x : "–", v) &&
				    !strcmp(w[k]->label, w[j]->label))
					break;
			}
			if (k == j) {
				buf_addf(&b, "%s%s", first ? " (" : ", ",
					 w[j]->label);
				first = 0;
			}
		}
		buf_adds(&b, ")");
	}
	return buf_detach(&b, NULL);
}

void
report_config_fields(const struct report *r, const char *rt, char ***vary,
		     char ***same)
{
	const struct store_config **cfg = xcalloc(r->n + 1, sizeof(*cfg));
	const struct rep_workload **ws = xcalloc(r->n + 1, sizeof(*ws));
	char **grp = xcalloc(r->n + 1, sizeof(*grp)), **all;
	size_t n = 0, i, k, ns = 0;

	for (i = 0; i < r->n; i++)
		if (!rt || !strcmp(r->w[i].runtime, rt)) {
			ws[n] = &r->w[i];
			grp[n] = workload_group_key(*r->w[i].model_sha256 ?
						    r->w[i].model_sha256 :
						    r->w[i].model, r->w[i].runtime,
						    r->w[i].test, NULL);
			cfg[n++] = &r->w[i].config;
		}
	*vary = workload_distinct_keys(cfg, (const char *const *)grp, n);
	all = workload_varying_keys(cfg, n);
	*same = xcalloc(1, sizeof(char *));
	/* every other field: its one value, or its value per model */
	for (k = 0; n && k < cfg[0]->n; k++) {
		const char *key = cfg[0]->keys[k];

		for (i = 0; (*vary)[i] && strcmp((*vary)[i], key); i++)
			;
		if ((*vary)[i])
			continue;
		for (i = 0; all[i] && strcmp(all[i], key); i++)
			;
		/* a host and its guest name their GPU differently */
		if (r->per_host_mixed && lb_field_per_host(key)) {
			*same = strv_push(*same, &ns, xstrfmt("%s=(per target)",
					  key));
		} else if (!all[i]) {
			*same = strv_push(*same, &ns, xstrfmt("%s=%s", key,
					  cfg[0]->values[k]));
		} else {
			char *words = config_value_words(ws, n, key);

			*same = strv_push(*same, &ns, xstrfmt("%s=%s", key,
								words));
			free(words);
		}
	}
	strv_free(all);
	strv_free(grp);
	free(ws);
	free(cfg);
}

/* Cells that pool sessions of different fingerprints, one line per
 * set of sessions. */
struct pooled {
	char *sessions, *first;
	size_t idents, cells;
};

static void
note_pooled(struct pooled **p, size_t *n, const char *sessions,
	    size_t idents, const char *what)
{
	size_t i;

	for (i = 0; i < *n && strcmp((*p)[i].sessions, sessions); i++)
		;
	if (i == *n) {
		*p = xrealloc(*p, (*n + 1) * sizeof(**p));
		(*p)[i].sessions = xstrdup(sessions);
		(*p)[i].first = xstrdup(what);
		(*p)[i].idents = idents;
		(*p)[i].cells = 0;
		(*n)++;
	}
	(*p)[i].cells++;
}

/* Outlier, spread and pooling warnings of each workload. */
static void
warn_workloads(struct report *rep)
{
	struct pooled *pooled = NULL;
	size_t npooled = 0, i, j;

	for (i = 0; i < rep->n; i++) {
		struct rep_workload *w = &rep->w[i];
		struct rep_cell *cells[3] = { &w->host, &w->stock, &w->shim };
		char *name = report_workload_name(w);

		for (j = 0; j < 3 + w->nothers; j++) {
			struct rep_cell *c = j < 3 ? cells[j] : &w->others[j - 3];
			char *what;

			if (!c->n)
				continue;
			what = xstrfmt("%s %s, %s", name, w->test, c->variant);
			outliers_processes(c->ts, c->run_n, (size_t)c->runs, what,
					   &rep->warn);
			/* a machine that was not quiet: on screen, not only in
			 * the file (issue 22) */
			if (c->sum.n >= 3 && c->sum.min > 0 &&
			    c->sum.max / c->sum.min >= REPORT_SPREAD_WARN)
				warnings_add(&rep->warn, xstrfmt(
					"%s: the samples span %.2f–%.2f t/s, %.1f× "
					"from the slowest to the fastest: the "
					"machine was not quiet (load, throttling, "
					"other processes); the median stands, but "
					"rerun on a quiet machine before reading "
					"small differences", what, c->sum.min,
					c->sum.max, c->sum.max / c->sum.min));
			if (c->nidents > 1) {
				struct buf b = BUF_INIT;
				size_t k;

				for (k = 0; k < c->nsessions && k < 8; k++)
					buf_addf(&b, "%s%lld", k ? ", " : "",
						 (long long)c->sessions[k]);
				if (c->nsessions > 8)
					buf_addf(&b, " and %zu more",
						 c->nsessions - 8);
				note_pooled(&pooled, &npooled, b.buf, c->nidents,
					    what);
				buf_release(&b);
			}
			free(what);
		}
		if (w->stock.n && w->shim.n) {
			char *what = xstrfmt("%s %s, shim vs stock", name, w->test);

			outliers_effect(w->stock.ts, w->stock.n, w->shim.ts,
					w->shim.n, report_guest_ratio(w), what,
					"stock", "shim", &rep->warn);
			free(what);
		}
		free(name);
	}
	for (i = 0; i < npooled; i++) {
		warnings_add(&rep->warn, xstrfmt(
			"%zu figure%s (e.g. %s) pool%s sessions %s, whose "
			"fingerprints differ (%zu: hardware, OS build or llama.cpp "
			"build); select one, e.g. with session=N or os_build=B",
			pooled[i].cells, pooled[i].cells == 1 ? "" : "s",
			pooled[i].first, pooled[i].cells == 1 ? "s" : "",
			pooled[i].sessions, pooled[i].idents));
		free(pooled[i].sessions);
		free(pooled[i].first);
	}
	free(pooled);
}

/* ---- the report's cells ------------------------------------------------- */

struct run_facts {
	int64_t id;
	const char *key;        /* the stored text (memo) */
	char *facts, *shim;     /* the memo's; borrowed in the runs' */
};

static int
cmp_facts(const void *a, const void *b)
{
	const struct run_facts *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Joins the distinct texts of a cell's runs with " | ". */
static char *
joined(char **v, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i, j;

	if (!n)
		return NULL;
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(v[j], v[i]); j++)
			;
		if (j == i)
			buf_addf(&b, "%s%s", b.len ? " | " : "", v[i]);
	}
	return buf_detach(&b, NULL);
}

/*
 * The runs whose capability facts a cell shows: all of them up to
 * CAPFACTS_RUNS, else the first and the last CAPFACTS_RUNS / 2 (a cell
 * pooled over thousands of sessions must not read every run's row: the
 * facts sit behind its raw outputs in the runs table).
 */
#define CAPFACTS_RUNS 16

static int
facts_run(const struct rep_cell *c, size_t k)
{
	return c->nrun_ids <= CAPFACTS_RUNS || k < CAPFACTS_RUNS / 2 ||
	       k >= c->nrun_ids - CAPFACTS_RUNS / 2;
}

static void
fill_cell(struct rep_cell *c, const struct run_facts *rf, size_t n)
{
	char **facts = xcalloc(c->nrun_ids + 1, sizeof(char *));
	char **shim = xcalloc(c->nrun_ids + 1, sizeof(char *));
	size_t nf = 0, ns = 0, i, nomark = 0;

	for (i = 0; i < c->nrun_ids; i++) {
		struct run_facts key = { c->run_ids[i], NULL, NULL, NULL };
		const struct run_facts *f;

		if (!facts_run(c, i))
			continue;
		f = bsearch(&key, rf, n, sizeof(*rf), cmp_facts);

		if (f && f->facts && *f->facts)
			facts[nf++] = f->facts;
		if (f && f->shim)
			shim[ns++] = f->shim;
		else
			nomark++;
	}
	free(c->facts);
	free(c->shim_config);
	c->facts = joined(facts, nf);
	c->shim_config = joined(shim, ns);
	if (c->shim_config && nomark) {
		/* some runs printed no marker: never one configuration */
		char *s = xstrfmt("%s | (no marker)", c->shim_config);
		free(c->shim_config);
		c->shim_config = s;
	}
	free(facts);
	free(shim);
}

/*
 * Whether the tables say host and guest: a target is a virtual machine,
 * and the report is not one where everything, bare metal included, ran
 * in VMs (a Linux cloud machine running bare, stock and shim has no
 * host/guest split): some target is not a VM, or none ran bare metal.
 */
static int
says_guest(const struct report *r)
{
	const struct provenance *p = r->prov;
	int vm = 0, not_vm = 0, bare = 0;
	size_t i;

	for (i = 0; p && i < p->ne; i++) {
		vm |= p->e[i].is_vm == 1;
		not_vm |= p->e[i].is_vm != 1;
	}
	for (i = 0; i < r->n; i++)
		bare |= r->w[i].host.variant != NULL;
	return vm && (not_vm || !bare);
}

/* Those runs of every cell, each cell's in order (caller frees). */
static int64_t *
cell_run_ids(const struct report *r, size_t *n)
{
	int64_t *ids = NULL;
	size_t k = 0, i, j, c;

	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];

		for (j = 0; j < 3 + w->nothers; j++) {
			const struct rep_cell *cl = j == 0 ? &w->host :
				j == 1 ? &w->stock : j == 2 ? &w->shim :
				&w->others[j - 3];

			ids = xrealloc(ids, (k + cl->nrun_ids + 1) * sizeof(*ids));
			for (c = 0; c < cl->nrun_ids; c++)
				if (facts_run(cl, c))
					ids[k++] = cl->run_ids[c];
		}
	}
	*n = k;
	return ids;
}

/* Runs by the address of their stored text: the store interns it. */
static int
cmp_key(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct run_facts *)a)->key;
	uintptr_t y = (uintptr_t)((const struct run_facts *)b)->key;

	return (x > y) - (x < y);
}

/*
 * Each cell's capability facts and shim marker, from its runs' stored
 * capabilities (store_run_capabilities(): those runs only); the
 * facts of one stored text are worked out once (the runs that share it
 * borrow the first one's, own[] holds them).
 */
static int
capfacts_fill(struct store *s, struct report *r)
{
	const char **f = NULL;
	struct run_facts *rf;
	size_t n, i, j, nown = 0;
	char **own;
	int64_t *ids = cell_run_ids(r, &n);

	r->guest = says_guest(r);
	if (store_run_capabilities(s, ids, n, &f) < 0) {
		free(ids);
		return -1;
	}
	rf = xcalloc(n + 1, sizeof(*rf));
	own = xcalloc(2 * n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		rf[i].id = ids[i];
		rf[i].key = f[i];
	}
	free(ids);
	free(f);
	qsort(rf, n, sizeof(*rf), cmp_key);
	for (i = 0; i < n; i++) {
		struct caps c;

		if (!*rf[i].key)
			continue;
		if (i && rf[i].key == rf[i - 1].key) {
			rf[i].facts = rf[i - 1].facts;
			rf[i].shim = rf[i - 1].shim;
			continue;
		}
		if (caps_from_json(rf[i].key, &c) == 0) {
			own[nown++] = rf[i].facts = capfacts_describe(&c);
			rf[i].shim = capfacts_shim_config(&c);
			if (rf[i].shim)
				own[nown++] = rf[i].shim;
		}
		caps_release(&c);
	}
	qsort(rf, n, sizeof(*rf), cmp_facts);
	for (i = 0; i < r->n; i++) {
		struct rep_workload *w = &r->w[i];

		fill_cell(&w->host, rf, n);
		fill_cell(&w->stock, rf, n);
		fill_cell(&w->shim, rf, n);
		for (j = 0; j < w->nothers; j++)
			fill_cell(&w->others[j], rf, n);
	}
	for (i = 0; i < nown; i++)
		free(own[i]);
	free(own);
	free(rf);
	return 0;
}

static int report_build_tx(struct store *s, const struct selection *sel,
			   int pool, struct report *out);

int
report_build(struct store *s, const struct selection *sel, struct report *out)
{
	return report_build_pooled(s, sel, 1, out);
}

int
report_build_pooled(struct store *s, const struct selection *sel, int pool,
		    struct report *out)
{
	int rc;

	/* one snapshot for the rows, what was left out and the provenance */
	if (store_read_begin(s) < 0)
		return -1;
	rc = report_build_tx(s, sel, pool, out);
	store_read_end(s);
	return rc;
}

/* A row's workload and variant, the key sessions are told apart by. */
struct row_key {
	char *key;
	int64_t session;
	size_t row;
};

static int
cmp_row_key(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->session > y->session) - (x->session < y->session);
}

/*
 * Which rows belong to a workload whose cell (same workload, same
 * variant) holds rows of several sessions: split[i] is 1 for them. Those
 * workloads are shown once per session unless the report pools; a host
 * session and a guest session of one study pool nothing and stay one row.
 */
static char *
rows_to_split(const struct store_result *rows, size_t n)
{
	struct row_key *k = xcalloc(n + 1, sizeof(*k));
	char *split = xcalloc(n + 1, 1), **wl = xcalloc(1, sizeof(char *));
	size_t i, j, nk = 0, nw = 0;

	for (i = 0; i < n; i++) {
		const struct store_result *r = &rows[i];

		k[nk].key = xstrfmt("%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s",
				    *r->model_sha256 ? r->model_sha256 : r->model,
				    r->runtime, r->test, r->config ?
				    r->config->canon : "", r->variant, r->role);
		k[nk].session = r->session_id;
		k[nk++].row = i;
	}
	qsort(k, nk, sizeof(*k), cmp_row_key);
	/* the workloads (the key less variant and role) seen in two sessions */
	for (i = 1; i < nk; i++)
		if (!strcmp(k[i].key, k[i - 1].key) &&
		    k[i].session != k[i - 1].session) {
			char *w = xstrdup(k[i].key), *p = strrchr(w, '\x1f');

			*p = '\0';
			p = strrchr(w, '\x1f');
			*p = '\0';
			for (j = 0; j < nw && strcmp(wl[j], w); j++)
				;
			if (j < nw)
				free(w);
			else
				wl = strv_push(wl, &nw, w);
		}
	for (i = 0; nw && i < nk; i++)
		for (j = 0; j < nw; j++)
			if (!strncmp(k[i].key, wl[j], strlen(wl[j])) &&
			    k[i].key[strlen(wl[j])] == '\x1f')
				split[k[i].row] = 1;
	for (i = 0; i < nk; i++)
		free(k[i].key);
	free(k);
	strv_free(wl);
	return split;
}

static int
report_build_tx(struct store *s, const struct selection *sel, int pool,
		struct report *out)
{
	struct store_result *rows;
	struct store_left_out *lo = NULL;
	size_t n, nlo = 0, i, j, last = 0;
	int64_t last_run = -1, last_table = -1, *sess = NULL;
	int rc;
	char *words, *split;

	memset(out, 0, sizeof(*out));
	rc = store_query_results(s, sel, &rows, &n);
	if (rc < 0)
		return rc;
	if (store_query_left_out(s, sel, &lo, &nlo) < 0) {
		store_results_free(rows, n);
		return -1;
	}
	out->matched = n;
	split = pool ? NULL : rows_to_split(rows, n);
	for (i = 0; i < n; i++) {
		const struct store_result *r = &rows[i];
		struct rep_workload *w;

		if (verify_state_of(r->verification) == VERIFY_UNVERIFIED) {
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
		if (!r->n && r->from_table && r->run_id != last_table) {
			/* a table printed means, not samples (not -r 0) */
			warnings_add(&out->warn, xstrfmt(
				"session %lld run %lld: a llama-bench table (md, "
				"csv or sql): the mean ± deviation it printed, "
				"no samples, so no median or interval",
				(long long)r->session_id, (long long)r->run_id));
			last_table = r->run_id;
		}
		if (!r->n && !r->from_table && r->run_id != last_run)
			warnings_add(&out->warn, xstrfmt(
				"session %lld run %lld (%s %s): no samples "
				"(llama-bench ran with -r 0 or less?): shown as "
				"'–', never a median", (long long)r->session_id,
				(long long)r->run_id, *r->model_label ?
				r->model_label : r->model, r->test));
		w = workload_for(out, r, split && split[i] ? r->session_id : 0,
				 &last);
		w->tampered |= r->session_tampered;
		w->partial |= run_state_of(r->run_status) != RUN_STATE_OK ||
			session_state_of(r->session_status) != SESSION_STATE_OK;
		cell_add(cell_for(w, r), r);
		push_unique_id(&sess, &out->nsessions, r->session_id);
	}
	free(split);
	{
		struct buf b = BUF_INIT;

		for (i = 0; i < out->nsessions && i < 20; i++)
			buf_addf(&b, "%s%lld", i ? ", " : "", (long long)sess[i]);
		if (out->nsessions > 20)
			buf_addf(&b, " and %zu more", out->nsessions - 20);
		out->sessions = buf_detach(&b, NULL);
		out->session_ids = sess;
	}
	{
		struct workload_rows wr = { rows, n, lo, nlo, sel ? sel->include : 0,
					    NULL };

		wr.text = selection_text(sel);
		words = workload_left_out_words(&wr);
		if (*words)
			warnings_add(&out->warn, xstrfmt("left out by default: %s",
							 words));
		free(words);
		words = workload_included_words(rows, n);
		if (*words)
			warnings_add(&out->warn, xstrfmt(
				"these figures count what the defaults leave "
				"out, because the selection asks for it: %s",
				words));
		free(words);
		if (!out->n)
			out->nothing = workload_nothing_words(&wr);
		free(wr.text);
	}
	for (i = 0; i < out->n; i++)
		out->w[i].seen = NULL;      /* rows are freed below */
	if (provenance_from_results(s, rows, n, &out->prov) < 0) {
		store_results_free(rows, n);
		store_left_out_free(lo, nlo);
		return -1;
	}
	store_results_free(rows, n);
	store_left_out_free(lo, nlo);
	if (capfacts_fill(s, out) < 0)
		return -1;
	for (i = 0; i < out->n; i++) {
		struct rep_workload *w = &out->w[i];
		stats_summary(w->host.ts, w->host.n, &w->host.sum);
		stats_summary(w->stock.ts, w->stock.n, &w->stock.sum);
		stats_summary(w->shim.ts, w->shim.n, &w->shim.sum);
		for (j = 0; j < w->nothers; j++)
			stats_summary(w->others[j].ts, w->others[j].n,
				      &w->others[j].sum);
	}
	xqsort(out->w, out->n, sizeof(*out->w), cmp_workload);
	name_configs(out);
	warn_workloads(out);
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
		free(w->model_sha256);
		free(w->config_words);
		config_free(&w->config);
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
	free(r->sessions);
	free(r->session_ids);
	free(r->nothing);
	warnings_release(&r->warn);
	provenance_free(r->prov);
	memset(r, 0, sizeof(*r));
}

size_t
report_count(const struct report *r, const char *model, const char *runtime,
	     const char *test)
{
	size_t i, k = 0;

	for (i = 0; i < r->n; i++)
		k += !strcmp(r->w[i].model, model) &&
		     !strcmp(r->w[i].runtime, runtime) &&
		     !strcmp(r->w[i].test, test);
	return k;
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

static char *
name_of(const struct rep_workload *w, int with_config)
{
	int cfg = with_config && w->config_words && *w->config_words;

	char sess[48] = "";

	if (w->session && with_config)
		snprintf(sess, sizeof(sess), " [session %lld]",
			 (long long)w->session);
	return xstrfmt("%s (%s)%s%s%s%s%s%s", w->label,
		       report_runtime_display(w->runtime), cfg ? " [" : "",
		       cfg ? w->config_words : "", cfg ? "]" : "", sess,
		       w->tampered ? " [tampered]" : "",
		       w->partial ? " [partial]" : "");
}

char *
report_workload_name(const struct rep_workload *w)
{
	return name_of(w, 1);
}

char *
report_workload_short_name(const struct rep_workload *w)
{
	return name_of(w, 0);
}
