/*
 * Checksum files: what sha256sum, shasum and openssl dgst really wrote
 * (bench/t/fixtures/sums, PROVENANCE says how), the other forms the
 * tools accept, and every refusal with the line it names.
 */
#include "test.h"
#include "evidence/sums.h"
#include "base/util.h"

#include <stdlib.h>

#define FIX "bench/t/fixtures/sums/"

/* SHA-256 of the fixture files' contents (gen.sh), written out by hand. */
#define HA "9d39745403e5faf662463b32d613eedf45037d0180983ae8bc87f538cf0c9653"
#define HA_UPPER \
	   "9D39745403E5FAF662463B32D613EEDF45037D0180983AE8BC87F538CF0C9653"
#define HL "bb5e6a13ff86dc4f333bbef04ca0657bfebcbc2b173a2a42aedd4d1e849e3d3e"
#define HS "a9294fcd1dbc598ec49a7879ba2d0702c9bf1ba7a0fe2d7881707cbbda36f50b"
#define HB "e6f805fa5fc041ab4bb7aa119641f77ac3e9f42106bc9f92354080692736c8de"
#define HN "7ba826f0c347f6adc4686c8d1f61aeb2e2e98322749cd4f82204c926f4022cee"
#define HC "2f39c06917ed612cfd127a5c04ea874a9f2788b493f984d9188e94fa15935345"
/* "a b.txt" under other algorithms */
#define SHA1_A "bdd24c786308b032eef45465c838e0dac918f455"
#define SHA512_A \
	"1a2bb0fe64040c8b3fa64f5b6bb79a6cc60004d2a18f9e6f018c0ceeff091f4e" \
	"fa9216d4c0ce1581d7732ad3d640d7d81da18fe661c37cab548efaf67749ec68"

struct want {
	const char *name;
	const char *hex;
	int line;
};

/* Checks out against the NULL-terminated w; prints label on failure. */
static void
check_entries(const char *label, const struct sums *out,
	      const struct want *w)
{
	int before = test_failed_checks;
	size_t n = 0, i;

	while (w[n].name)
		n++;
	CHECK(out->n == n);
	for (i = 0; i < n && i < out->n; i++) {
		CHECK_STR(out->e[i].name, w[i].name);
		CHECK_STR(out->e[i].hex, w[i].hex);
		CHECK(out->e[i].line == w[i].line);
		CHECK(sums_find(out, w[i].name) == &out->e[i]);
	}
	if (test_failed_checks != before)
		printf("  (case: %s)\n", label);
}

/*
 * Checks that the last error is "'FILE' line N: ..." and holds what;
 * line 0 means the message names no line.
 */
static void
check_error(const char *label, const char *file, int line, const char *what)
{
	int before = test_failed_checks;
	char prefix[256];

	if (line)
		snprintf(prefix, sizeof(prefix), "'%s' line %d: ", file, line);
	else
		snprintf(prefix, sizeof(prefix), "'%s': ", file);
	CHECK(!strncmp(error_last(), prefix, strlen(prefix)));
	CHECK(strstr(error_last(), what) != NULL);
	if (test_failed_checks != before)
		printf("  (case: %s; got \"%s\")\n", label, error_last());
}

/* The five awkward names, in the order gen.sh passes them. */
static const struct want five[] = {
	{ "a b.txt", HA, 1 },
	{ "lead.txt", HL, 2 },
	{ "sub/dir/c.bin", HS, 3 },
	{ "back\\slash.txt", HB, 4 },
	{ "new\nline.txt", HN, 5 },
	{ NULL, NULL, 0 },
};
/* openssl's tagged form cannot carry the newline name. */
static const struct want four[] = {
	{ "a b.txt", HA, 1 },
	{ "lead.txt", HL, 2 },
	{ "sub/dir/c.bin", HS, 3 },
	{ "back\\slash.txt", HB, 4 },
	{ NULL, NULL, 0 },
};
static const struct want cr[] = {
	{ "car\rret.txt", HC, 1 },
	{ NULL, NULL, 0 },
};

