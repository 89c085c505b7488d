/*
 * LaunchAgent plist writer for the capability shim (see launchagent.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "run/launchagent.h"
#include "run/shimlib.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * Decodes one UTF-8 sequence at s; returns its length and sets *cp, or
 * 0 for an invalid sequence (overlong, surrogate, beyond U+10FFFF,
 * truncated).
 */
static size_t
utf8_decode(const unsigned char *s, unsigned long *cp)
{
	size_t n, i;
	unsigned long c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	} else if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
	    (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
 * [#x10000-#x10FFFF]. */
static int
xml_char_ok(unsigned long c)
{
	return c == 0x9 || c == 0xa || c == 0xd ||
		(c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) ||
		(c >= 0x10000 && c <= 0x10ffff);
}

int
xml_escape(struct buf *out, const char *s, const char *what)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned long c;
		size_t n = utf8_decode(p, &c);

		if (!n)
			return error("%s is not valid UTF-8 (byte 0x%02x at "
				     "offset %zu)", what, *p,
				     (size_t)(p - (const unsigned char *)s));
		if (!xml_char_ok(c))
			return error("%s contains U+%04lX, which XML 1.0 "
				     "(and so a property list) cannot carry",
				     what, c);
		switch (c) {
		case '&': buf_adds(out, "&amp;"); break;
		case '<': buf_adds(out, "&lt;"); break;
		case '>': buf_adds(out, "&gt;"); break;
		case '"': buf_adds(out, "&quot;"); break;
		case '\'': buf_adds(out, "&apos;"); break;
		/* A literal CR would be normalised to LF by every parser. */
		case '\r': buf_adds(out, "&#13;"); break;
		default: buf_add(out, p, n); break;
		}
		p += n;
	}
	return 0;
}

/* Whole-string decimal, digits only (no sign, no space), no overflow. */
static int
parse_decimal(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (~0ULL - (unsigned)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
	}
	*out = v;
	return 0;
}

static int
check_path(const char *path, const char *what)
{
	struct buf scratch = BUF_INIT;
	int ret;

	if (!path || path[0] != '/')
		return error("%s '%s' must be an absolute path", what,
			     path ? path : "");
	ret = xml_escape(&scratch, path, what);
	buf_release(&scratch);
	return ret;
}

int
launchagent_validate(const struct launchagent *la)
{
	struct buf scratch = BUF_INIT;
	unsigned long long v;
	const char *p;
	size_t i;
	int ret = -1;

	if (!la->label || !*la->label || la->label[0] == '.' ||
	    la->label[0] == '-' || strlen(la->label) > 200) {
		error("invalid --label '%s': use 1-200 letters, digits, '.', "
		      "'-' or '_', not starting with '.' or '-'",
		      la->label ? la->label : "");
		goto cleanup;
	}
	for (p = la->label; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ||
		      *p == '_')) {
			error("invalid --label '%s': character '%c' is not a "
			      "letter, digit, '.', '-' or '_'", la->label, *p);
			goto cleanup;
		}
	}
	if (check_path(la->program, "--program") < 0 ||
	    check_path(la->library, "--library") < 0)
		goto cleanup;
	if (strchr(la->library, ':')) {
		error("--library '%s' contains ':', which separates "
		      "DYLD_INSERT_LIBRARIES entries", la->library);
		goto cleanup;
	}
	if (parse_decimal(la->family_max, &v) < 0 || v < 1001 || v > 1999) {
		error("--family-max '%s' must be a decimal number from 1001 "
		      "to 1999 (an Apple GPU family, e.g. 1009)",
		      la->family_max ? la->family_max : "");
		goto cleanup;
	}
	if (la->threadgroup && (parse_decimal(la->threadgroup, &v) < 0 ||
				v == 0)) {
		error("--threadgroup-memory '%s' must be a decimal number of "
		      "bytes above 0 (the shim ignores 0)", la->threadgroup);
		goto cleanup;
	}
	if (la->working_set && parse_decimal(la->working_set, &v) < 0) {
		error("--working-set '%s' must be a decimal number of bytes",
		      la->working_set);
		goto cleanup;
	}
	if ((la->stdout_path && check_path(la->stdout_path, "--stdout") < 0) ||
	    (la->stderr_path && check_path(la->stderr_path, "--stderr") < 0))
		goto cleanup;
	for (i = 0; i < la->nargs; i++) {
		char what[64];

		snprintf(what, sizeof(what), "program argument %zu", i + 1);
		if (xml_escape(&scratch, la->args[i], what) < 0)
			goto cleanup;
	}
	ret = 0;
cleanup:
	buf_release(&scratch);
	return ret;
}

