#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "evidence/state.h"
#include "analysis/plot.h"
#include "analysis/render.h"
#include "analysis/table.h"
#include "analysis/report.h"
#include "evidence/bundle.h"
#include "evidence/derive.h"
#include "evidence/lbsql.h"
#include "evidence/runrec.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/json.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The charts a bundle can hold: one per plot_charts[] entry. */
#define BUNDLE_CHARTS 8

/*
 * The report's charts as SVG files of the bundle (charts/CHART.svg), each
 * referenced from README.md (md); a note there when gnuplot is missing
 * or a chart fails. names[] and imgs[] hold the files' names and bytes.
 */
static size_t
bundle_charts(const struct report *rep, struct bundle_file *files,
	      char **names, struct buf *imgs, struct buf *md)
{
	size_t c, n = 0;
	int rc;

	for (c = 0; plot_charts[c] && n < BUNDLE_CHARTS; c++) {
		rc = plot_chart(rep, plot_charts[c], "svg", &imgs[n]);
		if (rc == PLOT_NO_GNUPLOT) {
			buf_adds(md, "\n## Charts\n\nCharts need gnuplot, "
				 "which was not installed.\n");
			break;
		}
		if (rc < 0)
			buf_addf(md, "\nA chart (%s) failed: %s\n",
				 plot_charts[c], error_last());
		if (rc != 0) {
			buf_reset(&imgs[n]);
			continue;
		}
		if (!n)
			buf_adds(md, "\n## Charts\n\n");
		names[n] = xstrfmt("charts/%s.svg", plot_charts[c]);
		files[n].name = names[n];
		files[n].data = imgs[n].buf;
		files[n].len = imgs[n].len;
		buf_addf(md, "![%s](%s)\n\n", plot_charts[c], names[n]);
		n++;
	}
	return n;
}

/*
 * The report of one session, built once and rendered twice (README.md and
 * results.csv) with its charts, then the bundle. md_out, when not NULL,
 * gets the Markdown tables for the caller to print.
 */
int
cmd_write_bundle(struct store *s, int64_t sid, const char *dir,
		 unsigned flags, struct buf *md_out)
{
	struct session_data d;
	struct selection sel = { 0 };
	struct report rep = { 0 };
	struct buf md = BUF_INIT, csv = BUF_INIT, readme = BUF_INIT;
	struct buf imgs[BUNDLE_CHARTS];
	struct bundle_file files[BUNDLE_CHARTS];
	char *names[BUNDLE_CHARTS];
	struct bundle_tables t = { 0 };
	char spec[24];
	size_t i, nfiles = 0, was;
	int ret = -1;

	for (i = 0; i < BUNDLE_CHARTS; i++)
		buf_init(&imgs[i], 0);
	if (store_session_load(s, sid, &d) < 0)
		return -1;
	/* the bundle is the session: all of it, its warnings saying what
	 * would not count by default */
	snprintf(spec, sizeof(spec), "%lld", (long long)sid);
	selection_add(&sel, "session", spec);
	selection_set_include(&sel, SEL_ALL);
	if (report_build(s, &sel, &rep) < 0)
		goto cleanup;
	/* a README is read in a browser, not a terminal: every column */
	was = table_md_width(0);
	report_render(&rep, "md", &md);
	table_md_width(was);
	report_render(&rep, "csv", &csv);
	buf_add(&readme, md.buf, md.len);
	nfiles = bundle_charts(&rep, files, names, imgs, &readme);
	t.readme_md = readme.buf;
	t.results_csv = csv.buf;
	t.files = files;
	t.nfiles = nfiles;
	if (bundle_write(dir, &d, &t, flags) < 0)
		goto cleanup;
	if (md_out)   /* for a terminal: what fits it */
		report_render(&rep, "md", md_out);
	ret = 0;
cleanup:
	session_data_release(&d);
	selection_free(&sel);
	report_release(&rep);
	buf_release(&md);
	buf_release(&csv);
	buf_release(&readme);
	for (i = 0; i < nfiles; i++)
		free(names[i]);
	for (i = 0; i < ARRAY_SIZE(imgs); i++)
		buf_release(&imgs[i]);
	return ret;
}

