#ifndef TRANSPORT_H
#define TRANSPORT_H

/*
 * Transports: how a command reaches a target. One struct transport per
 * kind, each in its own file (after git's transport vtable), listed in
 * one table in transports.c; plan_load() resolves a target's "transport"
 * name to its row once, and every caller goes through the row:
 *
 *   local  transport-local.c  argv through execv, the environment
 *                             through proc.
 *   ssh    transport-ssh.c    `ssh -o BatchMode=yes -T [options] [-p PORT]
 *                             [-l USER] -- HOST CMD`; stdout and stderr
 *                             come back separately.
 *   lume   transport-lume.c   `lume ssh [-u USER] -t 0 VM CMD`: lume
 *                             collects stdout and stderr into one buffer,
 *                             so CMD writes them to files in the guest and
 *                             prints them with a separator line that
 *                             transport_split() cuts apart afterwards;
 *                             LUME_LOG_LEVEL=error keeps lume's own log
 *                             lines off stdout.
 *   tart   transport-tart.c   `tart exec VM /bin/sh -c CMD` (tart passes
 *                             argv unchanged and streams the two outputs
 *                             separately).
 *
 * CMD is one string quoted for exactly one POSIX shell (the remote login
 * shell; transport_shell_command()). On remote targets the environment is
 * set inside that shell (`unset A; K='v' exec PROG ARGS`), never through
 * env(1): with SIP on, a protected binary such as /usr/bin/env drops
 * DYLD_* variables.
 *
 * A new transport (a UTM VM, a Podman machine, a krunkit guest) is one
 * file defining its struct transport (run/transport-ops.h) and one row in
 * transports.c's table (docs/plans.md shows one).
 */

#include <stddef.h>

#include "run/transport-ops.h"

struct plan_target;
struct buf;

/*
 * Builds the command that runs argv with env_set/env_unset on target t
 * (t->tp->wrap). Returns 0, or -1 after error().
 */
int transport_wrap(const struct plan_target *t, const char *const *argv,
		   const char *const *env_set, const char *const *env_unset,
		   struct transport_cmd *out);
void transport_cmd_free(struct transport_cmd *c);

/* 1 when t's commands run on another machine (ssh, lume, tart). */
int transport_is_remote(const struct plan_target *t);

/*
 * 1 when a and b reach the same machine the same way (every local
 * target; remote ones with the same transport and the same host, port,
 * user, VM and ssh options), so one fingerprint probe answers for both.
 */
int transport_same_machine(const struct plan_target *a,
			   const struct plan_target *b);

/*
 * For a merged transport: splits the stdout file at the separator line
 * into stdout (kept in out_path) and stderr (appended to err_path).
 * Returns 1 when split, 0 when no separator was found (the output is left
 * as it came, e.g. an error from lume itself), -1 after error().
 */
int transport_split(const char *out_path, const char *err_path);

/* The separator a merged transport prints between the two streams. */
#define TRANSPORT_SEPARATOR "@@shimbench-stderr-follows@@"

/* ---- for the transports' own files ------------------------------------------ */

/*
 * The command for one remote POSIX shell, appended to cmd: `unset` of
 * env_unset, env_set as assignments in front of `exec`, every word
 * quoted ('…'). Variable names must be shell names. 0, or -1 after
 * error() naming the target.
 */
int transport_shell_command(const struct plan_target *t,
			    const char *const *argv,
			    const char *const *env_set,
			    const char *const *env_unset, struct buf *cmd);

/*
 * cmd (one POSIX shell command) wrapped so that it ends when its stdin
 * does: it runs in the background with stdin from /dev/null while a
 * watcher reads the real stdin and, at end of file (the client here was
 * killed, or this process died and the pipe of proc's hold_stdin
 * closed), sends it SIGTERM, then SIGKILL a second later. The command's
 * status is the wrapper's. Appended to out.
 */
void transport_watched(const struct buf *cmd, struct buf *out);

/*
 * A name a transport passes on as one argument (a host, a VM, a user):
 * refused when empty, when it starts with '-' (an option to the tool) or
 * when it holds a control character. 0, or -1 after
 * error("plan: 'PATH.KEY' …").
 */
int transport_check_name(const char *path, const char *key, const char *value);
/* Refuses a target without key (value NULL): "plan: 'PATH' uses NAME and
 * needs 'KEY'". 0, or -1 after error(). */
int transport_need(const struct plan_target *t, const char *path,
		   const char *key, const char *value);

/*
 * Runs a program here (lume, tart, scp) with env added, its stdout into
 * out (may be NULL). 0, or -1 after error() naming what failed with the
 * program's own message.
 */
int transport_host_run(const char *const *argv, const char *const *env,
		       double timeout, const char *what, struct buf *out);

#endif
