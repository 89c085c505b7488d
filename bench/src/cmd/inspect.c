/*
 * shimbench inspect FILE...: what shimbench understands of llama-bench
 * output and logs, as saved or pasted, without storing anything.
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/stats.h"
#include "evidence/caps.h"
#include "evidence/llamabench.h"
#include "base/json.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file larger than this is not a paste of llama-bench output. */
#define INSPECT_MAX (1024ull << 20)

struct inspect_opts {
	int json;
};

#define IO struct inspect_opts
static const struct opt inspect_opts[] = {
	OPT_F("json", 0, IO, json, "print one JSON document for scripts"),
	OPT_END
};
#undef IO

/*
 * Reads a regular file (or stdin for "-") without blocking on a FIFO
 * and without following it past INSPECT_MAX. -1 after error().
 */
static int
read_input(const char *path, struct buf *out)
{
	char chunk[65536];
	struct stat st;
	ssize_t n;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_NONBLOCK |
					  O_NOCTTY | O_CLOEXEC) : 0;

	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (fd > 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return error("'%s' is not a regular file", path);
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			error("cannot read '%s': %s", path, strerror(errno));
			if (fd > 0)
				close(fd);
			return -1;
		}
		buf_add(out, chunk, (size_t)n);
		if (out->len > INSPECT_MAX) {
			if (fd > 0)
				close(fd);
			return error("'%s' is more than %llu bytes; not a "
				     "llama-bench output", path, INSPECT_MAX);
		}
	}
	if (fd > 0)
		close(fd);
	return 0;
}

/* Text from a file, printable: control bytes (escapes) as \xNN. */
static void
add_safe(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			buf_addf(b, "\\x%02x", c);
		else
			buf_addch(b, c);
	}
}

/* ---- what the rows are -------------------------------------------------- */

struct config {
	struct json *key;       /* the row fields that are not the test */
	struct buf tests;
	size_t rows;
};

/* The configurations in order, and the fields that differ among them. */
static struct config *
configs_of(const struct lb_output *o, struct json **varying)
{
	struct config *c = xcalloc(o->configs + 1, sizeof(*c));
	const struct json *it, *jt;
	size_t i, k, end;

	for (i = 0; i < o->n; i++) {
		struct config *x = &c[o->rows[i].config];

		if (!x->key) {
			char *text = lb_config_key(&o->rows[i]);

			x->key = json_parse_prefix(text, strlen(text), &end);
			free(text);
			buf_init(&x->tests, 64);
		}
		buf_addf(&x->tests, "%s%s", x->rows++ ? ", " : "",
			 o->rows[i].test_label);
	}
	*varying = json_new_array();
	for (k = 0; k < o->configs; k++)
		JSON_FOR_EACH(it, c[k].key) {
			int differs = 0, listed = 0;

			JSON_FOR_EACH(jt, *varying)
				listed |= !strcmp(json_str(jt), json_key(it));
			for (i = 0; !listed && i < o->configs; i++) {
				const struct json *v = json_get(c[i].key,
								json_key(it));
				differs |= !v || !json_equal(v, it);
			}
			if (differs && !listed)
				json_append(*varying, json_new_str(json_key(it)));
		}
	return c;
}

static void
configs_free(struct config *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_free(c[i].key);
		buf_release(&c[i].tests);
	}
	free(c);
}

static const char *
kind_of(const struct lb_output *o)
{
	if (!strcmp(o->format, "log") || !strcmp(o->format, "empty"))
		return "log";
	return o->mixed ? "mixed" : "output";
}

static double
median_of(const struct lb_row *r)
{
	return r->n_samples ? stats_median(r->samples_ts, r->n_samples) : NAN;
}

/* ---- capability facts: their JSON (caps_to_json), flattened ------------- */

static void
flatten(struct buf *b, const struct json *v, struct buf *path)
{
	const struct json *it;
	size_t len = path->len, i = 0;
	char *text;

	if (json_type(v) == JSON_OBJECT || json_type(v) == JSON_ARRAY) {
		JSON_FOR_EACH(it, v) {
			if (json_type(v) == JSON_OBJECT)
				buf_addf(path, "%s%s", len ? "." : "",
					 json_key(it));
			else
				buf_addf(path, "[%zu]", i++);
			flatten(b, it, path);
			buf_setlen(path, len);
		}
		return;
	}
	text = json_str(v) ? xstrdup(json_str(v)) : json_print(v, 0);
	buf_adds(b, "    ");
	add_safe(b, path->buf);
	buf_adds(b, " = ");
	add_safe(b, text);
	buf_addch(b, '\n');
	free(text);
}

