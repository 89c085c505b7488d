/* The LaunchAgent plist writer: escaping, validation, commands. */
#include "run/launchagent.h"
#include "test.h"
#include "base/util.h"

static void
test_xml_escape(void)
{
	struct buf b = BUF_INIT;

	CHECK(xml_escape(&b, "a&b<c>d\"e'f]]>g", "x") == 0);
	CHECK_STR(b.buf, "a&amp;b&lt;c&gt;d&quot;e&apos;f]]&gt;g");
	buf_reset(&b);
	CHECK(xml_escape(&b, "tab\tnl\ncr\r", "x") == 0);
	CHECK_STR(b.buf, "tab\tnl\ncr&#13;");
	buf_reset(&b);
	CHECK(xml_escape(&b, "\xc3\xa9\xe2\x82\xac\xf0\x9f\xa6\x99", "x") == 0);
	CHECK_STR(b.buf, "\xc3\xa9\xe2\x82\xac\xf0\x9f\xa6\x99");
	buf_release(&b);
}

static const struct {
	const char *in;
	const char *msg;    /* substring of the error */
} bad_text[] = {
	{ "a\001b", "program argument 1 contains U+0001" },
	{ "\x1b[31m", "program argument 1 contains U+001B" },
	{ "\x0b", "U+000B" },
	{ "\x7f ok", NULL },                 /* DEL is a legal XML char */
	{ "\xef\xbf\xbe", "U+FFFE" },
	{ "\xc3", "is not valid UTF-8" },
	{ "\xc0\xaf", "is not valid UTF-8" },    /* overlong '/' */
	{ "\xed\xa0\x80", "is not valid UTF-8" }, /* surrogate */
	{ "\xf4\x90\x80\x80", "is not valid UTF-8" },
	{ "\xff", "is not valid UTF-8 (byte 0xff at offset 0)" },
};

static void
test_rejects_what_xml_cannot_carry(void)
{
	size_t i;

	error_silent++;
	for (i = 0; i < sizeof(bad_text) / sizeof(bad_text[0]); i++) {
		struct buf b = BUF_INIT;
		int r = xml_escape(&b, bad_text[i].in, "program argument 1");

		if (!bad_text[i].msg) {
			CHECK(r == 0);
		} else {
			CHECK(r < 0);
			CHECK(r < 0 && strstr(error_last(), bad_text[i].msg));
		}
		buf_release(&b);
	}
	error_silent--;
}

static char *no_args[] = { NULL };

static struct launchagent
good(void)
{
	struct launchagent la = {
		.label = "com.example.llama-server",
		.program = "/opt/llama/bin/llama-server",
		.library = "/Users/lume/lmc/LumeMetalCapabilities-arm64.dylib",
		.family_max = "1009",
		.args = no_args,
	};
	return la;
}

static void
test_validate(void)
{
	struct launchagent la = good();
	char *bad_arg[] = { "ok", "bad\002", NULL };

	error_silent++;
	CHECK(launchagent_validate(&la) == 0);
	la.family_max = "1999";
	CHECK(launchagent_validate(&la) == 0);

#define BAD(field, value, msg) do { \
	la = good(); \
	la.field = value; \
	CHECK(launchagent_validate(&la) < 0); \
	CHECK(strstr(error_last(), msg) != NULL); \
} while (0)
	BAD(family_max, "1000", "--family-max '1000'");
	BAD(family_max, "2000", "--family-max '2000'");
	BAD(family_max, "0x3F1", "--family-max '0x3F1'");
	BAD(family_max, " 1009", "--family-max ' 1009'");
	BAD(family_max, "+1009", "--family-max");
	BAD(family_max, "", "--family-max");
	BAD(label, "", "invalid --label ''");
	BAD(label, "-x", "invalid --label '-x'");
	BAD(label, ".x", "invalid --label '.x'");
	BAD(label, "a b", "character ' '");
	BAD(label, "a/b", "character '/'");
	BAD(label, "a'b", "character '''");
	BAD(program, "llama-server", "--program 'llama-server' must be an absolute path");
	BAD(library, "lib.dylib", "--library 'lib.dylib' must be an absolute path");
	BAD(library, "/a.dylib:/b.dylib", "contains ':'");
	BAD(library, "/a\001.dylib", "--library contains U+0001");
	BAD(threadgroup, "64k", "--threadgroup-memory '64k'");
	BAD(threadgroup, "-1", "--threadgroup-memory '-1'");
	BAD(threadgroup, "0", "--threadgroup-memory '0' must be a decimal number of bytes above 0");
	BAD(threadgroup, "000", "above 0 (the shim ignores 0)");
	BAD(working_set, "1e9", "--working-set '1e9'");
	BAD(stdout_path, "out.log", "--stdout 'out.log'");
	BAD(stderr_path, "/tmp/\x1b.log", "--stderr contains U+001B");
