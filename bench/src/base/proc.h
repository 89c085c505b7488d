#ifndef PROC_H
#define PROC_H

/*
 * Child processes. One struct proc describes the child and receives its
 * result; proc_start() spawns it, proc_finish() streams its output and
 * waits; proc_run() does both.
 *
 * The child is executed like execvp() (never through a shell): argv[0]
 * is found with path_search() (base/files.h) in the child's own PATH,
 * the lookup doctor and the tool finder use too. It runs in its own
 * process group, with stdin from /dev/null (or, with hold_stdin, from a
 * pipe this process holds open until the child is reaped and never
 * writes: a remote wrapper watches it, so the far side ends when this
 * process does; transport.h).
 *
 * Children die with this process, however it ends (kill -9 included):
 * on Linux the child has PR_SET_PDEATHSIG (SIGKILL); everywhere a small
 * guard process, forked beside the child, waits on a pipe from this
 * process and, when that pipe closes without the "done" byte proc_finish()
 * sends (this process died), kills the child's whole group (SIGTERM, then
 * SIGKILL a second later). The guard holds none of our descriptors. Its stdout and stderr are
 * drained together with poll() so neither pipe can fill and deadlock; each
 * is written, as it streams, to its file (no size limit) and copied into a
 * buffer capped at mem_cap bytes. A timeout sends SIGTERM to the whole
 * group and SIGKILL after the grace period; so does an interrupt
 * (SIGINT/SIGTERM caught by proc_catch_interrupts()).
 *
 * Ownership: the caller owns everything it points to from the input
 * fields, which must stay valid until proc_finish() returns. The result
 * buffers out/err belong to the struct; proc_release() frees them.
 *
 *	struct proc p = PROC_INIT;
 *	const char *argv[] = { "llama-bench", "--list-devices", NULL };
 *	p.argv = argv;
 *	p.timeout = 30;
 *	if (proc_run(&p) < 0 && !p.exec_errno) ...internal failure...
 *	... p.status, p.out.buf ...
 *	proc_release(&p);
 */

#include "base/util.h"

#include <stdint.h>
#include <sys/types.h>

#define PROC_DEFAULT_GRACE 5.0
#define PROC_DEFAULT_MEM_CAP (4u << 20)

struct proc {
	/* ---- input ---- */
	const char *const *argv;     /* NULL-terminated; argv[0] on PATH */
	const char *const *env_set;  /* NULL-terminated "K=V" to set, or NULL */
	const char *const *env_unset;/* NULL-terminated names to unset, or NULL */
	const char *cwd;             /* working directory, NULL to inherit */
	double timeout;              /* seconds; <= 0: none */
	double grace;                /* SIGTERM -> SIGKILL; <= 0: PROC_DEFAULT_GRACE */
	const char *stdout_path;     /* file to stream stdout into, or NULL */
	const char *stderr_path;     /* file to stream stderr into, or NULL */
	size_t mem_cap;              /* cap of each copy; 0: PROC_DEFAULT_MEM_CAP */
	int hold_stdin;              /* stdin: a pipe held open (see above) */
	void (*tick)(void *ctx);     /* called about once a second while the
					child runs (progress), or NULL */
	void *tick_ctx;

	/* ---- result ---- */
	struct buf out, err;         /* first mem_cap bytes of stdout / stderr */
	int out_truncated, err_truncated; /* 1 when the copy was capped */
	uint64_t out_bytes, err_bytes;    /* total bytes received */
	int exit_code;               /* exit status, or -1 when killed by a signal */
	int signo;                   /* the signal that killed it, else 0 */
	int status;                  /* exit_code, or 128 + signo */
	int timed_out;               /* killed because of the timeout */
	int interrupted;             /* killed because of an interrupt */
	int exec_errno;              /* errno of a failed chdir/exec, else 0 */
	const char *exec_stage;      /* "exec" or "chdir" when exec_errno is set */
	double wall;                 /* seconds from start to reap */

	/* ---- private ---- */
	pid_t pid;
	int out_fd, err_fd;          /* read ends of the pipes */
	int out_file, err_file;      /* the output files */
	int in_fd;                   /* write end of the held stdin */
	int guard_fd;                /* write end of the guard's pipe */
	pid_t guard_pid;
	double started;
};

#define PROC_INIT { .out = BUF_INIT, .err = BUF_INIT, .exit_code = -1, \
	.pid = -1, .out_fd = -1, .err_fd = -1, .out_file = -1, .err_file = -1, \
	.in_fd = -1, .guard_fd = -1, .guard_pid = -1 }

/*
 * Opens the output files and spawns the child. Waits only until the exec
 * has happened or failed (a close-on-exec notify pipe carries errno back).
 * Returns 0 when the child runs. Returns -1 after error() when it could
 * not be started; when the program could not be executed (not found, not
 * executable) or cwd was refused, exec_errno and exec_stage say why and
 * status is 127 (ENOENT) or 126 (anything else), like a shell.
 */
int proc_start(struct proc *p);

/*
 * Streams the child's output to the files and buffers, enforces the
 * timeout and interrupts, and reaps the child, filling the result fields.
 * Returns 0 when the child was reaped (whatever its status), -1 after
 * error() when output could not be written or polling failed (the child is
 * still killed and reaped; the result fields are filled).
 */
int proc_finish(struct proc *p);

/* proc_start() then proc_finish(); returns the first failure. */
int proc_run(struct proc *p);

/* Frees the result buffers; the struct may be reused after PROC_INIT. */
void proc_release(struct proc *p);

/*
 * Appends a short human description of the outcome to b: "exit 0",
 * "killed by signal 11 (Segmentation fault)", "timed out after 5 s",
 * "interrupted", "cannot exec: No such file or directory".
 */
void proc_describe(const struct proc *p, struct buf *b);

/*
 * Installs SIGINT and SIGTERM handlers that only record the signal. While
 * a child runs, a recorded interrupt makes proc_finish() stop the child's
 * group (SIGTERM, then SIGKILL after the grace period) and set
 * interrupted. Callers check proc_interrupted() between children too.
 */
int proc_catch_interrupts(void);
/* The signal number recorded by the handlers, or 0. */
int proc_interrupted(void);
/* Forgets a recorded interrupt (tests; a command that carries on). */
void proc_clear_interrupt(void);

#endif
