#define _POSIX_C_SOURCE 200809L
#include "run/transport.h"
#include "run/plan.h"
#include "base/files.h"
#include "base/proc.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
transport_is_remote(const struct plan_target *t)
{
	return t->tp->remote;
}

int
transport_wrap(const struct plan_target *t, const char *const *argv,
	       const char *const *env_set, const char *const *env_unset,
	       struct transport_cmd *out)
{
	memset(out, 0, sizeof(*out));
	return t->tp->wrap(t, argv, env_set, env_unset, out);
}

void
transport_cmd_free(struct transport_cmd *c)
{
	strv_free(c->argv);
	strv_free(c->env_set);
	strv_free(c->env_unset);
	memset(c, 0, sizeof(*c));
}

static int
same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int
transport_same_machine(const struct plan_target *a,
		       const struct plan_target *b)
{
	size_t i;

	if (a->tp != b->tp)
		return 0;
	if (!transport_is_remote(a))
		return 1;
	if (!same_str(a->host, b->host) || !same_str(a->user, b->user) ||
	    !same_str(a->vm, b->vm) || a->port != b->port)
		return 0;
	for (i = 0; a->ssh_options && a->ssh_options[i]; i++)
		if (!b->ssh_options || !same_str(a->ssh_options[i],
						 b->ssh_options[i]))
			return 0;
	return !b->ssh_options || !b->ssh_options[i];
}

/* 1 for a name a POSIX shell can assign: [A-Za-z_][A-Za-z0-9_]*. */
static int
shell_name(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= 'a' && s[i] <= 'z') ||
		      (i > 0 && s[i] >= '0' && s[i] <= '9')))
			return 0;
	return len > 0;
}

int
transport_shell_command(const struct plan_target *t, const char *const *argv,
			const char *const *env_set,
			const char *const *env_unset, struct buf *b)
{
	size_t i;

	for (i = 0; env_set && env_set[i]; i++)
		if (!shell_name(env_set[i], strcspn(env_set[i], "=")))
			return error("target '%s': variable name in '%s' cannot "
				     "be set in a remote shell", t->name,
				     env_set[i]);
	for (i = 0; env_unset && env_unset[i]; i++)
		if (!shell_name(env_unset[i], strlen(env_unset[i])))
			return error("target '%s': variable name '%s' cannot "
				     "be unset in a remote shell", t->name,
				     env_unset[i]);
	for (i = 0; env_unset && env_unset[i]; i++) {
		buf_adds(b, i ? " " : "unset ");
		buf_add_sh_quoted(b, env_unset[i]);
	}
	if (env_unset && env_unset[0])
		buf_adds(b, "; ");
	for (i = 0; env_set && env_set[i]; i++) {
		const char *eq = strchr(env_set[i], '=');

		buf_add(b, env_set[i], (size_t)(eq - env_set[i]));
		buf_addch(b, '=');
		buf_add_sh_quoted(b, eq + 1);
		buf_addch(b, ' ');
	}
	buf_adds(b, "exec");
	for (i = 0; argv[i]; i++) {
		buf_addch(b, ' ');
		buf_add_sh_quoted(b, argv[i]);
	}
	return 0;
}

void
transport_watched(const struct buf *cmd, struct buf *out)
{
	/*
	 * fd 3 carries our stdin past the rule that gives an asynchronous
	 * list /dev/null; the command itself reads /dev/null, as locally.
	 * The watcher's outputs go to /dev/null so the session ends when the
	 * command does; killing it leaves only its cat, which ends with the
	 * channel.
	 */
	buf_adds(out, "exec 3<&0; (");
	buf_add(out, cmd->buf, cmd->len);
	buf_adds(out, ") </dev/null 3<&- & c=$!; "
		 "{ cat >/dev/null; kill -TERM $c; sleep 1; kill -KILL $c; } "
		 "<&3 >/dev/null 2>&1 & w=$!; exec 3<&-; "
		 "wait $c; s=$?; kill $w 2>/dev/null; exit $s");
}

int
transport_check_name(const char *path, const char *key, const char *value)
{
	const unsigned char *p;

	if (!value)
		return 0;
	if (!*value)
		return error("plan: '%s.%s' must not be empty", path, key);
	if (value[0] == '-')
		return error("plan: '%s.%s' is '%s': a name starting with '-' "
			     "would be read as an option", path, key, value);
	for (p = (const unsigned char *)value; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return error("plan: '%s.%s' holds a control character",
				     path, key);
	return 0;
}

int
transport_need(const struct plan_target *t, const char *path,
	       const char *key, const char *value)
{
	if (!value)
		return error("plan: '%s' uses %s and needs '%s'", path,
			     t->tp->name, key);
	return 0;
}

int
transport_host_run(const char *const *argv, const char *const *env,
		   double timeout, const char *what, struct buf *out)
{
	struct proc p = PROC_INIT;
	int ret = -1;

	p.argv = argv;
	p.env_set = env;
	p.timeout = timeout;
	p.mem_cap = 1 << 20;
	if (proc_run(&p) < 0 && !p.exec_errno)
		goto cleanup;
	if (p.exec_errno) {
		error("%s: cannot run '%s': %s", what, argv[0],
		      strerror(p.exec_errno));
		goto cleanup;
	}
	if (p.status != 0) {
		struct buf d = BUF_INIT;
		size_t n = p.err.len;

		while (n && (p.err.buf[n - 1] == '\n' || p.err.buf[n - 1] == ' '))
			n--;
		proc_describe(&p, &d);
		error("%s: '%s' failed (%s)%s%.*s", what, argv[0], d.buf,
		      n ? ": " : "", (int)(n > 400 ? 400 : n), p.err.buf);
		buf_release(&d);
		goto cleanup;
	}
	if (out)
		buf_add(out, p.out.buf, p.out.len);
	ret = 0;
cleanup:
	proc_release(&p);
	return ret;
}

int
transport_split(const char *out_path, const char *err_path)
{
	static const char sep[] = "\n" TRANSPORT_SEPARATOR "\n";
	struct buf all = BUF_INIT, err = BUF_INIT;
	const char *p = NULL, *q;
	size_t len, rest;
	int ret = -1;

	if (buf_read_file(&all, out_path) < 0)
		goto cleanup;
	/* The last separator: the program's own output cannot forge it
	 * after its stderr. */
	for (q = all.buf; (q = strstr(q, sep)); q++)
		p = q;
	if (!p) {
		ret = 0;
		goto cleanup;
	}
	if (file_exists(err_path) && buf_read_file(&err, err_path) < 0)
		goto cleanup;
	rest = all.len - (size_t)(p - all.buf) - (sizeof(sep) - 1);
	buf_add(&err, p + sizeof(sep) - 1, rest);
	/* lume adds one newline after the command's output */
	if (err.len && err.buf[err.len - 1] == '\n' && rest)
		buf_setlen(&err, err.len - 1);
	len = (size_t)(p - all.buf);
	if (write_file_atomic(out_path, all.buf, len) < 0 ||
	    write_file_atomic(err_path, err.buf, err.len) < 0)
		goto cleanup;
	ret = 1;
cleanup:
	buf_release(&all);
	buf_release(&err);
	return ret;
}
