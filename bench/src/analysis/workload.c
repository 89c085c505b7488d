#define _POSIX_C_SOURCE 200809L
#include "analysis/workload.h"
#include "evidence/state.h"
#include "analysis/changepoint.h"
#include "analysis/stats.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "evidence/lbfields.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void workload_release(struct workload *w);

/* ---- rows of a selection ---------------------------------------------------- */

int
workload_load(struct store *s, const struct selection *sel,
	      struct workload_rows *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	out->text = xstrdup(sel->text ? sel->text : "");
	out->include = sel->include;
	ret = store_query_results(s, sel, &out->r, &out->n);
	if (ret == 0)
		ret = store_query_left_out(s, sel, &out->lo, &out->nlo);
	return ret;
}

void
workload_rows_release(struct workload_rows *w)
{
	store_results_free(w->r, w->n);
	store_left_out_free(w->lo, w->nlo);
	free(w->text);
	memset(w, 0, sizeof(*w));
}

/*
 * Why the default leaves out l (NULL: its status says), and the include=
 * bit that counts it: tampered first, then the session's status, then
 * the run's.
 */
static const char *
left_out_reason(const struct store_left_out *l, unsigned *bit)
{
	unsigned need = selection_needs(l->session_status, l->tampered,
					l->run_status);

	if (l->tampered) {
		*bit = SEL_TAMPERED;
		return "imported as tampered";
	}
	need &= ~SEL_PARTIAL;
	*bit = need && need != SEL_NEVER ? need :
	       need ? SEL_UNFINISHED : SEL_PARTIAL;
	return NULL;
}

char *
workload_left_out_words(const struct workload_rows *w)
{
	struct buf b = BUF_INIT;
	unsigned words = 0;
	size_t i, shown = 0;
	long more = 0;
	char *inc;

	for (i = 0; i < w->nlo; i++) {
		const struct store_left_out *l = &w->lo[i];
		unsigned bit;
		const char *why = left_out_reason(l, &bit);
		char tmp[96];

		words |= bit;
		if (shown >= 6) {
			more += l->runs;
			continue;
		}
		if (!why) {
			if (session_state_of(l->session_status) !=
			    SESSION_STATE_OK)
				snprintf(tmp, sizeof(tmp), "its status is '%s'",
					 l->session_status);
			else
				snprintf(tmp, sizeof(tmp), "run status '%s'",
					 l->run_status);
			why = tmp;
		}
		buf_addf(&b, "%ssession %lld (%s): %ld run%s, %ld result%s",
			 b.len ? "; " : "", (long long)l->session, why, l->runs,
			 l->runs == 1 ? "" : "s", l->results,
			 l->results == 1 ? "" : "s");
		shown++;
	}
	if (more)
		buf_addf(&b, "; %ld more runs", more);
	if (!b.len)
		return buf_detach(&b, NULL);
	inc = selection_include_words(words);
	buf_addf(&b, " (add include=%s to the selection to count them)", inc);
	free(inc);
	return buf_detach(&b, NULL);
}

char *
workload_included_words(const struct store_result *r, size_t n)
{
	struct buf b = BUF_INIT;
	int64_t last_s = -1, last_run = -1;
	size_t i, shown = 0;

	for (i = 0; i < n; i++) {
		if (r[i].session_id != last_s) {
			last_s = r[i].session_id;
			if (r[i].session_tampered && shown++ < 8)
				buf_addf(&b, "%ssession %lld was imported as "
					 "tampered", b.len ? "; " : "",
					 (long long)last_s);
			if (session_state_of(r[i].session_status) !=
			    SESSION_STATE_OK && shown++ < 8)
				buf_addf(&b, "%ssession %lld ended '%s'",
					 b.len ? "; " : "", (long long)last_s,
					 r[i].session_status);
		}
		if (r[i].run_id != last_run) {
			last_run = r[i].run_id;
			if (run_state_of(r[i].run_status) != RUN_STATE_OK &&
			    shown++ < 8)
				buf_addf(&b, "%srun %lld of session %lld has "
					 "status '%s' (partial)",
					 b.len ? "; " : "", (long long)last_run,
					 (long long)last_s, r[i].run_status);
		}
	}
	if (shown > 8)
		buf_addf(&b, "; %zu more", shown - 8);
	return buf_detach(&b, NULL);
}

char *
workload_nothing_words(const struct workload_rows *w)
{
	char *lo;
	char *msg;

	if (!w->nlo && !w->n)
		return xstrfmt("nothing matched the selection '%s'", w->text);
	if (!w->nlo)
		return xstrfmt("nothing to count in the selection '%s': its "
			       "runs have no samples or their injection was "
			       "not verified", w->text);
	lo = workload_left_out_words(w);
	msg = xstrfmt("nothing matched the selection '%s' that counts: left "
		      "out %s", w->text, lo);
	free(lo);
	return msg;
}