static const struct {
	const char *file;
	const struct want *w;
} fixtures[] = {
	{ FIX "sha256sum.txt", five },
	{ FIX "sha256sum-binary.txt", five },
	{ FIX "sha256sum-tag.txt", five },
	{ FIX "sha256sum-crlf.txt", five },
	{ FIX "cksum-sha256.txt", five },
	{ FIX "shasum.txt", five },
	{ FIX "shasum-binary.txt", five },
	{ FIX "shasum-tag.txt", five },
	{ FIX "shasum-tag-crlf.txt", five },
	{ FIX "openssl-r.txt", five },
	{ FIX "openssl.txt", four },
	{ FIX "openssl-crlf.txt", four },
	{ FIX "sha256sum-cr.txt", cr },
	{ FIX "sha256sum-tag-cr.txt", cr },
};

static int
parse_file(const char *file, struct sums *out)
{
	struct buf b = BUF_INIT;
	int rc;

	if (buf_read_file(&b, file) < 0)
		return -99;
	error_silent++;
	rc = sums_parse(b.buf, b.len, file, out);
	error_silent--;
	buf_release(&b);
	return rc;
}

static void
test_fixtures(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fixtures); i++) {
		struct sums s;

		CHECK(parse_file(fixtures[i].file, &s) == 0);
		check_entries(fixtures[i].file, &s, fixtures[i].w);
		sums_release(&s);
	}
}

/* Real tool output that is refused, and why (FORMS.md). */
static const struct {
	const char *file;
	int line;
	const char *what;
} bad_fixtures[] = {
	/* a newline in a name breaks openssl's unescaped tagged line */
	{ "openssl-newline.txt", 2, "no ')' after the file name" },
	/* shasum writes a carriage return in a name raw */
	{ "shasum-cr.txt", 1, "control character 0x0d in file name "
	  "'car\\rret.txt'" },
	/* shasum -U and -0: not digests of the file's bytes */
	{ "shasum-universal.txt", 1, "ambiguous" },
	{ "shasum-bits.txt", 1, "ambiguous" },
	/* other algorithms, which shasum -a 256 -c still checks */
	{ "sha1sum.txt", 1, "40 hex digits, not a sha-256 digest" },
	{ "sha512sum.txt", 1, "128 hex digits, not a sha-256 digest" },
	{ "shasum-512256-tag.txt", 1, "'SHA512/256' is not a sha-256 tag" },
	{ "md5sum-tag.txt", 1, "'MD5' is not a sha-256 tag" },
};

static void
test_bad_fixtures(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_fixtures); i++) {
		char file[128];
		struct sums s;

		snprintf(file, sizeof(file), FIX "%s", bad_fixtures[i].file);
		CHECK(parse_file(file, &s) == -1);
		CHECK(s.n == 0 && s.e == NULL);
		check_error(file, file, bad_fixtures[i].line,
			    bad_fixtures[i].what);
	}
}

