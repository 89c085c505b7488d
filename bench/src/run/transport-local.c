#define _POSIX_C_SOURCE 200809L
/*
 * The local transport: the command runs here, as it is; the environment
 * goes to proc (set and unset in the child). No program, no address, no
 * VM; stopping its process group stops all of it.
 */
#include "run/transport.h"
#include "run/plan.h"
#include "base/util.h"

#include <string.h>

static int
local_check(const struct plan_target *t, const char *path)
{
	(void)t;
	(void)path;
	return 0;
}

static int
local_wrap(const struct plan_target *t, const char *const *argv,
	   const char *const *env_set, const char *const *env_unset,
	   struct transport_cmd *out)
{
	(void)t;
	out->argv = strv_dup(argv);
	out->env_set = strv_dup(env_set);
	out->env_unset = strv_dup(env_unset);
	return 0;
}

const struct transport transport_local = {
	.name = "local",
	.remote = 0,
	.unreachable_fix = "check that /bin/sh runs here",
	.check = local_check,
	.wrap = local_wrap,
};