int
workload_row_usable(const struct store_result *r)
{
	return r->n > 0 &&
		verify_state_of(r->verification) != VERIFY_UNVERIFIED;
}

/* ---- what a workload is ------------------------------------------------------- */

/* Equal, or one of them unknown ("", -1). */
static int
same_fact(const char *a, const char *b)
{
	return !*a || !*b || !strcmp(a, b);
}

int
workload_same_model(const struct store_result *a, const struct store_result *b)
{
	if (*a->model_sha256 && *b->model_sha256)
		return !strcmp(a->model_sha256, b->model_sha256);
	/* without hashes: the names; and for runs that name no model, what
	 * both rows say of it (one process may measure several: -m a.gguf
	 * -m b.gguf). A named run holds one model (the store refuses more:
	 * store-records.c), and its name is the mapping's word for it. */
	if (strcmp(a->model, b->model))
		return 0;
	if (*a->model)
		return 1;
	return same_fact(a->model_type, b->model_type) &&
	       same_fact(a->model_file, b->model_file) &&
	       (a->model_size < 0 || b->model_size < 0 ||
		a->model_size == b->model_size) &&
	       (a->model_n_params < 0 || b->model_n_params < 0 ||
		a->model_n_params == b->model_n_params);
}

int
workload_same_config(const struct store_config *a, const char *target_a,
		     const struct store_config *b, const char *target_b)
{
	size_t i = 0, j = 0;

	if (a == b || (a && b && !strcmp(a->canon, b->canon)))
		return 1;
	if (!a || !b || !strcmp(target_a, target_b))
		return 0;
	/* other targets: all but the per-host fields (gpu_info) */
	for (;;) {
		while (i < a->n && lb_field_per_host(a->keys[i]))
			i++;
		while (j < b->n && lb_field_per_host(b->keys[j]))
			j++;
		if (i == a->n || j == b->n)
			return i == a->n && j == b->n;
		if (strcmp(a->keys[i], b->keys[j]) ||
		    strcmp(a->values[i], b->values[j]))
			return 0;
		i++;
		j++;
	}
}

static int
same_config(const struct store_config *a, const struct store_config *b)
{
	return a == b || (a && b && !strcmp(a->canon, b->canon));
}

int
workload_same(const struct store_result *a, const struct store_result *b)
{
	return workload_same_model(a, b) && !strcmp(a->runtime, b->runtime) &&
	       !strcmp(a->test, b->test) &&
	       workload_same_config(a->config, a->target, b->config, b->target);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
workload_varying_keys(const struct store_config *const *cfg, size_t n)
{
	char **keys = NULL;
	size_t nk = 0, i, j, k;

	keys = xcalloc(1, sizeof(char *));
	for (i = 0; i < n; i++)
		for (k = 0; cfg[i] && k < cfg[i]->n; k++) {
			const char *key = cfg[i]->keys[k];
			const char *v = cfg[i]->values[k];
			int differs = 0;

			for (j = 0; j < nk && strcmp(keys[j], key); j++)
				;
			if (j < nk)
				continue;
			for (j = 0; j < n && !differs; j++) {
				const char *w = store_config_value(cfg[j], key);

				differs = !w || strcmp(w, v);
			}
			if (differs)
				keys = strv_push(keys, &nk, xstrdup(key));
		}
	xqsort(keys, nk, sizeof(char *), cmp_str);
	return keys;
}

/*
 * The fields that tell rows apart: the union, over the groups of rows
 * that share model, runtime and test (group[i] is cfg[i]'s), of the
 * fields that vary within one group. Two different models need no field
 * to tell them apart, and a llama.cpp row and an MLX-LM row share no
 * fields: naming every field that differs between them buried the one
 * that tells two TinyLlama pp512 rows apart (issue 22).
 */
char **
workload_distinct_keys(const struct store_config *const *cfg,
		       const char *const *group, size_t n)
{
	const struct store_config **sub = xcalloc(n + 1, sizeof(*sub));
	char **all = xcalloc(1, sizeof(char *));
	size_t na = 0, i, j, k, ns;

	for (i = 0; i < n; i++) {
		char **keys;

		for (j = 0; j < i && strcmp(group[j], group[i]); j++)
			;
		if (j < i)
			continue;   /* this group was done */
		for (ns = 0, j = i; j < n; j++)
			if (!strcmp(group[j], group[i]))
				sub[ns++] = cfg[j];
		if (ns < 2)
			continue;
		keys = workload_varying_keys(sub, ns);
		for (k = 0; keys[k]; k++) {
			for (j = 0; j < na && strcmp(all[j], keys[k]); j++)
				;
			if (j == na)
				all = strv_push(all, &na, xstrdup(keys[k]));
		}
		strv_free(keys);
	}
	free(sub);
	qsort(all, na, sizeof(char *), cmp_str);
	return all;
}

char *
workload_group_key(const char *model, const char *runtime, const char *test,
		   const char *extra)
{
	return xstrfmt("%s\x1f%s\x1f%s\x1f%s", model, runtime, test,
		       extra ? extra : "");
}

char *
workload_config_words(const struct store_config *c, char *const *keys)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; keys && keys[i]; i++) {
		const char *v = store_config_value(c, keys[i]);

		buf_addf(&b, "%s%s=%s", b.len ? ", " : "", keys[i], v ? v : "–");
	}
	return buf_detach(&b, NULL);
}