/* Accepted forms no fixture shows; len 0 means strlen(text). */
static const struct {
	const char *label;
	const char *text;
	size_t len;
	struct want w[4];
} good[] = {
	{ "text mode", HA "  a\n", 0, { { "a", HA, 1 } } },
	{ "binary mode", HA " *a\n", 0, { { "a", HA, 1 } } },
	{ "uppercase digest", HA_UPPER "  a\n", 0, { { "a", HA, 1 } } },
	{ "CRLF", HA "  a\r\n" HL " *b\r\n", 0,
	  { { "a", HA, 1 }, { "b", HL, 2 } } },
	{ "no final newline", HA "  a\n" HL "  b", 0,
	  { { "a", HA, 1 }, { "b", HL, 2 } } },
	{ "empty lines, LF and CRLF", "\n" HA "  a\n\r\n\n" HL "  b\n\n", 0,
	  { { "a", HA, 2 }, { "b", HL, 5 } } },
	{ "comment lines", "# made by hand\n" HA "  a\n#\n#" HL "  b\n", 0,
	  { { "a", HA, 2 } } },
	{ "blanks before the digest", "  \t" HA "  a\n \\" HL "  b\\\\c\n",
	  0, { { "a", HA, 1 }, { "b\\c", HL, 2 } } },
	{ "tab after the digest", HA "\t a\n" HL "\t*b\n", 0,
	  { { "a", HA, 1 }, { "b", HL, 2 } } },
	{ "./ and // normalised", HA "  ./a\n" HL "  ././sub/./b\n"
	  HS " *sub//c\n", 0,
	  { { "a", HA, 1 }, { "sub/b", HL, 2 }, { "sub/c", HS, 3 } } },
	{ "blanks in names are kept", HA "   a \n", 0, { { " a ", HA, 1 } } },
	{ "'..\\' is a name, not '..'", HA "  ..\\x\n", 0,
	  { { "..\\x", HA, 1 } } },
	{ "BSD reversed, one space", HA " a\n" HL " sub/b\n" HS " ?c\n", 0,
	  { { "a", HA, 1 }, { "sub/b", HL, 2 }, { "?c", HS, 3 } } },
	{ "reversed name starting with '('", HA " (a)\n", 0,
	  { { "(a)", HA, 1 } } },
	{ "tagged", "SHA256 (a) = " HA "\n", 0, { { "a", HA, 1 } } },
	{ "openssl 1.1", "SHA256(a)= " HA "\n", 0, { { "a", HA, 1 } } },
	{ "openssl 3", "SHA2-256(./a)= " HA_UPPER "\r\n", 0,
	  { { "a", HA, 1 } } },
	{ "tagged, blanks around '=' and after", "  SHA256 (a)\t=\t" HA
	  " \t\n" "SHA256(b)=" HL "\n", 0,
	  { { "a", HA, 1 }, { "b", HL, 2 } } },
	{ "tagged name ends at the last ')'", "SHA256 (a) = (b)) = " HA "\n",
	  0, { { "a) = (b)", HA, 1 } } },
	{ "escaped, plain form", "\\" HA "  a\\\\b\\nc\\rd\n", 0,
	  { { "a\\b\nc\rd", HA, 1 } } },
	{ "escaped, tagged form", "\\SHA256 (a\\\\b\\nc) = " HA "\n", 0,
	  { { "a\\b\nc", HA, 1 } } },
	{ "escaped, nothing to decode", "\\" HA " *a\n", 0,
	  { { "a", HA, 1 } } },
	{ "backslash without the marker is literal", HA "  a\\nb\\\n", 0,
	  { { "a\\nb\\", HA, 1 } } },
	{ "same name, same digest: once", HA "  a\n" HA_UPPER " *./a\n"
	  "SHA256 (a) = " HA "\n" HL "  b\n", 0,
	  { { "a", HA, 1 }, { "b", HL, 4 } } },
	{ "forms mixed with tagged lines", HA " a\nSHA256 (b) = " HL "\n"
	  HS " c\n", 0,
	  { { "a", HA, 1 }, { "b", HL, 2 }, { "c", HS, 3 } } },
	{ "utf-8 name", HA "  caf\xc3\xa9.gguf\n", 0,
	  { { "caf\xc3\xa9.gguf", HA, 1 } } },
};

static void
test_good(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		const char *t = good[i].text;
		struct sums s;
		int rc;

		error_silent++;
		rc = sums_parse(t, good[i].len ? good[i].len : strlen(t), "t",
				&s);
		error_silent--;
		CHECK(rc == 0);
		if (rc)
			printf("  (case: %s: %s)\n", good[i].label,
			       error_last());
		check_entries(good[i].label, &s, good[i].w);
		sums_release(&s);
	}
}

