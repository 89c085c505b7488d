#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "evidence/bundle.h"
#include "evidence/runrec.h"
#include "evidence/store.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct import_opts {
	struct opt_list mappings;
	const char *label;
	int allow_tampered;
};

#define IO struct import_opts
static const struct opt import_opts[] = {
	OPT_L("mapping", 'm', IO, mappings, "FILE",
	      "the mapping of a raw directory (one per DIR, paired in order; "
	      "see docs/formats.md)"),
	OPT_F("allow-tampered", 0, IO, allow_tampered,
	      "import despite checksum failures; the session is flagged as "
	      "tampered and every output says so"),
	OPT_S("label", 'l', IO, label, "TEXT", "a label for the session(s)"),
	OPT_END
};
#undef IO

static void
counts(const struct session_data *d, size_t *results, size_t *samples,
       size_t *unverified)
{
	size_t i, j;

	*results = *samples = *unverified = 0;
	for (i = 0; i < d->nruns; i++) {
		*results += d->runs[i].lb.n;
		for (j = 0; j < d->runs[i].lb.n; j++)
			*samples += d->runs[i].lb.rows[j].n_samples;
		*unverified += !strcmp(d->runs[i].r.verification,
				       "unverified");
	}
}

/*
 * Reads and stores one DIR inside the open transaction; prints what it
 * did. Returns an exit code; EXIT_OK also when it was already stored.
 */
static int
import_one(struct store *s, const char *dir, const char *mapping,
	   const struct import_opts *o, struct buf *msgs)
{
	struct session_data d;
	size_t results, samples, unverified;
	int64_t sid = 0;
	int already = 0, rc;

	rc = bundle_read(dir, mapping, o->allow_tampered ?
			 BUNDLE_ALLOW_TAMPERED : 0, &d);
	if (rc < 0) {
		fprintf(stderr, "error: cannot import '%s'; nothing was "
			"imported\n", dir);
		return rc == -2 ? EXIT_CHECK : EXIT_USAGE;
	}
	if (o->label) {
		free(d.s.label);
		d.s.label = xstrdup(o->label);
	}
	rc = store_session_save(s, &d, &sid, &already);
	if (rc < 0) {
		fprintf(stderr, "error: cannot import '%s'; nothing was "
			"imported\n", dir);
		session_data_release(&d);
		return rc == -2 ? EXIT_CHECK : EXIT_ENV;
	}
	counts(&d, &results, &samples, &unverified);
	if (already) {
		buf_addf(msgs, "'%s' is already imported as session %lld; "
			 "nothing stored\n", dir, (long long)sid);
	} else {
		buf_addf(msgs, "imported '%s' as session %lld: %zu runs, %zu "
			 "results, %zu samples", dir, (long long)sid, d.nruns,
			 results, samples);
		if (unverified)
			buf_adds(msgs, ", some runs unverified");
		if (d.s.tampered)
			buf_adds(msgs, " (flagged as tampered)");
		if (strcmp(d.s.status, "ok"))
			buf_addf(msgs, " (recorded as %s)", d.s.status);
		buf_addch(msgs, '\n');
	}
	session_data_release(&d);
	return EXIT_OK;
}

static int
import_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct import_opts o = { 0 };
	struct buf msgs = BUF_INIT;
	struct store *s = NULL;
	const char **dirs = NULL;
	size_t ndirs, i;
	int rc, ret = EXIT_OK;

	rc = cmd_parse(ctx, argc, argv, &o, &dirs, &ndirs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (o.mappings.n && o.mappings.n != ndirs) {
		ret = cmd_usage_error(ctx, "%zu --mapping files for %zu "
				      "directories; give one per directory",
				      o.mappings.n, ndirs);
		goto cleanup;
	}
	if (store_open(&s, ctx->db_path) < 0 || store_begin(s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	/* All DIRs or none: one transaction, one DIR in memory at a time. */
	for (i = 0; i < ndirs && ret == EXIT_OK; i++)
		ret = import_one(s, dirs[i], o.mappings.n ? o.mappings.v[i] :
				 NULL, &o, &msgs);
	if (ret != EXIT_OK) {
		store_rollback(s);
		if (ndirs > 1)
			fprintf(stderr, "error: nothing from the %zu "
				"directories was imported\n", ndirs);
		goto cleanup;
	}
	if (store_commit(s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	fputs(msgs.buf, stdout);
cleanup:
	buf_release(&msgs);
	store_close(s);
	opt_release(import_opts, &o);
	free(dirs);
	return ret;
}

const struct command cmd_import = {
	.name = "import",
	.fn = import_main,
	.summary = "ingest evidence bundles or raw llama-bench files",
	.synopsis = "[--mapping FILE]... [--allow-tampered] [--label TEXT] DIR...",
	.description =
		"Ingests evidence into the store. DIR is either an evidence bundle\n"
		"(bundle.json + SHA256SUMS + raw files, as written by `run` and\n"
		"`export`) or a directory of raw llama-bench JSON/stderr files with\n"
		"a SHA256SUMS file and a mapping file (--mapping, paired with the\n"
		"DIRs in order) that names each file's target, variant, role and\n"
		"model. Every file is checked against SHA256SUMS as it is read; a\n"
		"mismatch refuses the import (exit 1) and names the file. All DIRs\n"
		"are stored in one transaction: when one fails, none is stored.\n"
		"Importing the same evidence again stores nothing and names the\n"
		"session that holds it; an output already stored under another\n"
		"meaning is refused (exit 1), never counted twice.\n",
	.opts = import_opts,
	.epilogue =
		"exit: 0 imported (or already there); 1 checksum or duplicate\n"
		"refused; 2 bad input (file, row or key named); 3 store failure.\n",
	.min_args = 1,
	.max_args = -1,
};
