#define _POSIX_C_SOURCE 200809L
#include "evidence/state.h"
#include "base/util.h"

#include <string.h>

static const char *const run_names[] = {
	[RUN_STATE_OK] = "ok",
	[RUN_STATE_FAILED] = "failed",
	[RUN_STATE_INCOMPLETE] = "incomplete",
	[RUN_STATE_TIMEOUT] = "timeout",
	[RUN_STATE_CRASHED] = "crashed",
	[RUN_STATE_INTERRUPTED] = "interrupted",
	[RUN_STATE_EXITED] = "exited",
};

static const char *const session_names[] = {
	[SESSION_STATE_RUNNING] = "running",
	[SESSION_STATE_IMPORTING] = "importing",
	[SESSION_STATE_OK] = "ok",
	[SESSION_STATE_FAILED] = "failed",
	[SESSION_STATE_INTERRUPTED] = "interrupted",
	[SESSION_STATE_ABANDONED] = "abandoned",
};

static const char *const verify_names[] = {
	[VERIFY_NOT_REQUIRED] = "not-required",
	[VERIFY_VERIFIED] = "verified",
	[VERIFY_UNVERIFIED] = "unverified",
};

static const char *
name_of(const char *const *names, size_t n, int s)
{
	return s >= 0 && (size_t)s < n ? names[s] : "invalid";
}

static int
state_of(const char *const *names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; name && i < n; i++)
		if (!strcmp(names[i], name))
			return (int)i;
	return -1;
}

/* The table's names joined with ", ": built once. */
static const char *
names_of(const char *const *names, size_t n, char *out, size_t size)
{
	size_t i, len = 0;

	if (!*out)
		for (i = 0; i < n && len + 1 < size; i++) {
			size_t k = strlen(names[i]);

			if (len + k + 3 >= size)
				break;
			if (i) {
				memcpy(out + len, ", ", 2);
				len += 2;
			}
			memcpy(out + len, names[i], k);
			len += k;
			out[len] = '\0';
		}
	return out;
}

const char *
run_state_name(enum run_state s)
{
	return name_of(run_names, ARRAY_SIZE(run_names), (int)s);
}

const char *
session_state_name(enum session_state s)
{
	return name_of(session_names, ARRAY_SIZE(session_names), (int)s);
}

const char *
verify_state_name(enum verify_state s)
{
	return name_of(verify_names, ARRAY_SIZE(verify_names), (int)s);
}

int
run_state_of(const char *name)
{
	return state_of(run_names, ARRAY_SIZE(run_names), name);
}

int
session_state_of(const char *name)
{
	return state_of(session_names, ARRAY_SIZE(session_names), name);
}

int
verify_state_of(const char *name)
{
	return state_of(verify_names, ARRAY_SIZE(verify_names), name);
}

const char *
run_state_names(void)
{
	static char buf[160];

	/* "exited" is never stored: the names a record may hold */
	return names_of(run_names, RUN_STATE_EXITED, buf, sizeof(buf));
}

const char *
session_state_names(void)
{
	static char buf[160];

	/* "abandoned" is shown, never stored: the names a record may hold */
	return names_of(session_names, SESSION_STATE_ABANDONED, buf,
			sizeof(buf));
}

/* ---- roles ---------------------------------------------------------------------------- */

static const char *const role_table[] = { "bare-metal", "stock", "shim" };

const char *
role_names(void)
{
	static char buf[64];

	return names_of(role_table, ARRAY_SIZE(role_table), buf, sizeof(buf));
}

/* Edit distance of a and b, 3 when it is more than 2 (or either is long). */
static size_t
near(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d[33][33];

	if (la > 32 || lb > 32 || (la > lb ? la - lb : lb - la) > 2)
		return 3;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;

			d[i][j] = sub < del ? (sub < ins ? sub : ins) :
				  (del < ins ? del : ins);
		}
	return d[la][lb] > 2 ? 3 : d[la][lb];
}

/* name lowercased, without '-', '_', '.' and spaces, into out. */
static void
fold(const char *name, char *out, size_t size)
{
	size_t n = 0;

	for (; *name && n + 1 < size; name++) {
		char c = *name;

		if (c == '-' || c == '_' || c == '.' || c == ' ')
			continue;
		out[n++] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
	}
	out[n] = '\0';
}

int
role_misspelt(const char *role)
{
	char f[40], k[40];
	size_t i;

	if (!*role)
		return 1;
	for (i = 0; i < ARRAY_SIZE(role_table); i++)
		if (!strcmp(role, role_table[i]))
			return 0;
	fold(role, f, sizeof(f));
	for (i = 0; i < ARRAY_SIZE(role_table); i++) {
		fold(role_table[i], k, sizeof(k));
		if (!strcmp(f, k) || (strlen(f) >= 3 && near(f, k) <= 2))
			return 1;
	}
	return 0;
}