/* Refusals, each naming its line; len 0 means strlen(text). */
static const struct {
	const char *label;
	const char *text;
	size_t len;
	int line;
	const char *what;
} bad[] = {
	/* names that leave the directory */
	{ "absolute", HA "  a\n" HL "  /etc/passwd\n", 0, 2,
	  "absolute path '/etc/passwd'" },
	{ "absolute, tagged", "SHA256 (/a) = " HA "\n", 0, 1, "absolute" },
	{ "'..' first", HA "  ../a\n", 0, 1, "'../a' leaves the directory" },
	{ "'..' inside", HA "  a/../../b\n", 0, 1, "leaves the directory" },
	{ "'..' last, tagged", "SHA2-256(a/..)= " HA "\n", 0, 1,
	  "leaves the directory" },
	{ "'..' after './'", HA "  ./..\n", 0, 1, "leaves the directory" },
	{ "empty name, tagged", "SHA256 () = " HA "\n", 0, 1,
	  "empty file name" },
	{ "empty name, two spaces", HA "  \n", 0, 1, "no file name" },
	{ "empty name, binary", HA " *\n", 0, 1, "no file name" },
	{ "'.'", HA "  .\n", 0, 1, "names the directory itself" },
	{ "'./.'", HA "  ./.\n", 0, 1, "names the directory itself" },
	{ "trailing slash", HA "  sub/\n", 0, 1, "'sub/' names a directory" },
	{ "trailing '/.'", "SHA256 (./sub/.) = " HA "\n", 0, 1,
	  "'./sub/.' names a directory" },
	{ "'-' is stdin", HA "  -\n", 0, 1, "standard input" },
	/* control characters other than through escapes */
	{ "NUL", HA "  a\0b\n", 64 + 6, 1, "NUL byte" },
	{ "tab in a name", "\n" HA "  a\tb\n", 0, 2, "control character 0x09" },
	{ "CR inside a name", HA "  a\rb\n", 0, 1, "control character 0x0d" },
	{ "two CRs at the end", HA "  a\r\r\n", 0, 1, "0x0d" },
	{ "escape sequence", HA "  \x1b[31mred\n", 0, 1,
	  "control character 0x1b in file name '\\x1b[31mred'" },
	{ "DEL", "SHA256 (a\x7f) = " HA "\n", 0, 1, "0x7f" },
	{ "tab after the separator", HA "\t\ta\n", 0, 1, "0x09" },
	{ "unknown escape", "\\" HA "  a\\tb\n", 0, 1,
	  "unknown escape '\\t'" },
	{ "lone backslash", "\\SHA256 (a\\) = " HA "\n", 0, 1,
	  "lone backslash" },
	/* duplicates */
	{ "same name, other digest", HA "  a\n" HS "  b\n" HL "  ./a\n", 0, 3,
	  "'a' listed again with another digest (first on line 1)" },
	{ "same name, other digest, other form",
	  "SHA256 (sub/a) = " HA "\n" HL " *sub//a\n", 0, 2,
	  "first on line 1" },
	/* malformed lines */
	{ "63 digits", "9d39745403e5faf662463b32d613eedf45037d0180983ae8bc87"
	  "f538cf0c965  a\n", 0, 1, "63 hex digits" },
	{ "65 digits", HA "0  a\n", 0, 1, "65 hex digits" },
	{ "sha-1 line", SHA1_A "  a\n", 0, 1, "40 hex digits" },
	{ "sha-512 line", SHA512_A "  a\n", 0, 1, "128 hex digits" },
	{ "sha-1 digest in a SHA256 tag", "SHA256 (a) = " SHA1_A "\n", 0, 1,
	  "40 hex digits" },
	{ "MD5 tag", "MD5 (a) = 0cc175b9c0f1b6a831c399e269772661\n", 0, 1,
	  "'MD5' is not a sha-256 tag" },
	{ "SHA1 tag", "SHA1 (a) = " SHA1_A "\n", 0, 1, "'SHA1'" },
	{ "SHA512 tag", "SHA512 (a) = " SHA512_A "\n", 0, 1, "'SHA512'" },
	{ "lowercase tag", "sha256 (a) = " HA "\n", 0, 1, "'sha256'" },
	{ "two spaces before '('", "SHA256  (a) = " HA "\n", 0, 1,
	  "not a checksum line" },
	{ "tagged, no ')'", "SHA256 (a = " HA "\n", 0, 1, "no ')'" },
	{ "tagged, no '='", "SHA256 (a) " HA "\n", 0, 1, "no '='" },
	{ "tagged, no digest", "SHA256 (a) = \n", 0, 1, "no hex digest" },
	{ "tagged, junk after", "SHA256 (a) = " HA " x\n", 0, 1,
	  "unexpected 'x' after the digest" },
	{ "tagged, colons", "SHA2-256(a)= 9d:39\n", 0, 1, "2 hex digits" },
	{ "no separator", HA "_a\n", 0, 1, "no space between" },
	{ "digest alone", HA "\n", 0, 1, "no file name" },
	{ "digest and a space", HA " \n", 0, 1, "no file name" },
	{ "not a checksum", HA "  a\nhello world\n", 0, 2,
	  "not a checksum line" },
	{ "blanks only", HA "  a\n \t\n", 0, 2, "only spaces or tabs" },
	{ "indented comment", " # made by hand\n", 0, 1,
	  "not a checksum line" },
	{ "'\\' then a blank", "\\ " HA "  a\n", 0, 1, "not a checksum line" },
	{ "shasum 'U' or a name", HA " Ua\n", 0, 1,
	  "'HEX U...' is ambiguous: shasum reads a universal-newlines marker" },
	{ "shasum '^' or a name", HA " ^a\n", 0, 1,
	  "'HEX ^...' is ambiguous: shasum reads a bits marker" },
	{ "two spaces after one", HA " a\n" HL "  b\n", 0, 2,
	  "one-space form of line 1" },
	{ "one space after two", HA " *a\n" HL " b\n", 0, 2,
	  "'HEX *NAME' on line 1 (sha256sum refuses the mix)" },
	{ "error on a CRLF file names the line", HA "  a\r\n\r\n" HL
	  "  ../b\r\n", 0, 3, "leaves the directory" },
	/* no lines at all: both tools fail */
	{ "empty file", "", 0, 0, "no sha-256 checksum lines" },
	{ "comments only", "# nothing\n\n\r\n", 0, 0,
	  "no sha-256 checksum lines" },
};