int
launchagent_check_library(const struct launchagent *la, char **what)
{
	struct shimlib_info info;
	struct buf b = BUF_INIT;
	struct stat st;

	*what = NULL;
	if (stat(la->library, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return error("--library '%s': %s", la->library,
			     strerror(errno));
	}
	if (shimlib_inspect(la->library, &info) < 0 ||
	    shimlib_check_macos(la->library, &info) < 0)
		return error("--library '%s' cannot be injected (above)",
			     la->library);
	if (!info.has_arm64e && !la->allow_arm64_only)
		return error("--library '%s': " SHIMLIB_NO_ARM64E_WARNING
			     " (or pass --allow-arm64-only when no process of "
			     "the job is arm64e)", la->library);
	shimlib_describe(&b, &info);
	*what = buf_detach(&b, NULL);
	return 1;
}

static int
add_string(struct buf *out, const char *indent, const char *s,
	   const char *what)
{
	buf_adds(out, indent);
	buf_adds(out, "<string>");
	if (xml_escape(out, s, what) < 0)
		return -1;
	buf_adds(out, "</string>\n");
	return 0;
}

static int
add_key_string(struct buf *out, const char *indent, const char *key,
	       const char *s, const char *what)
{
	buf_addf(out, "%s<key>%s</key>\n", indent, key);
	return add_string(out, indent, s, what);
}

/*
 * The canonical decimal form of a validated number: the shim reads its
 * variables like strtoull(..., 0), so "01009" would be octal (and
 * refused) there; the plist always carries plain decimal.
 */
static char *
canonical(const char *s)
{
	unsigned long long v = 0;

	if (!s || parse_decimal(s, &v) < 0)
		return NULL;
	return xstrfmt("%llu", v);
}

int
launchagent_plist(struct buf *out, const struct launchagent *la)
{
	char *out_path = NULL, *err_path = NULL;
	char *family = canonical(la->family_max);
	char *tg = canonical(la->threadgroup);
	char *ws = canonical(la->working_set);
	size_t i;
	int ret = -1;

	if (!family) {
		error("--family-max '%s' is not a decimal number",
		      la->family_max ? la->family_max : "");
		goto cleanup;
	}

	out_path = la->stdout_path ? xstrdup(la->stdout_path) :
		xstrfmt("/tmp/%s.stdout.log", la->label);
	err_path = la->stderr_path ? xstrdup(la->stderr_path) :
		xstrfmt("/tmp/%s.stderr.log", la->label);

	buf_adds(out,
		 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		 "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
		 "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
		 "<plist version=\"1.0\">\n"
		 "<dict>\n");
	if (add_key_string(out, "\t", "Label", la->label, "--label") < 0)
		goto cleanup;
	buf_adds(out, "\t<key>ProgramArguments</key>\n\t<array>\n");
	if (add_string(out, "\t\t", la->program, "--program") < 0)
		goto cleanup;
	for (i = 0; i < la->nargs; i++) {
		char what[64];

		snprintf(what, sizeof(what), "program argument %zu", i + 1);
		if (add_string(out, "\t\t", la->args[i], what) < 0)
			goto cleanup;
	}
	buf_adds(out, "\t</array>\n\t<key>EnvironmentVariables</key>\n\t<dict>\n");
	if (add_key_string(out, "\t\t", "DYLD_INSERT_LIBRARIES", la->library,
			   "--library") < 0 ||
	    add_key_string(out, "\t\t", "LUME_METAL_APPLE_FAMILY_MAX",
			   family, "--family-max") < 0 ||
	    (tg && add_key_string(out, "\t\t",
				  "LUME_METAL_MAX_THREADGROUP_MEMORY",
				  tg, "--threadgroup-memory") < 0) ||
	    (ws && add_key_string(out, "\t\t",
				  "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE",
				  ws, "--working-set") < 0))
		goto cleanup;
	buf_adds(out, "\t</dict>\n");
	if (add_key_string(out, "\t", "StandardOutPath", out_path,
			   "--stdout") < 0 ||
	    add_key_string(out, "\t", "StandardErrorPath", err_path,
			   "--stderr") < 0)
		goto cleanup;
	buf_adds(out, "</dict>\n</plist>\n");
	ret = 0;
cleanup:
	free(out_path);
	free(err_path);
	free(family);
	free(tg);
	free(ws);
	return ret;
}

void
launchagent_commands(struct buf *out, const struct launchagent *la,
		     const char *plist_path)
{
	struct buf plist = BUF_INIT, label = BUF_INIT;

	if (plist_path) {
		buf_add_sh_quoted(&plist, plist_path);
	} else {
		buf_adds(&plist, "\"$HOME\"/Library/LaunchAgents/");
		buf_add_sh_quoted(&plist, la->label);
		buf_adds(&plist, ".plist");
	}
	buf_add_sh_quoted(&label, la->label);
	if (!plist_path)
		buf_addf(out, "# Save the property list as %s first.\n",
			 plist.buf);
	buf_addf(out,
		 "# Check, install and start (in the logged-in GUI session of "
		 "the user who runs the workload):\n"
		 "plutil -lint %s\n"
		 "launchctl bootstrap gui/\"$(id -u)\" %s\n"
		 "launchctl kickstart -k gui/\"$(id -u)\"/%s\n"
		 "launchctl print gui/\"$(id -u)\"/%s\n"
		 "# After editing the plist, bootout and bootstrap again "
		 "(kickstart -k does not re-read it).\n"
		 "# Roll back:\n"
		 "launchctl bootout gui/\"$(id -u)\"/%s\n"
		 "rm -f %s\n",
		 plist.buf, plist.buf, label.buf, label.buf, label.buf,
		 plist.buf);
	buf_release(&plist);
	buf_release(&label);
}
