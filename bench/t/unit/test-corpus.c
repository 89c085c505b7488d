/*
 * The real-output corpus (fixtures/real): every file through lb_parse()
 * and caps_json_of(), compared field by field with its hand-written
 * NAME.expect.json (see fixtures/real/README.md). Capability facts are
 * compared for the keys caps.c reports today; the others are listed as
 * not yet checked. The last lines state the figures: files, formats,
 * repositories, rows, pass count.
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "evidence/caps.h"
#include "evidence/llamabench.h"
#include "base/json.h"
#include "base/util.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>

#define REAL "bench/t/fixtures/real/"

/* The facts of a stderr text as the store keeps them (caller frees). */
static char *
caps_json_of(const char *text, size_t len)
{
	struct caps c;
	char *json;

	caps_read(text, len, &c);
	json = caps_to_json(&c);
	caps_release(&c);
	return json;
}

static struct buf why = BUF_INIT;   /* the failures of the current file */

static void
fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
fail(const char *fmt, ...)
{
	va_list ap;

	buf_adds(&why, "    ");
	va_start(ap, fmt);
	buf_vaddf(&why, fmt, ap);
	va_end(ap);
	buf_addch(&why, '\n');
}

static int
close_to(double a, double b, double rel)
{
	double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

	return fabs(a - b) <= rel * (scale > 1 ? scale : 1);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(const double *v, size_t n)
{
	double *c = xcalloc(n + 1, sizeof(double)), m;

	memcpy(c, v, n * sizeof(double));
	qsort(c, n, sizeof(double), cmp_double);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

/* flash_attn as the expectation types it (bool or integer) */
static const char *
fa_word(const struct json *v)
{
	if (json_is_bool(v))
		return json_bool(v) ? "on" : "off";
	if (json_type(v) == JSON_NUMBER)
		return json_num(v) < 0 ? "auto" : json_num(v) > 0 ? "on" : "off";
	return json_str(v) ? json_str(v) : "?";
}

static void
check_long(size_t k, const struct json *e, const char *key, long got)
{
	const struct json *v = json_get(e, key);

	if (!v) {
		if (got != -1)
			fail("row %zu: %s is %ld, but the file does not show it",
			     k + 1, key, got);
		return;
	}
	if (json_num(v) != (double)got)
		fail("row %zu: %s %ld, expected %.17g", k + 1, key, got,
		     json_num(v));
}

static void
check_str(size_t k, const struct json *e, const char *key, const char *got,
	  int absent_too)
{
	const char *want = json_get_str(e, key);

	if (!json_get(e, key)) {
		if (absent_too && got && *got)
			fail("row %zu: %s is '%s', but the file does not show "
			     "it", k + 1, key, got);
		return;
	}
	if (!want || strcmp(want, got ? got : ""))
		fail("row %zu: %s '%s', expected '%s'", k + 1, key,
		     got ? got : "", want ? want : "(not a string)");
}

static void
check_row(size_t k, const struct json *e, const struct lb_row *r)
{
	const struct json *v;

	check_str(k, e, "test", r->test_label, 0);
	if (json_get(e, "n_prompt") && json_num(json_get(e, "n_prompt")) !=
	    r->n_prompt)
		fail("row %zu: n_prompt %ld", k + 1, r->n_prompt);
	if (json_get(e, "n_gen") && json_num(json_get(e, "n_gen")) != r->n_gen)
		fail("row %zu: n_gen %ld", k + 1, r->n_gen);
	if (json_get(e, "n_depth") && json_num(json_get(e, "n_depth")) !=
	    r->n_depth)
		fail("row %zu: n_depth %ld", k + 1, r->n_depth);
	/* 2023-24 schemas show per-backend flags only: derived, not shown */
	check_str(k, e, "backend", r->backends, 0);
	check_long(k, e, "n_threads", r->n_threads);
	check_long(k, e, "n_gpu_layers", r->n_gpu_layers);
	check_long(k, e, "n_batch", r->n_batch);
	check_long(k, e, "n_ubatch", r->n_ubatch);
	v = json_get(e, "flash_attn");
	if (v && strcmp(fa_word(v), r->flash_attn))
		fail("row %zu: flash_attn '%s', expected %s", k + 1,
		     r->flash_attn, fa_word(v));
	if (!v && *r->flash_attn)
		fail("row %zu: flash_attn '%s', but the file does not show it",
		     k + 1, r->flash_attn);
	check_str(k, e, "type_k", r->type_k, 1);
	check_str(k, e, "type_v", r->type_v, 1);
	check_str(k, e, "model_type", r->model_type, 1);
	if (json_num(json_get(e, "model_size")) != (double)r->model_size &&
	    (json_get(e, "model_size") || r->model_size != -1))
		fail("row %zu: model_size %lld", k + 1,
		     (long long)r->model_size);
	if (json_num(json_get(e, "model_n_params")) !=
	    (double)r->model_n_params &&
	    (json_get(e, "model_n_params") || r->model_n_params != -1))
		fail("row %zu: model_n_params %lld", k + 1,
		     (long long)r->model_n_params);
	check_str(k, e, "build_commit", r->build_commit, 1);
	check_long(k, e, "build_number", r->build_number);
	v = json_get(e, "avg_ts");
	if (!v || !close_to(json_num(v), r->avg_ts, 1e-12))
		fail("row %zu: avg_ts %.17g, expected %.17g", k + 1, r->avg_ts,
		     json_num(v));
	v = json_get(e, "stddev_ts");
	if (v ? !close_to(json_num(v), r->stddev_ts, 1e-12) :
	    !isnan(r->stddev_ts))
		fail("row %zu: stddev_ts %.17g, expected %.17g", k + 1,
		     r->stddev_ts, json_num(v));
	v = json_get(e, "n_samples");
	if ((v ? json_num(v) : 0) != (double)r->n_samples)
		fail("row %zu: %zu samples, expected %g", k + 1, r->n_samples,
		     v ? json_num(v) : 0.0);
	if (strcmp(r->spread_source, r->n_samples ? "samples" : "table"))
		fail("row %zu: spread from '%s' with %zu samples", k + 1,
		     r->spread_source, r->n_samples);
	v = json_get(e, "median_ts");
	if (v && r->n_samples &&
	    !close_to(json_num(v), median(r->samples_ts, r->n_samples), 1e-9))
		fail("row %zu: median of samples_ts %.17g, expected %.17g",
		     k + 1, median(r->samples_ts, r->n_samples), json_num(v));
}

/* ---- capability facts, as caps.c reports them -------------------------- */

/*
 * The corpus's capability keys. caps_json_of() reports its summary in the
 * same vocabulary (caps.h); a key it does not report for a file is "not
 * yet checked" there, never a pass.
 */
static const char *const cap_keys[] = {
	"backend", "devices", "gpu_family", "simdgroup_reduction",
	"simdgroup_matrix_mul", "bfloat", "unified_memory",
	"compute_capability", "vram_mib", "gfx", "shim_marker",
};

static int
cap_key(const char *key)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(cap_keys); k++)
		if (!strcmp(cap_keys[k], key))
			return 1;
	return 0;
}

