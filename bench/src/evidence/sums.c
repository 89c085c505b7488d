/*
 * Checksum files, read the way `sha256sum -c` (GNU coreutils 9) and
 * `shasum -a 256 -c` (perl) read them. Where the two disagree, a line is
 * accepted when either accepts it, unless the two would check different
 * files or a digest of something else than the file's bytes; names that
 * could leave the directory are always refused.
 * bench/t/fixtures/sums/FORMS.md has the table.
 */
#include "evidence/sums.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *file;
	int line;
	/*
	 * Untagged lines: -1 until the first one, then 0 for "HEX  NAME" /
	 * "HEX *NAME", 1 for the one-space "HEX NAME". sha256sum decides
	 * by the first such line and reads later ones the same way.
	 */
	int reversed;
	int reversed_line;
	char reversed_mark;     /* ' ' or '*' when reversed is 0 */
	struct sums *out;
	size_t alloc;
	size_t *slot;           /* open addressing: entry index + 1 */
	size_t nslot;
	struct buf shown;       /* a name made printable, for messages */
};

static int
is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static int
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

static int
is_tag_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '-' || c == '/' || c == '_';
}

static int
is_control(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f;
}

/* Reports "'FILE' line N: ..." through error(); returns -1. */
__attribute__((format(printf, 2, 3)))
static int
bad(struct parser *p, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	buf_addf(&b, "'%s' line %d: ", p->file, p->line);
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	error("%s", b.buf);
	buf_release(&b);
	return -1;
}

/*
 * s made printable for a message: control characters as \n, \r or \xHH.
 * The result lives in p->shown until the next call.
 */
static const char *
shown(struct parser *p, const char *s, size_t len)
{
	size_t i;

	buf_reset(&p->shown);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			buf_adds(&p->shown, "\\n");
		else if (c == '\r')
			buf_adds(&p->shown, "\\r");
		else if (is_control((char)c))
			buf_addf(&p->shown, "\\x%02x", c);
		else
			buf_addch(&p->shown, c);
	}
	return p->shown.buf;
}

/*
 * Decodes the name as written into out. Control characters are refused
 * as written; escaped (the line began with "\") decodes coreutils'
 * "\\", "\n" and "\r" and refuses any other escape, as sha256sum does
 * (shasum would keep an unknown one as it is, but never writes one).
 */
static int
decode_name(struct parser *p, const char *raw, size_t len, int escaped,
	    struct buf *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (is_control(raw[i]))
			return bad(p, "control character 0x%02x in file name '%s'",
				   (unsigned char)raw[i], shown(p, raw, len));
	for (i = 0; i < len; i++) {
		char c = raw[i];

		if (c == '\\' && escaped) {
			if (i + 1 == len)
				return bad(p, "file name '%s' ends in a lone "
					   "backslash", shown(p, raw, len));
			c = raw[++i];
			if (c == 'n')
				c = '\n';
			else if (c == 'r')
				c = '\r';
			else if (c != '\\')
				return bad(p, "unknown escape '\\%c' in file "
					   "name '%s'", c, shown(p, raw, len));
		}
		buf_addch(out, c);
	}
	return 0;
}

/*
 * Normalises a decoded name: drops "." and empty components, so
 * "./a//b/./c" is "a/b/c". Refuses what is not a file inside the
 * directory: empty, absolute, "..", "." or a trailing "/" or "/.", and
 * "-" (standard input to both tools). *out is allocated.
 */
static int
normalise(struct parser *p, const char *name, size_t len, char **out)
{
	struct buf b = BUF_INIT;
	size_t i = 0;
	int ret = -1;

	if (!len) {
		bad(p, "empty file name");
		goto cleanup;
	}
	if (len == 1 && name[0] == '-') {
		bad(p, "file name '-' means standard input to sha256sum "
		    "and shasum");
		goto cleanup;
	}
	if (name[0] == '/') {
		bad(p, "absolute path '%s'", shown(p, name, len));
		goto cleanup;
	}
	while (i < len) {
		const char *c = name + i;
		const char *slash = memchr(c, '/', len - i);
		size_t clen = slash ? (size_t)(slash - c) : len - i;

		if (clen == 2 && c[0] == '.' && c[1] == '.') {
			bad(p, "'%s' leaves the directory ('..')",
			    shown(p, name, len));
			goto cleanup;
		}
		if (clen && !(clen == 1 && c[0] == '.')) {
			if (b.len)
				buf_addch(&b, '/');
			buf_add(&b, c, clen);
		}
		i += clen + 1;
	}
	if (!b.len) {
		bad(p, "'%s' names the directory itself", shown(p, name, len));
		goto cleanup;
	}
	/* "a/" and "a/." are a's directory, never a file */
	if (name[len - 1] == '/' ||
	    (len >= 2 && name[len - 2] == '/' && name[len - 1] == '.')) {
		bad(p, "'%s' names a directory", shown(p, name, len));
		goto cleanup;
	}
	*out = buf_detach(&b, NULL);
	ret = 0;
cleanup:
	buf_release(&b);
	return ret;
}