struct export_opts {
	int force;
	const char *format;
};

#define EO struct export_opts
static const struct opt export_opts[] = {
	OPT_F("force", 0, EO, force,
	      "write into DIR even when it is not empty (files of the same "
	      "names are replaced; others stay and are not listed)"),
	OPT_C("format", 0, EO, format, "F", "bundle|llama-bench-sql",
	      "bundle (default): an evidence bundle in DIR; llama-bench-sql: "
	      "the llama_bench table of llama-bench -o sql in FILE ('-' for "
	      "stdout), one row per result, the variant in build_commit"),
	OPT_END
};
#undef EO

/* s padded with '_' to width (caller frees). */
static char *
padded(const char *s, size_t width)
{
	struct buf b = BUF_INIT;

	buf_adds(&b, s);
	while (b.len < width)
		buf_addch(&b, '_');
	return buf_detach(&b, NULL);
}

/* What a run's rows are called in build_commit: its variant, and
 * "-unverified" when its injection was not verified. */
static char *
variant_tag(const struct run_rec *r)
{
	return xstrfmt("%s%s", r->variant,
		       verify_state_of(r->verification) == VERIFY_UNVERIFIED ?
		       "-unverified" : "");
}

/*
 * The llama_bench table of session sid, as llama-bench -o sql writes it,
 * from the stored raw outputs parsed again. build_commit is VARIANT-BUILD,
 * both padded with '_' to one length: compare-llama-bench.py cuts every
 * build_commit to the shortest, which would otherwise change the names
 * it is asked for (-b, -c).
 */
static int
export_sql(struct store *s, int64_t sid, const char *path, int quiet)
{
	struct session_data d;
	struct buf sql = BUF_INIT, pairs = BUF_INIT;
	size_t i, k, lv = 0, lc = 0, rows = 0, skipped = 0;
	const struct json *it;
	struct json *w;
	int ret = -1;
	FILE *info = strcmp(path, "-") ? stdout : stderr;

	if (store_session_load(s, sid, &d) < 0)
		return -1;
	for (i = 0; i < d.nruns; i++) {
		struct run_data *rd = &d.runs[i];
		char *tag;

		if (rd->r.runtime && strcmp(rd->r.runtime, "llama.cpp"))
			continue;
		if (derive_results(rd) < 0)
			goto cleanup;
		tag = variant_tag(&rd->r);
		if (strlen(tag) > lv)
			lv = strlen(tag);
		free(tag);
		for (k = 0; k < rd->lb.n; k++) {
			const char *c = rd->lb.rows[k].build_commit;
			size_t n = *c ? strlen(c) : strlen("unknown");

			if (n > lc)
				lc = n;
		}
	}
	lb_sql_create(&sql);
	for (i = 0; i < d.nruns; i++) {
		struct run_data *rd = &d.runs[i];
		char *tag, *v;

		if (rd->r.runtime && strcmp(rd->r.runtime, "llama.cpp")) {
			skipped++;
			continue;
		}
		tag = variant_tag(&rd->r);
		v = padded(tag, lv);
		for (k = 0; k < rd->lb.n; k++) {
			const char *c = rd->lb.rows[k].build_commit;
			char *pc = padded(*c ? c : "unknown", lc);
			char *build = xstrfmt("%s-%s", v, pc);
			char *line = xstrfmt("\n  '%s': variant %s, build %s",
					     build, tag, *c ? c : "unknown");

			lb_sql_insert(&sql, &rd->lb.rows[k], build);
			if (!strstr(pairs.buf, line))
				buf_adds(&pairs, line);
			rows++;
			free(line);
			free(build);
			free(pc);
		}
		free(tag);
		free(v);
	}
	if (!strcmp(path, "-"))
		fwrite(sql.buf, 1, sql.len, stdout);
	else if (write_file_atomic(path, sql.buf, sql.len) < 0)
		goto cleanup;
	w = d.s.warnings_json ? json_parse(d.s.warnings_json,
					   strlen(d.s.warnings_json), NULL) :
		NULL;
	JSON_FOR_EACH(it, w)
		warning("session %lld: %s", (long long)sid,
			json_str(it) ? json_str(it) : "");
	json_free(w);
	if (d.s.tampered)
		warning("session %lld was imported despite checksum failures "
			"(tampered)", (long long)sid);
	if (!quiet) {
		fprintf(info, "wrote %zu results of session %lld to '%s' "
			"(table %s, as llama-bench -o sql)", rows,
			(long long)sid, path, lb_sql_table);
		if (skipped)
			fprintf(info, "; %zu MLX-LM runs left out", skipped);
		fprintf(info, "; build_commit names:%s\n", pairs.buf);
	}
	ret = 0;
cleanup:
	session_data_release(&d);
	buf_release(&sql);
	buf_release(&pairs);
	return ret;
}

