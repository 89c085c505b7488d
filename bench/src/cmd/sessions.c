#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/table.h"
#include "evidence/caps.h"
#include "evidence/runrec.h"
#include "evidence/selection.h"
#include "evidence/store.h"
#include "base/json.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sessions_opts {
	const char *format;
	int last, wide;
	const char *show;
};

#define SO struct sessions_opts
static const struct opt sessions_opts[] = {
	OPT_C("format", 'f', SO, format, "F", "md|csv|json",
	      "md (default), csv or json"),
	OPT_F("last", 0, SO, last,
	      "print only the id of the newest session (for scripts: "
	      "SID=$(shimbench sessions --last))"),
	OPT_S("show", 0, SO, show, "N",
	      "one session's runs: status, verification and its detail, "
	      "capability facts (N, latest or latest~K)"),
	OPT_F("wide", 0, SO, wide, "md: every column as a table, however "
	      "wide (default: what fits 160 characters; a wider table is a "
	      "list, one item per row)"),
	OPT_END
};
#undef SO

static char *
measured(const struct store_session *ss)
{
	if (!*ss->measured_from)
		return xstrdup("");
	if (!strcmp(ss->measured_from, ss->measured_to))
		return xstrdup(ss->measured_from);
	return xstrfmt("%s..%s", ss->measured_from, ss->measured_to);
}

static int
list(struct store *s, const char *format)
{
	static const char *const cols[] = {
		"session#", "kind", "stored", "measured", "status", "label",
		"runs#", "unverified#", "os_builds", "tampered",
	};
	struct store_session *ss = NULL;
	struct buf out = BUF_INIT;
	struct table t;
	size_t n = 0, i;

	if (store_sessions_list(s, &ss, &n) < 0)
		return EXIT_ENV;
	table_init(&t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < n; i++) {
		char id[24], runs[24], unv[24], *when = measured(&ss[i]);
		const char *row[ARRAY_SIZE(cols)];

		snprintf(id, sizeof(id), "%lld", (long long)ss[i].id);
		snprintf(runs, sizeof(runs), "%ld", ss[i].runs);
		snprintf(unv, sizeof(unv), "%ld", ss[i].unverified);
		row[0] = id;
		row[1] = ss[i].kind;
		row[2] = ss[i].started_at;
		row[3] = when;
		row[4] = ss[i].status;
		row[5] = ss[i].label;
		row[6] = runs;
		row[7] = unv;
		row[8] = ss[i].os_builds;
		row[9] = ss[i].tampered ? "yes" : "";
		table_add_row(&t, row);
		free(when);
	}
	table_render(&t, format, &out);
	fwrite(out.buf, 1, out.len, stdout);
	table_release(&t);
	buf_release(&out);
	store_sessions_free(ss, n);
	return EXIT_OK;
}

static int
last(struct store *s)
{
	int64_t id;
	int rc = store_session_latest(s, 0, &id);

	if (rc < 0)
		return EXIT_ENV;
	if (rc == 0) {
		error("the store has no session yet");
		return EXIT_ENV;
	}
	printf("%lld\n", (long long)id);
	return EXIT_OK;
}

/*
 * The session id --show names: N, latest or latest~K; 0 after error()
 * for text that names no session at all (usage), -1 after error() when
 * the store has no such session (nothing matched: exit 3, as in every
 * command), -2 when the store fails.
 */
static int64_t
show_id(struct store *s, const char *text)
{
	long back, id;
	int64_t found;
	int rc;

	if (selection_latest(text, &back)) {
		rc = store_session_latest(s, back, &found);
		if (rc == 0)
			error("the store has no session '%s'", text);
		return rc == 1 ? found : rc == 0 ? -1 : -2;
	}
	if (parse_long(text, &id) < 0 || id <= 0) {
		error("'%s' is not a session number (N, latest or latest~K)",
		      text);
		return 0;
	}
	return id;
}

/* The runs of a session as JSON: every fact --show prints, and the
 * capabilities as stored (an object). */
static void
show_json(const struct session_rec *ss, const struct run_rec *r, size_t n,
	  struct buf *out)
{
	struct jw w;
	size_t i;