/* ---- the text report ------------------------------------------------------ */

static void
text_report(struct buf *b, const char *file, const struct lb_output *o,
	    const struct caps *caps)
{
	char *facts = caps_to_json(caps);
	struct json *varying, *cj = json_parse(facts, strlen(facts), "caps");
	struct config *c = configs_of(o, &varying);
	const struct json *it;
	struct buf path = BUF_INIT;
	size_t i, k, samples = 0;

	add_safe(b, file);
	buf_addf(b, ": %s", !strcmp(o->format, "log") ?
		 "llama.cpp log lines, no llama-bench output" :
		 !strcmp(o->format, "empty") ? "empty" : "llama-bench ");
	if (strcmp(o->format, "log") && strcmp(o->format, "empty"))
		buf_addf(b, "-o %s output%s", o->format,
			 o->mixed ? " among other lines" : "");
	buf_addf(b, ", %s\n", o->incomplete ? "INCOMPLETE" : "complete");
	if (*o->generation)
		buf_addf(b, "  generation: %s\n", o->generation);
	if (o->incomplete)
		buf_addf(b, "  incomplete: %s\n", o->crashed ?
			 "a crash, abort or kill is in the log lines; rows "
			 "printed before it are kept" :
			 "the output was cut off or holds no result; complete "
			 "rows are kept");
	if (o->tables_without_build)
		buf_addf(b, "  %zu table%s without a \"build:\" line: a paste "
			 "may have dropped it, or the run stopped before it\n",
			 o->tables_without_build,
			 o->tables_without_build > 1 ? "s" : "");
	for (i = 0; i < o->n; i++)
		samples += o->rows[i].n_samples;
	buf_addf(b, "  rows: %zu in %zu block%s; %zu configuration%s\n", o->n,
		 o->blocks, o->blocks == 1 ? "" : "s", o->configs,
		 o->configs == 1 ? "" : "s");
	if (o->n)
		buf_addf(b, "  spread: %s\n", samples ? "from the samples "
			 "(samples_ns / samples_ts)" : "from the table only "
			 "(avg ± stddev as printed; no samples)");
	for (k = 0; k < o->configs; k++) {
		const struct lb_row *r = NULL;

		for (i = 0; i < o->n && !r; i++)
			if (o->rows[i].config == (int)k)
				r = &o->rows[i];
		buf_addf(b, "  configuration %zu: ", k + 1);
		add_safe(b, r->model_type);
		buf_adds(b, ", backend ");
		add_safe(b, *r->backends ? r->backends : "?");
		if (*r->build_commit) {
			buf_adds(b, ", build ");
			add_safe(b, r->build_commit);
			if (r->build_number >= 0)
				buf_addf(b, " (%ld)", r->build_number);
		}
		JSON_FOR_EACH(it, varying) {
			static const char *const shown[] = {
				"model", "model_type", "backend", "backends",
				"build_commit", "build_number",
			};
			const struct json *v = json_get(c[k].key,
							json_str(it));
			char *t;
			size_t j;

			for (j = 0; j < ARRAY_SIZE(shown) &&
			     strcmp(shown[j], json_str(it)); j++)
				;
			if (j < ARRAY_SIZE(shown))
				continue;   /* printed above */
			t = !v ? xstrdup("-") : json_str(v) ?
				xstrdup(json_str(v)) : json_print(v, 0);
			buf_adds(b, ", ");
			add_safe(b, json_str(it));
			buf_adds(b, " ");
			add_safe(b, t);
			free(t);
		}
		buf_addf(b, "\n    tests: ");
		add_safe(b, c[k].tests.buf);
		buf_addch(b, '\n');
	}
	for (i = 0; i < o->n; i++) {
		const struct lb_row *r = &o->rows[i];

		buf_adds(b, "  ");
		add_safe(b, r->test_label);
		buf_addf(b, ": %.2f", r->avg_ts);
		if (isfinite(r->stddev_ts))
			buf_addf(b, " ± %.2f", r->stddev_ts);
		buf_adds(b, " t/s");
		if (r->n_samples)
			buf_addf(b, ", median %.2f of %zu samples",
				 median_of(r), r->n_samples);
		if (r->line)
			buf_addf(b, " (line %zu)", r->line);
		buf_addch(b, '\n');
	}
	buf_adds(b, "  capability facts (stderr lines):");
	if (!json_first(cj)) {
		buf_adds(b, " none\n");
	} else {
		buf_addch(b, '\n');
		flatten(b, cj, &path);
	}
	buf_addf(b, "  shim marker: %s\n", caps->shim.present ?
		 "found" : "none");
	if (o->unknown_fields) {
		buf_adds(b, "  fields no llama-bench version has (kept, not "
			 "read):");
		for (i = 0; o->unknown_fields[i]; i++) {
			buf_adds(b, i ? ", " : " ");
			add_safe(b, o->unknown_fields[i]);
		}
		buf_addch(b, '\n');
	}
	if (o->measurements) {
		buf_adds(b, "  of them measurements, not configuration (numbers "
			 "named as statistics or durations; rows that differ "
			 "in them are pooled):");
		for (i = 0; o->measurements[i]; i++) {
			buf_adds(b, i ? ", " : " ");
			add_safe(b, o->measurements[i]);
		}
		buf_addch(b, '\n');
	}
	for (i = 0; i < o->n_ignored; i++) {
		const struct lb_ignored *g = &o->ignored[i];

		buf_addf(b, "  ignored: %zu line%s: %s (first: line %zu \"",
			 g->count, g->count > 1 ? "s" : "", g->why,
			 g->first_line);
		add_safe(b, g->example);
		buf_adds(b, "\")\n");
	}
	configs_free(c, o->configs);
	json_free(varying);
	json_free(cj);
	free(facts);
	buf_release(&path);
}

