#define _POSIX_C_SOURCE 200809L
#include "evidence/bundle.h"
#include "cmd/cmd.h"
#include "evidence/store.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_import[] =
	"usage: shimbench import [--mapping FILE]... [--allow-tampered]\n"
	"                        [--label TEXT] DIR...\n"
	"\n"
	"Ingests evidence into the store. DIR is either an evidence bundle\n"
	"(bundle.json + SHA256SUMS + raw files, as written by `run` and\n"
	"`export`) or a directory of raw llama-bench JSON/stderr files with\n"
	"a SHA256SUMS file and a mapping file (--mapping, paired with the\n"
	"DIRs in order) that names each file's target, variant, role and\n"
	"model. SHA256SUMS is verified before anything is stored; a mismatch\n"
	"refuses the import (exit 1) and names the file. Every DIR is loaded\n"
	"and checked before any is stored. Importing the same content again\n"
	"stores nothing and says which session holds it.\n"
	"\n"
	"  --mapping FILE     mapping for a raw directory (see README)\n"
	"  --allow-tampered   import despite checksum mismatches; the\n"
	"                     session is flagged as tampered\n"
	"  --label TEXT       a label for the session(s)\n";

static int
cmd_import_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "mapping", required_argument, NULL, 'm' },
		{ "allow-tampered", no_argument, NULL, 'T' },
		{ "label", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char **mappings = NULL, *label = NULL;
	struct ingest **loaded = NULL;
	struct store *s = NULL;
	int nmap = 0, allow = 0, c, ndirs, i, ret = EXIT_OK;

	while ((c = getopt_long(argc, argv, "m:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mappings = xrealloc(mappings,
					    (size_t)(nmap + 1) * sizeof(char *));
			mappings[nmap++] = optarg;
			break;
		case 'T':
			allow = 1;
			break;
		case 'l':
			label = optarg;
			break;
		case 'h':
			free(mappings);
			return cmd_help(usage_import);
		default:
			free(mappings);
			return cmd_usage_error_name("import", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	ndirs = argc - optind;
	if (ndirs <= 0) {
		free(mappings);
		return cmd_usage_error_name("import", "no directory given");
	}
	if (nmap && nmap != ndirs) {
		free(mappings);
		return cmd_usage_error_name("import", "%d --mapping files for %d "
				       "directories; give one per directory",
				       nmap, ndirs);
	}
	loaded = xcalloc((size_t)ndirs, sizeof(*loaded));
	for (i = 0; i < ndirs; i++) {
		const char *dir = argv[optind + i];
		int rc = bundle_load(dir, nmap ? mappings[i] : NULL, allow,
				     &loaded[i]);
		if (rc == -2) {
			fprintf(stderr, "error: '%s' failed verification; "
				"nothing was imported\n", dir);
			ret = EXIT_CHECK;
			goto cleanup;
		}
		if (rc < 0) {
			fprintf(stderr, "error: cannot import '%s'; nothing "
				"was imported\n", dir);
			ret = EXIT_USAGE;
			goto cleanup;
		}
	}
	if (store_open(&s, ctx->db_path) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	for (i = 0; i < ndirs; i++) {
		int64_t sid = 0;
		int already = 0, runs, results, samples, unverified;

		if (bundle_store(loaded[i], s, label, &sid, &already) < 0) {
			fprintf(stderr, "error: storing '%s' failed\n",
				argv[optind + i]);
			ret = EXIT_ENV;
			goto cleanup;
		}
		bundle_counts(loaded[i], &runs, &results, &samples,
			      &unverified);
		if (already)
			printf("'%s' is already imported as session %lld; "
			       "nothing stored\n", argv[optind + i],
			       (long long)sid);
		else
			printf("imported '%s' as session %lld: %d runs, %d "
			       "results, %d samples%s%s\n", argv[optind + i],
			       (long long)sid, runs, results, samples,
			       unverified ? ", some runs unverified" : "",
			       bundle_tampered(loaded[i]) ?
			       " (flagged as tampered)" : "");
	}
cleanup:
	for (i = 0; loaded && i < ndirs; i++)
		bundle_free(loaded[i]);
	free(loaded);
	free(mappings);
	store_close(s);
	return ret;
}

LEGACY_COMMAND(import, "ingest evidence bundles or raw llama-bench files", cmd_import_main, usage_import);
