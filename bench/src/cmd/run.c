#define _POSIX_C_SOURCE 200809L
#include "evidence/bundle.h"
#include "evidence/caps.h"
#include "cmd/cmd.h"
#include "evidence/fingerprint.h"
#include "models/hash.h"
#include "evidence/llamabench.h"
#include "run/plan.h"
#include "base/proc.h"
#include "analysis/report.h"
#include "evidence/store.h"
#include "run/tools.h"
#include "run/transport.h"
#include "base/files.h"
#include "base/util.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

const char usage_run[] =
	"usage: shimbench run [--bundle DIR] [--strict] [--seed N]\n"
	"                     [--models-dir DIR] [--label TEXT] PLAN\n"
	"\n"
	"Runs a plan (JSON, see README): for every model, variant and\n"
	"process, llama-bench with the plan's arguments and `-o jsonl`, with\n"
	"the variant's environment and injected library, in interleaved (or\n"
	"grouped) order. Checks model and library SHA-256 before anything\n"
	"runs, fingerprints each target, verifies expected capability\n"
	"markers, stores every process in one transaction, and writes an\n"
	"evidence bundle (default evidence/session-N).\n"
	"\n"
	"  --bundle DIR      where to write the evidence bundle\n"
	"  --strict          refuse to run on a pre-flight warning\n"
	"  --seed N          seed of the interleaving (default: the plan's,\n"
	"                    else the clock; always recorded)\n"
	"  --models-dir DIR  where manifest models live (default models)\n"
	"  --label TEXT      a label for the session\n"
	"\n"
	"Exit: 0 every run ok and verified; 1 a run failed, crashed, timed\n"
	"out, was not injection-verified, a model or library hash did not\n"
	"match, or --strict refused; 2 bad plan; 3 environment failure;\n"
	"130 interrupted (completed runs are kept).\n";

struct job {
	size_t model, variant;
	int round;
};

