/* The base layer's JSON module, option parser and PRNG. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "base/files.h"
#include "base/json.h"
#include "base/opt.h"
#include "base/rng.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static struct json *
parse(const char *s)
{
	return json_parse(s, strlen(s), "t");
}

static void
test_json_parse_errors(void)
{
	const char *bad[] = {
		"", "   ", "[", "[garbage", "{\"a\":1} x", "[1,2]]", "{\"a\"}",
		"nul", "[1,]", "\"abc",
	};
	size_t i;

	error_silent++;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct json *v = parse(bad[i]);
		CHECK(v == NULL);
		json_free(v);
	}
	error_silent--;
	/* the error names line, column and byte */
	error_silent++;
	CHECK(parse("{\n  \"a\": tru\n}") == NULL);
	error_silent--;
	CHECK(strstr(error_last(), "line 2") != NULL);
	CHECK(strstr(error_last(), "'t'") != NULL);
}

static void
test_json_access(void)
{
	struct json *v = parse("{\"s\":\"x\",\"n\":2.5,\"i\":-7,\"b\":true,"
			       "\"z\":null,\"a\":[1,2,3],\"o\":{}}");
	const struct json *it;
	int64_t i = 0;
	double sum = 0;

	CHECK(v != NULL);
	CHECK_STR(json_get_str(v, "s"), "x");
	CHECK(json_get_str(v, "n") == NULL);
	CHECK(json_num(json_get(v, "n")) == 2.5);
	CHECK(isnan(json_num(json_get(v, "s"))));
	CHECK(json_int64(json_get(v, "i"), -10, 10, &i) == 0 && i == -7);
	CHECK(json_int64(json_get(v, "i"), 0, 10, &i) < 0);
	CHECK(json_int64(json_get(v, "n"), -10, 10, &i) < 0);
	CHECK(json_bool(json_get(v, "b")) == 1);
	CHECK(json_bool(json_get(v, "z")) == -1);
	CHECK(json_type(json_get(v, "z")) == JSON_NULL);
	CHECK(json_type(json_get(v, "missing")) == JSON_INVALID);
	CHECK(json_size(json_get(v, "a")) == 3);
	JSON_FOR_EACH(it, json_get(v, "a"))
		sum += json_num(it);
	CHECK(sum == 6);
	CHECK(json_num(json_at(json_get(v, "a"), 2)) == 3);
	CHECK(json_at(json_get(v, "a"), 3) == NULL);
	CHECK(json_size(v) == 7);
	/* accessors tolerate NULL */
	CHECK(json_get(NULL, "x") == NULL);
	CHECK(json_first(NULL) == NULL);
	json_free(v);
}

static void
test_json_int64_range(void)
{
	struct json *v = parse("[9223372036854775807, 1e30, -1e30, 3.5, "
			       "9007199254740992]");
	int64_t x;

	/* 2^63 - 1 rounds to 2^63 as a double: out of range */
	CHECK(json_int64(json_at(v, 0), INT64_MIN, INT64_MAX, &x) < 0);
	CHECK(json_int64(json_at(v, 1), INT64_MIN, INT64_MAX, &x) < 0);
	CHECK(json_int64(json_at(v, 2), INT64_MIN, INT64_MAX, &x) < 0);
	CHECK(json_int64(json_at(v, 3), INT64_MIN, INT64_MAX, &x) < 0);
	CHECK(json_int64(json_at(v, 4), INT64_MIN, INT64_MAX, &x) == 0 &&
	      x == 9007199254740992LL);
	json_free(v);
}

