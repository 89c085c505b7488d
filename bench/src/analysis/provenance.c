#define _POSIX_C_SOURCE 200809L
#include "analysis/provenance.h"
#include "analysis/table.h"
#include "evidence/fingerprint.h"
#include "evidence/state.h"
#include "evidence/runrec.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char not_recorded[] = "not recorded";

/* ---- building ------------------------------------------------------------ */

static int
have_id(const int64_t *v, size_t n, int64_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == id)
			return 1;
	return 0;
}

static int64_t *
push_id(int64_t *v, size_t *n, int64_t id)
{
	/* ids come grouped: the last one first */
	if ((*n && v[*n - 1] == id) || have_id(v, *n, id))
		return v;
	v = xrealloc(v, (*n + 1) * sizeof(*v));
	v[(*n)++] = id;
	return v;
}

static int
cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* ---- large sets: sorted arrays instead of scans (10,000 sessions) -------- */

/* Appends id unless it is the last one (callers' ids come grouped). */
static int64_t *
append_id(int64_t *v, size_t *n, int64_t id)
{
	if (*n && v[*n - 1] == id)
		return v;
	v = xrealloc(v, (*n + 1) * sizeof(*v));
	v[(*n)++] = id;
	return v;
}

/* Sorts v ascending and drops repeats. */
static void
sort_unique(int64_t *v, size_t *n)
{
	size_t i, k = 0;

	if (!*n)
		return;
	xqsort(v, *n, sizeof(*v), cmp_id);
	for (i = 1; i < *n; i++)
		if (v[i] != v[k])
			v[++k] = v[i];
	*n = k + 1;
}

/* Binary search in a sorted v. */
static int
have_sorted(const int64_t *v, size_t n, int64_t id)
{
	return n && bsearch(&id, v, n, sizeof(*v), cmp_id) != NULL;
}

struct id_pos {
	int64_t id;
	size_t pos;
};

