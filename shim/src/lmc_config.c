/*
 * Decision logic of the capability shim: configuration parsing and the
 * answers the hooks give. Deliberately free of libc calls (no strtoull,
 * no stdio) so the injected library imports as little as possible.
 */
#include "lmc_config.h"

/* A bounded string builder over a caller's array; never overflows. */
struct sb {
	char *p;
	size_t n, len;
};

static void
sb_adds(struct sb *b, const char *s)
{
	while (*s && b->len + 1 < b->n)
		b->p[b->len++] = *s++;
	if (b->n)
		b->p[b->len] = '\0';
}

static void
sb_addu(struct sb *b, unsigned long long v)
{
	char tmp[24];
	size_t i = sizeof(tmp) - 1;

	tmp[i] = '\0';
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sb_adds(b, tmp + i);
}

/* Appends at most max (<= 64) bytes of s, printable ASCII only ('?'
 * otherwise), then "..." if s was longer. */
static void
sb_add_sanitised(struct sb *b, const char *s, size_t max)
{
	char tmp[72];
	size_t i;

	for (i = 0; s[i] && i < max && i < 64; i++)
		tmp[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	tmp[i] = '\0';
	sb_adds(b, tmp);
	if (s[i])
		sb_adds(b, "...");
}

static int
digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

int
lmc_parse_u64(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;
	unsigned base = 10;
	int d;

	if (!s || !(*s >= '0' && *s <= '9'))
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!*s)
			return -1;
	} else if (s[0] == '0' && s[1]) {
		base = 8;
		s++;
	}
	for (; *s; s++) {
		d = digit_value(*s);
		if (d >= (int)base)
			return -1;
		if (v > (~0ULL - (unsigned)d) / base)
			return -1;
		v = v * base + (unsigned)d;
	}
	*out = v;
	return 0;
}

/*
 * Reads one variable. Returns 1 when set and valid, 0 when unset or
 * empty, -1 when malformed (why filled in).
 */
static int
get_u64(const char *(*get)(const char *), const char *name,
	unsigned long long *out, struct sb *why)
{
	const char *v = get(name);

	if (!v || !*v)
		return 0;
	if (lmc_parse_u64(v, out) < 0) {
		sb_adds(why, name);
		sb_adds(why, "='");
		sb_add_sanitised(why, v, 32);
		sb_adds(why, "' is not an unsigned number");
		return -1;
	}
	return 1;
}

int
lmc_threadgroup_limit(const char *(*get)(const char *),
		      unsigned long long *out)
{
	const char *s = get(LMC_ENV_THREADGROUP);
	unsigned long long v = 0;

	if (!s || !*s)
		return 0;
	if (lmc_parse_u64(s, &v) < 0 || v == 0)
		return -1;
	*out = v;
	return 1;
}

/* The limit into cfg, or the note saying why the variable is ignored. */
static void
load_threadgroup(struct lmc_config *cfg, const char *(*get)(const char *),
		 const char *proc)
{
	struct sb note = { cfg->threadgroup_note,
		sizeof(cfg->threadgroup_note), 0 };
	unsigned long long v;
	int r = lmc_threadgroup_limit(get, &v);

	if (r > 0) {
		cfg->threadgroup_limit = v;
		cfg->has_threadgroup_limit = 1;
	}
	if (r >= 0)
		return;
	sb_adds(&note, LMC_PREFIX "Ignoring " LMC_ENV_THREADGROUP "='");
	sb_add_sanitised(&note, get(LMC_ENV_THREADGROUP), 32);
	sb_adds(&note, "' for ");
	sb_add_sanitised(&note, proc ? proc : "?", 64);
	sb_adds(&note, lmc_parse_u64(get(LMC_ENV_THREADGROUP), &v) == 0 ?
		": 0 bytes is no usable limit" : ": not an unsigned number");
	sb_adds(&note, "; maxThreadgroupMemoryLength stays what the device "
		"reports\n");
	cfg->threadgroup_note_len = note.len;
}