static void
test_json_writer(void)
{
	struct buf b = BUF_INIT;
	struct jw w;

	jw_init(&w, &b, 0);
	jw_object(&w);
	jw_kstr(&w, "s", "a\"b\\c\n\x01");
	jw_kint(&w, "i", -42);
	jw_knum(&w, "d", 0.1);
	jw_knum(&w, "nan", NAN);
	jw_knum(&w, "big", 1e300);
	jw_kbool(&w, "t", 1);
	jw_knull(&w, "z");
	jw_key(&w, "a");
	jw_array(&w);
	jw_int(&w, 1);
	jw_str(&w, NULL);
	jw_end(&w);
	jw_end(&w);
	CHECK_STR(b.buf, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"i\":-42,\"d\":0.1,"
		  "\"nan\":null,\"big\":1e+300,\"t\":true,\"z\":null,"
		  "\"a\":[1,null]}");
	buf_release(&b);

	/* pretty output parses back to the same value */
	jw_init(&w, &b, 1);
	jw_object(&w);
	jw_kstr(&w, "k", "v");
	jw_key(&w, "e");
	jw_array(&w);
	jw_end(&w);
	jw_end(&w);
	CHECK_STR(b.buf, "{\n  \"k\": \"v\",\n  \"e\": []\n}");
	buf_release(&b);
}

/* Numbers as text (tables' cells) and unsigned 64-bit integers. */
static void
test_json_writer_numbers(void)
{
	static const struct {
		const char *text;
		int ok;
	} cases[] = {
		{ "0", 1 }, { "-0.50", 1 }, { "12.3400", 1 }, { "1e5", 1 },
		{ "-2.5E-3", 1 }, { "123456789012345678901234567890", 1 },
		{ "+0.0025", 0 }, { ".5", 0 }, { "5.", 0 }, { "01", 0 },
		{ "0x10", 0 }, { "inf", 0 }, { "nan", 0 }, { "1e", 0 },
		{ " 1", 0 }, { "1 ", 0 }, { "", 0 }, { "-", 0 }, { "1e+", 0 },
	};
	struct buf b = BUF_INIT;
	struct jw w;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int rc;

		buf_reset(&b);
		jw_init(&w, &b, 0);
		rc = jw_num_text(&w, cases[i].text);
		if ((rc == 0) != cases[i].ok)
			printf("  '%s': %d\n", cases[i].text, rc);
		CHECK((rc == 0) == cases[i].ok);
		/* as written, or nothing at all */
		CHECK_STR(b.buf, cases[i].ok ? cases[i].text : "");
	}
	CHECK(jw_num_text(&w, NULL) < 0);
	buf_reset(&b);
	jw_init(&w, &b, 0);
	jw_array(&w);
	jw_uint(&w, 18446744073709551615ull);
	jw_uint(&w, 0);
	CHECK(jw_num_text(&w, "7.50") == 0);
	jw_end(&w);
	CHECK_STR(b.buf, "[18446744073709551615,0,7.50]");
	buf_release(&b);
}

static void
test_json_utf8(void)
{
	/* invalid bytes become U+FFFD; valid multi-byte text stays */
	const char in[] = "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad \xff"
		" \xc0\xaf \xed\xa0\x80 \xc3";
	struct buf b = BUF_INIT;
	struct json *v;

	json_quote(&b, in);
	CHECK_STR(b.buf, "\"ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad "
		  "\\ufffd \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\"");
	v = json_parse(b.buf, b.len, "q");
	CHECK(v != NULL && json_str(v) != NULL);
	json_free(v);
	buf_release(&b);
}

static void
test_json_numbers_round_trip(void)
{
	const double xs[] = { 0.1, 1.0 / 3, 12345.678, 1e-9, 6.02214076e23,
			      -0.0, 9007199254740993.0, 1234567890123.0 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(xs); i++) {
		struct buf b = BUF_INIT;
		struct jw w;
		struct json *v;

		jw_init(&w, &b, 0);
		jw_num(&w, xs[i]);
		v = json_parse(b.buf, b.len, "n");
		CHECK(v && json_num(v) == xs[i]);
		json_free(v);
		buf_release(&b);
	}
}

