#ifndef ANALYSIS_PROVENANCE_H
#define ANALYSIS_PROVENANCE_H

/*
 * Who and what was measured: the provenance of a set of stored results,
 * for every output that shows numbers (report md, html and json, the
 * bundle README, the gate's two sides). Built from the store: the
 * sessions the results stand on (id, label, kind, status, tampered, the
 * session's warnings), the targets' stored fingerprints (hardware, OS
 * version and build, llama.cpp build, llama-bench and shim SHA-256), the
 * models (SHA-256, file) and the measurement dates of the runs
 * themselves (runs.started_at: an imported session keeps its own dates;
 * the date it was stored is shown apart).
 *
 * The warnings are never optional: a tampered import, a session with
 * warnings (e.g. "imported without checksums: provenance unverified"), a
 * session that did not end "ok" and runs excluded because their
 * injection was not verified are listed first by every renderer.
 */

#include <stddef.h>
#include <stdint.h>

struct store;
struct store_result;
struct selection;
struct buf;
struct jw;
struct table;

struct prov_session {
	int64_t id;
	char *kind, *label, *status, *source;
	char *stored_at;                /* when the session was stored */
	char *measured_from, *measured_to;  /* its runs' dates; "" none */
	size_t runs, undated, excluded; /* selected runs; without a date;
					   injection not verified */
	int tampered;
	char **warnings;                /* the session's own (NULL-terminated) */
};

/* One environment of one session: a target's fingerprint. */
struct prov_env {
	int64_t session, id;
	char *target;
	char *fingerprint_json;         /* the whole stored object */
	char *hardware, *gpu, *os, *vm, *llama_build;  /* summaries; "" unknown */
	char *llama_bench_sha256, *shim_sha256;   /* "" unknown */
	size_t shim_runs;               /* selected runs of role shim here */
	int is_vm;                      /* the fingerprint's: 1, 0, -1 unknown */
};

struct prov_model {
	char *name, *label, *runtime, *file, *sha256;  /* "" unknown */
	int64_t *sessions;              /* the sessions that ran it */
	size_t nsessions;
};

struct provenance {
	struct prov_session *s;
	size_t ns;
	struct prov_env *e;
	size_t ne;
	struct prov_model *m;
	size_t nm;
	char *measured_from, *measured_to;  /* over every run; "" none */
	char **warnings;                /* every warning an output must show,
					   each naming its session (NULL-
					   terminated) */
	size_t nwarnings;
};

/*
 * The provenance of rows (as store_query_results() gives them; the runs
 * whose verification is "unverified" count as excluded) into a new
 * *out. 0, or -1 after error() (*out NULL). Free with provenance_free().
 */
int provenance_from_results(struct store *s, const struct store_result *rows,
			    size_t n, struct provenance **out);
int provenance_select(struct store *s, const char *selection,
		      struct provenance **out);
void provenance_free(struct provenance *p);

/*
 * Markdown: a heading of `level` '#' (1-5) titled title (NULL:
 * "Provenance: who and what was measured"), the warnings, then tables of
 * sessions, targets and models under headings one level deeper.
 */
void provenance_render_md(const struct provenance *p, const char *title,
			  int level, struct buf *out);
/* The same as an HTML <section> (id given, or "provenance"; escaped). */
void provenance_render_html(const struct provenance *p, const char *title,
			    const char *id, struct buf *out);
/*
 * One JSON object at the writer's position: {"warnings": [...],
 * "measured_from", "measured_to", "sessions": [...], "environments":
 * [... with the whole fingerprint], "models": [...]}.
 */
void provenance_json(const struct provenance *p, struct jw *w);

#endif