/* ---- matching two selections ---------------------------------------------------- */

/* Distinct "target/variant" of the rows, as a sorted, joined string
 * (caller frees); *count gets how many. Rows that do not count in a
 * figure (no samples, injection unverified) count here: a variant whose
 * runs lost their injection is still one of the selection's, paired
 * with the same variant of the other side, never with another. */
static char *
variant_set(const struct store_result *r, size_t n, size_t *count)
{
	char **v = NULL;
	size_t nv = 0, i, j;
	struct buf b = BUF_INIT;

	for (i = 0; i < n; i++) {
		char *k;

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
	xqsort(v, nv, sizeof(char *), cmp_str);
	for (i = 0; i < nv; i++) {
		buf_addf(&b, "%s%s", i ? ", " : "", v[i]);
		free(v[i]);
	}
	free(v);
	*count = nv;
	return buf_detach(&b, NULL);
}

/* The workload of row x in w[0..n) (by_variant: target and variant too),
 * or n. A representative row of each is kept in rep[]. */
static size_t
find_workload(const struct store_result *const *rep, size_t n,
	      const struct store_result *x, int by_variant)
{
	size_t j;

	for (j = 0; j < n; j++) {
		const struct store_result *r = rep[j];

		if (!workload_same(r, x))
			continue;
		if (by_variant && (strcmp(r->target, x->target) ||
				   strcmp(r->variant, x->variant)))
			continue;
		return j;
	}
	return n;
}

static void
add_row(struct cmp_side *s, const struct store_result *r)
{
	size_t i;

	/* Several rows of one run with the same test: one process. A run's
	 * rows come together, so only the last process can be the run's. */
	i = s->nproc;
	if (i && s->run_id[i - 1] == r->run_id) {
		i--;
		s->x[i] = xrealloc(s->x[i], (s->len[i] + r->n) * sizeof(double));
		memcpy(s->x[i] + s->len[i], r->ts, r->n * sizeof(double));
		s->len[i] += r->n;
		return;
	}
	cmp_side_add(s, r->run_id, r->ts, r->n);
}

/* Pooling bookkeeping: distinct identities and sessions of a side. */
struct pool_note {
	char **idents;
	size_t nident;
	const char *last_ident;
	int64_t *sess;
	size_t nsess;
};

static void
note_row(struct pool_note *p, const struct store_result *r)
{
	size_t i;

	if (p->last_ident != r->identity) {     /* interned: same pointer */
		for (i = 0; i < p->nident && strcmp(p->idents[i], r->identity);
		     i++)
			;
		if (i == p->nident)
			p->idents = strv_push(p->idents, &p->nident,
					      xstrdup(r->identity));
		p->last_ident = r->identity;
	}
	if (p->nsess && p->sess[p->nsess - 1] == r->session_id)
		return;
	/* rows come in session order: a larger id is a new one */
	i = p->nsess;
	if (p->nsess && r->session_id < p->sess[p->nsess - 1])
		for (i = 0; i < p->nsess && p->sess[i] != r->session_id; i++)
			;
	if (i == p->nsess) {
		p->sess = xrealloc(p->sess, (p->nsess + 1) * sizeof(int64_t));
		p->sess[p->nsess++] = r->session_id;
	}
}

static char *
note_sessions(const struct pool_note *p)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < p->nsess && i < 8; i++)
		buf_addf(&b, "%s%lld", i ? ", " : "", (long long)p->sess[i]);
	if (p->nsess > 8)
		buf_addf(&b, " and %zu more", p->nsess - 8);
	return buf_detach(&b, NULL);
}

static void
note_release(struct pool_note *p)
{
	strv_free(p->idents);
	free(p->sess);
	memset(p, 0, sizeof(*p));
}

/*
 * Why workloads of one side found no partner: the same model, runtime
 * and test on the other side in another configuration, with the fields
 * that differ.
 */