static void
test_json_edit(void)
{
	struct json *v = parse("{\"a\":1,\"b\":\"x\"}");
	char *t;

	json_set_str(v, "b", "y");
	json_set_num(v, "c", 3);
	json_remove(v, "a");
	t = json_print(v, 0);
	CHECK_STR(t, "{\"b\":\"y\",\"c\":3}");
	free(t);
	{
		struct json *d = json_dup(v), *e = parse("{\"c\":3,\"b\":\"y\"}");
		CHECK(json_equal(d, v));
		CHECK(json_equal(e, v));
		json_free(d);
		json_free(e);
	}
	json_free(v);
}

struct rec {
	char *name;
	int count;
	int64_t big;
	double ratio;
	int flag;
	char *raw;
	char **tags;
	char *obj;
};

#define R struct rec
static const struct json_field rec_fields[] = {
	{ "name", JK_STR, offsetof(R, name), JF_REQUIRED | JF_NONEMPTY, 0, 0 },
	{ "count", JK_INT, offsetof(R, count), 0, 0, 100 },
	{ "big", JK_I64, offsetof(R, big), 0, 0, 0 },
	{ "ratio", JK_DOUBLE, offsetof(R, ratio), JF_NULLABLE, 0, 0 },
	{ "flag", JK_BOOL, offsetof(R, flag), 0, 0, 0 },
	{ "raw", JK_RAW, offsetof(R, raw), 0, 0, 0 },
	{ "tags", JK_STRV, offsetof(R, tags), JF_NONEMPTY, 0, 0 },
	{ "obj", JK_OBJECT, offsetof(R, obj), 0, 0, 0 },
	{ "skip", JK_IGNORE, 0, 0, 0, 0 },
};

static int
read_rec(const char *text, struct rec *r)
{
	struct json *v = parse(text);
	int rc;

	memset(r, 0, sizeof(*r));
	rc = json_read_object(v, rec_fields, ARRAY_SIZE(rec_fields), r,
			      "rec", 0);
	json_free(v);
	return rc;
}

static void
test_json_reader(void)
{
	struct rec r;
	static const struct { const char *text, *err; } bad[] = {
		{ "{\"count\":1}", "rec: 'name' is required" },
		{ "{\"name\":\" \"}", "rec.name: must not be empty" },
		{ "{\"name\":\"a\",\"count\":101}", "rec.count: must be an "
		  "integer in [0, 100]" },
		{ "{\"name\":\"a\",\"count\":\"5\"}", "rec.count: must be an "
		  "integer, not a string" },
		{ "{\"name\":\"a\",\"big\":1e300}", "rec.big: must be an integer" },
		{ "{\"name\":\"a\",\"flag\":1}", "rec.flag: must be true or false" },
		{ "{\"name\":\"a\",\"tags\":[\"x\",\"\"]}", "rec.tags[1]: must be "
		  "a non-empty string" },
		{ "{\"name\":\"a\",\"obj\":[]}", "rec.obj: must be an object" },
		{ "{\"name\":\"a\",\"extra\":1}", "rec: unknown key 'extra'" },
		{ "{\"name\":\"a\",\"name\":\"b\"}", "rec: key 'name' appears twice" },
		{ "[]", "rec: must be an object, not an array" },
	};
	size_t i;

	CHECK(read_rec("{\"name\":\"n\",\"count\":7,\"big\":-5000000000,"
		       "\"ratio\":null,\"flag\":true,\"raw\":{\"x\":[1]},"
		       "\"tags\":[\"a\",\"b\"],\"obj\":{},\"skip\":[[]]}", &r) == 0);
	CHECK_STR(r.name, "n");
	CHECK(r.count == 7 && r.big == -5000000000LL && r.flag == 1);
	CHECK(r.ratio == 0);
	CHECK_STR(r.raw, "{\"x\":[1]}");
	CHECK(r.tags && !strcmp(r.tags[1], "b") && r.tags[2] == NULL);
	CHECK_STR(r.obj, "{}");
	json_fields_release(rec_fields, ARRAY_SIZE(rec_fields), &r);
	CHECK(r.name == NULL && r.tags == NULL);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		error_silent++;
		CHECK(read_rec(bad[i].text, &r) < 0);
		error_silent--;
		if (!strstr(error_last(), bad[i].err))
			printf("  got '%s', wanted '%s'\n", error_last(),
			       bad[i].err);
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		json_fields_release(rec_fields, ARRAY_SIZE(rec_fields), &r);
	}
}