/* Keys of the corpus caps that caps.c does not report: key -> files. */
static struct json *unchecked;
static size_t caps_compared;

static void
check_caps(const char *file, const struct json *want, const char *text,
	   size_t len)
{
	char *caps = caps_json_of(text, len);
	struct json *got = json_parse(caps, strlen(caps), "caps");
	const struct json *it;

	JSON_FOR_EACH(it, want) {
		const struct json *g = json_get(got, json_key(it));

		if (!g) {
			struct json *list = json_get_mut(unchecked,
							 json_key(it));
			if (!list) {
				list = json_new_array();
				json_set(unchecked, json_key(it), list);
			}
			json_append(list, json_new_str(file));
			continue;
		}
		caps_compared++;
		if (!json_equal(g, it)) {
			char *a = json_print(g, 0), *b = json_print(it, 0);

			fail("caps %s: caps.c gives %s, the file shows %s",
			     json_key(it), a, b);
			free(a);
			free(b);
		}
	}
	/* no facts where a reader sees none */
	JSON_FOR_EACH(it, got) {
		char *a;

		if (!cap_key(json_key(it)) || json_get(want, json_key(it)) ||
		    (!strcmp(json_key(it), "shim_marker") &&
		     json_type(it) == JSON_FALSE))
			continue;
		a = json_print(it, 0);
		fail("caps %s: caps.c gives %s, the file does not show it",
		     json_key(it), a);
		free(a);
	}
	json_free(got);
	free(caps);
}

/* ---- one file ---------------------------------------------------------------- */

