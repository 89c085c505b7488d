#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "evidence/state.h"
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
	const char *set;
	int no_checksums;
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
	OPT_S("set", 0, IO, set, "KEY=VALUE,...",
	      "import FILEs (not DIRs) without a mapping, all with this "
	      "meaning: target=, variant=, role= (bare-metal, stock, shim or "
	      "free; default: the variant when it is one of the first three), "
	      "optional model= and runtime="),
	OPT_F("no-checksums", 0, IO, no_checksums,
	      "with --set: import files that no SHA256SUMS vouches for; the "
	      "session is marked \"imported without checksums: provenance "
	      "unverified\""),
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
		*unverified += verify_state_of(d->runs[i].r.verification) ==
			VERIFY_UNVERIFIED;
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
		return rc == BUNDLE_TAMPERED ? EXIT_CHECK : EXIT_USAGE;
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
		return rc == STORE_DUPLICATE ? EXIT_CHECK : EXIT_ENV;
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
		if (session_state_of(d.s.status) != SESSION_STATE_OK)
			buf_addf(msgs, " (recorded as %s)", d.s.status);
		buf_addch(msgs, '\n');
	}
	session_data_release(&d);
	return EXIT_OK;
}

/*
 * "target=guest,variant=stock,role=stock[,model=M][,runtime=R]" into set
 * (pointing into *copy, which the caller frees); -1 after printing why.
 */
static int
parse_set(const struct cmd_ctx *ctx, const char *spec, char **copy,
	  struct bundle_set *set)
{
	static const char *const roles[] = { "bare-metal", "stock", "shim" };
	const char **slot;
	char *item, *save = NULL;
	size_t k;

	memset(set, 0, sizeof(*set));
	*copy = xstrdup(spec);
	for (item = strtok_r(*copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq || eq == item || !eq[1])
			return cmd_usage_error(ctx, "--set: '%s' is not "
					       "KEY=VALUE", item), -1;
		*eq = '\0';
		slot = !strcmp(item, "target") ? &set->target :
		       !strcmp(item, "variant") ? &set->variant :
		       !strcmp(item, "role") ? &set->role :
		       !strcmp(item, "model") ? &set->model :
		       !strcmp(item, "runtime") ? &set->runtime : NULL;
		if (!slot)
			return cmd_usage_error(ctx, "--set: unknown key '%s' "
					       "(target, variant, role, model, "
					       "runtime)", item), -1;
		if (*slot)
			return cmd_usage_error(ctx, "--set: '%s' given twice",
					       item), -1;
		*slot = eq + 1;
	}
	if (!set->target || !set->variant)
		return cmd_usage_error(ctx, "--set needs target= and variant= "
				       "(and role= unless the variant is "
				       "bare-metal, stock or shim)"), -1;
	for (k = 0; !set->role && k < ARRAY_SIZE(roles); k++)
		if (!strcmp(set->variant, roles[k]))
			set->role = roles[k];
	if (!set->role)
		return cmd_usage_error(ctx, "--set: give role= for variant "
				       "'%s' (bare-metal, stock, shim or a "
				       "free name)", set->variant), -1;
	return 0;
}

/* --set: the FILEs as one session, stored like a directory. */
static int
import_files(struct store *s, const char **files, size_t n,
	     const struct bundle_set *set, const struct import_opts *o,
	     struct buf *msgs)
{
	struct session_data d;
	size_t results, samples, unverified;
	int64_t sid = 0;
	int already = 0, rc;
	unsigned flags = (o->allow_tampered ? BUNDLE_ALLOW_TAMPERED : 0) |
			 (o->no_checksums ? BUNDLE_NO_CHECKSUMS : 0);

