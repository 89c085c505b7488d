#define _POSIX_C_SOURCE 200809L
#include "base/opt.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct opt *
find_long(const struct opt *opts, const char *name, size_t len)
{
	const struct opt *o;

	for (o = opts; o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

static const struct opt *
find_short(const struct opt *opts, char c)
{
	const struct opt *o;

	for (o = opts; o->name; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* The error for --name, with the option it most likely meant. */
static int
unknown_long(const struct opt *opts, const char *name, size_t len)
{
	const char **names;
	const struct opt *o;
	char *word = xstrndup(name, len);
	const char *hint;
	size_t n = 0;
	int ret;

	for (o = opts; o->name; o++)
		n++;
	names = xcalloc(n + 2, sizeof(char *));
	for (n = 0, o = opts; o->name; o++)
		names[n++] = o->name;
	names[n++] = "help";
	hint = closest_word(word, names, n);
	if (hint)
		ret = error("unknown option '--%s' (did you mean '--%s'?)",
			    word, hint);
	else
		ret = error("unknown option '--%s'", word);
	free(names);
	free(word);
	return ret;
}

/* "--name" or "-x", for messages. */
static const char *
spelled(const struct opt *o, char *tmp, size_t size)
{
	snprintf(tmp, size, "--%s", o->name);
	return tmp;
}

static int
one_of(const char *choices, const char *v)
{
	size_t n = strlen(v);
	const char *p = choices;

	while (p && *p) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len == n && !strncmp(p, v, n))
			return 1;
		p = bar ? bar + 1 : NULL;
	}
	return 0;
}

static int
set_value(const struct opt *o, const char *v, void *dst, unsigned char *seen)
{
	void *p = (char *)dst + o->offset;
	char name[128];
	long l;
	double d;

	spelled(o, name, sizeof(name));
	if (o->type != OPT_LIST) {
		if (*seen)
			return error("%s given twice", name);
		*seen = 1;
	}
	switch (o->type) {
	case OPT_FLAG:
		*(int *)p = 1;
		return 0;
	case OPT_STR:
		*(const char **)p = v;
		return 0;
	case OPT_CHOICE:
		if (!one_of(o->choices, v)) {
			struct buf b = BUF_INIT;
			const char *c;

			for (c = o->choices; *c; c++)
				buf_adds(&b, *c == '|' ? ", " : (char[2]){ *c, 0 });
			error("%s '%s' is not one of: %s", name, v, b.buf);
			buf_release(&b);
			return -1;
		}
		*(const char **)p = v;
		return 0;
	case OPT_INT:
		if (parse_long(v, &l) < 0)
			return error("%s '%s' is not a whole number", name, v);
		if (o->min < o->max && (l < o->min || l > o->max))
			return error("%s %ld is out of range [%.0f, %.0f]", name,
				     l, o->min, o->max);
		*(long *)p = l;
		return 0;
	case OPT_DOUBLE:
		if (parse_double(v, &d) < 0 || !isfinite(d))
			return error("%s '%s' is not a number", name, v);
		if (o->min < o->max && (d < o->min || d > o->max))
			return error("%s %g is out of range [%g, %g]", name, d,
				     o->min, o->max);
		*(double *)p = d;
		return 0;
	case OPT_LIST: {
		struct opt_list *lst = p;

		lst->v = xrealloc(lst->v, (lst->n + 2) * sizeof(char *));
		lst->v[lst->n++] = v;
		lst->v[lst->n] = NULL;
		return 0;
	}
	default:
		return error("%s: bad option table", name);
	}
}

/*
 * One option at argv[*i]; takes its argument from the same word or the
 * next one. 1 for --help, 0 done, -1 error.
 */
static int
parse_one(const struct opt *opts, int argc, char **argv, int *i, void *dst,
	  unsigned char *seen)
{
	const char *a = argv[*i], *val = NULL;
	const struct opt *o;
	char name[128];

	if (a[1] == '-') {
		const char *eq = strchr(a + 2, '=');
		size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

		if (len == 4 && !strncmp(a + 2, "help", 4))
			return 1;
		o = find_long(opts, a + 2, len);
		if (!o)
			return unknown_long(opts, a + 2, len);
		if (eq) {
			if (o->type == OPT_FLAG)
				return error("--%s takes no value", o->name);
			val = eq + 1;
		}
	} else {
		if (a[1] == 'h' && !a[2])
			return 1;
		o = find_short(opts, a[1]);
		if (!o)
			return error("unknown option '-%c'", a[1]);
		if (o->type == OPT_FLAG && a[2])
			return error("-%c takes no value", a[1]);
		if (a[2])
			val = a + 2;
	}
	if (o->type != OPT_FLAG && !val) {
		if (*i + 1 >= argc)
			return error("%s needs %s", spelled(o, name, sizeof(name)),
				     o->arg ? o->arg : "a value");
		val = argv[++*i];
	}
	return set_value(o, val, dst, &seen[o - opts]);
}

int
opt_parse(const struct opt *opts, int argc, char **argv, void *dst,
	  const char ***args, size_t *nargs)
{
	unsigned char *seen;
	size_t nopts = 0;
	int i, rc = 0, dashdash = 0;

	*args = xcalloc((size_t)argc + 1, sizeof(char *));
	*nargs = 0;
	while (opts[nopts].name)
		nopts++;
	seen = xcalloc(nopts + 1, 1);
	for (i = 1; i < argc && rc == 0; i++) {
		const char *a = argv[i];

		if (dashdash || a[0] != '-' || !a[1]) {
			(*args)[(*nargs)++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			dashdash = 1;
			continue;
		}
		rc = parse_one(opts, argc, argv, &i, dst, seen);
	}
	free(seen);
	return rc;
}

void
opt_release(const struct opt *opts, void *dst)
{
	const struct opt *o;

	for (o = opts; o->name; o++)
		if (o->type == OPT_LIST) {
			struct opt_list *l = (void *)((char *)dst + o->offset);
			free(l->v);
			l->v = NULL;
			l->n = 0;
		}
}

/* Appends text wrapped at width, continuation lines indented by indent. */
static void
wrap(struct buf *out, const char *text, size_t col, size_t indent,
     size_t width)
{
	const char *p = text;

	while (*p) {
		const char *w = p;
		size_t len;

		if (*p == '\n') {
			buf_addf(out, "\n%*s", (int)indent, "");
			col = indent;
			p++;
			continue;
		}
		while (*w && *w != ' ' && *w != '\n')
			w++;
		len = (size_t)(w - p);
		if (col > indent && col + 1 + len > width) {
			buf_addf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			buf_addch(out, ' ');
			col++;
		}
		buf_add(out, p, len);
		col += len;
		p = w;
		while (*p == ' ')
			p++;
	}
}

void
opt_help(const struct opt *opts, struct buf *out)
{
	const struct opt *o;
	const size_t indent = 22, width = 78;

	for (o = opts; o->name; o++) {
		size_t start = out->len, col;

		if (o->short_name)
			buf_addf(out, "  -%c, --%s", o->short_name, o->name);
		else
			buf_addf(out, "  --%s", o->name);
		if (o->arg)
			buf_addf(out, " %s", o->arg);
		if (o->type == OPT_LIST)
			buf_adds(out, "...");
		col = out->len - start;
		if (col + 2 > indent) {
			buf_addf(out, "\n%*s", (int)indent, "");
		} else {
			buf_addf(out, "%*s", (int)(indent - col), "");
		}
		wrap(out, o->help ? o->help : "", indent, indent, width);
		buf_addch(out, '\n');
	}
	buf_addf(out, "  -h, --help%*sthis text\n", (int)(indent - 12), "");
}
