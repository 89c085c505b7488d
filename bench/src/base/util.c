#define _POSIX_C_SOURCE 200809L
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void buf_grow(struct buf *b, size_t extra);

char buf_empty[1];
int error_silent;
static char last_error[4096];   /* a message names every key it knows */

void
buf_init(struct buf *b, size_t hint)
{
	b->alloc = 0;
	b->len = 0;
	b->buf = buf_empty;
	if (hint)
		buf_grow(b, hint);
}

static void
buf_grow(struct buf *b, size_t extra)
{
	size_t need;

	if (extra > SIZE_MAX - b->len - 1)
		die("buffer size overflow");
	need = b->len + extra + 1;
	if (need <= b->alloc)
		return;
	if (b->alloc == 0)
		b->buf = NULL;
	b->alloc = b->alloc ? b->alloc : 64;
	while (b->alloc < need)
		b->alloc = b->alloc < SIZE_MAX / 2 ? b->alloc * 2 : need;
	b->buf = xrealloc(b->buf, b->alloc);
	if (b->len == 0)
		b->buf[0] = '\0';
}

void
buf_add(struct buf *b, const void *data, size_t len)
{
	if (len == 0)
		return;
	buf_grow(b, len);
	memcpy(b->buf + b->len, data, len);
	b->len += len;
	b->buf[b->len] = '\0';
}

void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addch(struct buf *b, int c)
{
	buf_grow(b, 1);
	b->buf[b->len++] = (char)c;
	b->buf[b->len] = '\0';
}

void
buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		die("vsnprintf failed for '%s'", fmt);
	buf_grow(b, (size_t)n);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void
buf_setlen(struct buf *b, size_t len)
{
	if (len > b->len)
		die("buf_setlen beyond length");
	b->len = len;
	if (b->alloc)
		b->buf[len] = '\0';
}

void
buf_reset(struct buf *b)
{
	buf_setlen(b, 0);
}

void
buf_release(struct buf *b)
{
	if (b->alloc)
		free(b->buf);
	buf_init(b, 0);
}

char *
buf_detach(struct buf *b, size_t *len)
{
	char *p;

	if (len)
		*len = b->len;
	p = b->alloc ? b->buf : xstrdup("");
	buf_init(b, 0);
	return p;
}

void
buf_add_sh_quoted(struct buf *b, const char *s)
{
	buf_addch(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			buf_adds(b, "'\\''");
		else
			buf_addch(b, *s);
	}
	buf_addch(b, '\'');
}

int
buf_read_file(struct buf *b, const char *path)
{
	char chunk[65536];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return error("cannot read '%s': %s", path,
				     strerror(errno));
		}
		if (n == 0)
			break;
		buf_add(b, chunk, (size_t)n);
	}
	close(fd);
	return 0;
}

void
buf_add_term_safe(struct buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
			buf_addf(b, "\\x%02x", c);
		} else if (c == 0xc2 && i + 1 < n &&
			   (unsigned char)s[i + 1] >= 0x80 &&
			   (unsigned char)s[i + 1] <= 0x9f) {
			buf_addf(b, "\\u%04x", (unsigned char)s[++i]);
		} else {
			buf_addch(b, (char)c);
		}
	}
}

static void
report(const char *prefix, const char *fmt, va_list ap)
{
	struct buf b = BUF_INIT;

	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	if (error_silent > 0)
		return;
	/* Names and keys from evidence files never reach a terminal raw. */
	buf_adds(&b, prefix);
	if (isatty(2))
		buf_add_term_safe(&b, last_error, strlen(last_error));
	else
		buf_adds(&b, last_error);
	buf_addch(&b, '\n');
	fputs(b.buf, stderr);
	buf_release(&b);
}

int
error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

const char *
error_last(void)
{
	return last_error;
}

void
warning(const char *fmt, ...)
{
	va_list ap;
	char save[sizeof(last_error)];

	memcpy(save, last_error, sizeof(save));
	va_start(ap, fmt);
	report("warning: ", fmt, ap);
	va_end(ap);
	memcpy(last_error, save, sizeof(save));
}

void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fatal: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_ENV);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void
xqsort(void *base, size_t n, size_t size,
       int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		die("out of memory allocating %zu bytes", n);
	return q;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *
xstrfmt(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	return buf_detach(&b, NULL);
}

int
parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int
parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

void
utc_now(char out[21])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
hex_encode(const unsigned char *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

char **
strv_push(char **v, size_t *n, char *s)
{
	v = xrealloc(v, (*n + 2) * sizeof(char *));
	v[(*n)++] = s;
	v[*n] = NULL;
	return v;
}

char **
strv_dup(const char *const *v)
{
	size_t n = 0, i;
	char **out;

	while (v && v[n])
		n++;
	out = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

void
strv_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}


void
fmt_num(char *out, size_t size, double v, int decimals)
{
	char *dot, *e;

	if (!isfinite(v)) {
		snprintf(out, size, "%s", "");
		return;
	}
	snprintf(out, size, "%.*f", decimals, v);
	dot = strchr(out, '.');
	if (!dot)
		return;
	e = out + strlen(out);
	while (e > dot + 1 && e[-1] == '0')
		*--e = '\0';
	if (e == dot + 1)
		*dot = '\0';
	if (!strcmp(out, "-0"))
		snprintf(out, size, "0");
}

/* Optimal string alignment distance of a and b (both short words). */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, *d, r;

	if (la > 64 || lb > 64)
		return (size_t)-1;
	d = xcalloc((la + 1) * (lb + 1), sizeof(size_t));
#define D(x, y) d[(x) * (lb + 1) + (y)]
	for (i = 0; i <= la; i++)
		D(i, 0) = i;
	for (j = 0; j <= lb; j++)
		D(0, j) = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t c = D(i - 1, j - 1) + (a[i - 1] != b[j - 1]);

			if (D(i - 1, j) + 1 < c)
				c = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < c)
				c = D(i, j - 1) + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && D(i - 2, j - 2) + 1 < c)
				c = D(i - 2, j - 2) + 1;
			D(i, j) = c;
		}
	r = D(la, lb);
#undef D
	free(d);
	return r;
}

const char *
closest_word(const char *word, const char *const *cand, size_t n)
{
	size_t len = strlen(word), best = (size_t)-1, i, prefixed = 0;
	size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	const char *pick = NULL, *prefix = NULL;

	if (!len)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t dist;

		if (!cand[i] || !strcmp(cand[i], word))
			continue;
		if (!strncmp(cand[i], word, len)) {
			prefix = cand[i];
			prefixed++;
		}
		dist = edit_distance(word, cand[i]);
		if (dist < best) {
			best = dist;
			pick = cand[i];
		}
	}
	if (best <= limit)
		return pick;
	return prefixed == 1 && len >= 3 ? prefix : NULL;
}

progress_fn progress_hook;

void
progress_note(const char *what, size_t done, size_t total, const char *unit)
{
	if (progress_hook)
		progress_hook(what, done, total, unit);
}