static void
test_json_long_array_linear(void)
{
	/* 200,000 numbers, iterated in order (JSON_FOR_EACH is linear) */
	struct buf b = BUF_INIT;
	struct json *v;
	const struct json *it;
	size_t i, n = 0;

	buf_addch(&b, '[');
	for (i = 0; i < 200000; i++)
		buf_addf(&b, "%s%zu", i ? "," : "", i);
	buf_addch(&b, ']');
	v = json_parse(b.buf, b.len, "big");
	JSON_FOR_EACH(it, v)
		n += json_num(it) == (double)n;
	CHECK(n == 200000);
	json_free(v);
	buf_release(&b);
}

static void
test_json_prefix_len(void)
{
	/* cut off anywhere: every byte fits, the whole length comes back */
	static const char *const cut[] = {
		"", "  ", "[", "[\n", "[\n  {\"a\": 1", "{\"a\":\"x\\u00",
		"[{\"a\": tr", "[-", "[1.5e", "[1.5e+", "[0.", "{\"k\"",
		"{\"k\" :", "[1, {\"b\": [true, null", "\"abc\\", "tru",
		"[{\"s\":\"raw \x01 byte\"}",
	};
	/* whole values, whitespace around them allowed */
	static const char *const whole[] = {
		"{}  ", "[1,2]", " 12", "-0.5e+3", "\"a\\u00e9\"", "null",
		"[[], {\"a\": [false]}]\n",
	};
	/* garbage: the first byte that cannot be there */
	static const struct { const char *text; size_t at; } bad[] = {
		{ "[garbage", 1 }, { "[1,]", 3 }, { "{\"a\" 1}", 5 },
		{ "[1] x", 4 }, { "[1]]", 3 }, { "{\"a\":1]", 6 },
		{ "[01]", 2 }, { "\"\\x\"", 2 }, { "[tx", 2 }, { "[1.]", 3 },
		{ "[-]", 2 }, { "{1:2}", 1 }, { "[\"\\u12g4\"]", 6 },
		{ "[1e]", 3 }, { "{,}", 1 }, { "[,", 1 }, { "}", 0 },
		{ "[\n]\n[", 4 },
	};
	size_t i, n, got;
	int w;

	for (i = 0; i < ARRAY_SIZE(cut); i++) {
		n = strlen(cut[i]);
		got = json_prefix_len(cut[i], n, &w);
		CHECK(got == n && !w);
		if (got != n || w)
			printf("  '%s': %zu, whole %d\n", cut[i], got, w);
	}
	for (i = 0; i < ARRAY_SIZE(whole); i++) {
		n = strlen(whole[i]);
		got = json_prefix_len(whole[i], n, &w);
		CHECK(got == n && w);
		if (got != n || !w)
			printf("  '%s': %zu, whole %d\n", whole[i], got, w);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		got = json_prefix_len(bad[i].text, strlen(bad[i].text), NULL);
		CHECK(got == bad[i].at);
		if (got != bad[i].at)
			printf("  '%s': %zu, not %zu\n", bad[i].text, got,
			       bad[i].at);
	}
}

