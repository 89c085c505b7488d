#ifndef TRANSPORT_OPS_H
#define TRANSPORT_OPS_H

/*
 * The transport vtable: what each transport (transport-NAME.c) says
 * about itself and how it runs a command. The table of them and the
 * lookup by name are run/transports.h; running a command through a
 * target's transport is run/transport.h. This header has no .c of its
 * own: the plan loader, the table and the rows share it without
 * depending on each other.
 */

struct plan_target;

struct transport_cmd {
	char **argv;       /* NULL-terminated, owned */
	char **env_set;    /* "K=V" for the local process, NULL-terminated */
	char **env_unset;  /* names, NULL-terminated, owned */
	int merged;        /* stdout holds both streams: transport_split() */
	int hold_stdin;    /* run it with proc's hold_stdin: the far side
			      ends when its stdin closes (transport_watched()) */
};

struct transport {
	const char *name;           /* the plan's "transport" value */
	int remote;                 /* commands run on another machine */
	const char *program;        /* the program run here; NULL: none */
	const char *program_fix;    /* doctor: how to install program */
	const char *unreachable_fix;/* doctor: what to check when no command
				       runs there */
	const char *default_user;   /* the login scp uses when the plan names
				       none; NULL: ssh's own default */

	/*
	 * Checks a plan's target: the keys this transport needs and the
	 * names it passes on (transport_check_name()). path names the target
	 * in messages ("targets.guest"). 0, or -1 after error().
	 */
	int (*check)(const struct plan_target *t, const char *path);

	/*
	 * How to run a command: the command here that runs argv with
	 * env_set/env_unset on t, and how its streams come back
	 * (out->merged). 0, or -1 after error().
	 */
	int (*wrap)(const struct plan_target *t, const char *const *argv,
		    const char *const *env_set, const char *const *env_unset,
		    struct transport_cmd *out);

	/*
	 * The network address of t, for scp (*addr malloc'd). NULL for a
	 * transport without one (local). 0, or -1 after error().
	 */
	int (*address)(const struct plan_target *t, char **addr);

	/*
	 * Doctor's connectivity check of the VM, NULL for a transport
	 * without one: 1 when it runs, 0 when it does not (*fix says how to
	 * start it), -1 when the tool could not tell; *detail (and *fix, or
	 * NULL) are malloc'd one-liners.
	 */
	int (*vm_state)(const struct plan_target *t, char **detail, char **fix);

	/*
	 * Ends the far side of a command whose process here (the ssh, lume
	 * or tart client) was stopped. NULL in every row: ssh and tart run
	 * the command under transport_watched(), whose stdin is a pipe this
	 * process holds (struct proc's hold_stdin), so stopping or killing
	 * the client, or this process dying, ends the remote command by
	 * itself; lume forwards no stdin (its built-in client collects the
	 * output), so a lume command outlives a killed shimbench (issue 21,
	 * not solved there).
	 */
	int (*stop_remote)(const struct plan_target *t,
			   const struct transport_cmd *c);
};

/* The rows, one per transport-NAME.c; the table is in transports.c. */
extern const struct transport transport_local, transport_ssh, transport_lume,
	transport_tart;

#endif
