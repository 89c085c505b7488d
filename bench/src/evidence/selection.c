#define _POSIX_C_SOURCE 200809L
#include "evidence/selection.h"
#include "evidence/state.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* The column keys, by enum sel_key. */
static const char *const key_names[SEL_NKEYS] = {
	[SEL_KEY_OTHER] = "",
	[SEL_KEY_SESSION] = "session",
	[SEL_KEY_LABEL] = "label",
	[SEL_KEY_KIND] = "kind",
	[SEL_KEY_VARIANT] = "variant",
	[SEL_KEY_TARGET] = "target",
	[SEL_KEY_MODEL] = "model",
	[SEL_KEY_ROLE] = "role",
	[SEL_KEY_RUNTIME] = "runtime",
	[SEL_KEY_TEST] = "test",
	[SEL_KEY_STATUS] = "status",
	[SEL_KEY_SESSION_STATUS] = "session_status",
	[SEL_KEY_TAMPERED] = "tampered",
	[SEL_KEY_VERIFICATION] = "verification",
	[SEL_KEY_OS_BUILD] = "os_build",
	[SEL_KEY_OS_VERSION] = "os_version",
	[SEL_KEY_IDENTITY] = "identity",
	[SEL_KEY_BASE_IDENTITY] = "base_identity",
	[SEL_KEY_BUILD] = "build",
	[SEL_KEY_SHA256] = "sha256",
};

/* The words of include= and their bits ("all" last). */
static const struct {
	const char *word;
	unsigned bit;
} include_words[] = {
	{ "tampered", SEL_TAMPERED },
	{ "partial", SEL_PARTIAL },
	{ "failed", SEL_FAILED },
	{ "interrupted", SEL_INTERRUPTED },
	{ "unfinished", SEL_UNFINISHED },
	{ "all", SEL_ALL },
};

const struct sel_status selection_statuses[] = {
	{ SESSION_STATE_OK, 0 },
	{ SESSION_STATE_FAILED, SEL_FAILED },
	{ SESSION_STATE_INTERRUPTED, SEL_INTERRUPTED },
	{ SESSION_STATE_RUNNING, SEL_UNFINISHED },
	{ SESSION_STATE_IMPORTING, SEL_UNFINISHED },
};
const size_t selection_nstatuses = ARRAY_SIZE(selection_statuses);

const char *
selection_key_name(enum sel_key k)
{
	return k < SEL_NKEYS ? key_names[k] : "";
}

static enum sel_key
key_of(const char *name)
{
	int k;

	for (k = 1; k < SEL_NKEYS; k++)
		if (!strcmp(name, key_names[k]))
			return (enum sel_key)k;
	return SEL_KEY_OTHER;
}

static int
valid_key(const char *k)
{
	if (!*k)
		return 0;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9') || *k == '_' || *k == '.'))
			return 0;
	return 1;
}

/* The SEL_* bits of an include= value ("tampered+partial"); -1 if bad. */
static int
include_bits(const char *value, unsigned *bits)
{
	char *copy = xstrdup(value), *w, *save = NULL;
	size_t k;
	int ret = 0;

	*bits = 0;
	for (w = strtok_r(copy, "+", &save); w; w = strtok_r(NULL, "+", &save)) {
		for (k = 0; k < ARRAY_SIZE(include_words) &&
		     strcmp(w, include_words[k].word); k++)
			;
		if (k == ARRAY_SIZE(include_words)) {
			ret = -1;
			break;
		}
		*bits |= include_words[k].bit;
	}
	if (!*bits)
		ret = -1;
	free(copy);
	return ret;
}

/* The bit that counts sessions of status s; SEL_NEVER for none. */
static unsigned
status_bit(const char *s)
{
	int state = session_state_of(s);
	size_t k;

	for (k = 0; k < selection_nstatuses; k++)
		if (state == (int)selection_statuses[k].state)
			return selection_statuses[k].bit;
	return SEL_NEVER;
}

/* What a key naming excluded data includes by saying so. */
static unsigned
implied_include(enum sel_key k, const char *value)
{
	unsigned bit;

	if (k == SEL_KEY_STATUS && run_state_of(value) != RUN_STATE_OK)
		return SEL_PARTIAL;
	if (k == SEL_KEY_TAMPERED && strcmp(value, "0"))
		return SEL_TAMPERED;
	if (k == SEL_KEY_SESSION_STATUS) {
		bit = status_bit(value);
		return bit == SEL_NEVER ? 0 : bit;
	}
	return 0;
}

static void
push_term(struct selection *sel, const char *name, const char *value)
{
	struct sel_term *t;
	long back;

	sel->t = xrealloc(sel->t, (sel->n + 1) * sizeof(*sel->t));
	t = &sel->t[sel->n++];
	t->key = key_of(name);
	t->name = xstrdup(name);
	t->value = xstrdup(value);
	t->latest = t->key == SEL_KEY_SESSION && selection_latest(value, &back) ?
		    back : -1;
	sel->include |= implied_include(t->key, value);
}