/* FNV-1a. */
static size_t
name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return (size_t)h;
}

/* The slot holding name, or the empty slot where it would go. */
static size_t *
find_slot(struct parser *p, const char *name)
{
	size_t mask = p->nslot - 1, i = name_hash(name) & mask;

	while (p->slot[i] && strcmp(p->out->e[p->slot[i] - 1].name, name))
		i = (i + 1) & mask;
	return &p->slot[i];
}

/* Keeps the table at most half full. */
static void
grow_slots(struct parser *p)
{
	size_t i;

	if ((p->out->n + 1) * 2 <= p->nslot)
		return;
	free(p->slot);
	p->nslot = p->nslot ? p->nslot * 2 : 64;
	p->slot = xcalloc(p->nslot, sizeof(*p->slot));
	for (i = 0; i < p->out->n; i++)
		*find_slot(p, p->out->e[i].name) = i + 1;
}

/*
 * Adds one entry: hex is 64 hex digits, raw the name as written. The
 * same name twice with the same digest is kept once; with another digest
 * it is refused.
 */
static int
add_entry(struct parser *p, const char *hex, const char *raw, size_t len,
	  int escaped)
{
	struct buf dec = BUF_INIT;
	struct sums_entry *e;
	char *name = NULL, lower[SHA256_HEX_LEN + 1];
	size_t *slot, i;
	int ret = -1;

	if (decode_name(p, raw, len, escaped, &dec) < 0 ||
	    normalise(p, dec.buf, dec.len, &name) < 0)
		goto cleanup;
	for (i = 0; i < SHA256_HEX_LEN; i++)
		lower[i] = hex[i] >= 'A' && hex[i] <= 'F' ?
			   (char)(hex[i] - 'A' + 'a') : hex[i];
	lower[SHA256_HEX_LEN] = '\0';

	grow_slots(p);
	slot = find_slot(p, name);
	if (*slot) {
		e = &p->out->e[*slot - 1];
		if (strcmp(e->hex, lower)) {
			bad(p, "'%s' listed again with another digest "
			    "(first on line %d)", shown(p, name, strlen(name)),
			    e->line);
			goto cleanup;
		}
		ret = 0;
		goto cleanup;
	}
	if (p->out->n == p->alloc) {
		p->alloc = p->alloc ? p->alloc * 2 : 16;
		p->out->e = xrealloc(p->out->e, p->alloc * sizeof(*p->out->e));
	}
	e = &p->out->e[p->out->n];
	e->name = name;
	name = NULL;
	memcpy(e->hex, lower, sizeof(lower));
	e->line = p->line;
	*slot = ++p->out->n;
	ret = 0;
cleanup:
	free(name);
	buf_release(&dec);
	return ret;
}

/*
 * "SHA256 (NAME) = HEX" (sha256sum --tag, shasum --tag, cksum) and
 * openssl's "SHA2-256(NAME)= HEX" / "SHA256(NAME)= HEX". s points at
 * the tag; the name ends at the last ")" on the line, as in sha256sum.
 * Spaces and tabs around "=" and after the digest are allowed (shasum
 * ignores what follows the digest; anything but blanks is refused here).
 */
static int
parse_tagged(struct parser *p, const char *s, const char *tag_end,
	     const char *end, int escaped)
{
	size_t tlen = (size_t)(tag_end - s), hlen;
	const char *name, *close, *q, *hex;

	if (!(tlen == 6 && !memcmp(s, "SHA256", 6)) &&
	    !(tlen == 8 && !memcmp(s, "SHA2-256", 8)))
		return bad(p, "'%.*s' is not a sha-256 tag (SHA256, SHA2-256)",
			   (int)tlen, s);
	name = tag_end + (*tag_end == ' ') + 1;
	for (close = end; close > name && close[-1] != ')'; close--)
		;
	if (close == name)
		return bad(p, "no ')' after the file name");
	close--;
	q = close + 1;
	while (q < end && is_ws(*q))
		q++;
	if (q == end || *q != '=')
		return bad(p, "no '=' after the file name");
	q++;
	while (q < end && is_ws(*q))
		q++;
	for (hex = q; q < end && is_hex(*q); q++)
		;
	hlen = (size_t)(q - hex);
	if (!hlen)
		return bad(p, "no hex digest after '='");
	if (hlen != SHA256_HEX_LEN)
		return bad(p, "%zu hex digits, not a sha-256 digest (64)", hlen);
	while (q < end && is_ws(*q))
		q++;
	if (q != end)
		return bad(p, "unexpected '%s' after the digest",
			   shown(p, q, (size_t)(end - q)));
	return add_entry(p, hex, name, (size_t)(close - name), escaped);
}

