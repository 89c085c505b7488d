#define _POSIX_C_SOURCE 200809L
#include "transport.h"
#include "plan.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int
transport_wrap(const struct plan_target *t, const char *const *argv,
	       const char *const *env_set, const char *const *env_unset,
	       struct transport_cmd *out)
{
	memset(out, 0, sizeof(*out));
	if (strcmp(t->transport, "local"))
		return error("target '%s': transport '%s' is not available "
			     "in this version (only 'local')", t->name,
			     t->transport);
	out->argv = strv_dup(argv);
	out->env_set = strv_dup(env_set);
	out->env_unset = strv_dup(env_unset);
	return 0;
}

void
transport_cmd_free(struct transport_cmd *c)
{
	strv_free(c->argv);
	strv_free(c->env_set);
	strv_free(c->env_unset);
	memset(c, 0, sizeof(*c));
}

int
transport_is_macos(const struct plan_target *t)
{
	(void)t;
#ifdef __APPLE__
	return 1;
#else
	return 0;
#endif
}
