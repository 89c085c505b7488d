#ifndef EVIDENCE_STATE_H
#define EVIDENCE_STATE_H

/*
 * The states of runs and sessions, and whether a run's injection was
 * verified: one enum each and ONE name table each, the names being the
 * strings stored in SQLite (runs.status, runs.verification,
 * sessions.status) and carried in bundles. Code decides on the enum
 * (state_of_run() and friends parse a stored name once), never by
 * comparing the strings; new names are written with *_name().
 *
 * The parsers answer -1 for a name outside the table (nothing printed):
 * a caller reading evidence refuses it with its own message; a decision
 * treats it as not ok.
 */

enum run_state {
	RUN_STATE_OK,
	RUN_STATE_FAILED,        /* no results, refused output, a model fact wrong */
	RUN_STATE_INCOMPLETE,    /* results, but the output was cut off */
	RUN_STATE_TIMEOUT,
	RUN_STATE_CRASHED,       /* killed by a signal */
	RUN_STATE_INTERRUPTED,   /* SIGINT/SIGTERM to shimbench */
	RUN_STATE_EXITED,        /* a non-zero exit; settled into failed or
				    incomplete before it is stored */
};

enum session_state {
	SESSION_STATE_RUNNING,     /* a run in progress (or killed) */
	SESSION_STATE_IMPORTING,   /* an import in progress */
	SESSION_STATE_OK,
	SESSION_STATE_FAILED,
	SESSION_STATE_INTERRUPTED,
	SESSION_STATE_ABANDONED,   /* shown, never stored: running, and its
				      process is gone (store-owner.c) */
};

enum verify_state {
	VERIFY_NOT_REQUIRED,       /* the variant expects nothing */
	VERIFY_VERIFIED,
	VERIFY_UNVERIFIED,
};

/* The stored names ("ok", "failed", …). */
const char *run_state_name(enum run_state s);
const char *session_state_name(enum session_state s);
const char *verify_state_name(enum verify_state s);

/* A stored name's state; -1 when name (NULL too) is not one. */
int run_state_of(const char *name);
int session_state_of(const char *name);
int verify_state_of(const char *name);

/* "ok, failed, …": the names of a table, for messages. */
const char *run_state_names(void);
const char *session_state_names(void);

/*
 * Roles of runs: "bare-metal", "stock", "shim" (the headline table), or
 * a free name. role_names() joins the three; role_misspelt() is 1 for an
 * empty role and for one that is not a role but close to one
 * ("Bare-Metal", "bare_metal", "stok": the same word once case and
 * separators are folded away, or 1-2 edits from it), which evidence
 * refuses rather than report the runs outside the table.
 */
const char *role_names(void);
int role_misspelt(const char *role);

#endif