struct o {
	int flag;
	const char *str, *choice;
	long n;
	double d;
	struct opt_list list;
};
#define O struct o
static const struct opt opts[] = {
	OPT_F("flag", 'f', O, flag, "a flag"),
	OPT_S("str", 's', O, str, "S", "a string"),
	OPT_C("format", 0, O, choice, "F", "md|csv", "a choice"),
	OPT_I("count", 'n', O, n, "N", 1, 10, "a number"),
	OPT_D("ratio", 0, O, d, "X", 0, 1, "a ratio"),
	OPT_L("add", 'a', O, list, "V", "repeatable"),
	OPT_END
};

static int
parse_opts(struct o *o, const char *const *argv, const char ***args,
	   size_t *nargs)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(o, 0, sizeof(*o));
	return opt_parse(opts, argc, (char **)argv, o, args, nargs);
}

static void
test_opt_parse(void)
{
	const char *argv[] = { "cmd", "x", "--flag", "-s", "v", "--format=csv",
			       "-n7", "--ratio", "0.5", "-a", "1", "--add=2",
			       "y", "--", "--flag", NULL };
	const char **args;
	size_t nargs;
	struct o o;

	CHECK(parse_opts(&o, argv, &args, &nargs) == 0);
	CHECK(o.flag == 1);
	CHECK_STR(o.str, "v");
	CHECK_STR(o.choice, "csv");
	CHECK(o.n == 7 && o.d == 0.5);
	CHECK(o.list.n == 2 && !strcmp(o.list.v[1], "2"));
	CHECK(nargs == 3 && !strcmp(args[0], "x") && !strcmp(args[1], "y") &&
	      !strcmp(args[2], "--flag"));
	free(args);
	opt_release(opts, &o);
}

static void
test_opt_errors(void)
{
	static const struct { const char *argv[4], *err; } bad[] = {
		{ { "c", "--nope", NULL }, "unknown option '--nope'" },
		{ { "c", "-z", NULL }, "unknown option '-z'" },
		{ { "c", "--count", "11", NULL }, "--count 11 is out of range" },
		{ { "c", "--count", "x", NULL }, "--count 'x' is not a whole" },
		{ { "c", "--ratio", "nan", NULL }, "--ratio 'nan' is not a number" },
		{ { "c", "--format", "xml", NULL }, "--format 'xml' is not one of: md, csv" },
		{ { "c", "--str", NULL }, "--str needs S" },
		{ { "c", "-s", "a", "-s" }, "--str" },
		{ { "c", "--flag=1", NULL }, "--flag takes no value" },
	};
	size_t i, nargs;
	const char **args;
	struct o o;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *argv[6] = { 0 };
		memcpy(argv, bad[i].argv, sizeof(bad[i].argv));
		if (i == 7) {
			argv[4] = "b";
			argv[5] = NULL;
		}
		error_silent++;
		CHECK(parse_opts(&o, argv, &args, &nargs) < 0);
		error_silent--;
		if (!strstr(error_last(), bad[i].err))
			printf("  got '%s', wanted '%s'\n", error_last(),
			       bad[i].err);
		CHECK(strstr(error_last(), bad[i].err) != NULL);
		free(args);
		opt_release(opts, &o);
	}
	{
		const char *argv[] = { "c", "x", "--help", NULL };
		CHECK(parse_opts(&o, argv, &args, &nargs) == 1);
		free(args);
	}
}

static void
test_opt_help(void)
{
	struct buf b = BUF_INIT;

	opt_help(opts, &b);
	CHECK(strstr(b.buf, "  -f, --flag") != NULL);
	CHECK(strstr(b.buf, "--format F") != NULL);
	CHECK(strstr(b.buf, "-a, --add V...") != NULL);
	CHECK(strstr(b.buf, "-h, --help") != NULL);
	buf_release(&b);
}