static int
check_file(const char *file, struct json *formats)
{
	char *path = xstrfmt(REAL "%s", file);
	char *epath = xstrfmt(REAL "%s.expect.json", file);
	struct buf text = BUF_INIT, etext = BUF_INIT;
	struct json *e = NULL;
	struct lb_output o;
	const struct json *rows, *it;
	const char *want_fmt;
	size_t k = 0;
	int rc, ok;

	memset(&o, 0, sizeof(o));
	buf_reset(&why);
	if (buf_read_file(&text, path) < 0 ||
	    buf_read_file(&etext, epath) < 0 ||
	    !(e = json_parse(etext.buf, etext.len, epath))) {
		fail("cannot read the file or its expectation");
		goto done;
	}
	want_fmt = json_get_str(e, "format");
	{
		const char *key = want_fmt ? want_fmt : "stderr";
		const struct json *c = json_get(formats, key);

		json_set_num(formats, key, (c ? json_num(c) : 0) + 1);
	}
	error_silent++;
	rc = lb_parse(text.buf, text.len, file, &o);
	error_silent--;
	if (rc < 0) {
		fail("refused: %s", error_last());
		goto done;
	}
	if (strcmp(o.format, want_fmt ? want_fmt : "log"))
		fail("format '%s', expected '%s'", o.format,
		     want_fmt ? want_fmt : "log (no output)");
	if (json_bool(json_get(e, "complete")) == o.incomplete)
		fail("%s, expected %s", o.incomplete ? "incomplete" :
		     "complete", o.incomplete ? "complete" : "incomplete");
	rows = json_get(e, "rows");
	if (json_size(rows) != o.n)
		fail("%zu rows, expected %zu", o.n, json_size(rows));
	JSON_FOR_EACH(it, rows) {
		if (k < o.n)
			check_row(k, it, &o.rows[k]);
		k++;
	}
	if (json_num(json_get(e, "configurations")) != (double)o.configs)
		fail("%zu configurations, expected %g", o.configs,
		     json_num(json_get(e, "configurations")));
	check_caps(file, json_get(e, "caps"), text.buf, text.len);
done:
	ok = why.len == 0;
	printf("%s corpus %s (%zu rows)\n", ok ? "ok" : "not ok", file, o.n);
	if (!ok)
		fputs(why.buf, stdout);
	lb_output_release(&o);
	json_free(e);
	buf_release(&text);
	buf_release(&etext);
	free(path);
	free(epath);
	return ok;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Distinct repositories of SOURCES.tsv (column 2); -1 if unreadable. */
static long
repositories(char **names, size_t n, int *unlisted)
{
	struct buf b = BUF_INIT, seen = BUF_INIT;
	char *line, *save = NULL;
	long count = 0;
	size_t i;

	*unlisted = 0;
	if (buf_read_file(&b, REAL "SOURCES.tsv") < 0)
		return -1;
	for (i = 0; i < n; i++) {
		char *needle = xstrfmt("\n%s\t", names[i]);

		if (!strstr(b.buf, needle)) {
			printf("# %s is not in SOURCES.tsv\n", names[i]);
			(*unlisted)++;
		}
		free(needle);
	}
	for (line = strtok_r(b.buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t'), *tab2, *key;

		if (!tab || !strncmp(line, "file\t", 5))
			continue;
		tab2 = strchr(tab + 1, '\t');
		if (!tab2)
			continue;
		key = xstrfmt("\n%.*s\n", (int)(tab2 - tab - 1), tab + 1);
		if (!strstr(seen.buf, key)) {
			buf_adds(&seen, key + (seen.len ? 1 : 0));
			count++;
		}
		free(key);
	}
	buf_release(&b);
	buf_release(&seen);
	return count;
}

int
main(void)
{
	DIR *d = opendir(REAL);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, i, passed = 0, failed = 0, rows = 0;
	struct json *formats = json_new_object();
	const struct json *it;
	struct buf line = BUF_INIT;
	int unlisted = 0;
	long repos;

	if (!d) {
		printf("not ok corpus: cannot open " REAL "\n0 passed, 1 failed\n");
		return 1;
	}
	unchecked = json_new_object();
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "README.md") ||
		    !strcmp(de->d_name, "SOURCES.tsv") ||
		    (len > 12 && !strcmp(de->d_name + len - 12, ".expect.json")))
			continue;
		names = strv_push(names, &n, xstrdup(de->d_name));
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(char *), cmp_str);
	for (i = 0; i < n; i++) {
		struct buf b = BUF_INIT;
		char *e = xstrfmt(REAL "%s.expect.json", names[i]);
		struct json *j;

		if (check_file(names[i], formats))
			passed++;
		else
			failed++;
		if (buf_read_file(&b, e) == 0 &&
		    (j = json_parse(b.buf, b.len, e))) {
			rows += json_size(json_get(j, "rows"));
			json_free(j);
		}
		buf_release(&b);
		free(e);
	}
	repos = repositories(names, n, &unlisted);
	JSON_FOR_EACH(it, formats)
		buf_addf(&line, "%s%s %g", line.len ? ", " : "", json_key(it),
			 json_num(it));
	printf("# corpus: %zu files (%s) from %ld repositories, %zu expected "
	       "rows\n", n, line.buf, repos, rows);
	printf("# caps: %zu facts compared with caps.c; not yet checked "
	       "(caps.c reports no such fact today):", caps_compared);
	if (!json_first(unchecked))
		printf(" none");
	JSON_FOR_EACH(it, unchecked)
		printf(" %s (%zu files)", json_key(it), json_size(it));
	printf("\n# corpus: %zu of %zu files pass\n", passed, n);
	if (n < 40 || repos < 10 || unlisted) {
		printf("not ok corpus size: %zu files, %ld repositories, %d "
		       "not in SOURCES.tsv\n", n, repos, unlisted);
		failed++;
	}
	printf("%zu passed, %zu failed\n", passed, failed);
	strv_free(names);
	json_free(formats);
	json_free(unchecked);
	buf_release(&line);
	buf_release(&why);
	return failed ? 1 : 0;
}
