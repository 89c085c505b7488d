#ifndef RUN_SESSION_H
#define RUN_SESSION_H

/*
 * The run engine: one call runs a whole plan and stores it.
 *
 *   pre-flight   llama-bench found on every target; injected libraries'
 *                SHA-256 checked; every target fingerprinted (warnings,
 *                --strict); nothing runs when any of it fails
 *   session      the session and its environments stored
 *   models       each model hashed on the targets that run it
 *   probes       each variant's capability probe, once
 *   processes    llama-bench per job of the schedule, its raw output
 *                streamed into the bundle directory, parsed, verified
 *                (derive.h) and stored in one transaction per process
 *   finish       the session's status and content hash
 *
 * Progress goes to a callback, so the library prints nothing itself.
 */

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "evidence/state.h"

struct store;
struct plan;

enum run_event_kind {
	RUN_EV_NOTE,       /* text: a line worth showing (verification of a
			      model, a probe's answer, pre-flight warnings) */
	RUN_EV_SESSION,    /* the session is stored: session, total */
	RUN_EV_BEGIN,      /* a process starts */
	RUN_EV_TICK,       /* about once a second while it runs */
	RUN_EV_END,        /* it ended: status, verification, wall */
};

struct run_event {
	enum run_event_kind kind;
	const char *text;
	int64_t session;
	size_t seq, total;          /* 1-based process number, processes */
	const char *variant, *model;
	int round;
	double elapsed;             /* since the first process started */
	double eta;                 /* estimated seconds left; < 0 unknown */
	double proc_elapsed;        /* of the running process */
	const char *status, *verification;
	double wall;
};

struct run_opts {
	const char *source;         /* the plan's path, as recorded */
	const char *bundle_dir;     /* raw files go to BUNDLE_DIR/runs/ */
	const char *label;          /* NULL: the plan's name */
	int strict;                 /* refuse to run on a pre-flight warning */
	uint64_t seed;              /* the interleaving seed (recorded) */
	void (*progress)(void *ctx, const struct run_event *e);
	void *progress_ctx;
};

struct run_summary {
	int64_t session_id;
	size_t processes, done;
	int failures;               /* processes not ok, models that failed */
	int unverified;             /* processes whose injection was not verified */
	int interrupted;
	enum session_state status;  /* ok, failed or interrupted */
	struct buf problems;        /* one line per problem */
};

enum {
	RUN_ENV = -1,       /* an environment or tool failure (error()) */
	RUN_REFUSED = -2,   /* a check refused the run before it started */
	RUN_BAD_PLAN = -3,  /* the plan cannot be run as written */
};

/*
 * Runs plan p and stores it in s. Returns 0 when the session was run and
 * stored (sum says how it went), or one of RUN_* after error(); nothing
 * is stored when a pre-flight step fails. SIGINT/SIGTERM stop the current
 * process; completed runs are kept and the session is "interrupted".
 */
/*
 * The model files of a plan's local targets exist and can be read: 0, or
 * RUN_ENV after error() naming the model, file and target. run_session()
 * checks it first; a command calls it before it opens the store, so a
 * plan naming a missing model leaves no store, session or bundle.
 */
int run_check_models(const struct plan *p);

int run_session(struct store *s, const struct plan *p,
		const struct run_opts *o, struct run_summary *sum);
void run_summary_release(struct run_summary *sum);

/*
 * run --resume: finishes session sid, killed (abandoned) or interrupted,
 * with plan p: the same seed and order, the processes not yet stored
 * (an interrupted one again), into the same session. Refused
 * (RUN_REFUSED after error() saying why) when the session is not a run,
 * is finished, is still running, or when the plan, a model's SHA-256 or
 * a target's llama-bench, hardware or OS build changed since. o->seed is
 * ignored (the session's own is used). As run_session() otherwise.
 */
int run_resume(struct store *s, const struct plan *p, const struct run_opts *o,
	       int64_t sid, struct run_summary *sum);

#endif
