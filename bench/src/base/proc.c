#define _POSIX_C_SOURCE 200809L
#include "base/proc.h"
#include "base/files.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

extern char **environ;

static volatile sig_atomic_t interrupt_signo;

static void
on_interrupt(int signo)
{
	interrupt_signo = signo;
}

int
proc_catch_interrupts(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	/* Restart other code's system calls; our poll() wakes up anyway. */
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGINT, &sa, NULL) < 0 ||
	    sigaction(SIGTERM, &sa, NULL) < 0)
		return error("cannot install signal handlers: %s",
			     strerror(errno));
	return 0;
}

int
proc_interrupted(void)
{
	return interrupt_signo;
}

void
proc_clear_interrupt(void)
{
	interrupt_signo = 0;
}

static int
set_cloexec(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
		return -1;
	return 0;
}

static int
make_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		return -1;
	if (set_cloexec(fds[0]) < 0 || set_cloexec(fds[1]) < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	return 0;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* 1 when name (up to '=' or NUL) equals the key of entry "K=V". */
static int
env_key_eq(const char *entry, const char *name, size_t len)
{
	return !strncmp(entry, name, len) && entry[len] == '=';
}

static size_t
env_key_len(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq ? (size_t)(eq - s) : strlen(s);
}

/*
 * Builds the child's environment: ours, minus the names in unset and the
 * keys in set, plus set. Returns a NULL-terminated array whose pointers
 * borrow from environ and p; free() the array only.
 */
static char **
build_env(const struct proc *p)
{
	size_t n = 0, i, k, out = 0;
	char **env;

	for (i = 0; environ[i]; i++)
		n++;
	for (i = 0; p->env_set && p->env_set[i]; i++)
		n++;
	env = xcalloc(n + 1, sizeof(*env));
	for (i = 0; environ[i]; i++) {
		int drop = 0;

		for (k = 0; !drop && p->env_unset && p->env_unset[k]; k++)
			drop = env_key_eq(environ[i], p->env_unset[k],
					  strlen(p->env_unset[k]));
		for (k = 0; !drop && p->env_set && p->env_set[k]; k++)
			drop = env_key_eq(environ[i], p->env_set[k],
					  env_key_len(p->env_set[k]));
		if (!drop)
			env[out++] = environ[i];
	}
	for (k = 0; p->env_set && p->env_set[k]; k++) {
		/* A later duplicate of a key wins, like setenv(). */
		size_t len = env_key_len(p->env_set[k]), j;
		int later = 0;

		for (j = k + 1; p->env_set[j]; j++)
			if (env_key_len(p->env_set[j]) == len &&
			    !strncmp(p->env_set[j], p->env_set[k], len))
				later = 1;
		if (!later)
			env[out++] = (char *)p->env_set[k];
	}
	env[out] = NULL;
	return env;
}

/* What the child writes to the notify pipe when it cannot exec. */
struct notify {
	int stage; /* 0: exec, 1: chdir, 2: setup */
	int err;
};

static void
child_fail(int fd, int stage, int err)
{
	struct notify n;
	ssize_t r;

	n.stage = stage;
	n.err = err;
	do
		r = write(fd, &n, sizeof(n));
	while (r < 0 && errno == EINTR);
	_exit(err == ENOENT ? 127 : 126);
}

/*
 * What the child executes, found before fork() with path_search() (the
 * one PATH lookup, base/files.h) in the child's own PATH: path (NULL when
 * nothing was found; err says why), and sh_argv for a file without "#!"
 * (sh PATH ARGS...), as execvp() would run it.
 */
struct exec_plan {
	char *path;
	int err;
	char **sh_argv;
};

static void
exec_plan_init(struct exec_plan *x, const struct proc *p, char **env)
{
	const char *path = NULL;
	size_t i, n = 0;

	for (i = 0; env[i]; i++)
		if (!strncmp(env[i], "PATH=", 5))
			path = env[i] + 5;
	x->path = path_search(p->argv[0], path, p->cwd, &x->err);
	while (p->argv[n])
		n++;
	x->sh_argv = xcalloc(n + 2, sizeof(char *));
	x->sh_argv[0] = "sh";
	x->sh_argv[1] = x->path;
	for (i = 1; i < n; i++)
		x->sh_argv[i + 1] = (char *)p->argv[i];
}

/*
 * The child side of proc_start(): only async-signal-safe calls until
 * execv() (the environment and the program's path were settled before
 * fork()).
 */
static void
child_exec(const struct proc *p, const struct exec_plan *x, int out_w,
	   int err_w, int in_r, int notify_w, char **env, pid_t parent)
{
	struct sigaction sa;
	sigset_t none;
	int fd;

	setpgid(0, 0);
#ifdef __linux__
	/* Dies with the parent; a parent already gone is not waited for. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(notify_w, 2, errno);
	if (getppid() != parent)
		_exit(126);
#else
	(void)parent;
#endif
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	fd = in_r >= 0 ? in_r : open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0)
		child_fail(notify_w, 2, errno);
	if (fd > 2)
		close(fd);
	if (dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
		child_fail(notify_w, 2, errno);
	if (p->cwd && chdir(p->cwd) < 0)
		child_fail(notify_w, 1, errno);
	environ = env;
	if (!x->path)
		child_fail(notify_w, 0, x->err);
	execv(x->path, (char *const *)p->argv);
	if (errno == ENOEXEC) {
		/* what execvp() does with a script without "#!" */
		execv("/bin/sh", x->sh_argv);
	}
	child_fail(notify_w, 0, errno);
}