/*
 * "HEX  NAME" (text), "HEX *NAME" (binary): sha256sum, shasum, openssl
 * dgst -r. After one space or tab, sha256sum also takes "HEX NAME" (BSD
 * "sha256 -r"), but not mixed with the two-character forms in one file;
 * shasum reads "HEX UNAME" and "HEX ^NAME" as its universal-newlines and
 * bits modes instead. Such lines are refused: the tools would check
 * different files, and shasum's digest is not of the file's bytes.
 */
static int
parse_untagged(struct parser *p, const char *s, const char *end,
	       int escaped)
{
	const char *h = s, *rest, *name;
	size_t hlen, rlen;
	int reversed;

	while (h < end && is_hex(*h))
		h++;
	hlen = (size_t)(h - s);
	if (!hlen || (h < end && !is_ws(*h) && hlen != SHA256_HEX_LEN))
		return bad(p, "not a checksum line");
	if (hlen != SHA256_HEX_LEN)
		return bad(p, "%zu hex digits, not a sha-256 digest (64)", hlen);
	if (h == end)
		return bad(p, "no file name after the digest");
	if (!is_ws(*h))
		return bad(p, "no space between the digest and the file name");
	rest = h + 1;
	rlen = (size_t)(end - rest);
	if (rlen >= 2 && (*rest == ' ' || *rest == '*')) {
		reversed = 0;
		name = rest + 1;
	} else if (!rlen || *rest == ' ' || *rest == '*') {
		return bad(p, "no file name after the digest");
	} else if (*rest == 'U' || *rest == '^') {
		return bad(p, "'HEX %c...' is ambiguous: shasum reads a %s "
			   "marker, sha256sum a name starting with '%c'",
			   *rest, *rest == 'U' ? "universal-newlines" : "bits",
			   *rest);
	} else {
		reversed = 1;
		name = rest;
	}
	if (p->reversed == 1 && !reversed)
		return bad(p, "'HEX %cNAME' after the one-space form of line "
			   "%d: sha256sum would read a name starting with '%c'",
			   *rest, p->reversed_line, *rest);
	if (p->reversed == 0 && reversed)
		return bad(p, "one space after the digest, but 'HEX %cNAME' "
			   "on line %d (sha256sum refuses the mix)",
			   p->reversed_mark, p->reversed_line);
	if (p->reversed < 0) {
		p->reversed = reversed;
		p->reversed_line = p->line;
		p->reversed_mark = *rest;
	}
	return add_entry(p, s, name, (size_t)(end - name), escaped);
}

/* One line without its line end; never empty. */
static int
parse_line(struct parser *p, const char *s, const char *end)
{
	const char *t, *h;
	int escaped = 0;

	if (memchr(s, '\0', (size_t)(end - s)))
		return bad(p, "NUL byte in the line");
	while (s < end && is_ws(*s))
		s++;
	if (s == end)
		return bad(p, "line of only spaces or tabs");
	if (*s == '\\') {
		escaped = 1;
		s++;
	}
	for (t = s; t < end && is_tag_char(*t); t++)
		;
	for (h = s; h < end && is_hex(*h); h++)
		;
	/* A tag, not a digest, when it has a non-hex character. */
	if (t > s && h != t && t < end &&
	    (*t == '(' || (*t == ' ' && t + 1 < end && t[1] == '(')))
		return parse_tagged(p, s, t, end, escaped);
	return parse_untagged(p, s, end, escaped);
}

int
sums_parse(const char *text, size_t len, const char *file,
	   struct sums *out)
{
	struct parser p;
	const char *s = text, *end = len ? text + len : text;
	int ret = -1;

	memset(&p, 0, sizeof(p));
	p.file = file;
	p.reversed = -1;
	p.out = out;
	p.shown = (struct buf)BUF_INIT;
	out->e = NULL;
	out->n = 0;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;

		p.line++;
		/* Both tools skip "#" lines, only at the very start. */
		if (*s != '#' && *s != '\n') {
			if (e[-1] == '\r')
				e--;
			if (e > s && parse_line(&p, s, e) < 0)
				goto cleanup;
		}
		s = nl ? nl + 1 : end;
	}
	if (!out->n) {
		error("'%s': no sha-256 checksum lines", file);
		goto cleanup;
	}
	ret = 0;
cleanup:
	free(p.slot);
	buf_release(&p.shown);
	if (ret)
		sums_release(out);
	return ret;
}

const struct sums_entry *
sums_find(const struct sums *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->e[i].name, name))
			return &s->e[i];
	return NULL;
}

void
sums_release(struct sums *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->e[i].name);
	free(s->e);
	s->e = NULL;
	s->n = 0;
}