	jw_init(&w, out, 1);
	jw_object(&w);
	jw_kint(&w, "session", ss->id);
	jw_kstr(&w, "kind", ss->kind);
	jw_kstr(&w, "status", ss->status);
	jw_kstr(&w, "label", ss->label);
	jw_kstr(&w, "source", ss->source);
	jw_key(&w, "runs");
	jw_array(&w);
	for (i = 0; i < n; i++) {
		jw_object(&w);
		jw_kint(&w, "run", r[i].seq);
		jw_kstr(&w, "variant", r[i].variant);
		jw_kstr(&w, "role", r[i].role);
		jw_kstr(&w, "target", r[i].target);
		jw_kstr(&w, "model", r[i].model);
		jw_kstr(&w, "status", r[i].status);
		jw_kstr(&w, "error", r[i].error);
		jw_kstr(&w, "verification", r[i].verification);
		jw_kstr(&w, "verification_detail", r[i].verification_detail);
		jw_key(&w, "capabilities");
		if (!r[i].capabilities_json || jw_raw(&w, r[i].capabilities_json) < 0)
			jw_null(&w);
		jw_end(&w);
	}
	jw_end(&w);
	jw_end(&w);
	buf_addch(out, '\n');
}

/*
 * shimbench sessions --show N: per run its status, verification and the
 * verification's detail, and the capability facts of its stderr (and
 * probe) in one line.
 */
static int
show(struct store *s, const char *which, const char *format)
{
	static const char *const cols[] = {
		"run#", "variant", "role", "target", "model", "status",
		"verification", "detail", "capabilities",
	};
	struct session_rec ss;
	struct run_rec *r = NULL;
	struct buf out = BUF_INIT;
	struct table t;
	size_t n = 0, i;
	int64_t id = show_id(s, which);
	int rc;

	if (id <= 0)
		return id ? EXIT_ENV : EXIT_USAGE;
	memset(&ss, 0, sizeof(ss));
	rc = store_session_get(s, id, &ss);
	if (rc <= 0) {
		if (rc == 0)
			error("the store has no session %lld", (long long)id);
		return EXIT_ENV;   /* no such session: nothing matched */
	}
	if (store_runs_get(s, id, &r, &n) < 0) {
		rec_release(sessionrec_fields, sessionrec_nfields, &ss);
		return EXIT_ENV;
	}
	if (!strcmp(format, "json")) {
		show_json(&ss, r, n, &out);
	} else {
		table_init(&t, ARRAY_SIZE(cols), cols);
		for (i = 0; i < n; i++) {
			struct buf caps = BUF_INIT, st = BUF_INIT;
			const char *row[ARRAY_SIZE(cols)];
			char seq[24];

			snprintf(seq, sizeof(seq), "%lld", (long long)r[i].seq);
			buf_adds(&st, r[i].status ? r[i].status : "");
			if (r[i].error && *r[i].error)
				buf_addf(&st, ": %s", r[i].error);
			if (!r[i].stderr_path && !r[i].probe_path) {
				buf_adds(&caps, "(no stderr recorded)");
			} else {
				struct caps c;

				caps_from_json(r[i].capabilities_json, &c);
				caps_describe(&c, &caps);
				caps_release(&c);
			}
			row[0] = seq;
			row[1] = r[i].variant;
			row[2] = r[i].role;
			row[3] = r[i].target;
			row[4] = r[i].model;
			row[5] = st.buf;
			row[6] = r[i].verification;
			row[7] = r[i].verification_detail;
			row[8] = caps.buf;
			table_add_row(&t, row);
			buf_release(&caps);
			buf_release(&st);
		}
		if (!strcmp(format, "md"))
			buf_addf(&out, "session %lld: %s, %s%s%s%s%s, %zu runs\n\n",
				 (long long)ss.id, ss.kind ? ss.kind : "",
				 ss.status ? ss.status : "",
				 ss.label && *ss.label ? ", " : "",
				 ss.label && *ss.label ? ss.label : "",
				 ss.source && *ss.source ? ", from " : "",
				 ss.source && *ss.source ? ss.source : "", n);
		table_render(&t, format, &out);
		table_release(&t);
	}
	fwrite(out.buf, 1, out.len, stdout);
	buf_release(&out);
	store_runs_free(r, n);
	rec_release(sessionrec_fields, sessionrec_nfields, &ss);
	return EXIT_OK;
}

static int
sessions_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct sessions_opts o = { .format = "md" };
	struct store *s = NULL;
	const char **args = NULL;
	size_t nargs;
	int rc, ret;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	free(args);
	if (o.last && o.show)
		return cmd_usage_error(ctx, "--last and --show exclude each other");
	if (o.wide)
		table_md_width(0);
	if (cmd_open_store_readonly(ctx, &s) < 0)
		return EXIT_ENV;
	ret = o.last ? last(s) : o.show ? show(s, o.show, o.format) :
		list(s, o.format);
	store_close(s);
	return ret;
}

