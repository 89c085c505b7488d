#define _POSIX_C_SOURCE 200809L
/*
 * The ssh transport: `ssh -o BatchMode=yes -T [ssh_options] [-p PORT]
 * [-l USER] -- HOST CMD`, CMD quoted for the remote login shell; stdout
 * and stderr come back separately. BatchMode: a password prompt would
 * hang a benchmark, so keys (or an agent) must log in. The host comes
 * after "--", so even a name starting with '-' could not become an
 * option; the plan refuses such names anyway. CMD runs under
 * transport_watched() with ssh's stdin a pipe we hold: when the client
 * or this process dies, the remote llama-bench is stopped too.
 */
#include "run/transport.h"
#include "run/plan.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static int
ssh_check(const struct plan_target *t, const char *path)
{
	if (transport_need(t, path, "host", t->host) < 0 ||
	    transport_check_name(path, "host", t->host) < 0 ||
	    transport_check_name(path, "user", t->user) < 0)
		return -1;
	return 0;
}

static int
ssh_wrap(const struct plan_target *t, const char *const *argv,
	 const char *const *env_set, const char *const *env_unset,
	 struct transport_cmd *out)
{
	struct buf cmd = BUF_INIT, full = BUF_INIT;
	char **v = NULL, port[32];
	size_t n = 0, i;

	if (!t->host)
		return error("target '%s': ssh needs 'host'", t->name);
	if (transport_shell_command(t, argv, env_set, env_unset, &cmd) < 0) {
		buf_release(&cmd);
		return -1;
	}
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
	transport_watched(&cmd, &full);
	buf_release(&cmd);
	v = strv_push(v, &n, buf_detach(&full, NULL));
	out->argv = v;
	out->hold_stdin = 1;
	out->env_set = xcalloc(1, sizeof(char *));
	out->env_unset = xcalloc(1, sizeof(char *));
	return 0;
}

static int
ssh_address(const struct plan_target *t, char **addr)
{
	*addr = xstrdup(t->host);
	return 0;
}

const struct transport transport_ssh = {
	.name = "ssh",
	.remote = 1,
	.program = "ssh",
	.program_fix = "install the OpenSSH client",
	.unreachable_fix = "check host, user, port and keys (ssh -o "
		"BatchMode=yes must log in without a password)",
	.check = ssh_check,
	.wrap = ssh_wrap,
	.address = ssh_address,
};