static int
export_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct export_opts o = { 0 };
	struct store *s = NULL;
	const char **args = NULL;
	size_t nargs;
	long sid;
	int rc, ret = EXIT_OK, sql;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	sql = o.format && !strcmp(o.format, "llama-bench-sql");
	if (parse_long(args[0], &sid) < 0 || sid <= 0) {
		ret = cmd_usage_error(ctx, "'%s' is not a session number",
				      args[0]);
		goto cleanup;
	}
	if (sql && o.force) {
		ret = cmd_usage_error(ctx, "--force is for a bundle DIR; FILE "
				      "of --format llama-bench-sql is "
				      "replaced as a whole");
		goto cleanup;
	}
	if (!sql && !o.force && dir_is_empty(args[1]) != 1) {
		ret = cmd_usage_error(ctx, "'%s' is not empty; give a new "
				      "directory (or --force)", args[1]);
		goto cleanup;
	}
	if (cmd_open_store_readonly(ctx, &s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	if (sql) {
		if (export_sql(s, sid, args[1], ctx->quiet) < 0)
			ret = EXIT_ENV;
	} else if (cmd_write_bundle(s, sid, args[1], o.force ? BUNDLE_FORCE :
				    0, NULL) < 0) {
		ret = EXIT_ENV;
	} else if (!ctx->quiet) {
		printf("exported session %ld to '%s'\n", sid, args[1]);
	}
cleanup:
	store_close(s);
	free(args);
	return ret;
}

const struct command cmd_export = {
	.name = "export",
	.fn = export_main,
	.summary = "write a stored session as an evidence bundle",
	.synopsis = "[--force] SESSION DIR\n"
		    "       shimbench export --format llama-bench-sql SESSION FILE",
	.description =
		"Writes stored session SESSION as an evidence bundle into DIR (new\n"
		"or empty): bundle.json, the raw llama-bench output and stderr of\n"
		"every run, results.csv, README.md with the tables, and SHA256SUMS\n"
		"over every other file, written last. `shimbench import DIR` reads\n"
		"it back: into an empty store it gives the same report and session\n"
		"facts. A stored output that does not match its recorded SHA-256 is\n"
		"never written (exit 3).\n"
		"\n"
		"--format llama-bench-sql writes the session's results as\n"
		"`llama-bench -o sql` writes them (CREATE TABLE llama_bench, one\n"
		"INSERT per result) for llama.cpp's scripts/compare-llama-bench.py.\n"
		"build_commit is VARIANT-BUILD ('stock-ee3d1b54c', padded with '_'\n"
		"to one length), so stock and shim rows are two builds, never one;\n"
		"unverified runs are VARIANT-unverified. The names are printed.\n",
	.opts = export_opts,
	.min_args = 2,
	.max_args = 2,
};