/* ---- the JSON report -------------------------------------------------------- */

static void
jw_long_or_null(struct jw *w, const char *key, long v)
{
	if (v < 0)
		jw_knull(w, key);
	else
		jw_kint(w, key, v);
}

static void
json_report(struct jw *w, const struct lb_output *o, const struct caps *caps)
{
	char *facts = caps_to_json(caps);
	struct json *varying;
	struct config *c = configs_of(o, &varying);
	size_t i, k;

	jw_kbool(w, "understood", 1);
	jw_kstr(w, "kind", kind_of(o));
	jw_kstr(w, "format", o->format);
	jw_kstr(w, "generation", o->generation);
	jw_kbool(w, "complete", !o->incomplete);
	jw_kbool(w, "crashed", o->crashed);
	jw_kint(w, "blocks", (int64_t)o->blocks);
	jw_kint(w, "tables_without_build", (int64_t)o->tables_without_build);
	jw_key(w, "rows");
	jw_array(w);
	for (i = 0; i < o->n; i++) {
		const struct lb_row *r = &o->rows[i];

		jw_object(w);
		jw_kstr(w, "test", r->test);
		jw_kstr(w, "test_label", r->test_label);
		jw_kint(w, "n_prompt", r->n_prompt);
		jw_kint(w, "n_gen", r->n_gen);
		jw_kint(w, "n_depth", r->n_depth);
		jw_kstr(w, "backend", r->backends);
		jw_kstr(w, "model_type", r->model_type);
		jw_long_or_null(w, "n_threads", r->n_threads);
		jw_long_or_null(w, "n_gpu_layers", r->n_gpu_layers);
		jw_kstr(w, "flash_attn", r->flash_attn);
		jw_long_or_null(w, "n_batch", r->n_batch);
		jw_long_or_null(w, "n_ubatch", r->n_ubatch);
		jw_kstr(w, "type_k", r->type_k);
		jw_kstr(w, "type_v", r->type_v);
		jw_kstr(w, "build_commit", r->build_commit);
		jw_long_or_null(w, "build_number", r->build_number);
		jw_knum(w, "avg_ts", r->avg_ts);
		jw_knum(w, "stddev_ts", r->stddev_ts);
		jw_kstr(w, "spread_source", r->spread_source);
		jw_kint(w, "n_samples", (int64_t)r->n_samples);
		jw_knum(w, "median_ts", median_of(r));
		jw_kint(w, "line", (int64_t)r->line);
		jw_kint(w, "block", r->block);
		jw_kint(w, "configuration", r->config + 1);
		jw_end(w);
	}
	jw_end(w);
	jw_key(w, "configurations");
	jw_array(w);
	for (k = 0; k < o->configs; k++) {
		jw_object(w);
		jw_kint(w, "configuration", (int64_t)k + 1);
		jw_kint(w, "rows", (int64_t)c[k].rows);
		jw_kstr(w, "tests", c[k].tests.buf);
		jw_key(w, "fields");
		jw_value(w, c[k].key);
		jw_end(w);
	}
	jw_end(w);
	jw_key(w, "varying_fields");
	jw_value(w, varying);
	jw_key(w, "capabilities");
	if (jw_raw(w, facts) < 0)
		jw_null(w);
	jw_kbool(w, "shim_marker", caps->shim.present);
	free(facts);
	jw_key(w, "unknown_fields");
	jw_array(w);
	for (i = 0; o->unknown_fields && o->unknown_fields[i]; i++)
		jw_str(w, o->unknown_fields[i]);
	jw_end(w);
	jw_key(w, "measurement_fields");
	jw_array(w);
	for (i = 0; o->measurements && o->measurements[i]; i++)
		jw_str(w, o->measurements[i]);
	jw_end(w);
	jw_key(w, "ignored");
	jw_array(w);
	for (i = 0; i < o->n_ignored; i++) {
		jw_object(w);
		jw_kstr(w, "why", o->ignored[i].why);
		jw_kint(w, "lines", (int64_t)o->ignored[i].count);
		jw_kint(w, "first_line", (int64_t)o->ignored[i].first_line);
		jw_kstr(w, "example", o->ignored[i].example);
		jw_end(w);
	}
	jw_end(w);
	configs_free(c, o->configs);
	json_free(varying);
}

