#ifndef TRANSPORT_H
#define TRANSPORT_H

/*
 * Transports: how a command reaches a target.
 *
 *   local  argv through execvp, the environment through proc.
 *   ssh    `ssh [options] [-p PORT] [-l USER] -- HOST CMD`: CMD is one
 *          string quoted for exactly one POSIX shell (the remote login
 *          shell); stdout and stderr come back separately.
 *   lume   `lume ssh [-u USER] -t 0 VM CMD`: lume collects stdout and
 *          stderr into one buffer, so CMD writes them to files in the
 *          guest and prints them with a separator line that
 *          transport_split() cuts apart afterwards; LUME_LOG_LEVEL=error
 *          keeps lume's own log lines off stdout.
 *   tart   `tart exec VM /bin/sh -c CMD` (tart passes argv unchanged and
 *          streams the two outputs separately).
 *
 * On remote targets the environment is set inside the remote shell
 * (`unset A; K='v' exec PROG ARGS`), never through env(1): with SIP on, a
 * protected binary such as /usr/bin/env drops DYLD_* variables.
 */

struct plan_target;

struct transport_cmd {
	char **argv;       /* NULL-terminated, owned */
	char **env_set;    /* "K=V" for the local process, NULL-terminated */
	char **env_unset;  /* names, NULL-terminated, owned */
	int merged;        /* stdout holds both streams: transport_split() */
};

/*
 * Builds the command that runs argv with env_set/env_unset on target t.
 * Returns 0, or -1 after error().
 */
int transport_wrap(const struct plan_target *t, const char *const *argv,
		   const char *const *env_set, const char *const *env_unset,
		   struct transport_cmd *out);
void transport_cmd_free(struct transport_cmd *c);

/*
 * 1 when a and b reach the same machine the same way (every local
 * target; remote ones with the same transport and the same host, port,
 * user, VM and ssh options), so one fingerprint probe answers for both.
 */
int transport_same_machine(const struct plan_target *a,
			   const struct plan_target *b);

/* 1 for ssh, lume and tart. */
int transport_is_remote(const struct plan_target *t);

/*
 * For a merged transport: splits the stdout file at the separator line
 * into stdout (kept in out_path) and stderr (appended to err_path).
 * Returns 1 when split, 0 when no separator was found (the output is left
 * as it came, e.g. an error from lume itself), -1 after error().
 */
int transport_split(const char *out_path, const char *err_path);

/* The separator a merged transport prints between the two streams. */
#define TRANSPORT_SEPARATOR "@@shimbench-stderr-follows@@"

#endif