static int
cmp_id_only(const void *a, const void *b)
{
	const struct id_pos *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int
cmp_id_pos(const void *a, const void *b)
{
	const struct id_pos *x = a, *y = b;

	if (x->id != y->id)
		return (x->id > y->id) - (x->id < y->id);
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Drops the later repeats of v, keeping the order of first appearance. */
static void
unique_keep_first(int64_t *v, size_t *n)
{
	struct id_pos *ip = xcalloc(*n + 1, sizeof(*ip));
	char *drop = xcalloc(*n + 1, 1);
	size_t i, k = 0;

	for (i = 0; i < *n; i++) {
		ip[i].id = v[i];
		ip[i].pos = i;
	}
	xqsort(ip, *n, sizeof(*ip), cmp_id_pos);
	for (i = 1; i < *n; i++)
		if (ip[i].id == ip[i - 1].id)
			drop[ip[i].pos] = 1;
	for (i = 0; i < *n; i++)
		if (!drop[i])
			v[k++] = v[i];
	*n = k;
	free(ip);
	free(drop);
}

/* A fingerprint fact as text ("" when absent or null). */
static char *
fact(const struct fp_fact *f)
{
	if (f && f->type == FP_STR)
		return xstrdup(f->str);
	if (f && f->type == FP_NUM) {
		char n[64];
		fmt_num(n, sizeof(n), f->num, 6);
		return xstrdup(n);
	}
	if (f && f->type == FP_BOOL)
		return xstrdup(f->b ? "true" : "false");
	return xstrdup("");
}

/* Appends "SEP TEXT" (TEXT alone at the start) when text is not empty. */
static void
part(struct buf *b, const char *text)
{
	if (!*text)
		return;
	if (b->len)
		buf_adds(b, " · ");
	buf_adds(b, text);
}

static void
part_fact(struct buf *b, const struct fp_fact *f, const char *fmt)
{
	char *v = fact(f);

	if (*v) {
		char *t = xstrfmt(fmt, v);
		part(b, t);
		free(t);
	}
	free(v);
}

/* The summaries of a fingerprint the tables show. */
static void
env_summaries(struct prov_env *e, const char *build_fallback)
{
	struct fingerprint fp = FINGERPRINT_INIT;
	struct buf b = BUF_INIT;
	char *v, *w;
	double mem;

	/* an unreadable fingerprint shows as "not recorded" */
	error_silent++;
	if (fingerprint_from_text(&fp, e->fingerprint_json, NULL) < 0)
		fingerprint_release(&fp);
	error_silent--;
	e->is_vm = fp.is_vm;
	/* hardware */
	v = fact(fp.hw_model);
	if (*v && fp.is_vm == 1) {
		w = xstrfmt("%s (VM)", v);
		part(&b, w);
		free(w);
	} else if (*v) {
		part(&b, v);
	} else if (fp.is_vm == 1) {
		part(&b, "virtual machine");
	}
	free(v);
	part_fact(&b, fp.cpu_model, "%s");
	part_fact(&b, fp.cpu_cores, "%s cores");
	mem = fp.memory_bytes && fp.memory_bytes->type == FP_NUM ?
		fp.memory_bytes->num : NAN;
	if (isnan(mem)) {
		v = fact(fp.memory_bytes);
		if (*v && parse_double(v, &mem) < 0)
			mem = NAN;
		free(v);
	}
	if (mem > 0) {
		char n[64];
		fmt_num(n, sizeof(n), mem / (1024.0 * 1024 * 1024), 1);
		w = xstrfmt("%s GiB", n);
		part(&b, w);
		free(w);
	}
	e->hardware = buf_detach(&b, NULL);
	/* the virtual machine and what limits injection */
	part_fact(&b, fp.vm_image, "image %s");
	part_fact(&b, fp.lume_version, "lume %s");
	part_fact(&b, fp.tart_version, "tart %s");
	part_fact(&b, fp.sip, "SIP %s");
	e->vm = buf_detach(&b, NULL);
	/* GPU */
	part_fact(&b, fp.gpu, "%s");
	part_fact(&b, fp.gpu_cores, "%s GPU cores");
	e->gpu = buf_detach(&b, NULL);
	/* OS: name version (build), else the kernel */
	part_fact(&b, fp.os_name, "%s");
	v = fact(fp.os_version);
	if (*v) {
		if (b.len)
			buf_addch(&b, ' ');
		buf_adds(&b, v);
	}
	free(v);
	v = fact(fp.os_build);
	if (*v)
		buf_addf(&b, "%s(build %s)", b.len ? " " : "", v);
	else
		part_fact(&b, fp.kernel, "kernel %s");
	free(v);
	e->os = buf_detach(&b, NULL);
	e->llama_build = fact(fp.llama_build);
	if (!*e->llama_build && build_fallback && *build_fallback) {
		free(e->llama_build);
		e->llama_build = xstrfmt("%s (from llama-bench output)",
					 build_fallback);
	}
	e->llama_bench_sha256 = fact(fp.llama_bench_sha256);
	e->shim_sha256 = fact(fp.shim_sha256);
	fingerprint_release(&fp);
}

static void
warn(struct provenance *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
warn(struct provenance *p, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	/* one line each, whatever the stored text holds */
	for (i = 0; i < b.len; i++)
		if (b.buf[i] == '\n' || b.buf[i] == '\r' || b.buf[i] == '\t')
			b.buf[i] = ' ';
	p->warnings = strv_push(p->warnings, &p->nwarnings,
				buf_detach(&b, NULL));
}

/* The session's own warnings (a JSON array of strings). */
static char **
session_warnings(const char *json)
{
	struct json *v;
	const struct json *it;
	char **w = xcalloc(1, sizeof(char *));
	size_t n = 0;

	if (!json || !*json)
		return w;
	error_silent++;
	v = json_parse(json, strlen(json), "warnings");
	error_silent--;
	if (json_type(v) == JSON_ARRAY) {
		JSON_FOR_EACH(it, v) {
			if (json_str(it))
				w = strv_push(w, &n, xstrdup(json_str(it)));
			else
				w = strv_push(w, &n, json_print(it, 0));
		}
	} else {
		w = strv_push(w, &n, xstrdup(json));
	}
	json_free(v);
	return w;
}

static void
date_range(char **from, char **to, const char *d)
{
	if (!*d)
		return;
	if (!**from || strcmp(d, *from) < 0) {
		free(*from);
		*from = xstrdup(d);
	}
	if (!**to || strcmp(d, *to) > 0) {
		free(*to);
		*to = xstrdup(d);
	}
}

static int
add_session(struct store *s, struct provenance *p, int64_t sid,
	    const struct store_run_facts *f, size_t nf,
	    const int64_t *excluded, size_t nexcluded)
{
	struct session_rec rec;
	struct prov_session *ps;
	size_t i, k;
	int rc;

	memset(&rec, 0, sizeof(rec));
	rc = store_session_get(s, sid, &rec);
	if (rc < 0)
		return -1;
	p->s = xrealloc(p->s, (p->ns + 1) * sizeof(*p->s));
	ps = &p->s[p->ns++];
	memset(ps, 0, sizeof(*ps));
	ps->id = sid;
	ps->kind = xstrdup(rc && rec.kind ? rec.kind : "");
	ps->label = xstrdup(rc && rec.label ? rec.label : "");
	ps->status = xstrdup(rc && rec.status ?
			     store_session_shown_status(s, sid, rec.status) : "");
	ps->source = xstrdup(rc && rec.source ? rec.source : "");
	ps->stored_at = xstrdup(rc && rec.started_at ? rec.started_at : "");
	ps->tampered = rc && rec.tampered;
	ps->warnings = session_warnings(rc ? rec.warnings_json : NULL);
	ps->measured_from = xstrdup("");
	ps->measured_to = xstrdup("");
	for (i = 0; i < nf; i++) {
		if (f[i].session_id != sid)
			continue;
		ps->runs++;
		if (!*f[i].started_at)
			ps->undated++;
		date_range(&ps->measured_from, &ps->measured_to,
			   f[i].started_at);
		date_range(&p->measured_from, &p->measured_to,
			   f[i].started_at);
		ps->excluded += have_sorted(excluded, nexcluded, f[i].id);
	}
	if (rc)
		rec_release(sessionrec_fields, sessionrec_nfields, &rec);

	if (!rc)
		warn(p, "session %lld: not in the store any more",
		     (long long)sid);
	if (ps->tampered)
		warn(p, "session %lld: TAMPERED: imported although its files "
		     "failed their checksums (--allow-tampered); its numbers "
		     "are not verified evidence", (long long)sid);
	for (k = 0; ps->warnings[k]; k++)
		warn(p, "session %lld: %s", (long long)sid, ps->warnings[k]);
	if (rc && session_state_of(ps->status) != SESSION_STATE_OK)
		warn(p, "session %lld: status '%s', not 'ok': it may hold "
		     "failed or incomplete runs", (long long)sid, ps->status);
	if (ps->excluded)
		warn(p, "session %lld: %zu run%s excluded: injection not "
		     "verified", (long long)sid, ps->excluded,
		     ps->excluded > 1 ? "s" : "");
	return 0;
}

/*
 * builds[0..nb): per environment, its first row (in row order) with a
 * llama.cpp build, sorted by environment id.
 */
static int
add_envs(struct store *s, struct provenance *p, int64_t sid,
	 const int64_t *envs, size_t nenvs, const struct store_result *rows,
	 const struct id_pos *builds, size_t nb,
	 const struct store_run_facts *f, size_t nf)
{
	struct env_rec *er;
	size_t n, i, j;

	if (store_envs_get(s, sid, &er, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		struct prov_env *e;
		const char *build = NULL;
		struct id_pos key = { er[i].id, 0 };
		const struct id_pos *hit;

		if (!have_sorted(envs, nenvs, er[i].id))
			continue;
		hit = nb ? bsearch(&key, builds, nb, sizeof(*builds),
				   cmp_id_only) : NULL;
		if (hit)
			build = rows[hit->pos].build_commit;
		p->e = xrealloc(p->e, (p->ne + 1) * sizeof(*p->e));
		e = &p->e[p->ne++];
		memset(e, 0, sizeof(*e));
		e->session = sid;
		e->id = er[i].id;
		e->target = xstrdup(er[i].target);
		e->fingerprint_json = xstrdup(er[i].fingerprint_json);
		env_summaries(e, build);
		for (j = 0; j < nf; j++)
			e->shim_runs += f[j].environment_id == e->id &&
					!strcmp(f[j].role, "shim");
	}
	for (i = 0; i < n; i++)
		env_rec_release(&er[i]);
	free(er);
	return 0;
}

static void
add_model(struct provenance *p, const struct store_run_facts *f)
{
	struct prov_model *m;
	size_t i;

	if (!*f->model)
		return;
	for (i = 0; i < p->nm; i++) {
		m = &p->m[i];
		if (!strcmp(m->name, f->model) &&
		    !strcmp(m->runtime, f->runtime) &&
		    !strcmp(m->sha256, f->model_sha256)) {
			m->sessions = push_id(m->sessions, &m->nsessions,
					      f->session_id);
			if (!*m->file && *f->model_file) {
				free(m->file);
				m->file = xstrdup(f->model_file);
			}
			return;
		}
	}
	p->m = xrealloc(p->m, (p->nm + 1) * sizeof(*p->m));
	m = &p->m[p->nm++];
	memset(m, 0, sizeof(*m));
	m->name = xstrdup(f->model);
	m->label = xstrdup(*f->model_label ? f->model_label : f->model);
	m->runtime = xstrdup(f->runtime);
	m->file = xstrdup(f->model_file);
	m->sha256 = xstrdup(f->model_sha256);
	m->sessions = push_id(NULL, &m->nsessions, f->session_id);
}

int
provenance_from_results(struct store *s, const struct store_result *rows,
			size_t n, struct provenance **out)
{
	struct provenance *p = xcalloc(1, sizeof(*p));
	struct store_run_facts *f = NULL;
	int64_t *runs = NULL, *excluded = NULL, *sessions = NULL, *envs = NULL;
	struct id_pos *builds = NULL, *byses = NULL;
	struct store_run_facts *sub = NULL;
	size_t nruns = 0, nex = 0, nsessions = 0, nenvs = 0, nb = 0, i, k;
	int ret = -1;

	*out = NULL;
	p->warnings = xcalloc(1, sizeof(char *));
	p->measured_from = xstrdup("");
	p->measured_to = xstrdup("");
	for (i = 0; i < n; i++) {
		if (nruns && runs[nruns - 1] == rows[i].run_id)
			continue;
		runs = append_id(runs, &nruns, rows[i].run_id);
		if (verify_state_of(rows[i].verification) == VERIFY_UNVERIFIED)
			excluded = append_id(excluded, &nex, rows[i].run_id);
	}
	unique_keep_first(runs, &nruns);
	sort_unique(excluded, &nex);
	if (store_run_facts(s, runs, nruns, &f) < 0)
		goto cleanup;
	for (i = 0; i < nruns; i++) {
		if (!f[i].id)
			continue;
		sessions = append_id(sessions, &nsessions, f[i].session_id);
		if (f[i].environment_id)
			envs = append_id(envs, &nenvs, f[i].environment_id);
		add_model(p, &f[i]);
	}
	sort_unique(sessions, &nsessions);
	sort_unique(envs, &nenvs);
	/* each environment's first row with a build; each session's facts */
	builds = xcalloc(n + 1, sizeof(*builds));
	for (i = 0; i < n; i++)
		if (rows[i].environment_id && rows[i].build_commit &&
		    *rows[i].build_commit) {
			builds[nb].id = rows[i].environment_id;
			builds[nb++].pos = i;
		}
	xqsort(builds, nb, sizeof(*builds), cmp_id_pos);
	for (i = 0, k = 0; i < nb; i++)
		if (!k || builds[i].id != builds[k - 1].id)
			builds[k++] = builds[i];
	nb = k;
	byses = xcalloc(nruns + 1, sizeof(*byses));
	for (i = 0; i < nruns; i++) {
		byses[i].id = f[i].session_id;
		byses[i].pos = i;
	}
	xqsort(byses, nruns, sizeof(*byses), cmp_id_pos);
	sub = xcalloc(nruns + 1, sizeof(*sub));
	for (i = 0, k = 0; i < nsessions; i++) {
		size_t nsub = 0;

		while (k < nruns && byses[k].id < sessions[i])
			k++;
		while (k < nruns && byses[k].id == sessions[i])
			sub[nsub++] = f[byses[k++].pos];   /* shallow, in order */
		if (add_session(s, p, sessions[i], sub, nsub, excluded, nex) < 0 ||
		    add_envs(s, p, sessions[i], envs, nenvs, rows, builds, nb,
			     sub, nsub) < 0)
			goto cleanup;
	}
	*out = p;
	p = NULL;
	ret = 0;
cleanup:
	provenance_free(p);
	store_run_facts_free(f, nruns);
	free(builds);
	free(byses);
	free(sub);
	free(runs);
	free(excluded);
	free(sessions);
	free(envs);
	return ret;
}

/* The same for what a selection selects (parsed, or text; NULL: all). */
static int
provenance_build(struct store *s, const struct selection *sel,
		 struct provenance **out)
{
	struct store_result *rows;
	size_t n;
	int ret;

	*out = NULL;
	if (store_query_results(s, sel, &rows, &n) < 0)
		return -1;
	ret = provenance_from_results(s, rows, n, out);
	store_results_free(rows, n);
	return ret;
}

int
provenance_select(struct store *s, const char *selection,
		  struct provenance **out)
{
	struct selection sel;
	int ret;

	*out = NULL;
	if (selection_parse(selection, &sel) < 0)
		return -1;
	ret = provenance_build(s, &sel, out);
	selection_free(&sel);
	return ret;
}

void
provenance_free(struct provenance *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->ns; i++) {
		struct prov_session *s = &p->s[i];
		free(s->kind);
		free(s->label);
		free(s->status);
		free(s->source);
		free(s->stored_at);
		free(s->measured_from);
		free(s->measured_to);
		strv_free(s->warnings);
	}
	for (i = 0; i < p->ne; i++) {
		struct prov_env *e = &p->e[i];
		free(e->target);
		free(e->fingerprint_json);
		free(e->hardware);
		free(e->gpu);
		free(e->os);
		free(e->vm);
		free(e->llama_build);
		free(e->llama_bench_sha256);
		free(e->shim_sha256);
	}
	for (i = 0; i < p->nm; i++) {
		struct prov_model *m = &p->m[i];
		free(m->name);
		free(m->label);
		free(m->runtime);
		free(m->file);
		free(m->sha256);
		free(m->sessions);
	}
	free(p->s);
	free(p->e);
	free(p->m);
	free(p->measured_from);
	free(p->measured_to);
	strv_free(p->warnings);
	free(p);
}

/* ---- tables --------------------------------------------------------------- */

static const char *
or_not_recorded(const char *s)
{
	return s && *s ? s : not_recorded;
}

/* "FROM – TO", "FROM", or "not recorded"; undated runs counted. */
static char *
measured(const struct prov_session *s)
{
	struct buf b = BUF_INIT;

	if (!*s->measured_from)
		buf_adds(&b, not_recorded);
	else if (!strcmp(s->measured_from, s->measured_to))
		buf_adds(&b, s->measured_from);
	else
		buf_addf(&b, "%s – %s", s->measured_from, s->measured_to);
	if (s->undated && s->undated < s->runs)
		buf_addf(&b, " (%zu of %zu runs without a date)", s->undated,
			 s->runs);
	return buf_detach(&b, NULL);
}

static char *
id_list(const int64_t *v, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < n; i++)
		buf_addf(&b, "%s%lld", i ? ", " : "", (long long)v[i]);
	return buf_detach(&b, NULL);
}

static const char *
runtime_name(const char *rt)
{
	return !strcmp(rt, "mlx-lm") ? "MLX-LM" : rt;
}

/* Targets: environments with the same summaries are one row. */
static void
targets_table(const struct provenance *p, struct table *t)
{
	static const char *const cols[] = {
		"Target", "Sessions", "Hardware", "GPU", "OS", "VM, SIP",
		"llama.cpp build", "llama-bench SHA-256", "Shim SHA-256",
	};
	size_t i, j, *group = xcalloc(p->ne ? p->ne : 1, sizeof(size_t));

	table_init(t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < p->ne; i++) {
		const struct prov_env *a = &p->e[i];

		group[i] = i;
		for (j = 0; j < i; j++) {
			const struct prov_env *b = &p->e[j];
			if (group[j] == j && !strcmp(a->target, b->target) &&
			    !strcmp(a->hardware, b->hardware) &&
			    !strcmp(a->gpu, b->gpu) && !strcmp(a->os, b->os) &&
			    !strcmp(a->vm, b->vm) &&
			    !a->shim_runs == !b->shim_runs &&
			    !strcmp(a->llama_build, b->llama_build) &&
			    !strcmp(a->llama_bench_sha256,
				    b->llama_bench_sha256) &&
			    !strcmp(a->shim_sha256, b->shim_sha256)) {
				group[i] = j;
				break;
			}
		}
	}
	for (i = 0; i < p->ne; i++) {
		const struct prov_env *e = &p->e[i];
		int64_t *ids = NULL;
		size_t nids = 0;
		char *sessions;
		const char *row[ARRAY_SIZE(cols)];

		if (group[i] != i)
			continue;
		for (j = i; j < p->ne; j++)
			if (group[j] == i)
				ids = push_id(ids, &nids, p->e[j].session);
		sessions = id_list(ids, nids);
		row[0] = e->target;
		row[1] = sessions;
		row[2] = or_not_recorded(e->hardware);
		row[3] = or_not_recorded(e->gpu);
		row[4] = or_not_recorded(e->os);
		row[5] = *e->vm ? e->vm : "–";
		row[6] = or_not_recorded(e->llama_build);
		row[7] = or_not_recorded(e->llama_bench_sha256);
		/* a shim ran here: its hash is missing, not absent */
		row[8] = *e->shim_sha256 ? e->shim_sha256 :
			e->shim_runs ? not_recorded : "–";
		table_add_row(t, row);
		free(sessions);
		free(ids);
	}
	free(group);
}

/* The three tables the renderers show (table_release() each). */
static void
provenance_tables(const struct provenance *p, struct table *sessions,
		  struct table *targets, struct table *models)
{
	static const char *const scols[] = {
		"Session#", "Label", "Status", "Tampered",
		"Measured (UTC, from its runs)", "Started (UTC)", "Runs#",
		"Excluded#",
	};
	static const char *const mcols[] = {
		"Model", "Runtime", "File", "SHA-256", "Sessions",
	};
	size_t i;

	table_init(sessions, ARRAY_SIZE(scols), scols);
	for (i = 0; i < p->ns; i++) {
		const struct prov_session *s = &p->s[i];
		char id[32], runs[32], ex[32], *m = measured(s);
		const char *row[ARRAY_SIZE(scols)];

		snprintf(id, sizeof(id), "%lld", (long long)s->id);
		snprintf(runs, sizeof(runs), "%zu", s->runs);
		snprintf(ex, sizeof(ex), "%zu", s->excluded);
		row[0] = id;
		row[1] = or_not_recorded(s->label);
		row[2] = s->status;
		row[3] = s->tampered ? "YES: not verified evidence" : "no";
		row[4] = m;
		row[5] = or_not_recorded(s->stored_at);
		row[6] = runs;
		row[7] = ex;
		table_add_row(sessions, row);
		free(m);
	}
	targets_table(p, targets);
	table_init(models, ARRAY_SIZE(mcols), mcols);
	for (i = 0; i < p->nm; i++) {
		const struct prov_model *m = &p->m[i];
		char *ids = id_list(m->sessions, m->nsessions);
		const char *row[ARRAY_SIZE(mcols)];

		row[0] = m->label;
		row[1] = runtime_name(m->runtime);
		row[2] = or_not_recorded(m->file);
		row[3] = or_not_recorded(m->sha256);
		row[4] = ids;
		table_add_row(models, row);
		free(ids);
	}
}

/* ---- renderers ------------------------------------------------------------- */

static const char default_title[] = "Provenance: who and what was measured";

static void
md_heading(struct buf *out, int level, const char *title)
{
	int i;

	if (level < 1)
		level = 1;
	if (level > 6)
		level = 6;
	for (i = 0; i < level; i++)
		buf_addch(out, '#');
	buf_addf(out, " %s\n\n", title);
}

/* Text for a Markdown line: no line breaks. */
static void
md_line(struct buf *out, const char *s)
{
	for (; *s; s++)
		buf_addch(out, *s == '\n' || *s == '\r' ? ' ' : *s);
}

void
provenance_render_md(const struct provenance *p, const char *title,
		     int level, struct buf *out)
{
	struct table ts, tt, tm;
	size_t i;

	md_heading(out, level, title ? title : default_title);
	if (!p || !p->ns) {
		buf_adds(out, "No stored results selected: nothing was "
			 "measured.\n");
		return;
	}
	for (i = 0; i < p->nwarnings; i++) {
		buf_adds(out, "- **Warning:** ");
		md_line(out, p->warnings[i]);
		buf_addch(out, '\n');
	}
	if (p->nwarnings)
		buf_addch(out, '\n');
	if (*p->measured_from && !strcmp(p->measured_from, p->measured_to))
		buf_addf(out, "Measured %s (UTC, the date of the runs "
			 "themselves).\n\n", p->measured_from);
	else if (*p->measured_from)
		buf_addf(out, "Measured %s – %s (UTC, the dates of the runs "
			 "themselves).\n\n", p->measured_from, p->measured_to);
	else
		buf_adds(out, "Measured: no run carries a measurement date.\n\n");
	provenance_tables(p, &ts, &tt, &tm);
	md_heading(out, level + 1, "Sessions");
	table_render_md(&ts, out);
	buf_addch(out, '\n');
	md_heading(out, level + 1, "Targets");
	if (tt.nrows)
		table_render_md(&tt, out);
	else
		buf_adds(out, "No fingerprint was stored for these runs.\n");
	buf_addch(out, '\n');
	md_heading(out, level + 1, "Models");
	if (tm.nrows)
		table_render_md(&tm, out);
	else
		buf_adds(out, "No model was recorded for these runs.\n");
	table_release(&ts);
	table_release(&tt);
	table_release(&tm);
}

void
provenance_render_html(const struct provenance *p, const char *title,
		       const char *id, struct buf *out)
{
	struct table ts, tt, tm;
	size_t i;

	buf_adds(out, "<section class=\"provenance\" id=\"");
	html_escape(out, id ? id : "provenance");
	buf_adds(out, "\">\n<h2>");
	html_escape(out, title ? title : default_title);
	buf_adds(out, "</h2>\n");
	if (!p || !p->ns) {
		buf_adds(out, "<p>No stored results selected: nothing was "
			 "measured.</p>\n</section>\n");
		return;
	}
	if (p->nwarnings) {
		buf_adds(out, "<ul class=\"warnings\">\n");
		for (i = 0; i < p->nwarnings; i++) {
			buf_adds(out, "<li><strong>Warning:</strong> ");
			html_escape(out, p->warnings[i]);
			buf_adds(out, "</li>\n");
		}
		buf_adds(out, "</ul>\n");
	}
	buf_adds(out, "<p>");
	if (*p->measured_from) {
		buf_adds(out, "Measured ");
		html_escape(out, p->measured_from);
		if (strcmp(p->measured_from, p->measured_to)) {
			buf_adds(out, " – ");
			html_escape(out, p->measured_to);
		}
		buf_adds(out, " (UTC, from the runs themselves).");
	} else {
		buf_adds(out, "Measured: no run carries a measurement date.");
	}
	buf_adds(out, "</p>\n");
	provenance_tables(p, &ts, &tt, &tm);
	buf_adds(out, "<h3>Sessions</h3>\n");
	table_render_html(&ts, out);
	buf_adds(out, "<h3>Targets</h3>\n");
	if (tt.nrows)
		table_render_html(&tt, out);
	else
		buf_adds(out, "<p>No fingerprint was stored for these runs.</p>\n");
	buf_adds(out, "<h3>Models</h3>\n");
	if (tm.nrows)
		table_render_html(&tm, out);
	else
		buf_adds(out, "<p>No model was recorded for these runs.</p>\n");
	buf_adds(out, "</section>\n");
	table_release(&ts);
	table_release(&tt);
	table_release(&tm);
}

/* A string, or null when empty. */
static void
kstr_or_null(struct jw *w, const char *key, const char *s)
{
	if (s && *s)
		jw_kstr(w, key, s);
	else
		jw_knull(w, key);
}

void
provenance_json(const struct provenance *p, struct jw *w)
{
	size_t i, k;

	jw_object(w);
	jw_key(w, "warnings");
	jw_array(w);
	for (i = 0; p && i < p->nwarnings; i++)
		jw_str(w, p->warnings[i]);
	jw_end(w);
	kstr_or_null(w, "measured_from", p ? p->measured_from : NULL);
	kstr_or_null(w, "measured_to", p ? p->measured_to : NULL);
	jw_key(w, "sessions");
	jw_array(w);
	for (i = 0; p && i < p->ns; i++) {
		const struct prov_session *s = &p->s[i];

		jw_object(w);
		jw_kint(w, "id", s->id);
		kstr_or_null(w, "label", s->label);
		jw_kstr(w, "status", s->status);
		jw_kbool(w, "tampered", s->tampered);
		kstr_or_null(w, "started_at", s->stored_at);
		kstr_or_null(w, "measured_from", s->measured_from);
		kstr_or_null(w, "measured_to", s->measured_to);
		jw_kint(w, "runs", (int64_t)s->runs);
		jw_kint(w, "undated_runs", (int64_t)s->undated);
		jw_kint(w, "excluded_runs", (int64_t)s->excluded);
		jw_key(w, "warnings");
		jw_array(w);
		for (k = 0; s->warnings[k]; k++)
			jw_str(w, s->warnings[k]);
		jw_end(w);
		jw_end(w);
	}
	jw_end(w);
	jw_key(w, "environments");
	jw_array(w);
	for (i = 0; p && i < p->ne; i++) {
		const struct prov_env *e = &p->e[i];

		jw_object(w);
		jw_kint(w, "session", e->session);
		jw_kstr(w, "target", e->target);
		kstr_or_null(w, "hardware", e->hardware);
		kstr_or_null(w, "gpu", e->gpu);
		kstr_or_null(w, "os", e->os);
		kstr_or_null(w, "vm", e->vm);
		kstr_or_null(w, "llama_build", e->llama_build);
		kstr_or_null(w, "llama_bench_sha256", e->llama_bench_sha256);
		kstr_or_null(w, "shim_sha256", e->shim_sha256);
		jw_key(w, "fingerprint");
		if (jw_raw(w, e->fingerprint_json) < 0)
			jw_null(w);
		jw_end(w);
	}
	jw_end(w);
	jw_key(w, "models");
	jw_array(w);
	for (i = 0; p && i < p->nm; i++) {
		const struct prov_model *m = &p->m[i];

		jw_object(w);
		jw_kstr(w, "name", m->name);
		jw_kstr(w, "label", m->label);
		jw_kstr(w, "runtime", m->runtime);
		kstr_or_null(w, "file", m->file);
		kstr_or_null(w, "sha256", m->sha256);
		jw_key(w, "sessions");
		jw_array(w);
		for (k = 0; k < m->nsessions; k++)
			jw_int(w, m->sessions[k]);
		jw_end(w);
		jw_end(w);
	}
	jw_end(w);
	jw_end(w);
}
