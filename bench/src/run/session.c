#define _POSIX_C_SOURCE 200809L
#include "run/session.h"
#include "run/plan.h"
#include "run/schedule.h"
#include "run/target.h"
#include "run/tools.h"
#include "run/transport.h"
#include "run/variant.h"
#include "evidence/bundle.h"
#include "evidence/caps.h"
#include "evidence/derive.h"
#include "evidence/fingerprint.h"
#include "evidence/runrec.h"
#include "evidence/state.h"
#include "evidence/store.h"
#include "models/hash.h"
#include "base/files.h"
#include "base/json.h"
#include "base/proc.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct state {
	struct store *s;
	const struct plan *p;
	const struct run_opts *o;
	struct run_summary *sum;
	struct tool *lbs;           /* llama-bench per target */
	struct tool *mlx;           /* MLX-LM's benchmark per target */
	char counts[3][24];         /* its -p, -g and -n values */
	struct fingerprint *fps;    /* per target */
	int *gpu_probed;            /* per target: the GPU probe ran */
	int64_t *env_ids;
	int *model_bad;
	char **model_sha;           /* per model: the SHA-256 verified */
	int64_t *artifact_ids;
	char **probe_rel;           /* per variant: the probe's output file */
	struct rec_blob *probe;     /* per variant: its bytes */
	double started, proc_time;
	/* the running process, for ticks */
	const struct job *cur;
	size_t cur_seq, total;
	double cur_started;
};

static void
emit(const struct state *st, struct run_event *e)
{
	if (st->o->progress)
		st->o->progress(st->o->progress_ctx, e);
}