/*
 * The guard (proc.h): holds nothing of ours but the read end of its pipe;
 * the "done" byte lets it go quietly, end of file (we died) makes it stop
 * the child's group. Never returns.
 */
static void
guard_run(int fd, pid_t pgid)
{
	struct sigaction sa;
	struct timespec nap = { 0, 100000000L };
	char c;
	ssize_t r;
	int i, nul;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	/* a ^C to the terminal's group must not kill the guard first */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
	}
	for (i = 3; i < 1024; i++)
		if (i != fd)
			close(i);
	do
		r = read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r == 1)
		_exit(0);
	kill(-pgid, SIGTERM);
	for (i = 0; i < 10 && kill(-pgid, 0) == 0; i++)
		nanosleep(&nap, NULL);
	kill(-pgid, SIGKILL);
	_exit(0);
}

/* Forks the guard of p's group; 0, or -1 after error(). */
static int
guard_start(struct proc *p)
{
	int g[2];

	if (make_pipe(g) < 0)
		return error("cannot create pipe: %s", strerror(errno));
	p->guard_pid = fork();
	if (p->guard_pid < 0) {
		close(g[0]);
		close(g[1]);
		return error("cannot fork the guard of '%s': %s", p->argv[0],
			     strerror(errno));
	}
	if (p->guard_pid == 0)
		guard_run(g[0], p->pid);
	close(g[0]);
	p->guard_fd = g[1];
	return 0;
}

/* Lets the guard go (the child was reaped) and reaps it. */
static void
guard_stop(struct proc *p)
{
	ssize_t r;

	if (p->guard_fd >= 0) {
		do
			r = write(p->guard_fd, "d", 1);
		while (r < 0 && errno == EINTR);
		close_fd(&p->guard_fd);
	}
	if (p->guard_pid > 0)
		while (waitpid(p->guard_pid, NULL, 0) < 0 && errno == EINTR)
			;
	p->guard_pid = -1;
}

static int
open_output(const char *path, int *fd)
{
	if (!path)
		return 0;
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (*fd < 0)
		return error("cannot create '%s': %s", path, strerror(errno));
	return 0;
}

int
proc_start(struct proc *p)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, notify[2] = { -1, -1 };
	int in[2] = { -1, -1 };
	pid_t parent = getpid();
	char **env = NULL;
	struct exec_plan x = { NULL, 0, NULL };
	struct notify n;
	ssize_t r;
	int ret = -1;

	if (!p->argv || !p->argv[0] || !*p->argv[0])
		return error("no program to run");
	if (open_output(p->stdout_path, &p->out_file) < 0 ||
	    open_output(p->stderr_path, &p->err_file) < 0)
		goto cleanup;
	if (make_pipe(out) < 0 || make_pipe(err) < 0 || make_pipe(notify) < 0 ||
	    (p->hold_stdin && make_pipe(in) < 0)) {
		error("cannot create pipe: %s", strerror(errno));
		goto cleanup;
	}
	env = build_env(p);
	exec_plan_init(&x, p, env);
	fflush(NULL);
	p->started = mono_now();
	p->pid = fork();
	if (p->pid < 0) {
		error("cannot fork for '%s': %s", p->argv[0], strerror(errno));
		goto cleanup;
	}
	if (p->pid == 0)
		child_exec(p, &x, out[1], err[1], in[0], notify[1], env,
			   parent);

	/* Both sides set the group, so no kill() can miss it. */
	setpgid(p->pid, p->pid);
	close_fd(&out[1]);
	close_fd(&err[1]);
	close_fd(&notify[1]);
	close_fd(&in[0]);
	p->in_fd = in[1];
	in[1] = -1;
	p->out_fd = out[0];
	p->err_fd = err[0];
	out[0] = err[0] = -1;

	do
		r = read(notify[0], &n, sizeof(n));
	while (r < 0 && errno == EINTR);
	if (r == (ssize_t)sizeof(n)) {
		int status;

		while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
			;
		p->pid = -1;
		p->wall = mono_now() - p->started;
		p->exec_errno = n.err;
		p->exec_stage = n.stage == 1 ? "chdir" :
				n.stage == 2 ? "setup" : "exec";
		p->exit_code = n.err == ENOENT ? 127 : 126;
		p->status = p->exit_code;
		if (n.stage == 1)
			error("cannot change to directory '%s': %s", p->cwd,
			      strerror(n.err));
		else
			error("cannot run '%s': %s", p->argv[0],
			      strerror(n.err));
		close_fd(&p->out_fd);
		close_fd(&p->err_fd);
		close_fd(&p->in_fd);
		goto cleanup;
	}
	if (guard_start(p) < 0) {
		int status;

		kill(-p->pid, SIGKILL);
		while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
			;
		p->pid = -1;
		close_fd(&p->out_fd);
		close_fd(&p->err_fd);
		close_fd(&p->in_fd);
		goto cleanup;
	}
	ret = 0;