static void
test_rng(void)
{
	struct rng a, b;
	size_t counts[5] = { 0 }, i;
	int v[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, seen = 0;
	uint64_t s = 0;

	/* splitmix64 reference value (seed 0) */
	CHECK(splitmix64(&s) == 0xe220a8397b1dcdafULL);
	rng_seed(&a, 42);
	rng_seed(&b, 42);
	for (i = 0; i < 100; i++)
		CHECK(rng_next(&a) == rng_next(&b));
	for (i = 0; i < 50000; i++)
		counts[rng_below(&a, 5)]++;
	for (i = 0; i < 5; i++)
		CHECK(counts[i] > 9500 && counts[i] < 10500);
	rng_shuffle(&a, v, 8, sizeof(int));
	for (i = 0; i < 8; i++)
		seen |= 1 << v[i];
	CHECK(seen == 0xff);
	{
		double sum = 0, sq = 0, x;
		for (i = 0; i < 20000; i++) {
			x = rng_normal(&a);
			sum += x;
			sq += x * x;
		}
		CHECK(fabs(sum / 20000) < 0.05);
		CHECK(fabs(sq / 20000 - 1) < 0.05);
	}
}

/*
 * The one PATH lookup (POSIX execvp rules): a name with a '/' as it is,
 * empty entries are the current directory, an unset PATH the default.
 */
static void
test_path_search(void)
{
	char dir[] = "/tmp/test-path.XXXXXX", cwd[4096];
	char *bin, *other, *prog, *plain, *sub, *want;
	int err;
	struct {
		const char *path;     /* PATH; "@" stands for bin, "%" for other */
		const char *name;
		const char *want;     /* "" nothing; "@" bin/name; "%" other/name */
		int err;
	} cases[] = {
		{ "@", "prog", "@", 0 },
		{ "/nonexistent:@", "prog", "@", 0 },
		{ "%:@", "prog", "%", 0 },          /* the first entry wins */
		{ "@:%", "prog", "@", 0 },
		{ "", "prog", "./prog", 0 },        /* PATH="": the current dir */
		{ ":/nonexistent", "prog", "./prog", 0 },  /* leading ':' */
		{ "/nonexistent:", "prog", "./prog", 0 },  /* trailing ':' */
		{ "/nonexistent::/x", "prog", "./prog", 0 }, /* "::" */
		{ "/nonexistent:@", "plain", "", EACCES }, /* not executable */
		{ "@", "sub", "", ENOENT },         /* a directory never counts */
		{ "@", "missing", "", ENOENT },
		{ "@", "", "", ENOENT },
		{ "/nonexistent", "./prog", "./prog", 0 }, /* a '/': as it is */
		{ "/nonexistent", "/no/such/prog", "/no/such/prog", 0 },
	};
	size_t i;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	bin = xstrfmt("%s/bin", dir);
	other = xstrfmt("%s/other", dir);
	CHECK(mkdir(bin, 0755) == 0 && mkdir(other, 0755) == 0);
	prog = xstrfmt("%s/prog", bin);
	CHECK(write_file_atomic(prog, "#!/bin/sh\n", 10) == 0);
	CHECK(chmod(prog, 0755) == 0);
	free(prog);
	prog = xstrfmt("%s/prog", other);
	CHECK(write_file_atomic(prog, "#!/bin/sh\n", 10) == 0);
	CHECK(chmod(prog, 0755) == 0);
	plain = xstrfmt("%s/plain", bin);
	CHECK(write_file_atomic(plain, "data\n", 5) == 0);
	CHECK(chmod(plain, 0644) == 0);
	sub = xstrfmt("%s/sub", bin);
	CHECK(mkdir(sub, 0755) == 0);
	/* the current directory holds a prog of its own: bin's */
	CHECK(chdir(bin) == 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct buf path = BUF_INIT;
		const char *c;
		char *got;

		for (c = cases[i].path; *c; c++)
			buf_adds(&path, *c == '@' ? bin : *c == '%' ? other :
				 (char[]){ *c, 0 });
		got = path_search(cases[i].name, path.buf, NULL, &err);
		if (!*cases[i].want) {
			CHECK(got == NULL);
			CHECK(err == cases[i].err);
			if (got || err != cases[i].err)
				printf("  case %zu: PATH '%s' name '%s'\n", i,
				       path.buf, cases[i].name);
		} else {
			want = cases[i].want[0] == '@' ?
				xstrfmt("%s/%s", bin, cases[i].name) :
				cases[i].want[0] == '%' ?
				xstrfmt("%s/%s", other, cases[i].name) :
				xstrdup(cases[i].want);
			CHECK_STR(got, want);
			free(want);
		}
		free(got);
		buf_release(&path);
	}
	/* PATH unset: the system's default path, where sh always is */
	{
		char *sh = path_search("sh", NULL, NULL, NULL);

		CHECK(sh != NULL && sh[0] == '/');
		free(sh);
	}
	/* relative entries are looked up in the cwd given, and stay
	 * relative (a child executes them after its chdir) */
	CHECK(chdir(cwd) == 0);
	{
		char *got = path_search("prog", "/nonexistent::bin", dir, &err);

		CHECK_STR(got, "bin/prog");
		free(got);
		got = path_search("prog", ":", bin, &err);
		CHECK_STR(got, "./prog");
		free(got);
		got = path_search("prog", ":", other, &err);
		CHECK_STR(got, "./prog");
		free(got);
		got = path_search("plain", "", dir, &err);
		CHECK(got == NULL && err == ENOENT);
		free(got);
	}
	{
		char *rm = xstrfmt("rm -rf '%s'", dir);
		CHECK(system(rm) == 0);
		free(rm);
	}
	free(bin);
	free(other);
	free(prog);
	free(plain);
	free(sub);
}

/* closest_word: a typo's likely meaning, or nothing when none is near */
static void
test_closest_word(void)
{
	static const char *const cmds[] = {
		"doctor", "run", "export", "sessions", "import", "inspect",
		"report", "compare", "gate", "history", "calibrate",
		"reproduce", "models", "shim", "upgrade", NULL,
	};
	static const struct { const char *word, *want; } cases[] = {
		{ "reprot", "report" },      /* a swap */
		{ "comapre", "compare" },
		{ "histroy", "history" },
		{ "imprt", "import" },       /* a letter dropped */
		{ "rn", "run" },
		{ "sesions", "sessions" },
		{ "calib", "calibrate" },    /* the start of exactly one */
		{ "rep", NULL },             /* report or reproduce */
		{ "frobnicate", NULL },
		{ "x", NULL },
		{ "", NULL },
	};
	size_t i, n = sizeof(cmds) / sizeof(cmds[0]);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = closest_word(cases[i].word, cmds, n);

		if (cases[i].want)
			CHECK_STR(got, cases[i].want);
		else
			CHECK(got == NULL);
	}
}

static const struct test_case tests[] = {
	{ "closest_word: did you mean", test_closest_word },
	{ "PATH lookup: POSIX rules, empty entries are the current directory", test_path_search },
	{ "json: parse errors name the place", test_json_parse_errors },
	{ "json: accessors", test_json_access },
	{ "json: int64 range checks", test_json_int64_range },
	{ "json: writer escaping and numbers", test_json_writer },
	{ "json: writer, numbers as text and u64", test_json_writer_numbers },
	{ "json: invalid UTF-8 becomes U+FFFD", test_json_utf8 },
	{ "json: numbers round-trip", test_json_numbers_round_trip },
	{ "json: edits", test_json_edit },
	{ "json: strict table reader", test_json_reader },
	{ "json: long arrays stay linear", test_json_long_array_linear },
	{ "json: a cut-off text is told from garbage", test_json_prefix_len },
	{ "opt: forms, lists, --", test_opt_parse },
	{ "opt: errors name the option", test_opt_errors },
	{ "opt: help from the table", test_opt_help },
	{ "rng: seeded, unbiased, normal", test_rng },
};

TEST_MAIN(tests)
