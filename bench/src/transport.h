#ifndef TRANSPORT_H
#define TRANSPORT_H

/*
 * Transports: how a command reaches a target. `local` runs it directly
 * (argv through execvp, environment through proc). Remote transports
 * (ssh, lume, tart) will turn argv and environment into their own argv,
 * quoting the remote command for exactly one shell; they plug in here.
 */

struct plan_target;

struct transport_cmd {
	char **argv;       /* NULL-terminated, owned */
	char **env_set;    /* "K=V", NULL-terminated, owned */
	char **env_unset;  /* names, NULL-terminated, owned */
};

/*
 * Builds the command that runs argv with env_set/env_unset on target t.
 * Returns 0, or -1 after error() (e.g. a transport not available yet).
 */
int transport_wrap(const struct plan_target *t, const char *const *argv,
		   const char *const *env_set, const char *const *env_unset,
		   struct transport_cmd *out);
void transport_cmd_free(struct transport_cmd *c);

/* Whether injection on this target uses DYLD_INSERT_LIBRARIES (macOS). */
int transport_is_macos(const struct plan_target *t);

#endif