cleanup:
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&err[0]);
	close_fd(&err[1]);
	close_fd(&notify[0]);
	close_fd(&notify[1]);
	free(env);
	free(x.path);
	free(x.sh_argv);
	if (ret < 0) {
		close_fd(&p->out_file);
		close_fd(&p->err_file);
	}
	return ret;
}

/* Writes all of data to fd; -1 with errno on failure. */
static int
write_fully(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Reads what is available on *fd into the file and the capped copy;
 * closes *fd at end of file. Returns -1 after error() when the file
 * cannot be written (reading goes on, so the child never blocks).
 */
static int
drain(struct proc *p, int *fd, int file, const char *path, struct buf *copy,
      int *truncated, uint64_t *total, int *write_failed)
{
	char chunk[65536];
	size_t cap = p->mem_cap ? p->mem_cap : PROC_DEFAULT_MEM_CAP;
	ssize_t n;

	n = read(*fd, chunk, sizeof(chunk));
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return 0;
		close_fd(fd);
		return error("cannot read output of '%s': %s", p->argv[0],
			     strerror(errno));
	}
	if (n == 0) {
		close_fd(fd);
		return 0;
	}
	*total += (uint64_t)n;
	if (copy->len < cap) {
		size_t room = cap - copy->len;
		size_t take = (size_t)n < room ? (size_t)n : room;

		buf_add(copy, chunk, take);
		if (take < (size_t)n)
			*truncated = 1;
	} else {
		*truncated = 1;
	}
	if (file >= 0 && !*write_failed && write_fully(file, chunk, (size_t)n) < 0) {
		*write_failed = 1;
		return error("cannot write '%s': %s", path, strerror(errno));
	}
	return 0;
}

static void
kill_group(struct proc *p, int signo)
{
	if (p->pid > 0)
		kill(-p->pid, signo);
}

static void
record_status(struct proc *p, int status)
{
	if (WIFEXITED(status)) {
		p->exit_code = WEXITSTATUS(status);
		p->signo = 0;
		p->status = p->exit_code;
	} else if (WIFSIGNALED(status)) {
		p->exit_code = -1;
		p->signo = WTERMSIG(status);
		p->status = 128 + p->signo;
	}
}