static char *
why_unpaired(const struct store_result *const *rep, size_t nw,
	     const char *has_b, const struct store_result *rb, size_t nb)
{
	struct buf b = BUF_INIT;
	size_t i, j, shown = 0;

	for (i = 0; i < nw && shown < 4; i++) {
		const struct store_result *x = rep[i];

		if (has_b[i])
			continue;
		for (j = 0; j < nb; j++) {
			const struct store_config *c[2];
			char **keys, *wa, *wb;

			if (!workload_row_usable(&rb[j]) || strcmp(rb[j].test, x->test) ||
			    strcmp(rb[j].runtime, x->runtime))
				continue;
			if (!strcmp(rb[j].model, x->model) && !workload_same_model(x, &rb[j])) {
				buf_addf(&b, "%s%s %s: the model's SHA-256 differs "
					 "(%.12s vs %.12s)", b.len ? "; " : "",
					 x->model, x->test, x->model_sha256,
					 rb[j].model_sha256);
				shown++;
				break;
			}
			if (!workload_same_model(x, &rb[j]) ||
			    same_config(x->config, rb[j].config))
				continue;
			c[0] = x->config;
			c[1] = rb[j].config;
			keys = workload_varying_keys(c, 2);
			wa = workload_config_words(x->config, keys);
			wb = workload_config_words(rb[j].config, keys);
			buf_addf(&b, "%s%s %s: the configurations differ in %s "
				 "vs %s", b.len ? "; " : "", x->model, x->test,
				 wa, wb);
			free(wa);
			free(wb);
			strv_free(keys);
			shown++;
			break;
		}
	}
	return buf_detach(&b, NULL);
}