/* shimbench sessions rm N...: all or none, saying what each removed. */
static int
rm_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct store *s = NULL;
	struct buf said = BUF_INIT;
	const char **args = NULL;
	size_t nargs, i;
	int rc, ret = EXIT_OK;

	rc = cmd_parse(ctx, argc, argv, NULL, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	for (i = 0; i < nargs; i++) {
		long id;
		if (parse_long(args[i], &id) < 0 || id <= 0) {
			ret = cmd_usage_error(ctx, "'%s' is not a session number",
					      args[i]);
			goto cleanup;
		}
	}
	if (cmd_open_existing_store(ctx, &s) < 0 || store_begin(s) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	for (i = 0; i < nargs && ret == EXIT_OK; i++) {
		struct store_removed rm;
		long id;

		parse_long(args[i], &id);
		if (store_session_remove(s, id, &rm) < 0) {
			ret = EXIT_ENV;
		} else if (!rm.found) {
			error("the store has no session %ld; nothing removed", id);
			ret = EXIT_ENV;   /* nothing matched, as everywhere */
		} else {
			buf_addf(&said, "removed session %ld: %ld runs, %ld "
				 "results, %ld samples, %ld environments, %ld "
				 "noise calibrations\n", id, rm.runs, rm.results,
				 rm.samples, rm.environments, rm.calibrations);
		}
	}
	if (ret != EXIT_OK) {
		store_rollback(s);
	} else if (store_commit(s) < 0) {
		ret = EXIT_ENV;
	} else {
		fputs(said.buf, stdout);
	}
cleanup:
	buf_release(&said);
	store_close(s);
	free(args);
	return ret;
}

static const struct command cmd_sessions_rm = {
	.name = "sessions rm",
	.fn = rm_main,
	.summary = "remove sessions and everything that hangs on them",
	.synopsis = "N...",
	.description =
		"Removes stored sessions (their environments, runs, results,\n"
		"samples and noise calibrations) in one transaction, and says what\n"
		"each removal took away. A number that names no session removes\n"
		"nothing at all (exit 3, as every command exits when nothing\n"
		"matched; a word that is no number is exit 2).\n",
	.min_args = 1,
	.max_args = -1,
};

static const struct command cmd_sessions_list = {
	.name = "sessions list",
	.fn = sessions_main,
	.summary = "list the stored sessions (the default)",
	.synopsis = "[--format md|csv|json] [--last | --show N]",
	.opts = sessions_opts,
	.max_args = 0,
};

static const struct command *const sessions_subs[] = {
	&cmd_sessions_list, &cmd_sessions_rm, NULL,
};

/* `sessions` alone, or with options, lists; `sessions rm N` removes. */
static int
sessions_dispatch(int argc, char **argv, struct cmd_ctx *ctx)
{
	if (argc >= 2 && (!strcmp(argv[1], "rm") || !strcmp(argv[1], "list")))
		return cmd_dispatch(argc, argv, ctx);
	ctx->cmd = &cmd_sessions_list;
	return sessions_main(argc, argv, ctx);
}

const struct command cmd_sessions = {
	.name = "sessions",
	.fn = sessions_dispatch,
	.summary = "list, or remove, the stored sessions",
	.synopsis = "[list] [--format md|csv|json] [--last | --show N] | rm N...",
	.description =
		"Lists the stored sessions, newest last: id, kind (run or import),\n"
		"when it was stored, when its runs were measured (dates from the\n"
		"runs themselves: an import of old evidence keeps its own dates),\n"
		"status, label or source, the number of runs, how many of them were\n"
		"not injection-verified, the targets' OS builds, and whether an\n"
		"import was flagged as tampered. Session ids are what `report\n"
		"--select session=N`, `compare`, `gate` and `export` take; in a\n"
		"selection, session=latest is the newest session and\n"
		"session=latest~1 the one before it.\n"
		"\n"
		"--show N prints one session's runs instead: status (and error),\n"
		"injection verification and what it found or missed, and the\n"
		"capability facts of each run's stderr and probe (backend, devices,\n"
		"GPU family and flags, the shim's marker, a suspect profile);\n"
		"--format json gives the facts whole.\n",
	.opts = sessions_opts,
	.max_args = 0,
	.subs = sessions_subs,
};