static void
note(const struct state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
note(const struct state *st, const char *fmt, ...)
{
	struct run_event e = { .kind = RUN_EV_NOTE };
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	e.text = b.buf;
	emit(st, &e);
	buf_release(&b);
}

static size_t
target_index(const struct plan *p, const char *name)
{
	return (size_t)(plan_target(p, name) - p->targets);
}

static void
set_fact(struct state *st, size_t t, const char *key, const char *value)
{
	fingerprint_set(&st->fps[t], key, value);
}

/* 1 when target t is a Mac: its injection is DYLD_INSERT_LIBRARIES. */
static int
is_macos(const struct state *st, size_t t)
{
	return st->fps[t].os == FP_OS_MACOS;
}

/* 1 when a variant on target runs model m. */
static int
target_runs_model(const struct plan *p, const char *target, size_t m)
{
	size_t v;

	for (v = 0; v < p->nvariants; v++)
		if (!strcmp(p->variants[v].target, target) && plan_runs(p, m, v))
			return 1;
	return 0;
}

/* 1 when target runs a model of MLX-LM (mlx 1) or of llama.cpp (mlx 0). */
static int
target_runs(const struct plan *p, const char *target, int mlx)
{
	size_t m;

	for (m = 0; m < p->nmodels; m++)
		if (plan_model_mlx(p, m) == mlx &&
		    target_runs_model(p, target, m))
			return 1;
	return 0;
}

static int
job_mlx(const struct state *st, const struct job *j)
{
	return plan_model_mlx(st->p, j->model);
}

/* JSON of a string vector, or NULL for an empty one. */
static char *
strv_json(const char *const *v, int empty_null)
{
	struct buf b = BUF_INIT;
	struct jw w;
	size_t i;

	if (empty_null && (!v || !v[0]))
		return NULL;
	jw_init(&w, &b, 0);
	jw_array(&w);
	for (i = 0; v && v[i]; i++)
		jw_str(&w, v[i]);
	jw_end(&w);
	return buf_detach(&b, NULL);
}

/* ---- pre-flight ---------------------------------------------------------------- */

/* The program of a target: found here, or by the remote shell there. */
static int
find_tool(const struct plan_target *t, const char *name, const char *want,
	  struct tool *out)
{
	if (transport_is_remote(t)) {
		/* found by the remote shell: the path or PATH */
		out->name = xstrdup(name);
		out->path = xstrdup(want ? want : name);
		out->where = "target";
		return 0;
	}
	return tool_find(name, want, out) < 0 ? RUN_ENV : 0;
}

static int
find_tools(struct state *st)
{
	const struct plan *p = st->p;
	size_t i;

	st->lbs = xcalloc(p->ntargets, sizeof(struct tool));
	st->mlx = xcalloc(p->ntargets, sizeof(struct tool));
	snprintf(st->counts[0], sizeof(st->counts[0]), "%ld", p->mlx_prompt);
	snprintf(st->counts[1], sizeof(st->counts[1]), "%ld", p->mlx_gen);
	snprintf(st->counts[2], sizeof(st->counts[2]), "%ld", p->mlx_trials);
	for (i = 0; i < p->ntargets; i++) {
		const struct plan_target *t = &p->targets[i];

		if (target_runs(p, t->name, 0) &&
		    find_tool(t, "llama-bench", t->llama_bench ? t->llama_bench :
			      p->llama_bench, &st->lbs[i]) < 0)
			return RUN_ENV;
		if (target_runs(p, t->name, 1) &&
		    find_tool(t, "mlx_lm.benchmark", t->mlx_lm ? t->mlx_lm :
			      p->mlx_command[0], &st->mlx[i]) < 0)
			return RUN_ENV;
	}
	return 0;
}

static int
check_markers(const struct plan *p)
{
	size_t v, k;

	for (v = 0; v < p->nvariants; v++)
		for (k = 0; k < p->variants[v].nexpect; k++) {
			const char *m = p->variants[v].expect[k];
			if (!*m || strspn(m, " \t\r\n") == strlen(m)) {
				error("variant '%s': expect[%zu] is empty; an "
				      "empty marker would verify any run",
				      p->variants[v].name, k);
				return RUN_BAD_PLAN;
			}
		}
	return 0;
}

/*
 * Every model file a local target runs exists and can be read, before
 * anything is stored: a plan naming a missing model is refused whole (no
 * failed session, no bundle). A remote target's files are checked there
 * when they are hashed.
 */
int
run_check_models(const struct plan *p)
{
	size_t i, k;

	for (i = 0; i < p->nmodels; i++) {
		const struct plan_model *m = &p->models[i];
		struct stat sb;

		if (plan_model_mlx(p, i))
			continue;
		for (k = 0; k < p->ntargets; k++) {
			const struct plan_target *t = &p->targets[k];
			const char *why = NULL;

			if (transport_is_remote(t) ||
			    !target_runs_model(p, t->name, i))
				continue;
			if (stat(m->path, &sb) < 0 || access(m->path, R_OK) < 0)
				why = strerror(errno);
			else if (!S_ISREG(sb.st_mode))
				why = "not a regular file";
			if (!why)
				continue;
			error("model '%s': cannot read '%s' on target '%s': %s; "
			      "nothing was run or stored (`shimbench models "
			      "fetch NAME` gets a model of models/manifest.json, "
			      "`shimbench models synth` makes a synthetic one)",
			      m->name, m->path, t->name, why);
			return RUN_ENV;
		}
	}
	return 0;
}

static int
check_libraries(struct state *st)
{
	const struct plan *p = st->p;
	size_t i;

	for (i = 0; i < p->nvariants; i++) {
		const struct plan_variant *v = &p->variants[i];
		char have[65];

		if (!v->inject_lib)
			continue;
		if (target_sha256(NULL, plan_target(p, v->target),
				  v->inject_lib, have) < 0)
			return RUN_ENV;   /* unreadable: not a mismatch */
		if (strcasecmp(have, v->inject_sha256)) {
			error("variant '%s': library '%s' has SHA-256 %s, the "
			      "plan expects %s; refusing to run", v->name,
			      v->inject_lib, have, v->inject_sha256);
			return RUN_REFUSED;
		}
	}
	return 0;
}

/*
 * The facts run adds to target i's probed fingerprint: the programs it
 * runs there and their hashes, the pinned shim.
 */
static void
add_tool_facts(struct state *st, size_t i)
{
	const struct plan *p = st->p;
	const struct plan_target *t = &p->targets[i];
	char sha[65];
	int have_sha;
	size_t k;

	if (st->mlx[i].path)
		set_fact(st, i, "mlx_lm_path", st->mlx[i].path);
	if (st->lbs[i].path)
		set_fact(st, i, "llama_bench_path", st->lbs[i].path);
	have_sha = !st->lbs[i].path ? 0 : transport_is_remote(t) ?
		strchr(st->lbs[i].path, '/') &&
		target_sha256(NULL, t, st->lbs[i].path, sha) == 0 :
		tool_binary_sha256(&st->lbs[i], sha) == 0;
	if (have_sha)
		set_fact(st, i, "llama_bench_sha256", sha);
	for (k = 0; k < p->nvariants; k++)
		if (p->variants[k].inject_lib &&
		    !strcmp(p->variants[k].target, t->name))
			set_fact(st, i, "shim_sha256",
				 p->variants[k].inject_sha256);
}

/*
 * Fingerprints every target, once per machine: targets that reach the
 * same machine the same way (every local target, say) share one probe.
 * The GPU is probed now only for a target that runs MLX-LM (its output
 * names no backend); llama.cpp's rows say whether a GPU backend ran, and
 * add_gpu() probes it then. *warnings collects the pre-flight warnings.
 */
static int
fingerprint_targets(struct state *st, char ***warnings, size_t *nwarn)
{
	const struct plan *p = st->p;
	size_t i, j;

	st->fps = xcalloc(p->ntargets, sizeof(struct fingerprint));
	st->gpu_probed = xcalloc(p->ntargets, sizeof(int));
	for (i = 0; i < p->ntargets; i++) {
		const struct plan_target *t = &p->targets[i];
		int mlx = target_runs(p, t->name, 1);

		for (j = 0; j < i; j++)
			if (transport_same_machine(t, &p->targets[j]) &&
			    st->gpu_probed[j] >= mlx)
				break;
		if (j < i) {
			fingerprint_copy(&st->fps[i], &st->fps[j]);
			st->gpu_probed[i] = st->gpu_probed[j];
		} else if (target_fingerprint(t, mlx, &st->fps[i], warnings,
					      nwarn) < 0) {
			return RUN_ENV;
		} else {
			st->gpu_probed[i] = mlx;
		}
	}
	/* after every probe, so a shared one carries no other target's */
	for (i = 0; i < p->ntargets; i++)
		add_tool_facts(st, i);
	return 0;
}

static int
preflight(struct state *st, struct buf *warnings, int *nwarn)
{
	char **w = NULL;
	size_t n = 0;
	int rc;

	if ((rc = check_markers(st->p)) < 0 || (rc = run_check_models(st->p)) < 0 ||
	    (rc = find_tools(st)) < 0 ||
	    (rc = check_libraries(st)) < 0 ||
	    (rc = fingerprint_targets(st, &w, &n)) < 0)
		goto cleanup;
	*nwarn = (int)n;
	if (n) {
		/* stored as a JSON array; said in words, one per line */
		char *json = strv_json((const char *const *)w, 0);
		size_t i;

		buf_adds(warnings, json);
		free(json);
		for (i = 0; i < n; i++)
			note(st, "warning: before the first run: %s", w[i]);
	}
	if (n && st->o->strict) {
		struct buf words = BUF_INIT;
		size_t i;

		for (i = 0; i < n; i++)
			buf_addf(&words, "%s%s", i ? "; " : "", w[i]);
		error("--strict: refusing to run because of %zu pre-flight "
		      "warning%s: %s", n, n == 1 ? "" : "s", words.buf);
		buf_release(&words);
		rc = RUN_REFUSED;
	}
cleanup:
	strv_free(w);
	return rc;
}

/* ---- the session ------------------------------------------------------------------ */

/*
 * The plan as its session stores it: the plan's members, then the
 * schedule's seed as "shimbench_seed" (every uint64_t exact), written
 * through the JSON module. A plan's own "shimbench_seed" gives way.
 * The caller frees the result.
 */
static char *
plan_with_seed(const char *plan_json, uint64_t seed)
{
	struct json *plan = json_parse(plan_json, strlen(plan_json), "the plan");
	const struct json *m;
	struct buf b = BUF_INIT;
	struct jw w;

	jw_init(&w, &b, 0);
	jw_object(&w);
	JSON_FOR_EACH(m, plan) {
		if (strcmp(json_key(m), "shimbench_seed")) {
			jw_key(&w, json_key(m));
			jw_value(&w, m);
		}
	}
	jw_key(&w, "shimbench_seed");
	jw_uint(&w, seed);
	jw_end(&w);
	json_free(plan);
	return buf_detach(&b, NULL);
}

static int
begin_session(struct state *st, const struct buf *warnings, int nwarn)
{
	const struct plan *p = st->p;
	struct session_rec sr = { 0 };
	char now[21], id[65], base[65];
	size_t i;
	int ret = RUN_ENV;

	utc_now(now);
	sr.kind = xstrdup("run");
	sr.started_at = xstrdup(now);
	sr.status = xstrdup(session_state_name(SESSION_STATE_RUNNING));
	sr.source = st->o->source ? xstrdup(st->o->source) : NULL;
	sr.plan_json = plan_with_seed(p->json, st->o->seed);
	sr.warnings_json = nwarn ? xstrdup(warnings->buf) : NULL;
	sr.label = xstrdup(st->o->label ? st->o->label :
			   p->name ? p->name : "run");
	st->env_ids = xcalloc(p->ntargets, sizeof(int64_t));
	if (store_begin(st->s) < 0)
		goto cleanup;
	store_session_add(st->s, &sr, &st->sum->session_id);
	for (i = 0; i < p->ntargets; i++) {
		char *json = fingerprint_json(&st->fps[i]);

		fingerprint_identity(&st->fps[i], id, base);
		store_environment_add(st->s, st->sum->session_id,
				      p->targets[i].name, json, id, base,
				      &st->env_ids[i]);
		free(json);
	}
	/* who runs it: a killed run shows as abandoned (issue 21 §1) */
	if (store_commit(st->s) == 0 &&
	    store_session_claim(st->s, st->sum->session_id,
				st->o->bundle_dir) == 0)
		ret = 0;
cleanup:
	rec_release(sessionrec_fields, sessionrec_nfields, &sr);
	return ret;
}

/* Models: hashed on every target that runs them, before any process. */
static void
verify_models(struct state *st)
{
	const struct plan *p = st->p;
	size_t i, k;

	st->model_bad = xcalloc(p->nmodels, sizeof(int));
	st->model_sha = xcalloc(p->nmodels, sizeof(char *));
	st->artifact_ids = xcalloc(p->nmodels, sizeof(int64_t));
	for (i = 0; i < p->nmodels; i++) {
		const struct plan_model *m = &p->models[i];
		char have[65];

		if (plan_model_mlx(p, i)) {
			note(st, "model '%s' runs on mlx-lm: '%s' goes to MLX-LM "
			     "as --model (a directory or repository id, not "
			     "hashed)", m->name, m->path);
			continue;
		}
		for (k = 0; k < p->ntargets && !st->model_bad[i]; k++) {
			const struct plan_target *t = &p->targets[k];

			if (!target_runs_model(p, t->name, i))
				continue;
			note(st, "verifying model '%s' (%s) on target '%s'",
			     m->name, m->path, t->name);
			if (target_sha256(st->s, t, m->path, have) < 0) {
				st->model_bad[i] = 1;
				buf_addf(&st->sum->problems, "model '%s': cannot "
					 "read '%s' on target '%s'\n", m->name,
					 m->path, t->name);
			} else if (m->sha256 && strcasecmp(have, m->sha256)) {
				error("model '%s': '%s' on target '%s' has "
				      "SHA-256 %s, expected %s; skipping its "
				      "runs", m->name, m->path, t->name, have,
				      m->sha256);
				buf_addf(&st->sum->problems, "model '%s': SHA-256 "
					 "mismatch\n", m->name);
				st->model_bad[i] = 1;
			} else if (!st->model_sha[i]) {
				st->model_sha[i] = xstrdup(have);
				store_artifact_add(st->s, have, "model", m->path,
						   -1, NULL, &st->artifact_ids[i]);
			}
		}
		if (st->model_bad[i])
			st->sum->failures++;
	}
}

/* Capability probes: once per variant; the output goes into the bundle. */
static int
run_probes(struct state *st)
{
	const struct plan *p = st->p;
	size_t i;

	st->probe_rel = xcalloc(p->nvariants, sizeof(char *));
	st->probe = xcalloc(p->nvariants, sizeof(struct rec_blob));
	for (i = 0; i < p->nvariants; i++) {
		const struct plan_variant *v = &p->variants[i];
		const struct plan_target *t = plan_target(p, v->target);
		struct buf detail = BUF_INIT;
		char *out, *path;
		size_t len;
		int ok;

		if (!v->probe_argv)
			continue;
		out = variant_probe(v, t, is_macos(st, target_index(p, t->name)),
				    &len, &detail);
		ok = 0;
		if (out) {
			st->probe_rel[i] = bundle_probe_path(v->name);
			st->probe[i] = rec_blob_dup(out, len);
			path = xstrfmt("%s/%s", st->o->bundle_dir,
				       st->probe_rel[i]);
			if (write_file_atomic(path, out, len) < 0) {
				free(path);
				free(out);
				buf_release(&detail);
				return RUN_ENV;
			}
			free(path);
			buf_reset(&detail);
			ok = caps_check_probe(out, len, v->probe_expect,
					      &detail) == 1;
		}
		note(st, "variant %s: %s %s", v->name,
		     ok ? "probe ok:" : "PROBE FAILED:", detail.buf);
		free(out);
		buf_release(&detail);
	}
	return 0;
}

/* ---- one process -------------------------------------------------------------------- */

static void
tick(void *ctx)
{
	struct state *st = ctx;
	const struct plan *p = st->p;
	struct run_event e = { .kind = RUN_EV_TICK };
	double now = mono_now();

	e.seq = st->cur_seq;
	e.total = st->total;
	e.variant = p->variants[st->cur->variant].name;
	e.model = p->models[st->cur->model].name;
	e.round = st->cur->round;
	e.elapsed = now - st->started;
	e.proc_elapsed = now - st->cur_started;
	e.eta = st->sum->done ? st->proc_time / st->sum->done *
		(double)(st->total - st->sum->done) - e.proc_elapsed : -1;
	if (e.eta < 0 && st->sum->done)
		e.eta = 0;
	emit(st, &e);
}

static char *
env_json(const char *const *set, const char *const *unset)
{
	struct buf b = BUF_INIT;
	struct jw w;
	size_t i;

	jw_init(&w, &b, 0);
	jw_object(&w);
	for (i = 0; set && set[i]; i++) {
		const char *eq = strchr(set[i], '=');
		char *k = xstrndup(set[i], (size_t)(eq - set[i]));
		jw_kstr(&w, k, eq + 1);
		free(k);
	}
	for (i = 0; unset && unset[i]; i++)
		jw_knull(&w, unset[i]);
	jw_end(&w);
	return buf_detach(&b, NULL);
}

static enum run_state
proc_status(const struct proc *pr, int write_failed, struct buf *err)
{
	if (pr->interrupted)
		return RUN_STATE_INTERRUPTED;
	if (write_failed) {
		buf_addf(err, "the raw output could not be written: %s",
			 error_last());
		return RUN_STATE_FAILED;
	}
	if (pr->timed_out || pr->exec_errno || pr->signo) {
		proc_describe(pr, err);
		return pr->timed_out ? RUN_STATE_TIMEOUT : pr->signo ?
			RUN_STATE_CRASHED : RUN_STATE_FAILED;
	}
	if (pr->exit_code != 0) {
		proc_describe(pr, err);
		return RUN_STATE_EXITED;
	}
	return RUN_STATE_OK;
}

/*
 * Reads back what really reached a raw file (the whole stream); a file
 * that was never written is recorded as empty, never as absent.
 */
static void
read_back(const char *path, struct rec_blob *b, char **sha)
{
	struct buf data = BUF_INIT;
	char hex[65];

	if (file_exists(path) && buf_read_file(&data, path) < 0)
		buf_reset(&data);
	hash_buf_sha256(data.buf, data.len, hex);
	b->n = data.len;
	b->p = buf_detach(&data, NULL);
	*sha = xstrdup(hex);
}

/* Checks the rows against the manifest's facts of the model. */
static void
check_model_facts(const struct plan_model *m, struct run_data *rd)
{
	size_t i;

	for (i = 0; i < rd->lb.n; i++) {
		const struct lb_row *row = &rd->lb.rows[i];

		if ((m->model_size >= 0 && row->model_size >= 0 &&
		     row->model_size != m->model_size) ||
		    (m->n_params >= 0 && row->model_n_params >= 0 &&
		     row->model_n_params != m->n_params)) {
			char *e = xstrfmt("%s%sllama-bench reports model_size "
					  "%lld and n_params %lld; the manifest "
					  "says %lld and %lld",
					  rd->r.error ? rd->r.error : "",
					  rd->r.error ? "; " : "",
					  (long long)row->model_size,
					  (long long)row->model_n_params,
					  m->model_size, m->n_params);
			free(rd->r.error);
			rd->r.error = e;
			free(rd->r.status);
			rd->r.status = xstrdup(run_state_name(RUN_STATE_FAILED));
			return;
		}
	}
}

/* The run record of a finished process, derived from its raw files. */
static void
derive(struct state *st, const struct job *j, struct run_data *rd,
       const struct proc *pr, int write_failed)
{
	const struct plan *p = st->p;
	const struct plan_variant *v = &p->variants[j->variant];
	struct run_rec *r = &rd->r;
	struct buf err = BUF_INIT;
	enum run_state status = proc_status(pr, write_failed, &err);

	r->exit_code = pr->exit_code;
	r->signal = pr->signo;
	r->timed_out = pr->timed_out;
	r->wall_s = pr->wall;
	if (derive_results(rd) < 0) {
		buf_addf(&err, "%sunparseable output: %s", err.len ? "; " : "",
			 error_last());
		if (status == RUN_STATE_OK)
			status = RUN_STATE_FAILED;
	}
	/* a non-zero exit: incomplete with results, failed without */
	if (status == RUN_STATE_EXITED)
		status = rd->lb.n ? RUN_STATE_INCOMPLETE : RUN_STATE_FAILED;
	r->status = xstrdup(run_state_name(status));
	if (err.len)
		r->error = buf_detach(&err, NULL);
	buf_release(&err);
	if (job_mlx(st, j) ? v->nexpect_mlx : v->nexpect)
		r->expect_json = strv_json((const char *const *)(job_mlx(st, j) ?
					   v->expect_mlx : v->expect), 1);
	if (v->probe_argv) {
		r->probe_expect_json = xstrdup(v->probe_expect ?
					       v->probe_expect : "null");
		if (st->probe_rel[j->variant]) {
			char hex[65];

			r->probe_path = xstrdup(st->probe_rel[j->variant]);
			r->probe_text = rec_blob_dup(st->probe[j->variant].p,
						     st->probe[j->variant].n);
			hash_buf_sha256(r->probe_text.p, r->probe_text.n, hex);
			r->probe_sha256 = xstrdup(hex);
		}
	}
	derive_verification(rd);
	check_model_facts(&p->models[j->model], rd);
	derive_status(rd);
}

static void
add_build(struct state *st, size_t t, const struct run_data *rd)
{
	char build[160];

	if (!rd->lb.n || st->fps[t].llama_build ||
	    !strcmp(rd->r.runtime, PLAN_MLX))
		return;
	snprintf(build, sizeof(build), "b%ld (%s)", rd->lb.rows[0].build_number,
		 rd->lb.rows[0].build_commit);
	set_fact(st, t, "llama_build", build);
}

/* 1 when a llama-bench row ran on a GPU: a GPU named, or a backend
 * other than the CPU's (Vulkan, CUDA, MTL, ROCm, SYCL…). */
static int
row_uses_gpu(const struct lb_row *row)
{
	const char *b = row->backends ? row->backends : "";

	if (row->gpu_info && *row->gpu_info)
		return 1;
	while (*b) {
		size_t n = strcspn(b, ",");

		if (n && !(n == 3 && !strncmp(b, "CPU", 3)) &&
		    !(n == 4 && !strncmp(b, "BLAS", 4)))
			return 1;
		b += n;
		b += *b == ',';
	}
	return 0;
}

/*
 * The GPU of target t, once per machine, after the first process whose
 * rows say it ran on one (a Mac's comes with the base probe): a CPU-only
 * plan never pays for vulkaninfo. Between processes, so no measurement
 * shares the machine with it.
 */
static void
add_gpu(struct state *st, size_t t, const struct run_data *rd)
{
	size_t i;
	int gpu = 0;

	if (st->gpu_probed[t] || is_macos(st, t) || st->fps[t].gpu)
		return;
	for (i = 0; i < rd->lb.n && !gpu; i++)
		gpu = row_uses_gpu(&rd->lb.rows[i]);
	if (!gpu)
		return;
	st->gpu_probed[t] = 1;
	if (target_fingerprint_gpu(&st->p->targets[t], &st->fps[t]) < 0) {
		note(st, "target '%s': the GPU probe failed: %s",
		     st->p->targets[t].name, error_last());
		return;
	}
	/* the same machine reached the same way has the same GPU */
	for (i = 0; i < st->p->ntargets; i++)
		if (i != t && !st->gpu_probed[i] &&
		    transport_same_machine(&st->p->targets[i],
					   &st->p->targets[t])) {
			st->gpu_probed[i] = 1;
			if (st->fps[t].gpu && st->fps[t].gpu->type == FP_STR &&
			    !st->fps[i].gpu)
				set_fact(st, i, "gpu", st->fps[t].gpu->str);
		}
}

static int
store_run(struct state *st, const struct run_data *rd)
{
	int64_t run_id;
	size_t i;

	if (store_begin(st->s) < 0)
		return -1;
	store_run_add(st->s, &rd->r, &run_id);
	for (i = 0; i < rd->lb.n; i++)
		store_result_add(st->s, run_id, (int)i, &rd->lb.rows[i], NULL);
	return store_commit(st->s);
}

static void
count(struct state *st, const struct job *j, const struct run_data *rd,
      size_t seq)
{
	const char *v = st->p->variants[j->variant].name;
	const char *m = st->p->models[j->model].name;
	const struct run_rec *r = &rd->r;

	if (verify_state_of(r->verification) == VERIFY_UNVERIFIED) {
		st->sum->unverified++;
		buf_addf(&st->sum->problems, "run %zu (variant '%s', model "
			 "'%s'): injection not verified: %s\n", seq, v, m,
			 r->verification_detail ? r->verification_detail : "");
	}
	if (run_state_of(r->status) != RUN_STATE_OK) {
		st->sum->failures++;
		buf_addf(&st->sum->problems, "run %zu (variant '%s', model "
			 "'%s'): %s%s%s\n", seq, v, m, r->status,
			 r->error ? ": " : "", r->error ? r->error : "");
	}
}

/* Fills the run's identity: who, what, with which arguments and files. */
static void
describe_run(struct state *st, const struct job *j, size_t seq,
	     struct run_rec *r, const char *const *argv,
	     const char *const *env)
{
	const struct plan *p = st->p;
	const struct plan_model *m = &p->models[j->model];
	const struct plan_variant *v = &p->variants[j->variant];
	size_t t = target_index(p, v->target);

	r->session_id = st->sum->session_id;
	r->environment_id = st->env_ids[t];
	r->artifact_id = st->artifact_ids[j->model];
	r->target = xstrdup(v->target);
	r->variant = xstrdup(v->name);
	r->role = xstrdup(v->role);
	r->model = xstrdup(m->name);
	r->model_label = xstrdup(m->label);
	r->model_sha256 = st->model_sha[j->model] ?
		xstrdup(st->model_sha[j->model]) : NULL;
	r->runtime = xstrdup(m->runtime);
	r->seq = (int64_t)seq;
	r->started_at = xmalloc(21);
	utc_now(r->started_at);
	r->argv_json = strv_json(argv, 0);
	r->env_json = env_json(env, (const char *const *)v->env_unset);
	bundle_run_paths((int)seq, v->name, m->name, &r->stdout_path,
			 &r->stderr_path);
	if (job_mlx(st, j)) {
		/* MLX-LM prints text, not jsonl */
		char *dot = strrchr(r->stdout_path, '.'), *txt;

		txt = xstrfmt("%.*s.txt", (int)(dot - r->stdout_path),
			      r->stdout_path);
		free(r->stdout_path);
		r->stdout_path = txt;
	}
}

/*
 * The process of a job: llama-bench -m MODEL ARGS... -o jsonl, or
 * MLX-LM's COMMAND... --model MODEL -p P -g G -n TRIALS ARGS...
 */
static const char **
job_argv(const struct state *st, const struct job *j)
{
	const struct plan *p = st->p;
	const struct plan_variant *v = &p->variants[j->variant];
	size_t ti = target_index(p, v->target), n = 0, na = 0, i;
	const char **argv;

	if (job_mlx(st, j)) {
		const char *const *c = (const char *const *)p->mlx_command;

		for (i = 0; c[i]; i++)
			n++;
		for (i = 0; p->mlx_args[i]; i++)
			n++;
		argv = xcalloc(n + 9, sizeof(char *));
		argv[na++] = st->mlx[ti].path;
		for (i = 1; c[i]; i++)
			argv[na++] = c[i];
		argv[na++] = "--model";
		argv[na++] = p->models[j->model].path;
		argv[na++] = "-p";
		argv[na++] = st->counts[0];
		argv[na++] = "-g";
		argv[na++] = st->counts[1];
		argv[na++] = "-n";
		argv[na++] = st->counts[2];
		for (i = 0; p->mlx_args[i]; i++)
			argv[na++] = p->mlx_args[i];
		return argv;
	}
	while (p->args[n])
		n++;
	argv = xcalloc(n + 6, sizeof(char *));
	argv[na++] = st->lbs[ti].path;
	argv[na++] = "-m";
	argv[na++] = p->models[j->model].path;
	for (i = 0; i < n; i++)
		argv[na++] = p->args[i];
	argv[na++] = "-o";
	argv[na++] = "jsonl";
	return argv;
}

/* Runs one process of the plan and stores it; -1 on a store error. */
static int
run_one(struct state *st, const struct job *j, size_t seq)
{
	const struct plan *p = st->p;
	const struct plan_variant *v = &p->variants[j->variant];
	const struct plan_target *t = plan_target(p, v->target);
	size_t ti = target_index(p, t->name);
	struct run_event e = { .kind = RUN_EV_BEGIN };
	struct run_data rd = { 0 };
	struct transport_cmd tc = { 0 };
	struct proc pr = PROC_INIT;
	const char **argv = job_argv(st, j), **env;
	char *inj = NULL, *out_path, *err_path;
	int ret = -1, write_failed;

	env = variant_env(v, is_macos(st, ti), &inj);
	describe_run(st, j, seq, &rd.r, argv, env);
	out_path = xstrfmt("%s/%s", st->o->bundle_dir, rd.r.stdout_path);
	err_path = xstrfmt("%s/%s", st->o->bundle_dir, rd.r.stderr_path);
	if (transport_wrap(t, argv, env, (const char *const *)v->env_unset,
			   &tc) < 0)
		goto cleanup;
	pr.argv = (const char *const *)tc.argv;
	pr.env_set = (const char *const *)tc.env_set;
	pr.env_unset = (const char *const *)tc.env_unset;
	pr.hold_stdin = tc.hold_stdin;
	pr.timeout = t->timeout > 0 ? t->timeout : p->timeout;
	pr.stdout_path = out_path;
	pr.stderr_path = err_path;
	pr.tick = tick;
	pr.tick_ctx = st;
	st->cur = j;
	st->cur_seq = seq;
	st->cur_started = mono_now();
	e.seq = seq;
	e.total = st->total;
	e.variant = v->name;
	e.model = p->models[j->model].name;
	e.round = j->round;
	e.elapsed = st->cur_started - st->started;
	e.eta = st->sum->done ? st->proc_time / st->sum->done *
		(double)(st->total - st->sum->done) : -1;
	emit(st, &e);
	write_failed = proc_run(&pr) < 0 && !pr.exec_errno;
	if (tc.merged)
		transport_split(out_path, err_path);
	read_back(out_path, &rd.r.stdout_text, &rd.r.stdout_sha256);
	read_back(err_path, &rd.r.stderr_text, &rd.r.stderr_sha256);
	st->proc_time += pr.wall;
	st->sum->done++;
	if (pr.interrupted)
		st->sum->interrupted = 1;
	derive(st, j, &rd, &pr, write_failed);
	add_build(st, ti, &rd);
	add_gpu(st, ti, &rd);
	if (store_run(st, &rd) < 0) {
		/* Not stored, so not in the session: its raw files must not
		 * stay in the bundle as files of no run (a full store would
		 * then be reported as a stray file). */
		unlink(out_path);
		unlink(err_path);
		goto cleanup;
	}
	count(st, j, &rd, seq);
	e.kind = RUN_EV_END;
	e.status = rd.r.status;
	e.verification = v->nexpect || v->probe_argv ? rd.r.verification : NULL;
	e.wall = pr.wall;
	emit(st, &e);
	ret = 0;
cleanup:
	rec_release(runrec_fields, runrec_nfields, &rd.r);
	lb_output_release(&rd.lb);
	proc_release(&pr);
	transport_cmd_free(&tc);
	free(argv);
	free(env);
	free(inj);
	free(out_path);
	free(err_path);
	return ret;
}

/* ---- finish --------------------------------------------------------------------------- */

static int
finish(struct state *st, int store_failed)
{
	const struct plan *p = st->p;
	struct session_data d;
	char id[65], base[65];
	size_t i;
	int ret = 0;

	for (i = 0; i < p->ntargets; i++) {
		char *json = fingerprint_json(&st->fps[i]);

		fingerprint_identity(&st->fps[i], id, base);
		if (store_environment_update(st->s, st->env_ids[i], json, id,
					     base) < 0)
			ret = -1;
		free(json);
	}
	st->sum->status = st->sum->interrupted ? SESSION_STATE_INTERRUPTED :
		(st->sum->failures || st->sum->unverified || store_failed ||
		 ret) ? SESSION_STATE_FAILED : SESSION_STATE_OK;
	if (store_session_finish(st->s, st->sum->session_id,
				 session_state_name(st->sum->status)) < 0)
		ret = -1;
	/*
	 * The content hash makes an import of this session's bundle a no-op.
	 * Another session with the same content (every process failing alike,
	 * say) already answers for it: then this one keeps none.
	 */
	if (store_session_load(st->s, st->sum->session_id, &d) == 0) {
		int64_t other;
		int rc;

		/* no run, no identity: empty sessions never collide */
		if (bundle_content_hash(&d, id)) {
			rc = store_session_find_hash(st->s, id, &other);
			if (rc < 0 || (rc == 0 &&
				       store_session_set_hash(st->s,
							      st->sum->session_id,
							      id) < 0))
				ret = -1;
		}
		session_data_release(&d);
	} else {
		ret = -1;
	}
	return ret;
}

static void
state_release(struct state *st)
{
	const struct plan *p = st->p;
	size_t i;

	for (i = 0; st->lbs && i < p->ntargets; i++)
		tool_release(&st->lbs[i]);
	for (i = 0; st->mlx && i < p->ntargets; i++)
		tool_release(&st->mlx[i]);
	for (i = 0; st->fps && i < p->ntargets; i++)
		fingerprint_release(&st->fps[i]);
	for (i = 0; st->model_sha && i < p->nmodels; i++)
		free(st->model_sha[i]);
	for (i = 0; st->probe_rel && i < p->nvariants; i++) {
		free(st->probe_rel[i]);
		free(st->probe[i].p);
	}
	free(st->lbs);
	free(st->mlx);
	free(st->fps);
	free(st->env_ids);
	free(st->gpu_probed);
	free(st->model_bad);
	free(st->model_sha);
	free(st->artifact_ids);
	free(st->probe_rel);
	free(st->probe);
}

/*
 * The processes of the schedule, those marked in done (NULL: none)
 * skipped; then the session's end. 0, or RUN_ENV.
 */
static int
run_jobs(struct state *st, const unsigned char *done)
{
	const struct plan *p = st->p;
	struct run_summary *sum = st->sum;
	struct job *jobs;
	size_t njobs = 0, i, k;
	int store_failed = 0, rc = 0;

	if (run_probes(st) < 0)
		store_failed = 1;
	jobs = schedule(p, st->o->seed, &njobs);
	/* A runtime-bound variant skips the other runtime's models. */
	for (i = k = 0; i < njobs; i++)
		if (plan_runs(p, jobs[i].model, jobs[i].variant))
			jobs[k++] = jobs[i];
	njobs = k;
	st->total = sum->processes = njobs;
	{
		struct run_event e = { .kind = RUN_EV_SESSION };
		const struct tool *t0 = NULL;
		char *text;

		for (i = 0; i < p->ntargets && !t0; i++)
			t0 = st->lbs[i].path ? &st->lbs[i] : NULL;
		for (i = 0; i < p->ntargets && !t0; i++)
			t0 = st->mlx[i].path ? &st->mlx[i] : NULL;
		text = xstrfmt("%s order, seed %llu, %s %s (%s)",
			       p->interleaved ? "interleaved" : "grouped",
			       (unsigned long long)st->o->seed,
			       t0 ? t0->name : "", t0 ? t0->path : "",
			       t0 ? t0->where : "");
		e.session = sum->session_id;
		e.total = njobs;
		e.text = text;
		emit(st, &e);
		free(text);
	}
	proc_catch_interrupts();
	st->started = mono_now();
	for (i = 0; i < njobs && !sum->interrupted && !store_failed; i++) {
		if (st->model_bad[jobs[i].model] || (done && done[i]))
			continue;
		if (proc_interrupted()) {
			sum->interrupted = 1;
			break;
		}
		if (run_one(st, &jobs[i], i + 1) < 0)
			store_failed = 1;
	}
	if (finish(st, store_failed) < 0 || store_failed)
		rc = RUN_ENV;
	free(jobs);
	return rc;
}

int
run_session(struct store *s, const struct plan *p, const struct run_opts *o,
	    struct run_summary *sum)
{
	struct state st = { .s = s, .p = p, .o = o, .sum = sum };
	struct buf warnings = BUF_INIT;
	int rc, nwarn = 0;
	char *runs = xstrfmt("%s/runs", o->bundle_dir);

	memset(sum, 0, sizeof(*sum));
	buf_init(&sum->problems, 0);
	sum->status = SESSION_STATE_FAILED;
	rc = preflight(&st, &warnings, &nwarn);
	if (rc == 0 && mkdir_p(runs) < 0)
		rc = RUN_ENV;
	if (rc == 0)
		rc = begin_session(&st, &warnings, nwarn);
	if (rc < 0)
		goto cleanup;
	verify_models(&st);
	rc = run_jobs(&st, NULL);
cleanup:
	free(runs);
	buf_release(&warnings);
	state_release(&st);
	return rc;
}

/* ---- resume ------------------------------------------------------------------------- */

/*
 * May session d be resumed with plan p? Its kind and state, its owner
 * gone, the plan the same as recorded (*seed: the recorded seed). 0, or
 * RUN_REFUSED / RUN_ENV after error().
 */
static int
resume_allowed(struct store *s, const struct plan *p,
	       const struct session_data *d, uint64_t *seed)
{
	struct store_owner ow;
	struct json *pj;
	struct buf want = BUF_INIT;
	int64_t v = -1;
	int state = session_state_of(d->s.status), rc = 0;
	long long sid = (long long)d->s.id;

	if (!d->s.kind || strcmp(d->s.kind, "run"))
		return error("session %lld is an %s, not a run: nothing to "
			     "resume", sid, d->s.kind ? d->s.kind : "import"),
			RUN_REFUSED;
	if (state != SESSION_STATE_RUNNING && state != SESSION_STATE_INTERRUPTED)
		return error("session %lld finished (%s): nothing to resume",
			     sid, d->s.status), RUN_REFUSED;
	if (store_session_owner(s, d->s.id, &ow) < 0)
		return RUN_ENV;
	if (state == SESSION_STATE_RUNNING && ow.alive) {
		error("session %lld is %s (pid %ld on %s, since %s): refusing "
		      "to resume a session that may still run", sid,
		      ow.found ? "still running" : "running, with no owner "
		      "recorded", ow.pid, ow.found ? ow.host : "an unknown "
		      "host", ow.found ? ow.started_at : "unknown");
		rc = RUN_REFUSED;
	}
	store_owner_release(&ow);
	if (rc)
		return rc;
	pj = d->s.plan_json ? json_parse(d->s.plan_json,
					 strlen(d->s.plan_json), NULL) : NULL;
	if (json_int64(json_get(pj, "shimbench_seed"), 0, INT64_MAX, &v) < 0) {
		error("session %lld records no seed: it cannot be resumed in "
		      "the same order", sid);
		rc = RUN_REFUSED;
	}
	json_free(pj);
	if (rc)
		return rc;
	*seed = (uint64_t)v;
	{
		char *w = plan_with_seed(p->json, *seed);

		buf_adds(&want, w);
		free(w);
	}
	if (strcmp(want.buf, d->s.plan_json)) {
		error("the plan changed since session %lld ran (the plan given "
		      "differs from the one it recorded): refusing to resume; "
		      "run it as a new session", sid);
		rc = RUN_REFUSED;
	}
	buf_release(&want);
	return rc;
}

/* The fingerprint facts that must not change under a resumed session. */
static const char *const resume_facts[] = {
	"llama_bench_sha256", "llama_bench_path", "llama_build", "hw_model",
	"os_build", "shim_sha256",
};

/* Fact f of resume_facts[] in fp, or NULL. */
static const struct fp_fact *
resume_fact(const struct fingerprint *fp, size_t f)
{
	const struct fp_fact *const v[] = {
		fp->llama_bench_sha256, fp->llama_bench_path, fp->llama_build,
		fp->hw_model, fp->os_build, fp->shim_sha256,
	};

	return f < ARRAY_SIZE(v) ? v[f] : NULL;
}

/*
 * The targets as fingerprinted now against the session's environments,
 * and the models as hashed now against its runs; st->env_ids from the
 * session. 0, or RUN_REFUSED after error() naming what changed.
 */
static int
resume_same(struct state *st, const struct session_data *d)
{
	const struct plan *p = st->p;
	size_t i, k, f;

	for (i = 0; i < p->ntargets; i++) {
		const struct env_rec *e = NULL;
		struct fingerprint then = FINGERPRINT_INIT;
		int rc = 0;

		for (k = 0; k < d->nenvs && !e; k++)
			if (!strcmp(d->envs[k].target, p->targets[i].name))
				e = &d->envs[k];
		if (!e)
			return error("target '%s' has no environment in session "
				     "%lld", p->targets[i].name,
				     (long long)d->s.id), RUN_REFUSED;
		st->env_ids[i] = e->id;
		if (fingerprint_from_text(&then, e->fingerprint_json, NULL) < 0)
			return RUN_ENV;
		for (f = 0; f < ARRAY_SIZE(resume_facts) && !rc; f++) {
			const struct fp_fact *a = resume_fact(&then, f);
			const struct fp_fact *b = resume_fact(&st->fps[i], f);
			const char *was = a && a->type == FP_STR ? a->str : NULL;
			const char *is = b && b->type == FP_STR ? b->str : NULL;

			/* a fact learnt from the output only at the end
			 * (llama_build) is no change while not known now */
			if (was && (!is ? strcmp(resume_facts[f], "llama_build")
				    : strcmp(was, is))) {
				error("target '%s' changed since session %lld "
				      "ran: %s was '%s', is now '%s'; refusing "
				      "to resume", e->target, (long long)d->s.id,
				      resume_facts[f], was, is ? is : "unknown");
				rc = RUN_REFUSED;
			}
		}
		fingerprint_release(&then);
		if (rc)
			return rc;
	}
	for (i = 0; i < d->nruns; i++) {
		const struct run_rec *r = &d->runs[i].r;

		for (k = 0; k < p->nmodels; k++)
			if (r->model && !strcmp(r->model, p->models[k].name) &&
			    r->model_sha256 && st->model_sha[k] &&
			    strcasecmp(r->model_sha256, st->model_sha[k]))
				return error("model '%s' changed since session "
					     "%lld ran: SHA-256 was %s, is now %s; "
					     "refusing to resume", r->model,
					     (long long)d->s.id, r->model_sha256,
					     st->model_sha[k]), RUN_REFUSED;
	}
	return 0;
}

/*
 * The stored runs: done[seq - 1] set for each kept one, counted into the
 * summary as run_one() counts; an interrupted one is removed, to be run
 * again. 0, or RUN_ENV.
 */
static int
resume_done(struct state *st, const struct session_data *d,
	    unsigned char *done, size_t n)
{
	size_t i;

	for (i = 0; i < d->nruns; i++) {
		const struct run_rec *r = &d->runs[i].r;

		if (r->seq < 1 || (size_t)r->seq > n)
			continue;
		if (run_state_of(r->status) == RUN_STATE_INTERRUPTED) {
			if (store_run_remove(st->s, d->s.id, r->seq) < 0)
				return RUN_ENV;
			continue;
		}
		done[r->seq - 1] = 1;
		st->sum->done++;
		if (verify_state_of(r->verification) == VERIFY_UNVERIFIED)
			st->sum->unverified++;
		if (run_state_of(r->status) != RUN_STATE_OK) {
			st->sum->failures++;
			buf_addf(&st->sum->problems, "run %lld (variant '%s', "
				 "model '%s', before the resume): %s\n",
				 (long long)r->seq, r->variant, r->model,
				 r->status);
		}
	}
	return 0;
}

int
run_resume(struct store *s, const struct plan *p, const struct run_opts *o,
	   int64_t sid, struct run_summary *sum)
{
	struct run_opts ro = *o;
	struct state st = { .s = s, .p = p, .o = &ro, .sum = sum };
	struct session_data d;
	struct buf warnings = BUF_INIT;
	unsigned char *done = NULL;
	size_t njobs = 0, i, k;
	int rc, nwarn = 0;
	char *runs = xstrfmt("%s/runs", o->bundle_dir);

	memset(sum, 0, sizeof(*sum));
	buf_init(&sum->problems, 0);
	sum->status = SESSION_STATE_FAILED;
	memset(&d, 0, sizeof(d));
	if (store_session_load(s, sid, &d) < 0) {
		free(runs);
		return RUN_REFUSED;
	}
	rc = resume_allowed(s, p, &d, &ro.seed);
	if (rc == 0)
		rc = preflight(&st, &warnings, &nwarn);
	if (rc == 0 && mkdir_p(runs) < 0)
		rc = RUN_ENV;
	if (rc < 0)
		goto cleanup;
	st.env_ids = xcalloc(p->ntargets, sizeof(int64_t));
	verify_models(&st);
	if ((rc = resume_same(&st, &d)) < 0)
		goto cleanup;
	{
		struct job *jobs = schedule(p, ro.seed, &njobs);

		for (i = k = 0; i < njobs; i++)
			k += plan_runs(p, jobs[i].model, jobs[i].variant);
		free(jobs);
		done = xcalloc(k + 1, 1);
		njobs = k;
	}
	sum->session_id = sid;
	if (store_session_claim(s, sid, ro.bundle_dir) < 0 ||
	    store_session_finish(s, sid, session_state_name(
					 SESSION_STATE_RUNNING)) < 0 ||
	    resume_done(&st, &d, done, njobs) < 0) {
		rc = RUN_ENV;
		goto cleanup;
	}
	note(&st, "resuming session %lld: %zu of %zu processes stored, seed "
	     "%llu", (long long)sid, sum->done, njobs,
	     (unsigned long long)ro.seed);
	rc = run_jobs(&st, done);
cleanup:
	free(done);
	free(runs);
	buf_release(&warnings);
	session_data_release(&d);
	state_release(&st);
	return rc;
}

void
run_summary_release(struct run_summary *sum)
{
	buf_release(&sum->problems);
}