int
selection_parse(const char *text, struct selection *out)
{
	char *copy, *item, *save = NULL;

	memset(out, 0, sizeof(*out));
	out->text = xstrdup(text ? text : "");
	if (!text || !*text || !strcmp(text, "all"))
		return 0;
	copy = xstrdup(text);
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		unsigned bits;

		if (!eq || eq == item) {
			error("selection '%s': '%s' is not key=value", text,
			      item);
			goto fail;
		}
		*eq = '\0';
		if (!valid_key(item)) {
			error("selection '%s': bad key '%s'", text, item);
			goto fail;
		}
		if (strcmp(item, "include")) {
			push_term(out, item, eq + 1);
			continue;
		}
		if (include_bits(eq + 1, &bits) < 0) {
			error("selection '%s': include='%s': give tampered, "
			      "partial, failed, interrupted, unfinished or all "
			      "(several joined by '+')", text, eq + 1);
			goto fail;
		}
		out->include |= bits;
	}
	free(copy);
	return 0;
fail:
	free(copy);
	selection_free(out);
	return -1;
}

void
selection_free(struct selection *sel)
{
	size_t i;

	for (i = 0; i < sel->n; i++) {
		free(sel->t[i].name);
		free(sel->t[i].value);
	}
	free(sel->t);
	free(sel->text);
	memset(sel, 0, sizeof(*sel));
}

void
selection_copy(struct selection *dst, const struct selection *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->t = xcalloc(src->n + 1, sizeof(*dst->t));
	for (i = 0; i < src->n; i++) {
		dst->t[i] = src->t[i];
		dst->t[i].name = xstrdup(src->t[i].name);
		dst->t[i].value = xstrdup(src->t[i].value);
	}
	dst->n = src->n;
	dst->include = src->include;
	dst->text = xstrdup(src->text ? src->text : "");
}

/* A selection changed here is written out again for its messages. */
static void
retext(struct selection *sel)
{
	free(sel->text);
	sel->text = NULL;
	sel->text = selection_text(sel);
}

void
selection_drop(struct selection *sel, enum sel_key k)
{
	size_t i, j;

	for (i = j = 0; i < sel->n; i++) {
		if (sel->t[i].key == k) {
			free(sel->t[i].name);
			free(sel->t[i].value);
			continue;
		}
		sel->t[j++] = sel->t[i];
	}
	if (j == sel->n)
		return;
	sel->n = j;
	retext(sel);
}

void
selection_set_include(struct selection *sel, unsigned include)
{
	sel->include |= include;
	retext(sel);
}

void
selection_add(struct selection *sel, const char *name, const char *value)
{
	if (!valid_key(name) || !strcmp(name, "include"))
		die("selection_add: bad key '%s'", name);
	push_term(sel, name, value);
	retext(sel);
}

char *
selection_text(const struct selection *sel)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; sel && i < sel->n; i++)
		buf_addf(&b, "%s%s=%s", i ? "," : "", sel->t[i].name,
			 sel->t[i].value);
	if (sel && sel->include) {
		char *w = selection_include_words(sel->include);

		buf_addf(&b, "%sinclude=%s", b.len ? "," : "", w);
		free(w);
	}
	return buf_detach(&b, NULL);
}

char *
selection_include_words(unsigned mask)
{
	struct buf b = BUF_INIT;
	size_t k;

	if ((mask & SEL_ALL) == SEL_ALL)
		return xstrdup("all");
	for (k = 0; k + 1 < ARRAY_SIZE(include_words); k++)
		if (mask & include_words[k].bit)
			buf_addf(&b, "%s%s", b.len ? "+" : "",
				 include_words[k].word);
	return buf_detach(&b, NULL);
}

int
selection_latest(const char *value, long *back)
{
	const char *p;

	if (strncmp(value, "latest", 6))
		return 0;
	p = value + 6;
	*back = 0;
	if (!*p)
		return 1;
	if (*p != '~' || parse_long(p + 1, back) < 0 || *back < 0)
		return 0;
	return 1;
}

unsigned
selection_needs(const char *session_status, int tampered,
		const char *run_status)
{
	unsigned need = status_bit(session_status);

	if (tampered)
		need |= SEL_TAMPERED;
	if (run_state_of(run_status) != RUN_STATE_OK)
		need |= SEL_PARTIAL;
	return need;
}

int
selection_counts(unsigned include, const char *session_status, int tampered,
		 const char *run_status)
{
	return !(selection_needs(session_status, tampered, run_status) &
		 ~include);
}

/* A configuration value as a selection compares it: true/on = 1. */
static const char *
value_norm(const char *v)
{
	if (!strcmp(v, "true") || !strcmp(v, "on"))
		return "1";
	if (!strcmp(v, "false") || !strcmp(v, "off"))
		return "0";
	return v;
}

int
selection_value_matches(const char *stored, const char *wanted)
{
	return !strcmp(value_norm(stored), value_norm(wanted));
}