int
workload_match(const struct store_result *ra, size_t na,
	       const struct store_result *rb, size_t nb,
	       struct workload **out, size_t *n, size_t *only_a,
	       size_t *only_b, char **why)
{
	struct workload *w = NULL;
	const struct store_result **rep = NULL, **repb = NULL;
	size_t nbw = 0;
	struct pool_note *pa = NULL, *pb = NULL;
	const struct store_config **cfg = NULL;
	char **rts;
	char **vary = NULL, *has_b = NULL;
	size_t nw = 0, ca, cb, i, j, k;
	char *va = variant_set(ra, na, &ca), *vb = variant_set(rb, nb, &cb);
	int by_variant = 0, ret = RC_USAGE;

	*out = NULL;
	*n = *only_a = *only_b = 0;
	if (why)
		*why = NULL;
	/* several variants on both sides: each against the same one (those
	 * only on one side are unpaired); several against one: refused */
	if (ca > 1 || cb > 1) {
		if ((ca <= 1 || cb <= 1) && strcmp(va, vb)) {
			error("the %s selection mixes variants (%s); narrow it, "
			      "e.g. with variant=NAME",
			      ca > 1 ? "baseline" : "candidate", ca > 1 ? va : vb);
			goto cleanup;
		}
		by_variant = 1;
	}
	for (i = 0; i < na; i++) {
		if (!workload_row_usable(&ra[i]))
			continue;
		j = find_workload(rep, nw, &ra[i], by_variant);
		if (j == nw) {
			w = xrealloc(w, (nw + 1) * sizeof(*w));
			rep = xrealloc(rep, (nw + 1) * sizeof(*rep));
			pa = xrealloc(pa, (nw + 1) * sizeof(*pa));
			pb = xrealloc(pb, (nw + 1) * sizeof(*pb));
			memset(&w[nw], 0, sizeof(*w));
			memset(&pa[nw], 0, sizeof(*pa));
			memset(&pb[nw], 0, sizeof(*pb));
			rep[nw] = &ra[i];
			w[nw].target = xstrdup(ra[i].target);
			w[nw].variant = xstrdup(ra[i].variant);
			w[nw].model = xstrdup(ra[i].model);
			w[nw].model_label = xstrdup(*ra[i].model_label ?
						    ra[i].model_label : ra[i].model);
			w[nw].test = xstrdup(ra[i].test);
			w[nw].runtime = xstrdup(ra[i].runtime);
			w[nw].config = ra[i].config;
			w[nw].identity_a = xstrdup(ra[i].identity);
			w[nw].os_build_a = xstrdup(ra[i].os_build);
			w[nw].session_a = ra[i].session_id;
			nw++;
		}
		note_row(&pa[j], &ra[i]);
		add_row(&w[j].a, &ra[i]);
	}
	for (i = 0; i < nb; i++) {
		if (!workload_row_usable(&rb[i]))
			continue;
		j = find_workload(rep, nw, &rb[i], by_variant);
		if (j == nw) {
			/* count each unpaired workload of B once */
			if (find_workload(repb, nbw, &rb[i], by_variant) == nbw) {
				repb = xrealloc(repb, (nbw + 1) * sizeof(*repb));
				repb[nbw++] = &rb[i];
				(*only_b)++;
			}
			continue;
		}
		if (!w[j].b.nproc) {
			w[j].identity_b = xstrdup(rb[i].identity);
			w[j].os_build_b = xstrdup(rb[i].os_build);
			w[j].session_b = rb[i].session_id;
		}
		note_row(&pb[j], &rb[i]);
		add_row(&w[j].b, &rb[i]);
	}
	has_b = xcalloc(nw + 1, 1);
	for (i = 0; i < nw; i++)
		has_b[i] = w[i].b.nproc > 0;
	if (why)
		*why = why_unpaired(rep, nw, has_b, rb, nb);
	/* the configuration fields that vary among the workloads: in names */
	cfg = xcalloc(nw + 1, sizeof(*cfg));
	rts = xcalloc(nw + 1, sizeof(*rts));
	for (i = 0; i < nw; i++) {
		cfg[i] = w[i].config;
		rts[i] = workload_group_key(w[i].model, w[i].runtime, w[i].test,
					    by_variant ? w[i].variant : NULL);
	}
	vary = workload_distinct_keys(cfg, (const char *const *)rts, nw);
	strv_free(rts);
	/* Keep the workloads with both sides, in baseline order. */
	for (i = k = 0; i < nw; i++) {
		char *words = workload_config_words(w[i].config, vary);

		if (!has_b[i]) {
			(*only_a)++;
			workload_release(&w[i]);
			free(words);
			note_release(&pa[i]);
			note_release(&pb[i]);
			continue;
		}
		w[i].name = xstrfmt("%s%s%s %s%s%s%s", by_variant ? w[i].variant : "",
				    by_variant ? ": " : "",
				    *w[i].model ? w[i].model : w[i].model_label,
				    w[i].test,
				    *words ? " [" : "", words, *words ? "]" : "");
		/* a row without a model name is named by its label (issue
		 * 20: the model file and type), as in name */
		w[i].short_name = xstrfmt("%s%s%s %s", by_variant ?
					  w[i].variant : "", by_variant ?
					  ": " : "", *w[i].model ? w[i].model :
					  w[i].model_label, w[i].test);
		w[i].idents_a = pa[i].nident;
		w[i].idents_b = pb[i].nident;
		w[i].sessions_a = note_sessions(&pa[i]);
		w[i].sessions_b = note_sessions(&pb[i]);
		note_release(&pa[i]);
		note_release(&pb[i]);
		free(words);
		w[k++] = w[i];
	}
	*out = w;
	*n = k;
	w = NULL;
	nw = 0;
	ret = 0;
cleanup:
	workloads_free(w, nw);
	strv_free(vary);
	free(cfg);
	free(has_b);
	free(rep);
	free(repb);
	free(pa);
	free(pb);
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
	free(w->runtime);
	free(w->name);
	free(w->short_name);
	free(w->identity_a);
	free(w->identity_b);
	free(w->os_build_a);
	free(w->os_build_b);
	free(w->sessions_a);
	free(w->sessions_b);
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

/* The floor key of w on side i (0 candidate, 1 baseline). */
static void
noise_key_of(const struct workload *w, int i, struct noise_key *k)
{
	k->identity = i ? w->identity_a : w->identity_b;
	k->model = w->model;
	k->test = w->test;
	k->variant = w->variant;
	k->config = w->config ? w->config->canon : "";
}

double
workload_calibrated(struct store *s, const struct workload *w, double *df)
{
	struct noise_key k;
	double between, within;
	int i, processes = 0;

	if (df)
		*df = 0;
	for (i = 0; i < 2; i++) {
		noise_key_of(w, i, &k);
		if (k.identity && *k.identity &&
		    store_noise_get(s, &k, &between, &within, NULL,
				    &processes) == 1) {
			if (df)
				*df = processes > 1 ? processes - 1 : 0;
			return between;
		}
	}
	return -1;
}

long
workload_floors_elsewhere(struct store *s, const struct workload *w)
{
	struct noise_key k;
	long n = 0, m;
	int i;

	for (i = 0; i < 2; i++) {
		noise_key_of(w, i, &k);
		if (k.identity && *k.identity &&
		    (m = store_noise_others(s, &k)) > n)
			n = m;
	}
	return n;
}

/* ---- calibration groups ----------------------------------------------------- */

static int
same_group(const struct workload_group *g, const struct store_result *r)
{
	return !strcmp(g->identity, r->identity) &&
	       !strcmp(g->target, r->target) &&
	       !strcmp(g->variant, r->variant) &&
	       workload_same_model(g->rep, r) && !strcmp(g->test, r->test) &&
	       same_config(g->config, r->config);
}

/* "variant (stock, shim), flash_attn (0, 1)": what differs between two
 * groups of one model and test (caller frees). */
static char *
group_difference(const struct workload_group *a, const struct workload_group *b)
{
	struct buf d = BUF_INIT;

	if (strcmp(a->variant, b->variant))
		buf_addf(&d, "variant (%s, %s)", a->variant, b->variant);
	if (strcmp(a->target, b->target))
		buf_addf(&d, "%starget (%s, %s)", d.len ? ", " : "", a->target,
			 b->target);
	if (strcmp(a->identity, b->identity))
		buf_addf(&d, "%sfingerprint (%.12s, %.12s)", d.len ? ", " : "",
			 a->identity, b->identity);
	if (!same_config(a->config, b->config)) {
		const struct store_config *c[2] = { a->config, b->config };
		char **keys = workload_varying_keys(c, 2);
		char *wa = workload_config_words(a->config, keys);
		char *wb = workload_config_words(b->config, keys);

		buf_addf(&d, "%sconfiguration (%s; %s)", d.len ? ", " : "",
			 wa, wb);
		free(wa);
		free(wb);
		strv_free(keys);
	}
	return buf_detach(&d, NULL);
}

int
workload_groups(const struct store_result *rows, size_t n,
		struct workload_group **out, size_t *ng)
{
	struct workload_group *gr = NULL;
	size_t i, j, k = 0;

	for (i = 0; i < n; i++) {
		const struct store_result *r = &rows[i];
		struct cmp_side *sd;
		size_t p;

		if (!workload_row_usable(r))
			continue;
		for (j = 0; j < k && !same_group(&gr[j], r); j++)
			;
		if (j == k) {
			gr = xrealloc(gr, (k + 1) * sizeof(*gr));
			memset(&gr[k], 0, sizeof(*gr));
			gr[k].identity = xstrdup(r->identity);
			gr[k].target = xstrdup(r->target);
			gr[k].variant = xstrdup(r->variant);
			gr[k].model = xstrdup(r->model);
			gr[k].test = xstrdup(r->test);
			gr[k].config = r->config;
			gr[k].rep = xmalloc(sizeof(*gr[k].rep));
			*gr[k].rep = *r;
			gr[k].rep->ts = NULL;
			gr[k].rep->n = 0;
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
	for (i = 0; i < k; i++)
		for (j = i + 1; j < k; j++) {
			char *d;

			if (!workload_same_model(gr[i].rep, gr[j].rep) ||
			    strcmp(gr[i].test, gr[j].test))
				continue;
			d = group_difference(&gr[i], &gr[j]);
			error("the selection mixes configurations of '%s %s': "
			      "%s; calibration needs repeats of one "
			      "configuration (narrow it, e.g. with "
			      "variant=NAME or the field that differs)",
			      gr[i].model, gr[i].test, d);
			free(d);
			return RC_USAGE;
		}
	return 0;
}

void
workload_groups_free(struct workload_group *g, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(g[i].identity);
		free(g[i].target);
		free(g[i].variant);
		free(g[i].model);
		free(g[i].test);
		free(g[i].rep);
		cmp_side_release(&g[i].side);
	}
	free(g);
}

void
workload_side_of(const struct store_result *rows, size_t n,
		 const struct workload_group *g, struct cmp_side *side)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (workload_row_usable(&rows[i]) &&
		    workload_same_model(&rows[i], g->rep) &&
		    !strcmp(rows[i].test, g->test) &&
		    same_config(rows[i].config, g->config))
			add_row(side, &rows[i]);
}

/* ---- history ------------------------------------------------------------------ */

struct series_rep {
	const struct store_result *r;
};

static int
same_series(const struct workload_series *x, const struct store_result *rep,
	    const struct store_result *r)
{
	const char *b = r->base_identity ? r->base_identity : "";

	return !strcmp(x->base ? x->base : "", b) &&
	       !strcmp(rep->target, r->target) &&
	       !strcmp(rep->variant, r->variant) && workload_same(rep, r);
}

static int
cmp_point(const void *a, const void *b)
{
	const struct workload_point *x = a, *y = b;
	int c;

	/* undated points keep their store order after the dated ones */
	if (!*x->started != !*y->started)
		return *x->started ? -1 : 1;
	c = strcmp(x->started, y->started);
	if (c)
		return c;
	return (x->session > y->session) - (x->session < y->session);
}

void
workload_series(struct store *s, const struct store_result *rows, size_t n,
		struct workload_series **out, size_t *ns)
{
	const struct store_result **rep = NULL;
	const struct store_config **cfg;
	char **rts;
	char **vary;
	size_t i, j;

	(void)s;
	*out = NULL;
	*ns = 0;
	for (i = 0; i < n; i++) {
		const struct store_result *r = &rows[i];
		struct workload_series *x;
		struct workload_point *pt;

		if (!workload_row_usable(r))
			continue;
		/* rows come grouped: try the last series first */
		j = *ns;
		if (*ns && same_series(&(*out)[*ns - 1], rep[*ns - 1], r))
			j = *ns - 1;
		else
			for (j = 0; j < *ns && !same_series(&(*out)[j], rep[j], r);
			     j++)
				;
		if (j == *ns) {
			*out = xrealloc(*out, (*ns + 1) * sizeof(**out));
			rep = xrealloc(rep, (*ns + 1) * sizeof(*rep));
			x = &(*out)[j];
			memset(x, 0, sizeof(*x));
			rep[j] = r;
			x->base = *r->base_identity ? xstrdup(r->base_identity) :
				  NULL;
			x->model = xstrdup(r->model);
			x->label = xstrdup(*r->model_label ? r->model_label : r->model);
			x->runtime = xstrdup(r->runtime);
			x->test = xstrdup(r->test);
			x->config = r->config;
			(*ns)++;
		}
		x = &(*out)[j];
		/* a session's points: find it (usually the last) */
		pt = NULL;
		if (x->np && x->p[x->np - 1].session == r->session_id)
			pt = &x->p[x->np - 1];
		if (!pt) {
			x->p = xrealloc(x->p, (x->np + 1) * sizeof(*x->p));
			pt = &x->p[x->np++];
			memset(pt, 0, sizeof(*pt));
			pt->session = r->session_id;
			pt->started = xstrdup(r->measured_at);
			pt->os_build = xstrdup(r->os_build);
			pt->last_run = -1;
		}
		if (*r->measured_at && (!*pt->started ||
					strcmp(r->measured_at, pt->started) < 0)) {
			free(pt->started);
			pt->started = xstrdup(r->measured_at);
		}
		pt->x = xrealloc(pt->x, (pt->n + r->n) * sizeof(double));
		memcpy(pt->x + pt->n, r->ts, r->n * sizeof(double));
		pt->n += r->n;
		if (pt->last_run != r->run_id) {
			pt->plen = xrealloc(pt->plen, (pt->nproc + 1) *
					    sizeof(size_t));
			pt->plen[pt->nproc++] = 0;
			pt->last_run = r->run_id;
		}
		pt->plen[pt->nproc - 1] += r->n;
	}
	/* keys name what varies among the series' configurations */
	cfg = xcalloc(*ns + 1, sizeof(*cfg));
	rts = xcalloc(*ns + 1, sizeof(*rts));
	for (j = 0; j < *ns; j++) {
		char *tv = xstrfmt("%s/%s", rep[j]->target, rep[j]->variant);

		cfg[j] = (*out)[j].config;
		rts[j] = workload_group_key((*out)[j].model, (*out)[j].runtime,
					    (*out)[j].test, tv);
		free(tv);
	}
	vary = workload_distinct_keys(cfg, (const char *const *)rts, *ns);
	strv_free(rts);
	for (j = 0; j < *ns; j++) {
		struct workload_series *x = &(*out)[j];
		char *words = workload_config_words(x->config, vary);

		x->key = xstrfmt("%s/%s %s %s%s%s%s [%.8s]", rep[j]->target,
				 rep[j]->variant, *x->model ? x->model : x->label,
				 x->test,
				 *words ? " (" : "", words, *words ? ")" : "",
				 x->base ? x->base : "-");
		free(words);
		xqsort(x->p, x->np, sizeof(*x->p), cmp_point);
	}
	strv_free(vary);
	free(cfg);
	free(rep);
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
			free(sr[j].p[k].plen);
		}
		free(sr[j].p);
		free(sr[j].key);
		free(sr[j].base);
		free(sr[j].model);
		free(sr[j].label);
		free(sr[j].runtime);
		free(sr[j].test);
	}
	free(sr);
}

