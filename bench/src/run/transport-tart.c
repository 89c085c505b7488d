#define _POSIX_C_SOURCE 200809L
/*
 * The tart transport (Cirrus Labs' Tart): `tart exec -i -- VM /bin/sh -c
 * CMD`, CMD under transport_watched(): -i attaches our stdin, a pipe we
 * hold, so the guest's llama-bench stops when tart or shimbench dies.
 * tart exec passes argv to the guest agent unchanged, with no shell, so
 * the environment is set by an explicit /bin/sh (CMD quoted for it); the
 * two streams come back separately and tart exits with the remote
 * status. It needs the Tart Guest Agent in the guest and has no timeout
 * of its own (proc's applies).
 *
 * The VM name follows "--" (tart parses its arguments with
 * swift-argument-parser, which ends options there), and the plan refuses
 * names that start with '-' or hold control characters anyway. Default
 * login for scp: admin/admin (Tart's images).
 */
#include "run/transport.h"
#include "run/plan.h"
#include "base/json.h"
#include "base/util.h"

#include <string.h>

static int
tart_check(const struct plan_target *t, const char *path)
{
	if (transport_need(t, path, "vm", t->vm) < 0 ||
	    transport_check_name(path, "vm", t->vm) < 0 ||
	    transport_check_name(path, "user", t->user) < 0)
		return -1;
	return 0;
}

static int
tart_wrap(const struct plan_target *t, const char *const *argv,
	  const char *const *env_set, const char *const *env_unset,
	  struct transport_cmd *out)
{
	struct buf cmd = BUF_INIT, full = BUF_INIT;
	char **v = NULL;
	size_t n = 0;

	if (!t->vm)
		return error("target '%s': tart needs 'vm'", t->name);
	if (transport_shell_command(t, argv, env_set, env_unset, &cmd) < 0) {
		buf_release(&cmd);
		return -1;
	}
	v = strv_push(v, &n, xstrdup("tart"));
	v = strv_push(v, &n, xstrdup("exec"));
	v = strv_push(v, &n, xstrdup("-i"));
	v = strv_push(v, &n, xstrdup("--"));
	v = strv_push(v, &n, xstrdup(t->vm));
	v = strv_push(v, &n, xstrdup("/bin/sh"));
	v = strv_push(v, &n, xstrdup("-c"));
	transport_watched(&cmd, &full);
	buf_release(&cmd);
	v = strv_push(v, &n, buf_detach(&full, NULL));
	out->argv = v;
	out->hold_stdin = 1;
	out->env_set = xcalloc(1, sizeof(char *));
	out->env_unset = xcalloc(1, sizeof(char *));
	return 0;
}

/* `tart ip VM`: the first word of its output. */
static int
tart_address(const struct plan_target *t, char **addr)
{
	const char *argv[] = { "tart", "ip", "--", t->vm, NULL };
	struct buf out = BUF_INIT;
	size_t n;
	int ret = -1;

	*addr = NULL;
	if (transport_host_run(argv, NULL, 60, "tart ip", &out) < 0)
		goto cleanup;
	n = strcspn(out.buf, " \t\r\n");
	if (!n) {
		error("target '%s': tart ip printed no address", t->name);
		goto cleanup;
	}
	*addr = xstrndup(out.buf, n);
	ret = 0;
cleanup:
	buf_release(&out);
	return ret;
}

/* `tart list --format json`: the VM's entry, Running true. */
static int
tart_vm_state(const struct plan_target *t, char **detail, char **fix)
{
	const char *argv[] = { "tart", "list", "--format", "json", NULL };
	const struct json *e, *hit = NULL;
	struct buf out = BUF_INIT;
	struct json *j = NULL;
	int ret = -1;

	error_silent++;
	if (transport_host_run(argv, NULL, 60, "tart list", &out) < 0) {
		*detail = xstrdup(error_last());
		goto cleanup;
	}
	j = json_parse(out.buf, out.len, "tart list");
	JSON_FOR_EACH(e, j)
		if (json_get_str(e, "Name") &&
		    !strcmp(json_get_str(e, "Name"), t->vm))
			hit = e;
	if (!hit) {
		*detail = xstrfmt("tart has no VM '%s'", t->vm);
		*fix = xstrfmt("tart clone IMAGE %s, or name an existing VM in "
			       "the plan", t->vm);
	} else if (json_bool(json_get(hit, "Running")) != 1) {
		*detail = xstrfmt("VM '%s' is %s", t->vm,
				  json_get_str(hit, "State") ?
				  json_get_str(hit, "State") : "stopped");
		*fix = xstrfmt("tart run --no-graphics %s &", t->vm);
		ret = 0;
	} else {
		*detail = xstrfmt("VM '%s' running", t->vm);
		ret = 1;
	}
cleanup:
	error_silent--;
	json_free(j);
	buf_release(&out);
	return ret;
}

const struct transport transport_tart = {
	.name = "tart",
	.remote = 1,
	.program = "tart",
	.program_fix = "brew install cirruslabs/cli/tart",
	.unreachable_fix = "check that the VM's Tart Guest Agent answers",
	.default_user = "admin",
	.check = tart_check,
	.wrap = tart_wrap,
	.address = tart_address,
	.vm_state = tart_vm_state,
};
