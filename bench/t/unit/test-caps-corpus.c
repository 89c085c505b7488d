/*
 * caps_json_of() against the real-output corpus: every file of
 * bench/t/fixtures/real/ with a hand-written NAME.expect.json. The
 * expectation's "caps" lists what a reader of the file's log lines sees;
 * each of its keys must come out of caps_json_of() with that value, and
 * caps_json_of() must claim none of the corpus vocabulary's facts that the
 * expectation leaves out (a file without log lines has "caps": {}).
 * Run from the repository root (run-all.sh does).
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "evidence/caps.h"
#include "base/json.h"
#include "base/util.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define CORPUS "bench/t/fixtures/real"

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

/* The facts of the corpus README's caps vocabulary. */
static const char *const vocabulary[] = {
	"backend", "devices", "gpu_family", "simdgroup_reduction",
	"simdgroup_matrix_mul", "bfloat", "unified_memory",
	"compute_capability", "vram_mib", "gfx", "shim_marker",
};

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The expectation files, sorted (free each and the vector). */
static char **
expectations(size_t *n)
{
	DIR *d = opendir(CORPUS);
	struct dirent *e;
	char **v = NULL;
	size_t len;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len > 12 && !strcmp(e->d_name + len - 12, ".expect.json"))
			v = strv_push(v, n, xstrdup(e->d_name));
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), by_name);
	return v;
}

/* 1 when caps_json_of() of the file matches its expectation. */
static int
check_file(const char *expect_name)
{
	struct buf eb = BUF_INIT, db = BUF_INIT;
	char *path = xstrfmt("%s/%s", CORPUS, expect_name);
	char *data = xstrfmt("%s/%.*s", CORPUS,
			     (int)(strlen(expect_name) - 12), expect_name);
	struct json *exp = NULL, *got = NULL;
	const struct json *want, *it;
	char *caps = NULL;
	size_t i;
	int ok = 1;

	if (buf_read_file(&eb, path) < 0 || buf_read_file(&db, data) < 0 ||
	    !(exp = json_parse(eb.buf, eb.len, path))) {
		printf("  FAIL %s: cannot read\n", expect_name);
		ok = 0;
		goto done;
	}
	want = json_get(exp, "caps");
	if (json_type(want) != JSON_OBJECT) {
		printf("  FAIL %s: expectation has no caps object\n", expect_name);
		ok = 0;
		goto done;
	}
	caps = caps_json_of(db.buf, db.len);
	got = json_parse(caps, strlen(caps), "caps");
	JSON_FOR_EACH(it, want) {
		const struct json *g = json_get(got, json_key(it));

		if (!g || !json_equal(g, it)) {
			char *ws = json_print(it, 0);
			char *gs = g ? json_print(g, 0) : xstrdup("(absent)");
			printf("  FAIL %s: %s is %s, expected %s\n", expect_name,
			       json_key(it), gs, ws);
			free(ws);
			free(gs);
			ok = 0;
		}
	}
	for (i = 0; i < ARRAY_SIZE(vocabulary); i++) {
		const struct json *g = json_get(got, vocabulary[i]);

		if (!g || json_get(want, vocabulary[i]))
			continue;
		/* no shim marker is what every log without one says */
		if (!strcmp(vocabulary[i], "shim_marker") && json_bool(g) == 0)
			continue;
		{
			char *gs = json_print(g, 0);
			printf("  FAIL %s: claims %s = %s, which the expectation "
			       "does not list\n", expect_name, vocabulary[i], gs);
			free(gs);
		}
		ok = 0;
	}
done:
	json_free(exp);
	json_free(got);
	free(caps);
	free(path);
	free(data);
	buf_release(&eb);
	buf_release(&db);
	return ok;
}

static void
test_corpus(void)
{
	size_t n, i, pass = 0;
	char **files = expectations(&n);

	CHECK(n >= 55);
	for (i = 0; i < n; i++)
		pass += (size_t)check_file(files[i]);
	printf("# corpus caps: %zu of %zu files as expected\n", pass, n);
	CHECK(pass == n);
	strv_free(files);
}

/*
 * Every corpus file's facts, written as the store keeps them, read back
 * and written again: the same JSON value (no fact lost or changed).
 */
static void
test_round_trip(void)
{
	size_t n, i, same = 0;
	char **files = expectations(&n);

	for (i = 0; i < n; i++) {
		char *data = xstrfmt("%s/%.*s", CORPUS,
				     (int)(strlen(files[i]) - 12), files[i]);
		struct buf db = BUF_INIT;
		struct caps c, back;
		struct json *a = NULL, *b = NULL;
		char *ja, *jb;

		CHECK(buf_read_file(&db, data) == 0);
		caps_read(db.buf ? db.buf : "", db.len, &c);
		ja = caps_to_json(&c);
		CHECK(caps_from_json(ja, &back) == 0);
		jb = caps_to_json(&back);
		a = json_parse(ja, strlen(ja), "a");
		b = json_parse(jb, strlen(jb), "b");
		if (a && b && json_equal(a, b))
			same++;
		else
			printf("  FAIL %s: %s read back as %s\n", files[i], ja, jb);
		json_free(a);
		json_free(b);
		free(ja);
		free(jb);
		caps_release(&c);
		caps_release(&back);
		buf_release(&db);
		free(data);
	}
	CHECK(n >= 55 && same == n);
	strv_free(files);
}

static const struct test_case tests[] = {
	{ "caps of every real-output corpus file", test_corpus },
	{ "their JSON reads back as the same facts", test_round_trip },
};

TEST_MAIN(tests)