void
workload_changepoints(const struct workload_series *sr, double p,
		      struct cp_change **cp, size_t *ncp)
{
	struct cp_session *ss = xcalloc(sr->np + 1, sizeof(*ss));
	size_t k;

	for (k = 0; k < sr->np; k++) {
		ss[k].x = sr->p[k].x;
		ss[k].n = sr->p[k].n;
		ss[k].plen = sr->p[k].plen;
		ss[k].nproc = sr->p[k].nproc;
	}
	cp_sessions(ss, sr->np, p, cp, ncp);
	free(ss);
}

/* ---- compare and history -------------------------------------------------------- */

/* Loads a selection for a verdict: RC_USAGE bad, RC_NOTHING nothing
 * counts (error()). */
static int
load_counted(struct store *s, const struct selection *sel,
	     struct workload_rows *w)
{
	int rc = workload_load(s, sel, w);
	size_t i;

	if (rc < 0)
		return rc;
	for (i = 0; i < w->n && !workload_row_usable(&w->r[i]); i++)
		;
	if (i == w->n) {
		char *m = workload_nothing_words(w);

		error("%s", m);
		free(m);
		return RC_NOTHING;
	}
	return 0;
}

/*
 * load_counted() of a, then of b, with the samples of both read in one
 * pass: the same rows, and the same error first, as the two calls.
 */
