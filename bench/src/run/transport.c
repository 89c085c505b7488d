#define _POSIX_C_SOURCE 200809L
#include "run/transport.h"
#include "run/plan.h"
#include "base/files.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
transport_is_remote(const struct plan_target *t)
{
	return strcmp(t->transport, "local") != 0;
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

	if (strcmp(a->transport, b->transport))
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

/*
 * The remote command: unset names, set variables as assignments in front
 * of `exec`, every word quoted for one POSIX shell.
 */
static void
remote_command(struct buf *b, const char *const *argv,
	       const char *const *env_set, const char *const *env_unset)
{
	size_t i;

	for (i = 0; env_unset && env_unset[i]; i++) {
		buf_adds(b, i ? " " : "unset ");
		buf_add_sh_quoted(b, env_unset[i]);
	}
	if (env_unset && env_unset[0])
		buf_adds(b, "; ");
	for (i = 0; env_set && env_set[i]; i++) {
		const char *eq = strchr(env_set[i], '=');

		/* names were checked by the plan: [^=]+ without quotes */
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
}

static int
valid_env_names(const struct plan_target *t, const char *const *env_set,
		const char *const *env_unset)
{
	size_t i;
	const char *p;

	for (i = 0; env_set && env_set[i]; i++)
		for (p = env_set[i]; *p && *p != '='; p++)
			if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= 'a' && *p <= 'z') ||
			      (p > env_set[i] && *p >= '0' && *p <= '9')))
				return error("target '%s': variable name in "
					     "'%s' cannot be set in a remote "
					     "shell", t->name, env_set[i]);
	(void)env_unset;
	return 0;
}

int
transport_wrap(const struct plan_target *t, const char *const *argv,
	       const char *const *env_set, const char *const *env_unset,
	       struct transport_cmd *out)
{
	struct buf cmd = BUF_INIT, full = BUF_INIT;
	char **v = NULL, port[32];
	size_t n = 0, i;

	memset(out, 0, sizeof(*out));
	if (!transport_is_remote(t)) {
		out->argv = strv_dup(argv);
		out->env_set = strv_dup(env_set);
		out->env_unset = strv_dup(env_unset);
		return 0;
	}
	if (valid_env_names(t, env_set, env_unset) < 0)
		return -1;
	remote_command(&cmd, argv, env_set, env_unset);
	out->env_set = xcalloc(2, sizeof(char *));
	out->env_unset = xcalloc(1, sizeof(char *));
	if (!strcmp(t->transport, "ssh")) {
		if (!t->host)
			return error("target '%s': ssh needs 'host'", t->name);
		v = strv_push(v, &n, xstrdup("ssh"));
		v = strv_push(v, &n, xstrdup("-o"));
		v = strv_push(v, &n, xstrdup("BatchMode=yes"));
		v = strv_push(v, &n, xstrdup("-T"));
		for (i = 0; t->ssh_options && t->ssh_options[i]; i++)
			v = strv_push(v, &n, xstrdup(t->ssh_options[i]));
		if (t->port > 0) {
			snprintf(port, sizeof(port), "%d", t->port);
			v = strv_push(v, &n, xstrdup("-p"));
			v = strv_push(v, &n, xstrdup(port));
		}
		if (t->user) {
			v = strv_push(v, &n, xstrdup("-l"));
			v = strv_push(v, &n, xstrdup(t->user));
		}
		v = strv_push(v, &n, xstrdup("--"));
		v = strv_push(v, &n, xstrdup(t->host));
		v = strv_push(v, &n, buf_detach(&cmd, NULL));
	} else if (!strcmp(t->transport, "lume")) {
		if (!t->vm)
			return error("target '%s': lume needs 'vm'", t->name);
		/* Both streams into files in the guest, then one after the
		 * other with a separator; the status survives. */
		buf_adds(&full, "d=$(mktemp -d) || exit 125; (");
		buf_add(&full, cmd.buf, cmd.len);
		buf_adds(&full, ") >\"$d/o\" 2>\"$d/e\"; s=$?; cat \"$d/o\"; "
			 "printf '\\n%s\\n' '" TRANSPORT_SEPARATOR "'; "
			 "cat \"$d/e\"; rm -rf \"$d\"; exit $s");
		v = strv_push(v, &n, xstrdup("lume"));
		v = strv_push(v, &n, xstrdup("ssh"));
		if (t->user) {
			v = strv_push(v, &n, xstrdup("-u"));
			v = strv_push(v, &n, xstrdup(t->user));
		}
		v = strv_push(v, &n, xstrdup("-t"));
		v = strv_push(v, &n, xstrdup("0"));
		v = strv_push(v, &n, xstrdup(t->vm));
		v = strv_push(v, &n, buf_detach(&full, NULL));
		out->env_set[0] = xstrdup("LUME_LOG_LEVEL=error");
		out->merged = 1;
	} else if (!strcmp(t->transport, "tart")) {
		if (!t->vm)
			return error("target '%s': tart needs 'vm'", t->name);
		v = strv_push(v, &n, xstrdup("tart"));
		v = strv_push(v, &n, xstrdup("exec"));
		v = strv_push(v, &n, xstrdup(t->vm));
		v = strv_push(v, &n, xstrdup("/bin/sh"));
		v = strv_push(v, &n, xstrdup("-c"));
		v = strv_push(v, &n, buf_detach(&cmd, NULL));
	} else {
		buf_release(&cmd);
		return error("target '%s': unknown transport '%s'", t->name,
			     t->transport);
	}
	buf_release(&cmd);
	buf_release(&full);
	out->argv = v;
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