#undef BAD
	la = good();
	la.args = bad_arg;
	la.nargs = 2;
	CHECK(launchagent_validate(&la) < 0);
	CHECK(strstr(error_last(), "program argument 2 contains U+0002") != NULL);
	error_silent--;
}

static void
test_plist_shape(void)
{
	struct launchagent la = good();
	char *args[] = { "-m", "a&b", NULL };
	struct buf b = BUF_INIT;

	la.args = args;
	la.nargs = 2;
	la.threadgroup = "065536";
	la.family_max = "01009";
	CHECK(launchagent_plist(&b, &la) == 0);
	CHECK(strstr(b.buf, "<key>Label</key>\n\t<string>com.example.llama-server</string>\n"));
	CHECK(strstr(b.buf, "\t<array>\n\t\t<string>/opt/llama/bin/llama-server</string>\n"
		     "\t\t<string>-m</string>\n\t\t<string>a&amp;b</string>\n\t</array>\n"));
	CHECK(strstr(b.buf, "<key>LUME_METAL_APPLE_FAMILY_MAX</key>\n\t\t<string>1009</string>"));
	CHECK(strstr(b.buf, "<key>LUME_METAL_MAX_THREADGROUP_MEMORY</key>\n\t\t<string>65536</string>"));
	CHECK(!strstr(b.buf, "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE"));
	CHECK(strstr(b.buf, "<string>/tmp/com.example.llama-server.stdout.log</string>"));
	CHECK(!strstr(b.buf, "RunAtLoad") && !strstr(b.buf, "KeepAlive"));
	CHECK(!strstr(b.buf, "<integer>"));
	buf_release(&b);
}

static void
test_commands(void)
{
	struct launchagent la = good();
	struct buf b = BUF_INIT;

	launchagent_commands(&b, &la, "/Users/o'neil/x y.plist");
	CHECK(strstr(b.buf, "plutil -lint '/Users/o'\\''neil/x y.plist'\n"));
	CHECK(strstr(b.buf, "launchctl bootstrap gui/\"$(id -u)\" '/Users/o'\\''neil/x y.plist'\n"));
	CHECK(strstr(b.buf, "launchctl kickstart -k gui/\"$(id -u)\"/'com.example.llama-server'\n"));
	CHECK(strstr(b.buf, "launchctl bootout gui/\"$(id -u)\"/'com.example.llama-server'\n"));
	CHECK(strstr(b.buf, "rm -f '/Users/o'\\''neil/x y.plist'\n"));
	CHECK(!strstr(b.buf, "setenv"));
	buf_reset(&b);
	launchagent_commands(&b, &la, NULL);
	CHECK(strstr(b.buf, "plutil -lint \"$HOME\"/Library/LaunchAgents/'com.example.llama-server'.plist\n"));
	buf_release(&b);
}

static const struct test_case tests[] = {
	{ "xml_escape escapes the five and CR", test_xml_escape },
	{ "xml_escape rejects what XML 1.0 cannot carry", test_rejects_what_xml_cannot_carry },
	{ "validation names the bad argument", test_validate },
	{ "plist keys, strings, no RunAtLoad/KeepAlive", test_plist_shape },
	{ "commands are shell-quoted, never setenv", test_commands },
};

TEST_MAIN(tests)