static int
load_counted_pair(struct store *s, const struct selection *a,
		  const struct selection *b, struct workload_rows *wa,
		  struct workload_rows *wb)
{
	struct workload_rows *w[2] = { wa, wb };
	const struct selection *sel[2] = { a, b };
	int rc, k;
	size_t i;

	rc = store_query_results_pair(s, a, b, &wa->r, &wa->n, &wb->r, &wb->n);
	if (rc == 1) {        /* an unknown key: said in order, one by one */
		rc = load_counted(s, a, wa);
		return rc == 0 ? load_counted(s, b, wb) : rc;
	}
	if (rc < 0)
		return rc;
	for (k = 0; k < 2; k++) {
		w[k]->text = xstrdup(sel[k]->text ? sel[k]->text : "");
		w[k]->include = sel[k]->include;
		rc = store_query_left_out(s, sel[k], &w[k]->lo, &w[k]->nlo);
		if (rc < 0)
			return rc;
		for (i = 0; i < w[k]->n && !workload_row_usable(&w[k]->r[i]); i++)
			;
		if (i == w[k]->n) {
			char *m = workload_nothing_words(w[k]);

			error("%s", m);
			free(m);
			return RC_NOTHING;
		}
	}
	return 0;
}

static char *
join_words(const char *a, const char *b)
{
	return xstrfmt("%s%s%s", a, *a && *b ? "; " : "", b);
}