static void
test_bad(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *t = bad[i].text;
		struct sums s = { (struct sums_entry *)1, 7 };
		int rc;

		error_silent++;
		rc = sums_parse(t, bad[i].len ? bad[i].len : strlen(t),
				"SHA256SUMS", &s);
		error_silent--;
		CHECK(rc == -1);
		CHECK(s.n == 0 && s.e == NULL);
		check_error(bad[i].label, "SHA256SUMS", bad[i].line,
			    bad[i].what);
	}
}

/* Enough names to grow the table several times, and lookups. */
static void
test_many(void)
{
	struct buf b = BUF_INIT;
	struct sums s;
	char name[32];
	int i, ok = 1;

	for (i = 0; i < 5000; i++)
		buf_addf(&b, "%s  ./dir%d/f%d\n", i % 2 ? HA : HL, i % 7, i);
	/* every name again, in the tagged form: accepted once */
	for (i = 0; i < 5000; i++)
		buf_addf(&b, "SHA256 (dir%d/f%d) = %s\n", i % 7, i,
			 i % 2 ? HA : HL);
	CHECK(sums_parse(b.buf, b.len, "many", &s) == 0);
	CHECK(s.n == 5000);
	for (i = 0; i < 5000 && s.n == 5000; i++) {
		const struct sums_entry *e;

		snprintf(name, sizeof(name), "dir%d/f%d", i % 7, i);
		e = sums_find(&s, name);
		ok &= e == &s.e[i] && e->line == i + 1 &&
		      !strcmp(e->hex, i % 2 ? HA : HL);
	}
	CHECK(ok);
	CHECK(sums_find(&s, "./dir0/f0") == NULL);
	CHECK(sums_find(&s, "dir0/f1") == NULL);
	sums_release(&s);
	CHECK(s.n == 0 && s.e == NULL);
	sums_release(&s);

	/* a conflict after thousands of lines names its line */
	buf_addf(&b, "%s  dir1/f4999\n", HS);
	error_silent++;
	CHECK(sums_parse(b.buf, b.len, "many", &s) == -1);
	error_silent--;
	check_error("conflict in a large file", "many", 10001,
		    "'dir1/f4999' listed again with another digest "
		    "(first on line 5000)");
	buf_release(&b);
}

static const struct test_case tests[] = {
	{ "real tool output: sha256sum, cksum, shasum, openssl", test_fixtures },
	{ "real tool output that is refused", test_bad_fixtures },
	{ "accepted forms", test_good },
	{ "refusals name the line", test_bad },
	{ "thousands of names, duplicates, lookups", test_many },
};

TEST_MAIN(tests)