static int
inspect_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct inspect_opts o = { 0 };
	struct buf out = BUF_INIT;
	const char **files = NULL;
	size_t nfiles, i, nbad = 0;
	struct jw w;
	int rc, ret = EXIT_OK;

	rc = cmd_parse(ctx, argc, argv, &o, &files, &nfiles);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (o.json) {
		jw_init(&w, &out, 1);
		jw_object(&w);
		jw_key(&w, "files");
		jw_array(&w);
	}
	for (i = 0; i < nfiles; i++) {
		struct buf text = BUF_INIT;
		struct lb_output lb;
		struct caps caps;
		int ok;

		memset(&lb, 0, sizeof(lb));
		caps_init(&caps);
		ok = read_input(files[i], &text) == 0 &&
		     lb_parse(text.buf, text.len, files[i], &lb) == 0;
		if (ok)
			caps_read(text.buf, text.len, &caps);
		else
			ret = EXIT_USAGE, nbad++;
		if (o.json) {
			jw_object(&w);
			jw_kstr(&w, "file", files[i]);
			if (ok) {
				json_report(&w, &lb, &caps);
			} else {
				jw_kbool(&w, "understood", 0);
				jw_kstr(&w, "error", error_last());
			}
			jw_end(&w);
		} else if (ok) {
			text_report(&out, files[i], &lb, &caps);
		} else {
			add_safe(&out, files[i]);
			buf_adds(&out, ": NOT UNDERSTOOD (see the error)\n");
		}
		if (!o.json && i + 1 < nfiles)
			buf_addch(&out, '\n');
		caps_release(&caps);
		lb_output_release(&lb);
		buf_release(&text);
	}
	if (o.json) {
		jw_end(&w);
		jw_kint(&w, "files_not_understood", (int64_t)nbad);
		jw_end(&w);
		buf_addch(&out, '\n');
	}
	fputs(out.buf, stdout);
	buf_release(&out);
	free(files);
	return ret;
}

const struct command cmd_inspect = {
	.name = "inspect",
	.fn = inspect_main,
	.summary = "show what shimbench understands of llama-bench files",
	.synopsis = "[--json] FILE...",
	.description =
		"Reads llama-bench output and logs as saved or pasted (json,\n"
		"jsonl, csv, md, sql of 2023-2026; with log lines, prompts or\n"
		"'> ' quoting around them; '-' reads stdin) and prints what was\n"
		"understood: the format and its generation, complete or not, the\n"
		"rows and the configurations in the file, where spreads come from\n"
		"(samples, or a table's avg ± stddev), the capability facts of\n"
		"the stderr lines (backend, devices, GPU family, flags, the shim's\n"
		"marker) and every line that was ignored, with the reason.\n"
		"Nothing is stored.\n",
	.opts = inspect_opts,
	.epilogue =
		"exit: 0 every file understood; 2 a file that is not llama-bench\n"
		"output or llama.cpp log lines (named on stderr with the line or\n"
		"byte), or that cannot be read.\n",
	.min_args = 1,
	.max_args = -1,
};
