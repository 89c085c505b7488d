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

	return names_of(session_names, ARRAY_SIZE(session_names), buf,
			sizeof(buf));
}