int
proc_finish(struct proc *p)
{
	double grace = p->grace > 0 ? p->grace : PROC_DEFAULT_GRACE;
	double deadline = p->timeout > 0 ? p->started + p->timeout : 0;
	double kill_at = 0, linger_until = 0, backoff = 0.001, next_tick = 0;
	int out_wfail = 0, err_wfail = 0, ret = 0, reaped = 0, stopping = 0;
	pid_t pgid = p->pid;

	if (p->pid <= 0)
		return error("no child to wait for");

	while (!reaped || p->out_fd >= 0 || p->err_fd >= 0) {
		struct pollfd fds[2];
		nfds_t nfds = 0;
		double now = mono_now(), wait_s = 0.1;
		int timeout_ms, status;

		if (p->tick && !reaped && now >= next_tick) {
			p->tick(p->tick_ctx);
			next_tick = now + 1.0;
		}

		/* Timeout or interrupt: SIGTERM to the group, SIGKILL later. */
		if (!reaped && !stopping && deadline && now >= deadline) {
			p->timed_out = 1;
			stopping = 1;
		}
		if (!reaped && !stopping && interrupt_signo) {
			p->interrupted = 1;
			stopping = 1;
		}
		if (stopping == 1) {
			kill_group(p, SIGTERM);
			kill_at = now + grace;
			stopping = 2;
		}
		if (stopping == 2 && !reaped && now >= kill_at) {
			kill_group(p, SIGKILL);
			stopping = 3;
		}

		if (!reaped) {
			pid_t w = waitpid(p->pid, &status, WNOHANG);

			if (w == p->pid) {
				record_status(p, status);
				p->wall = mono_now() - p->started;
				reaped = 1;
				/*
				 * Descendants may still hold the pipes: give
				 * them the grace period, then kill the group.
				 */
				linger_until = now + (stopping ? 0.1 : grace);
			} else if (w < 0 && errno != EINTR) {
				ret = error("cannot wait for '%s': %s",
					    p->argv[0], strerror(errno));
				reaped = 1;
			}
		}
		if (reaped && (p->out_fd >= 0 || p->err_fd >= 0) &&
		    now >= linger_until) {
			kill(-pgid, SIGKILL);
			close_fd(&p->out_fd);
			close_fd(&p->err_fd);
		}
		if (reaped && p->out_fd < 0 && p->err_fd < 0)
			break;

		if (p->out_fd >= 0) {
			fds[nfds].fd = p->out_fd;
			fds[nfds++].events = POLLIN;
		}
		if (p->err_fd >= 0) {
			fds[nfds].fd = p->err_fd;
			fds[nfds++].events = POLLIN;
		}
		/* With no pipe left, poll for the exit with a growing nap. */
		if (!nfds) {
			wait_s = backoff;
			backoff = backoff < 0.05 ? backoff * 2 : 0.05;
		}
		if (deadline && !stopping && deadline - now < wait_s)
			wait_s = deadline - now;
		if (stopping == 2 && kill_at - now < wait_s)
			wait_s = kill_at - now;
		if (reaped && linger_until - now < wait_s)
			wait_s = linger_until - now;
		timeout_ms = wait_s > 0 ? (int)(wait_s * 1000) + 1 : 0;

		if (poll(fds, nfds, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			ret = error("cannot poll output of '%s': %s",
				    p->argv[0], strerror(errno));
			kill_group(p, SIGKILL);
			close_fd(&p->out_fd);
			close_fd(&p->err_fd);
			continue;
		}
		for (nfds_t i = 0; i < nfds; i++) {
			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (fds[i].fd == p->out_fd) {
				if (drain(p, &p->out_fd, p->out_file,
					  p->stdout_path, &p->out,
					  &p->out_truncated, &p->out_bytes,
					  &out_wfail) < 0)
					ret = -1;
			} else if (fds[i].fd == p->err_fd) {
				if (drain(p, &p->err_fd, p->err_file,
					  p->stderr_path, &p->err,
					  &p->err_truncated, &p->err_bytes,
					  &err_wfail) < 0)
					ret = -1;
			}
		}
	}
	p->pid = -1;
	guard_stop(p);
	close_fd(&p->in_fd);
	if (p->out_file >= 0 && close(p->out_file) < 0 && !out_wfail)
		ret = error("cannot write '%s': %s", p->stdout_path,
			    strerror(errno));
	if (p->err_file >= 0 && close(p->err_file) < 0 && !err_wfail)
		ret = error("cannot write '%s': %s", p->stderr_path,
			    strerror(errno));
	p->out_file = p->err_file = -1;
	return ret;
}

int
proc_run(struct proc *p)
{
	if (proc_start(p) < 0)
		return -1;
	return proc_finish(p);
}

void
proc_release(struct proc *p)
{
	buf_release(&p->out);
	buf_release(&p->err);
	close_fd(&p->out_fd);
	close_fd(&p->err_fd);
	close_fd(&p->out_file);
	close_fd(&p->err_file);
	close_fd(&p->in_fd);
	guard_stop(p);
}

void
proc_describe(const struct proc *p, struct buf *b)
{
	if (p->exec_errno)
		buf_addf(b, "cannot %s: %s", p->exec_stage ? p->exec_stage :
			 "exec", strerror(p->exec_errno));
	else if (p->interrupted)
		buf_addf(b, "interrupted (%s)", p->signo ?
			 strsignal(p->signo) : "exited");
	else if (p->timed_out)
		buf_addf(b, "timed out after %g s", p->timeout);
	else if (p->signo)
		buf_addf(b, "killed by signal %d (%s)", p->signo,
			 strsignal(p->signo));
	else
		buf_addf(b, "exit %d", p->exit_code);
}