/* xorshift64*: a small seeded generator for the interleaving. */
static unsigned long long
rng_next(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static struct job *
schedule(const struct plan *p, unsigned long long seed, size_t *njobs)
{
	size_t nv = p->nvariants, n = 0, m, v, i;
	struct job *jobs = xcalloc((size_t)p->processes * p->nmodels * nv,
				   sizeof(*jobs));
	size_t *perm = xcalloc(nv, sizeof(size_t));
	unsigned long long st = seed ? seed : 0x9e3779b97f4a7c15ULL;
	int r;

	if (p->interleaved) {
		for (r = 0; r < p->processes; r++)
			for (m = 0; m < p->nmodels; m++) {
				for (v = 0; v < nv; v++)
					perm[v] = v;
				for (i = nv; i > 1; i--) {
					size_t j = rng_next(&st) % i, t;
					t = perm[i - 1];
					perm[i - 1] = perm[j];
					perm[j] = t;
				}
				for (v = 0; v < nv; v++)
					jobs[n++] = (struct job){ m, perm[v], r };
			}
	} else {
		for (v = 0; v < nv; v++)
			for (m = 0; m < p->nmodels; m++)
				for (r = 0; r < p->processes; r++)
					jobs[n++] = (struct job){ m, v, r };
	}
	free(perm);
	*njobs = n;
	return jobs;
}

static void
json_strv(struct buf *b, const char *const *v)
{
	size_t i;

	buf_addch(b, '[');
	for (i = 0; v && v[i]; i++) {
		if (i)
			buf_addch(b, ',');
		buf_add_json_str(b, v[i]);
	}
	buf_addch(b, ']');
}

static void
json_env(struct buf *b, const char *const *set, const char *const *unset)
{
	size_t i, n = 0;

	buf_addch(b, '{');
	for (i = 0; set && set[i]; i++) {
		const char *eq = strchr(set[i], '=');
		char *k = xstrndup(set[i], (size_t)(eq - set[i]));
		buf_adds(b, n++ ? "," : "");
		buf_add_json_str(b, k);
		buf_addch(b, ':');
		buf_add_json_str(b, eq + 1);
		free(k);
	}
	for (i = 0; unset && unset[i]; i++) {
		buf_adds(b, n++ ? "," : "");
		buf_add_json_str(b, unset[i]);
		buf_adds(b, ":null");
	}
	buf_addch(b, '}');
}

/* File-name-safe copy of s: letters, digits, '-', '_' and '.' only. */
static char *
safe_part(const char *s)
{
	char *c = xstrdup(s), *p;

	for (p = c; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789-_.", *p))
			*p = '_';
	return c;
}

static void
fmt_secs(char *out, size_t size, double s)
{
	int t = (int)(s + 0.5);

	snprintf(out, size, "%d:%02d", t / 60, t % 60);
}

/* A merged transport's stdout: keep what comes before the separator. */
static void
cut_merged(const struct transport_cmd *tc, struct buf *out)
{
	const char *sep = "\n" TRANSPORT_SEPARATOR "\n", *p = NULL, *q;

	if (!tc->merged)
		return;
	for (q = out->buf; (q = strstr(q, sep)); q++)
		p = q;
	if (p)
		buf_setlen(out, (size_t)(p - out->buf));
}

/*
 * Runs argv on target t (no extra environment) and returns 0 with its
 * stdout in out, or -1 after error() naming what failed.
 */
static int
target_capture(const struct plan_target *t, const char *const *argv,
	       double timeout, const char *what, struct buf *out)
{
	struct transport_cmd tc;
	struct proc p = PROC_INIT;
	int ret = -1;

	if (transport_wrap(t, argv, NULL, NULL, &tc) < 0)
		return -1;
	p.argv = (const char *const *)tc.argv;
	p.env_set = (const char *const *)tc.env_set;
	p.timeout = timeout;
	if (proc_run(&p) < 0 || p.status != 0) {
		struct buf d = BUF_INIT;
		proc_describe(&p, &d);
		error("%s on target '%s' failed: %s%s%.300s", what, t->name,
		      d.buf, p.err.len ? ": " : "", p.err.buf);
		buf_release(&d);
		goto cleanup;
	}
	cut_merged(&tc, &p.out);
	buf_add(out, p.out.buf, p.out.len);
	ret = 0;
cleanup:
	proc_release(&p);
	transport_cmd_free(&tc);
	return ret;
}

/*
 * SHA-256 of a file on the target: read here for a local target (models
 * through the store's cache), by sha256sum or shasum on a remote one.
 */
static int
target_sha256(struct store *s, const struct plan_target *t, const char *path,
	      char hex[65])
{
	const char *argv[] = {
		"/bin/sh", "-c",
		"if command -v sha256sum >/dev/null 2>&1; then sha256sum -- \"$1\"; "
		"else shasum -a 256 -- \"$1\"; fi", "sh", path, NULL,
	};
	struct buf out = BUF_INIT;
	int ret = -1;

	if (!transport_is_remote(t))
		return s ? hash_file_cached(s, path, 0, hex) :
			hash_file_sha256(path, hex);
	if (target_capture(t, argv, 3600, "hashing", &out) < 0)
		goto cleanup;
	if (out.len < 64 || (out.buf[64] != ' ' && out.buf[64] != '\t')) {
		error("target '%s': no SHA-256 for '%s'", t->name, path);
		goto cleanup;
	}
	out.buf[64] = '\0';
	if (!hash_is_sha256_hex(out.buf)) {
		error("target '%s': no SHA-256 for '%s'", t->name, path);
		goto cleanup;
	}
	memcpy(hex, out.buf, 65);
	ret = 0;
cleanup:
	buf_release(&out);
	return ret;
}

static int
probe_target(const struct plan_target *t, char **fp, char **warnings)
{
	const char *argv[] = { "/bin/sh", "-c", fingerprint_probe_script, NULL };
	struct buf out = BUF_INIT;
	int ret = -1;

	if (target_capture(t, argv, 60, "fingerprint probe", &out) == 0)
		ret = fingerprint_parse(out.buf, out.len, fp, warnings);
	buf_release(&out);
	return ret;
}

struct run_state {
	struct store *s;
	const struct plan *p;
	struct tool *lbs;       /* llama-bench per target */
	int64_t sid;
	int64_t *env_ids;
	char **fps;
	int *model_bad;
	int64_t *artifact_ids;
	const char *bundle;
	int *macos;            /* per target: macOS (DYLD_INSERT_LIBRARIES) */
	char **probe_out;      /* per variant: the probe's stdout, or NULL */
	int *probe_ok;         /* per variant: 1 passed, 0 failed */
	struct buf *probe_detail;
	int quiet, tty;
	int failures, unverified, interrupted;
	double started, proc_time;
	int done;
	struct buf problems;
};

/*
 * The environment a variant's processes get: its own variables, and the
 * injected library in LD_PRELOAD (DYLD_INSERT_LIBRARIES on macOS),
 * appended to an inherited value when the variant says so. The returned
 * vector borrows from v except *inj, which the caller frees with it.
 */
static const char **
variant_env(const struct plan_variant *v, int macos, char **inj)
{
	const char **env;
	size_t i, n = 0;

	for (i = 0; v->env_set[i]; i++)
		;
	env = xcalloc(i + 2, sizeof(char *));
	for (i = 0; v->env_set[i]; i++)
		env[n++] = v->env_set[i];
	*inj = NULL;
	if (v->inject_lib) {
		const char *var = macos ? "DYLD_INSERT_LIBRARIES" :
			"LD_PRELOAD";
		const char *old = getenv(var);
		*inj = v->inject_append && old && *old ?
			xstrfmt("%s=%s:%s", var, old, v->inject_lib) :
			xstrfmt("%s=%s", var, v->inject_lib);
		env[n++] = *inj;
	}
	env[n] = NULL;
	return env;
}

/*
 * Runs a variant's capability probe (e.g. the shim's metal-capabilities)
 * through its target with the variant's environment, and checks its JSON
 * output against the expected values. Sets *ok (1 passed, 0 not) and
 * returns the probe's stdout (malloc'd); detail says what it found.
 */
static char *
run_probe(const struct plan_variant *v, const struct plan_target *t,
	  int macos, int *ok, struct buf *detail)
{
	struct transport_cmd tc = { 0 };
	struct proc pr = PROC_INIT;
	char *inj = NULL, *out = NULL;
	const char **env = variant_env(v, macos, &inj);
	int rc;

	*ok = 0;
	if (transport_wrap(t, (const char *const *)v->probe_argv, env,
			   (const char *const *)v->env_unset, &tc) < 0) {
		buf_addf(detail, "probe: %s", error_last());
		goto cleanup;
	}
	pr.argv = (const char *const *)tc.argv;
	pr.env_set = (const char *const *)tc.env_set;
	pr.env_unset = (const char *const *)tc.env_unset;
	pr.timeout = 120;
	pr.mem_cap = 1u << 20;
	proc_run(&pr);
	cut_merged(&tc, &pr.out);
	if (pr.status != 0) {
		buf_adds(detail, "probe '");
		buf_adds(detail, v->probe_argv[0]);
		buf_adds(detail, "' failed: ");
		proc_describe(&pr, detail);
		goto cleanup;
	}
	rc = caps_check_probe(pr.out.buf, pr.out.len, v->probe_expect, detail);
	*ok = rc == 1;
	out = xstrndup(pr.out.buf, pr.out.len);
cleanup:
	proc_release(&pr);
	transport_cmd_free(&tc);
	free(env);
	free(inj);
	return out;
}

static const char *
run_status(const struct proc *pr, int parse_rc, const struct lb_output *lb,
	   struct buf *err)
{
	if (pr->interrupted)
		return "interrupted";
	if (pr->timed_out) {
		proc_describe(pr, err);
		return "timeout";
	}
	if (pr->exec_errno) {
		proc_describe(pr, err);
		return "failed";
	}
	if (pr->signo) {
		proc_describe(pr, err);
		return "crashed";
	}
	if (parse_rc < 0) {
		buf_addf(err, "unparseable output: %s", error_last());
		return "failed";
	}
	if (pr->exit_code != 0) {
		proc_describe(pr, err);
		return lb->n ? "incomplete" : "failed";
	}
	if (lb->n == 0) {
		buf_adds(err, "llama-bench printed no results");
		return "failed";
	}
	return lb->incomplete ? "incomplete" : "ok";
}

/* Runs one process of the plan and stores it; returns -1 on a store error. */
static int
run_one(struct run_state *st, const struct job *j, int seq, int total)
{
	const struct plan *p = st->p;
	const struct plan_model *m = &p->models[j->model];
	const struct plan_variant *v = &p->variants[j->variant];
	const struct plan_target *t = plan_target(p, v->target);
	size_t ti = (size_t)(t - p->targets);
	struct buf argvj = BUF_INIT, envj = BUF_INIT, err = BUF_INIT;
	struct buf vdetail = BUF_INIT, expj = BUF_INIT;
	struct lb_output lb = { 0 };
	struct transport_cmd tc = { 0 };
	struct proc pr = PROC_INIT;
	struct run_rec rr = { 0 };
	const char **argv = NULL, **env = NULL;
	char *vname = safe_part(v->name), *mname = safe_part(m->name);
	char *out_rel = xstrfmt("runs/%03d-%s-%s.jsonl", seq, vname, mname);
	char *err_rel = xstrfmt("runs/%03d-%s-%s.stderr", seq, vname, mname);
	char *out_path = xstrfmt("%s/%s", st->bundle, out_rel);
	char *err_path = xstrfmt("%s/%s", st->bundle, err_rel);
	char out_sha[65] = "", err_sha[65] = "", elapsed[16], left[16];
	char *caps = NULL, *inj = NULL;
	const char *status, *verification = "not-required";
	size_t na = 0, i;
	int parse_rc, ret = 0;
	int64_t run_id = 0;

	/* argv: llama-bench -m MODEL ARGS... -o jsonl */
	argv = xcalloc(8 + 64, sizeof(char *));
	for (i = 0; p->args[i]; i++)
		;
	argv = xrealloc(argv, (i + 8) * sizeof(char *));
	argv[na++] = st->lbs[ti].path;
	argv[na++] = "-m";
	argv[na++] = m->path;
	for (i = 0; p->args[i]; i++)
		argv[na++] = p->args[i];
	argv[na++] = "-o";
	argv[na++] = "jsonl";
	argv[na] = NULL;
	env = variant_env(v, st->macos[ti], &inj);
	json_strv(&argvj, argv);
	json_env(&envj, env, (const char *const *)v->env_unset);
	if (transport_wrap(t, argv, env, (const char *const *)v->env_unset,
			   &tc) < 0) {
		ret = -1;
		goto cleanup;
	}
	pr.argv = (const char *const *)tc.argv;
	pr.env_set = (const char *const *)tc.env_set;
	pr.env_unset = (const char *const *)tc.env_unset;
	pr.timeout = t->timeout > 0 ? t->timeout : p->timeout;
	pr.stdout_path = out_path;
	pr.stderr_path = err_path;

	if (!st->quiet && st->tty) {
		double per = st->done ? st->proc_time / st->done : 0;
		fmt_secs(elapsed, sizeof(elapsed), mono_now() - st->started);
		fmt_secs(left, sizeof(left), per * (total - st->done));
		fprintf(stderr, "\r\033[K[%d/%d] %s · %s · round %d · %s elapsed%s%s",
			seq, total, v->name, m->name, j->round + 1, elapsed,
			st->done ? " · ~" : "", st->done ? left : "");
		fflush(stderr);
	}
	proc_run(&pr);
	if (tc.merged && transport_split(out_path, err_path) == 1) {
		/* the capped copies come from the split files */
		buf_reset(&pr.out);
		buf_reset(&pr.err);
		buf_read_file(&pr.out, out_path);
		buf_read_file(&pr.err, err_path);
	}
	st->proc_time += pr.wall;
	st->done++;

	error_silent++;
	parse_rc = lb_parse(pr.out.buf, pr.out.len, out_rel, &lb);
	error_silent--;
	status = run_status(&pr, parse_rc, &lb, &err);
	if (pr.interrupted)
		st->interrupted = 1;
	caps = caps_parse(pr.err.buf, pr.err.len);
	if (v->probe_argv && st->probe_out[j->variant]) {
		char *c = caps_with_probe(caps, st->probe_out[j->variant],
					  strlen(st->probe_out[j->variant]));
		free(caps);
		caps = c;
	}
	if (v->nexpect || v->probe_argv) {
		int ok = caps_verify(pr.err.buf, pr.err.len,
				     (const char *const *)v->expect,
				     v->nexpect, &vdetail);
		if (v->probe_argv) {
			struct buf *pd = &st->probe_detail[j->variant];
			ok = ok && st->probe_ok[j->variant];
			buf_addf(&vdetail, "%s%s", vdetail.len ? "; " : "",
				 pd->buf);
		}
		verification = ok ? "verified" : "unverified";
		if (!ok) {
			st->unverified++;
			buf_addf(&st->problems, "run %d (variant '%s', model "
				 "'%s'): injection not verified: %s\n", seq,
				 v->name, m->name, vdetail.buf);
		}
		json_strv(&expj, (const char *const *)v->expect);
	}
	for (i = 0; parse_rc == 0 && i < lb.n; i++) {
		if ((m->model_size >= 0 && lb.rows[i].model_size >= 0 &&
		     lb.rows[i].model_size != m->model_size) ||
		    (m->n_params >= 0 && lb.rows[i].model_n_params >= 0 &&
		     lb.rows[i].model_n_params != m->n_params)) {
			buf_addf(&err, "%sllama-bench reports model_size %lld "
				 "and n_params %lld; the manifest says %lld and "
				 "%lld", err.len ? "; " : "",
				 (long long)lb.rows[i].model_size,
				 (long long)lb.rows[i].model_n_params,
				 m->model_size, m->n_params);
			status = "failed";
			break;
		}
	}
	if (strcmp(status, "ok")) {
		st->failures++;
		buf_addf(&st->problems, "run %d (variant '%s', model '%s'): %s%s%s\n",
			 seq, v->name, m->name, status, err.len ? ": " : "",
			 err.buf);
	}
	/* The build of llama-bench completes the fingerprint. */
	if (parse_rc == 0 && lb.n) {
		size_t k;
		for (k = 0; k < p->ntargets; k++) {
			char build[128], *fp;
			if (strcmp(p->targets[k].name, t->name) ||
			    strstr(st->fps[k], "\"llama_build\""))
				continue;
			snprintf(build, sizeof(build), "b%ld (%s)",
				 lb.rows[0].build_number, lb.rows[0].build_commit);
			fp = fingerprint_set(st->fps[k], "llama_build", build);
			free(st->fps[k]);
			st->fps[k] = fp;
		}
	}
	if (file_exists(out_path))
		hash_file_sha256(out_path, out_sha);
	if (file_exists(err_path))
		hash_file_sha256(err_path, err_sha);

	rr.session_id = st->sid;
	for (i = 0; i < p->ntargets; i++)
		if (!strcmp(p->targets[i].name, t->name))
			rr.environment_id = st->env_ids[i];
	rr.artifact_id = st->artifact_ids[j->model];
	rr.target = t->name;
	rr.variant = v->name;
	rr.role = v->role;
	rr.model = m->name;
	rr.model_label = m->label;
	rr.runtime = "llama.cpp";
	rr.seq = seq;
	rr.argv_json = argvj.buf;
	rr.env_json = envj.buf;
	rr.status = status;
	rr.exit_code = pr.exit_code;
	rr.signal = pr.signo;
	rr.timed_out = pr.timed_out;
	rr.wall_s = pr.wall;
	rr.stdout_path = out_rel;
	rr.stderr_path = err_rel;
	rr.stdout_sha256 = *out_sha ? out_sha : NULL;
	rr.stderr_sha256 = *err_sha ? err_sha : NULL;
	rr.stdout_text = pr.out.buf;
	rr.stderr_text = pr.err.buf;
	rr.capabilities_json = caps;
	rr.expect_json = expj.len ? expj.buf : NULL;
	rr.verification = verification;
	rr.verification_detail = vdetail.len ? vdetail.buf : NULL;
	rr.error = err.len ? err.buf : NULL;
	if (store_begin(st->s) < 0 || store_run_add(st->s, &rr, &run_id) < 0) {
		store_rollback(st->s);
		ret = -1;
		goto cleanup;
	}
	for (i = 0; parse_rc == 0 && i < lb.n; i++)
		if (store_result_add(st->s, run_id, (int)i, &lb.rows[i],
				     NULL) < 0)
			break;
	if (store_commit(st->s) < 0) {
		ret = -1;
		goto cleanup;
	}
	if (!st->quiet) {
		if (st->tty)
			fputs("\r\033[K", stderr);
		fprintf(stderr, "run %d/%d: variant %s, model %s: %s%s%s "
			"(%.1f s)\n", seq, total, v->name, m->name, status,
			v->nexpect ? ", " : "", v->nexpect ? verification : "",
			pr.wall);
	}
cleanup:
	lb_output_release(&lb);
	proc_release(&pr);
	transport_cmd_free(&tc);
	free(argv);
	free(env);
	free(inj);
	free(caps);
	free(vname);
	free(mname);
	free(out_rel);
	free(err_rel);
	free(out_path);
	free(err_path);
	buf_release(&argvj);
	buf_release(&envj);
	buf_release(&err);
	buf_release(&vdetail);
	buf_release(&expj);
	return ret;
}

static int
cmd_run_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "bundle", required_argument, NULL, 'b' },
		{ "strict", no_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 's' },
		{ "models-dir", required_argument, NULL, 'M' },
		{ "label", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *bundle_opt = NULL, *models_dir = NULL, *label = NULL;
	const char *seed_opt = NULL;
	struct run_state st = { 0 };
	struct plan plan = { 0 };
	struct session_rec sr = { 0 };
	struct buf warnings = BUF_INIT, plan_json = BUF_INIT;
	struct job *jobs = NULL;
	char now[21], *bundle = NULL;
	unsigned long long seed;
	size_t njobs = 0, i;
	int c, strict = 0, ret = EXIT_OK, nwarn = 0;

	while ((c = getopt_long(argc, argv, "b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': bundle_opt = optarg; break;
		case 'S': strict = 1; break;
		case 's': seed_opt = optarg; break;
		case 'M': models_dir = optarg; break;
		case 'l': label = optarg; break;
		case 'h': return cmd_help(usage_run);
		default:
			return cmd_usage_error_name("run", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return cmd_usage_error_name("run", "give exactly one PLAN file");
	if (plan_load(argv[optind], models_dir, &plan) < 0)
		return EXIT_USAGE;
	buf_init(&st.problems, 0);
	st.p = &plan;
	st.quiet = ctx->quiet;
	st.tty = isatty(2);
	seed = plan.seed_given ? plan.seed :
		(unsigned long long)time(NULL) ^ (unsigned long long)getpid();
	if (seed_opt) {
		long v;
		if (parse_long(seed_opt, &v) < 0 || v < 0) {
			plan_free(&plan);
			return cmd_usage_error_name("run", "--seed '%s' is not a "
					       "non-negative integer", seed_opt);
		}
		seed = (unsigned long long)v;
	}

	/* Everything that can refuse the run happens before any process. */
	st.lbs = xcalloc(plan.ntargets, sizeof(struct tool));
	for (i = 0; i < plan.ntargets; i++) {
		const char *want = plan.targets[i].llama_bench ?
			plan.targets[i].llama_bench : plan.llama_bench;

		if (transport_is_remote(&plan.targets[i])) {
			/* found by the remote shell: the path or PATH */
			st.lbs[i].name = xstrdup("llama-bench");
			st.lbs[i].path = xstrdup(want ? want : "llama-bench");
			st.lbs[i].where = "target";
			continue;
		}
		if (tool_find("llama-bench", want, &st.lbs[i]) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
	}
	for (i = 0; i < plan.nvariants; i++) {
		const struct plan_variant *v = &plan.variants[i];
		char have[65];

		if (!v->inject_lib)
			continue;
		if (target_sha256(NULL, plan_target(&plan, v->target),
				  v->inject_lib, have) < 0) {
			/* unreadable or unreachable: not a mismatch */
			ret = EXIT_ENV;
			goto cleanup;
		}
		if (strcasecmp(have, v->inject_sha256)) {
			error("variant '%s': library '%s' has SHA-256 %s, the "
			      "plan expects %s; refusing to run", v->name,
			      v->inject_lib, have, v->inject_sha256);
			ret = EXIT_CHECK;
			goto cleanup;
		}
	}
	if (store_open(&st.s, ctx->db_path) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	st.fps = xcalloc(plan.ntargets, sizeof(char *));
	st.macos = xcalloc(plan.ntargets, sizeof(int));
	st.env_ids = xcalloc(plan.ntargets, sizeof(int64_t));
	buf_adds(&warnings, "[");
	for (i = 0; i < plan.ntargets; i++) {
		char *w = NULL, sha[65], *fp;
		if (probe_target(&plan.targets[i], &st.fps[i], &w) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
		fp = fingerprint_set(st.fps[i], "llama_bench_path",
				     st.lbs[i].path);
		free(st.fps[i]);
		st.fps[i] = fp;
		st.macos[i] = strstr(st.fps[i], "\"os_name\":\"macOS\"") != NULL;
		if (transport_is_remote(&plan.targets[i]) ?
		    (strchr(st.lbs[i].path, '/') &&
		     target_sha256(NULL, &plan.targets[i], st.lbs[i].path,
				   sha) == 0) :
		    tool_binary_sha256(&st.lbs[i], sha) == 0) {
			fp = fingerprint_set(st.fps[i], "llama_bench_sha256", sha);
			free(st.fps[i]);
			st.fps[i] = fp;
		}
		for (size_t k = 0; k < plan.nvariants; k++)
			if (plan.variants[k].inject_lib &&
			    !strcmp(plan.variants[k].target, plan.targets[i].name)) {
				fp = fingerprint_set(st.fps[i], "shim_sha256",
						     plan.variants[k].inject_sha256);
				free(st.fps[i]);
				st.fps[i] = fp;
			}
		if (strlen(w) > 2) {
			if (warnings.len > 1)
				buf_addch(&warnings, ',');
			buf_add(&warnings, w + 1, strlen(w) - 2);
			nwarn++;
		}
		free(w);
	}
	buf_addch(&warnings, ']');
	if (nwarn && !ctx->quiet)
		fprintf(stderr, "pre-flight warnings: %s\n", warnings.buf);
	if (nwarn && strict) {
		error("--strict: refusing to run because of pre-flight "
		      "warnings: %s", warnings.buf);
		ret = EXIT_CHECK;
		goto cleanup;
	}

	utc_now(now);
	buf_addf(&plan_json, "%.*s,\"shimbench_seed\":%llu}",
		 (int)strlen(plan.json) - 1, plan.json, seed);
	sr.kind = "run";
	sr.started_at = now;
	sr.status = "running";
	sr.source = argv[optind];
	sr.plan_json = plan_json.buf;
	sr.warnings_json = nwarn ? warnings.buf : NULL;
	sr.label = label ? label : plan.name;
	if (store_begin(st.s) < 0 || store_session_add(st.s, &sr, &st.sid) < 0) {
		store_rollback(st.s);
		ret = EXIT_ENV;
		goto cleanup;
	}
	for (i = 0; i < plan.ntargets; i++) {
		char id[65], base[65];
		fingerprint_identity(st.fps[i], id, base);
		if (store_environment_add(st.s, st.sid, plan.targets[i].name,
					  st.fps[i], id, base,
					  &st.env_ids[i]) < 0)
			break;
	}
	if (store_commit(st.s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	bundle = bundle_opt ? xstrdup(bundle_opt) :
		xstrfmt("evidence/session-%lld", (long long)st.sid);
	st.bundle = bundle;
	{
		char *runs = xstrfmt("%s/runs", bundle);
		int rc = mkdir_p(runs);
		free(runs);
		if (rc < 0) {
			store_session_finish(st.s, st.sid, "failed");
			ret = EXIT_ENV;
			goto cleanup;
		}
	}

	/* Models: verified on the target before any of their runs. */
	st.model_bad = xcalloc(plan.nmodels, sizeof(int));
	st.artifact_ids = xcalloc(plan.nmodels, sizeof(int64_t));
	for (i = 0; i < plan.nmodels; i++) {
		const struct plan_model *m = &plan.models[i];
		char have[65];

		size_t k, vv;

		for (k = 0; k < plan.ntargets && !st.model_bad[i]; k++) {
			const struct plan_target *t = &plan.targets[k];

			for (vv = 0; vv < plan.nvariants; vv++)
				if (!strcmp(plan.variants[vv].target, t->name))
					break;
			if (vv == plan.nvariants)
				continue;	/* no variant runs here */
			if (!ctx->quiet)
				fprintf(stderr, "verifying model '%s' (%s) on "
					"target '%s'\n", m->name, m->path,
					t->name);
			if (target_sha256(st.s, t, m->path, have) < 0) {
				st.model_bad[i] = 1;
				buf_addf(&st.problems, "model '%s': cannot read "
					 "'%s' on target '%s'\n", m->name,
					 m->path, t->name);
				break;
			}
			if (m->sha256 && strcasecmp(have, m->sha256)) {
				error("model '%s': '%s' on target '%s' has "
				      "SHA-256 %s, expected %s; skipping its "
				      "runs", m->name, m->path, t->name, have,
				      m->sha256);
				buf_addf(&st.problems, "model '%s': SHA-256 "
					 "mismatch\n", m->name);
				st.model_bad[i] = 1;
				break;
			}
			if (!st.artifact_ids[i])
				store_artifact_add(st.s, have, "model", m->path,
						   -1, NULL, &st.artifact_ids[i]);
		}
	}

	/* Capability probes: once per variant, before its processes. */
	st.probe_out = xcalloc(plan.nvariants, sizeof(char *));
	st.probe_ok = xcalloc(plan.nvariants, sizeof(int));
	st.probe_detail = xcalloc(plan.nvariants, sizeof(struct buf));
	for (i = 0; i < plan.nvariants; i++) {
		const struct plan_variant *v = &plan.variants[i];

		buf_init(&st.probe_detail[i], 0);
		if (!v->probe_argv)
			continue;
		const struct plan_target *pt = plan_target(&plan, v->target);
		st.probe_out[i] = run_probe(v, pt, st.macos[pt - plan.targets],
					    &st.probe_ok[i],
					    &st.probe_detail[i]);
		if (!ctx->quiet)
			fprintf(stderr, "variant %s: %s %s\n", v->name,
				st.probe_ok[i] ? "probe ok:" : "PROBE FAILED:",
				st.probe_detail[i].buf);
	}
	jobs = schedule(&plan, seed, &njobs);
	if (!ctx->quiet)
		fprintf(stderr, "session %lld: %zu processes, %s order, seed "
			"%llu, llama-bench %s (%s)\n", (long long)st.sid, njobs,
			plan.interleaved ? "interleaved" : "grouped", seed,
			st.lbs[0].path, st.lbs[0].where);
	proc_catch_interrupts();
	st.started = mono_now();
	for (i = 0; i < njobs && !st.interrupted; i++) {
		if (st.model_bad[jobs[i].model])
			continue;
		if (proc_interrupted()) {
			st.interrupted = 1;
			break;
		}
		if (run_one(&st, &jobs[i], (int)i + 1, (int)njobs) < 0) {
			ret = EXIT_ENV;
			break;
		}
	}
	for (i = 0; i < plan.ntargets; i++) {
		char id[65], base[65];
		fingerprint_identity(st.fps[i], id, base);
		store_environment_update(st.s, st.env_ids[i], st.fps[i], id,
					 base);
	}
	for (i = 0; i < plan.nmodels; i++)
		if (st.model_bad[i])
			st.failures++;
	store_session_finish(st.s, st.sid, st.interrupted ? "interrupted" :
			     (st.failures || st.unverified || ret) ? "failed" :
			     "ok");
	if (bundle_export(st.s, st.sid, bundle) < 0) {
		if (ret == EXIT_OK)
			ret = EXIT_ENV;
	} else if (!ctx->quiet) {
		fprintf(stderr, "evidence bundle: %s\n", bundle);
	}
	if (!ctx->quiet || st.failures || st.unverified) {
		struct selection sel = { 0 };
		struct report rep = { 0 };
		struct buf out = BUF_INIT;
		char s[32];

		snprintf(s, sizeof(s), "session=%lld", (long long)st.sid);
		if (selection_parse(s, &sel) == 0 &&
		    report_build(st.s, &sel, &rep) == 0) {
			report_render(&rep, "md", &out);
			fwrite(out.buf, 1, out.len, stdout);
		}
		report_release(&rep);
		selection_free(&sel);
		buf_release(&out);
	}
	if (st.problems.len)
		fprintf(stderr, "session %lld failed:\n%s", (long long)st.sid,
			st.problems.buf);
	if (st.interrupted) {
		fprintf(stderr, "interrupted: session %lld stored as "
			"interrupted with its completed runs\n",
			(long long)st.sid);
		ret = 130;
	} else if (ret == EXIT_OK && (st.failures || st.unverified)) {
		ret = EXIT_CHECK;
	}
cleanup:
	free(jobs);
	for (i = 0; st.probe_out && i < plan.nvariants; i++) {
		free(st.probe_out[i]);
		buf_release(&st.probe_detail[i]);
	}
	free(st.probe_out);
	free(st.probe_ok);
	free(st.probe_detail);
	for (i = 0; st.fps && i < plan.ntargets; i++)
		free(st.fps[i]);
	free(st.fps);
	free(st.macos);
	free(st.env_ids);
	free(st.model_bad);
	free(st.artifact_ids);
	free(bundle);
	for (i = 0; st.lbs && i < plan.ntargets; i++)
		tool_release(&st.lbs[i]);
	free(st.lbs);
	store_close(st.s);
	buf_release(&warnings);
	buf_release(&plan_json);
	buf_release(&st.problems);
	plan_free(&plan);
	return ret;
}

LEGACY_COMMAND(run, "run a plan: llama-bench per variant, verified and stored", cmd_run_main, usage_run);
