#ifndef EVIDENCE_BUNDLE_H
#define EVIDENCE_BUNDLE_H

/*
 * Evidence bundles, both ways: the names of a run's raw files inside a
 * bundle, reading a bundle (bundle.json) or a raw evidence directory (raw
 * llama-bench / MLX-LM files plus a mapping file) into a session_data,
 * and writing a session_data as a bundle. The store is not involved here:
 * store_session_save() and store_session_load() are the other half.
 * The formats are documented in docs/formats.md. bundle.c holds the
 * names and the identity, bundleread.c reading, bundlewrite.c writing.
 *
 * Every file is read once, from inside the directory only (no symbolic
 * links, no FIFOs or devices), hashed and parsed from the same bytes.
 */

#include <stddef.h>
#include <stdint.h>

struct session_data;
struct buf;

/* The bundle-relative names of the raw files of run `seq` (caller frees). */
void bundle_run_paths(int seq, const char *variant, const char *model,
		      char **stdout_rel, char **stderr_rel);
/* The bundle-relative name of a variant's capability probe output. */
char *bundle_probe_path(const char *variant);
/*
 * 1 when a bundle-relative name stays inside the bundle (relative, no
 * "..", "." or empty component, no control character), else 0: every
 * name read from or written into a bundle is checked with it.
 */
int bundle_safe_name(const char *name);

enum {
	BUNDLE_ALLOW_TAMPERED = 1 << 0,   /* load despite checksum failures;
					     the session is marked tampered */
};

/* What bundle_read() and bundle_read_files() return besides RC_OK. */
enum {
	BUNDLE_BAD_INPUT = -1,    /* after error(): unreadable or malformed */
	BUNDLE_TAMPERED = -2,     /* after error(): a checksum fails, a file
				     is missing or not covered */
};

/*
 * Reads dir into d (zeroed first): SHA256SUMS, then bundle.json (or the
 * mapping file when mapping is not NULL), then every raw file it names.
 * For a bundle, every file SHA256SUMS lists must be present and match;
 * for a raw directory, every file read must be listed and match, and
 * listed files that are absent are named in a warning. Verification,
 * capabilities and statuses are derived from the raw files (derive.h).
 * d->s.content_hash identifies the content (bundle_content_hash()).
 * Returns 0; BUNDLE_BAD_INPUT after error() for bad input;
 * BUNDLE_TAMPERED after error() when a checksum fails or a file is not
 * covered (unless BUNDLE_ALLOW_TAMPERED, which loads, warns and sets
 * d->s.tampered).
 */
int bundle_read(const char *dir, const char *mapping, unsigned flags,
		struct session_data *d);

/*
 * The identity of a session's evidence: SHA-256 over its runs' raw file
 * hashes and their meaning (target, variant, role, model, runtime),
 * independent of run order and of how a mapping is formatted. Runs
 * without a stdout hash do not count. hex gets 64 characters + NUL.
 * Returns the number of runs that counted: a session with none has no
 * identity (its content hash stays NULL; it holds nothing to count twice).
 */
size_t bundle_content_hash(const struct session_data *d, char hex[65]);

/* A further file of a bundle: a safe relative name chosen by the caller. */
struct bundle_file {
	const char *name;          /* e.g. "charts/speedup.svg" */
	const char *data;
	size_t len;
};

/* What a bundle's README.md and results.csv hold (rendered by the caller). */
struct bundle_tables {
	const char *readme_md;     /* the report tables, Markdown */
	const char *results_csv;   /* the report in results.csv columns */
	const struct bundle_file *files;  /* the README's charts; SHA256SUMS */
	size_t nfiles;                    /* covers them like every file */
};

enum {
	BUNDLE_KEEP_RUN_FILES = 1 << 0,  /* dir holds raw files the run wrote */
	BUNDLE_FORCE = 1 << 1,           /* write into a non-empty dir */
};

/*
 * Writes d as a bundle into dir: raw files from d's stored copies (a file
 * already there with the recorded SHA-256 is kept), bundle.json,
 * results.csv, t's further files, README.md, and SHA256SUMS last, over
 * every other file. A
 * non-empty dir is refused unless BUNDLE_FORCE, or unless it holds only
 * this session's raw files and BUNDLE_KEEP_RUN_FILES. A stored copy that
 * does not match its recorded SHA-256 is an error, never written. 0, or -1
 * after error(); a failed write leaves no SHA256SUMS, so the directory is
 * never taken for a complete bundle.
 */
int bundle_write(const char *dir, const struct session_data *d,
		 const struct bundle_tables *t, unsigned flags);

/*
 * Where a run's bundle goes by default: a private PARENT/.run-HOST-PID-XXXXXX
 * made before the session exists (caller frees), then renamed to the first free
 * PARENT/session-N, session-N-2, ... once the session id is known, so a
 * bundle never lands in, or over, another store's session directory.
 * bundle_settle() returns the final name (tmp itself when the rename
 * failed, with a warning; caller frees).
 */
char *bundle_tmpdir(const char *parent);
/*
 * Removes the PARENT/.run-HOST-PID-XXXXXX directories of runs on this host
 * whose process is gone (killed before their bundle settled); those of
 * live processes, of other hosts and of other names stay. Returns how
 * many it removed; problems are warnings.
 */
int bundle_clean_dead(const char *parent);
char *bundle_settle(const char *tmp, const char *parent, int64_t sid);

/*
 * A quick import without a mapping file: raw llama-bench files (paths,
 * all in one directory) that share one meaning. Each output X.json
 * (.jsonl, .md, .csv, .sql, .txt) is a run; its stderr is X.stderr, X.err
 * or X.log, given or found beside it (a lone X.log is an output captured
 * with 2>&1). The mapping is built in memory and read as bundle_read()
 * reads one, with every rule of a raw directory: each file read once,
 * from inside the directory, checked against its SHA256SUMS. model and
 * runtime may be NULL.
 */
struct bundle_set {
	const char *target, *variant, *role, *model, *runtime;
};

enum {
	/* no SHA256SUMS is allowed: the session gets the warning "imported
	 * without checksums: provenance unverified" (one that exists is
	 * still checked) */
	BUNDLE_NO_CHECKSUMS = 1 << 8,
};

/*
 * Reads files into d as bundle_read() does (0, BUNDLE_BAD_INPUT or
 * BUNDLE_TAMPERED); flags: BUNDLE_ALLOW_TAMPERED, BUNDLE_NO_CHECKSUMS.
 */
int bundle_read_files(const char *const *files, size_t n,
		      const struct bundle_set *set, unsigned flags,
		      struct session_data *d);

#endif