int
lmc_config_load(struct lmc_config *cfg, const char *(*get)(const char *),
		const char *proc, char *why, size_t whylen)
{
	struct sb w = { why, whylen, 0 };
	unsigned long long v;
	int r;

	sb_adds(&w, "");
	cfg->family_max = 0;
	cfg->threadgroup_limit = 0;
	cfg->has_threadgroup_limit = 0;
	cfg->working_set = 0;
	cfg->has_working_set = 0;
	cfg->threadgroup_note[0] = '\0';
	cfg->threadgroup_note_len = 0;

	r = get_u64(get, LMC_ENV_FAMILY_MAX, &v, &w);
	if (r < 0)
		return -1;
	if (r == 0) {
		sb_adds(&w, LMC_ENV_FAMILY_MAX " is not set");
		return -1;
	}
	if (v < LMC_FAMILY_APPLE_FIRST || v > LMC_FAMILY_APPLE_LAST) {
		sb_adds(&w, LMC_ENV_FAMILY_MAX "=");
		sb_addu(&w, v);
		sb_adds(&w, " is outside 1001-1999");
		return -1;
	}
	cfg->family_max = v;

	r = get_u64(get, LMC_ENV_WORKING_SET, &v, &w);
	if (r < 0)
		return -1;
	if (r > 0) {
		cfg->working_set = v;
		cfg->has_working_set = 1;
	}
	load_threadgroup(cfg, get, proc);
	return 0;
}

int
lmc_family_answer(const struct lmc_config *cfg, int original, long family)
{
	if (original)
		return 1;
	/* Apple families only: Mac (2xxx), Common (3xxx), Metal (5xxx)
	 * and unknown values keep the device's own answer. */
	return family >= LMC_FAMILY_APPLE_FIRST &&
		(unsigned long long)family <= cfg->family_max;
}

unsigned long long
lmc_threadgroup_answer(const struct lmc_config *cfg,
		       unsigned long long original)
{
	if (!cfg->has_threadgroup_limit)
		return original;
	return cfg->threadgroup_limit < original ?
		cfg->threadgroup_limit : original;
}

int
lmc_threadgroup_clamped(const struct lmc_config *cfg,
			unsigned long long original)
{
	return cfg->has_threadgroup_limit && cfg->threadgroup_limit > original;
}

unsigned long long
lmc_working_set_answer(const struct lmc_config *cfg,
		       unsigned long long original)
{
	if (!cfg->has_working_set)
		return original;
	return original < cfg->working_set ? cfg->working_set : original;
}

size_t
lmc_format_banner(char *out, size_t n, const char *proc,
		  const struct lmc_config *cfg)
{
	struct sb b = { out, n, 0 };

	sb_adds(&b, LMC_PREFIX "Enabled for ");
	sb_add_sanitised(&b, proc ? proc : "?", 64);
	sb_adds(&b, " (appleFamilyMax=");
	sb_addu(&b, cfg->family_max);
	if (cfg->has_threadgroup_limit) {
		sb_adds(&b, " maxThreadgroupMemory=");
		sb_addu(&b, cfg->threadgroup_limit);
	}
	if (cfg->has_working_set) {
		sb_adds(&b, " recommendedMaxWorkingSetSize=");
		sb_addu(&b, cfg->working_set);
	}
	sb_adds(&b, ")\n");
	return b.len;
}

size_t
lmc_format_refusal(char *out, size_t n, const char *proc, const char *why)
{
	struct sb b = { out, n, 0 };

	sb_adds(&b, LMC_PREFIX "Disabled for ");
	sb_add_sanitised(&b, proc ? proc : "?", 64);
	sb_adds(&b, ": ");
	sb_adds(&b, why);
	sb_adds(&b, "; leaving stock capabilities unchanged\n");
	return b.len;
}

size_t
lmc_format_clamp(char *out, size_t n, const char *proc,
		 const struct lmc_config *cfg, unsigned long long original)
{
	struct sb b = { out, n, 0 };

	sb_adds(&b, LMC_PREFIX LMC_ENV_THREADGROUP "=");
	sb_addu(&b, cfg->threadgroup_limit);
	sb_adds(&b, " is above the ");
	sb_addu(&b, original);
	sb_adds(&b, " bytes the device of ");
	sb_add_sanitised(&b, proc ? proc : "?", 64);
	sb_adds(&b, " reports; answering ");
	sb_addu(&b, original);
	sb_adds(&b, " (the shim only lowers it)\n");
	return b.len;
}