	rc = bundle_read_files(files, n, set, flags, &d);
	if (rc < 0) {
		fprintf(stderr, "error: cannot import '%s'%s; nothing was "
			"imported\n", files[0], n > 1 ? " and the others" : "");
		return rc == BUNDLE_TAMPERED ? EXIT_CHECK : EXIT_USAGE;
	}
	if (o->label) {
		free(d.s.label);
		d.s.label = xstrdup(o->label);
	}
	rc = store_session_save(s, &d, &sid, &already);
	if (rc < 0) {
		fprintf(stderr, "error: cannot import '%s'; nothing was "
			"imported\n", files[0]);
		session_data_release(&d);
		return rc == STORE_DUPLICATE ? EXIT_CHECK : EXIT_ENV;
	}
	counts(&d, &results, &samples, &unverified);
	if (already) {
		buf_addf(msgs, "these files are already imported as session "
			 "%lld; nothing stored\n", (long long)sid);
	} else {
		buf_addf(msgs, "imported %zu file%s as session %lld: %zu runs, "
			 "%zu results, %zu samples", n, n > 1 ? "s" : "",
			 (long long)sid, d.nruns, results, samples);
		if (unverified)
			buf_adds(msgs, ", some runs unverified");
		if (d.s.tampered)
			buf_adds(msgs, " (flagged as tampered)");
		if (o->no_checksums && d.s.warnings_json &&
		    strstr(d.s.warnings_json, "provenance unverified"))
			buf_adds(msgs, " (provenance unverified: no "
				 "SHA256SUMS)");
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
	struct bundle_set set;
	char *set_copy = NULL;
	size_t ndirs, i;
	int rc, ret = EXIT_OK;

	rc = cmd_parse(ctx, argc, argv, &o, &dirs, &ndirs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (o.set && o.mappings.n) {
		ret = cmd_usage_error(ctx, "--set and --mapping exclude each "
				      "other: --set gives every FILE one "
				      "meaning, a mapping one per run");
		goto cleanup;
	}
	if (o.no_checksums && !o.set) {
		ret = cmd_usage_error(ctx, "--no-checksums goes with --set "
				      "FILE...");
		goto cleanup;
	}
	if (o.set && parse_set(ctx, o.set, &set_copy, &set) < 0) {
		ret = EXIT_USAGE;
		goto cleanup;
	}
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
	cmd_progress_steps(ctx);
	if (o.set)
		ret = import_files(s, dirs, ndirs, &set, &o, &msgs);
	/* All DIRs or none: one transaction, one DIR in memory at a time. */
	for (i = 0; !o.set && i < ndirs && ret == EXIT_OK; i++)
		ret = import_one(s, dirs[i], o.mappings.n ? o.mappings.v[i] :
				 NULL, &o, &msgs);
	if (ret != EXIT_OK) {
		store_rollback(s);
		if (ndirs > 1 && !o.set)
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
	free(set_copy);
	free(dirs);
	return ret;
}

const struct command cmd_import = {
	.name = "import",
	.fn = import_main,
	.summary = "ingest evidence bundles or raw llama-bench files",
	.synopsis = "[--mapping FILE]... [--allow-tampered] [--label TEXT] DIR...\n"
		    "       shimbench import --set KEY=VALUE,... [--no-checksums] "
		    "[--label TEXT] FILE...",
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
		"meaning is refused (exit 1), never counted twice.\n"
		"\n"
		"With --set, the arguments are llama-bench files of one directory\n"
		"that all have one meaning, e.g. --set target=guest,variant=stock\n"
		"(role defaults to the variant when it is bare-metal, stock or\n"
		"shim). Each output (X.json, .jsonl, .md, .csv, .sql, .txt) is a\n"
		"run, paired with its stderr X.stderr, X.err or X.log, given or\n"
		"found beside it; the files are read and checked exactly as for a\n"
		"DIR with a mapping. Without a SHA256SUMS they are refused unless\n"
		"--no-checksums, and then the session carries the warning\n"
		"\"imported without checksums: provenance unverified\". Outputs\n"
		"that are tables (md, csv, sql) have a mean and deviation but no\n"
		"samples, and are stored as such.\n",
	.opts = import_opts,
	.epilogue =
		"exit: 0 imported (or already there); 1 checksum or duplicate\n"
		"refused; 2 bad input (file, row or key named); 3 store failure.\n",
	.min_args = 1,
	.max_args = -1,
};