int
workload_compare(struct store *s, const struct selection *a,
		 const struct selection *b, const struct cmp_opts *o,
		 struct workload_comparison *out)
{
	struct workload_rows ra, rb;
	char *why = NULL, *la, *lb, *ia, *ib;
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	/* both selections from one snapshot of the store */
	if (store_read_begin(s) < 0)
		return -1;
	ret = load_counted_pair(s, a, b, &ra, &rb);
	store_read_end(s);
	if (ret < 0)
		goto cleanup;
	la = workload_left_out_words(&ra);
	lb = workload_left_out_words(&rb);
	out->left_out = join_words(la, lb);
	free(la);
	free(lb);
	ia = workload_included_words(ra.r, ra.n);
	ib = workload_included_words(rb.r, rb.n);
	out->included = join_words(ia, ib);
	free(ia);
	free(ib);
	ret = workload_match(ra.r, ra.n, rb.r, rb.n, &out->w, &out->n,
			     &out->only_a, &out->only_b, &why);
	if (ret < 0)
		goto cleanup;
	if (!out->n) {
		error("nothing comparable: %zu workloads only in '%s', %zu only "
		      "in '%s'%s%s", out->only_a, ra.text, out->only_b, rb.text,
		      why && *why ? "; " : "", why ? why : "");
		ret = WORKLOAD_INCOMPARABLE;
		goto cleanup;
	}
	out->r = xcalloc(out->n, sizeof(*out->r));
	out->ok = xcalloc(out->n, sizeof(*out->ok));
	for (i = 0; i < out->n; i++) {
		struct cmp_opts wo = *o;

		wo.between_cv = workload_calibrated(s, &out->w[i],
						    &wo.between_df);
		out->ok[i] = cmp_compute(&out->w[i].a, &out->w[i].b, &wo,
					 &out->r[i]) == 0;
		if (!out->ok[i])
			error("workload '%s' skipped", out->w[i].name);
	}
	ret = 0;
cleanup:
	free(why);
	workload_rows_release(&ra);
	workload_rows_release(&rb);
	return ret;
}

void
workload_comparison_release(struct workload_comparison *c)
{
	workloads_free(c->w, c->n);
	free(c->r);
	free(c->ok);
	free(c->left_out);
	free(c->included);
	memset(c, 0, sizeof(*c));
}

int
workload_history(struct store *s, const struct selection *selection,
		 double p, struct workload_history *h)
{
	struct workload_rows w;
	size_t j, k;
	int ret;

	memset(h, 0, sizeof(*h));
	ret = load_counted(s, selection, &w);
	if (ret < 0) {
		workload_rows_release(&w);
		return ret;
	}
	h->left_out = workload_left_out_words(&w);
	h->included = workload_included_words(w.r, w.n);
	workload_series(s, w.r, w.n, &h->sr, &h->ns);
	workload_rows_release(&w);
	h->median = xcalloc(h->ns + 1, sizeof(*h->median));
	h->cp = xcalloc(h->ns + 1, sizeof(*h->cp));
	h->ncp = xcalloc(h->ns + 1, sizeof(*h->ncp));
	for (j = 0; j < h->ns; j++) {
		const struct workload_series *sr = &h->sr[j];

		h->median[j] = xmalloc((sr->np + 1) * sizeof(double));
		for (k = 0; k < sr->np; k++)
			h->median[j][k] = stats_median(sr->p[k].x, sr->p[k].n);
		workload_changepoints(sr, p, &h->cp[j], &h->ncp[j]);
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
	free(h->left_out);
	free(h->included);
	workload_series_free(h->sr, h->ns);
	memset(h, 0, sizeof(*h));
}
