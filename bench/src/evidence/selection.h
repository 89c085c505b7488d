#ifndef EVIDENCE_SELECTION_H
#define EVIDENCE_SELECTION_H

/*
 * Selections: what a command reads from the store, as the user writes it
 * ("key=value[,key=value…]"), parsed once at the edge (the command's
 * options) into a struct that everything below takes. Nothing here knows
 * SQL: the store turns a selection into a query (store.h
 * store_query_results()), and the rule of what counts by default is
 * spelled once, here, for the store's query and for the code that
 * judges rows already read (the gate's shim checks).
 *
 * Keys:
 *   columns      session, label, kind, variant, target, model, role,
 *                runtime, test, status (the run's), session_status,
 *                tampered, verification, os_build, os_version, identity,
 *                base_identity, build, sha256 (the model's)
 *   other keys   a configuration field of the stored llama-bench rows
 *                (flash_attn, n_threads, n_batch, backends or backend, …)
 *                or a fingerprint key seen in the store: the store
 *                resolves them, and names the keys it knows when one is
 *                neither
 *   include      what counts although it is left out by default:
 *                tampered, partial (a run whose status is not ok),
 *                failed, interrupted and unfinished (running or
 *                importing) sessions, or all; several joined by '+'
 * An empty selection (or "all") selects everything. session=latest is
 * the newest session, session=latest~K the K-th before it.
 *
 * What counts by default: the results of runs with status ok, of
 * sessions with status ok that were not imported as tampered. The rest
 * is left out unless include= (or a key naming it: status=incomplete,
 * session_status=failed, tampered=1) asks for it.
 *
 * Strings in a selection are its own; selection_free() releases them.
 */

#include "evidence/state.h"
#include <stddef.h>

/* What include= counts beyond the default. */
enum {
	SEL_TAMPERED = 1,       /* sessions imported with --allow-tampered */
	SEL_PARTIAL = 2,        /* runs whose status is not ok */
	SEL_FAILED = 4,         /* sessions with status failed */
	SEL_INTERRUPTED = 8,    /* sessions with status interrupted */
	SEL_UNFINISHED = 16,    /* sessions running or importing */
	SEL_ALL = 31,
	SEL_NEVER = 32,         /* selection_needs(): a session status no
				   include= counts */
};

/* The key of a term. SEL_KEY_OTHER: a configuration field or a
 * fingerprint key, resolved by the store. */
enum sel_key {
	SEL_KEY_OTHER = 0,
	SEL_KEY_SESSION,
	SEL_KEY_LABEL,
	SEL_KEY_KIND,
	SEL_KEY_VARIANT,
	SEL_KEY_TARGET,
	SEL_KEY_MODEL,
	SEL_KEY_ROLE,
	SEL_KEY_RUNTIME,
	SEL_KEY_TEST,
	SEL_KEY_STATUS,
	SEL_KEY_SESSION_STATUS,
	SEL_KEY_TAMPERED,
	SEL_KEY_VERIFICATION,
	SEL_KEY_OS_BUILD,
	SEL_KEY_OS_VERSION,
	SEL_KEY_IDENTITY,
	SEL_KEY_BASE_IDENTITY,
	SEL_KEY_BUILD,
	SEL_KEY_SHA256,
	SEL_NKEYS
};

struct sel_term {
	enum sel_key key;
	char *name;             /* the key as written ("fa", "os_name") */
	char *value;
	long latest;            /* session=latest~K: K (latest: 0); else -1 */
};

struct selection {
	struct sel_term *t;
	size_t n;
	unsigned include;       /* SEL_* counted beyond the default */
	char *text;             /* as written, for messages ("" for all);
				   for one built here, selection_text() */
};

/*
 * Parses text (NULL or "" or "all": everything) into *out. 0, or -1
 * after error() naming the selection and the part that is wrong (not
 * key=value, a bad key, a bad include= word): a usage error. *out is
 * empty (all zero) after a failure, and needs selection_free() after a
 * success.
 */
int selection_parse(const char *text, struct selection *out);
void selection_free(struct selection *sel);
/* A deep copy of src into *dst. */
void selection_copy(struct selection *dst, const struct selection *src);
/* Removes the terms of key k. */
void selection_drop(struct selection *sel, enum sel_key k);
/* Adds the SEL_* bits of include to what sel counts. */
void selection_set_include(struct selection *sel, unsigned include);
/* Appends name=value; name must be a valid key (a programming error
 * otherwise). The text becomes selection_text()'s. */
void selection_add(struct selection *sel, const char *name,
		   const char *value);

/* The selection as text ("key=value,...,include=..."; "" for none;
 * caller frees). */
char *selection_text(const struct selection *sel);
/* The words of include= for the SEL_* bits of mask ("tampered+partial";
 * caller frees). */
char *selection_include_words(unsigned mask);
/* The name of a column key ("session_status"); "" for SEL_KEY_OTHER. */
const char *selection_key_name(enum sel_key k);
/*
 * 1 when a session value is "latest" (the newest session) or "latest~K"
 * (K sessions before it), with *back set to K; 0 otherwise.
 */
int selection_latest(const char *value, long *back);

/*
 * The default, as a rule on one row: the SEL_* bits a row of a session
 * with that status (tampered or not) and a run with that status needs to
 * count (0: it counts by default; SEL_NEVER among them: nothing counts
 * it), and whether it counts under include.
 */
unsigned selection_needs(const char *session_status, int tampered,
			 const char *run_status);
int selection_counts(unsigned include, const char *session_status,
		     int tampered, const char *run_status);
/*
 * The session statuses in order, each with the bit that counts it (0:
 * counted by default); the store's query is written from this table.
 */
struct sel_status {
	enum session_state state;    /* its stored name: session_state_name() */
	unsigned bit;
};
extern const struct sel_status selection_statuses[];
extern const size_t selection_nstatuses;

/*
 * 1 when a stored configuration value matches a selection's value as
 * written: equal, with true/on and 1, false/off and 0 the same.
 */
int selection_value_matches(const char *stored, const char *wanted);

#endif
