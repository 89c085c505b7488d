#define _POSIX_C_SOURCE 200809L
/*
 * The lume transport (the cua project's Lume CLI, research in
 * docs/plans.md): `lume ssh [-u USER] -t 0 VM CMD`.
 *
 * lume joins the command's words with spaces and hands them to the
 * guest user's login shell, so CMD is one argument quoted for that one
 * shell. Its built-in SSH client collects stdout and stderr into one
 * buffer, printed after the command exits: CMD therefore writes the two
 * streams to files in the guest and prints them one after the other with
 * a separator line (out->merged; transport_split() cuts them apart). The
 * remote status survives as lume's exit status. LUME_LOG_LEVEL=error
 * keeps lume's own "[…] INFO:" lines off stdout.
 *
 * The VM name comes after the options and "--" (lume parses its
 * arguments with swift-argument-parser, which ends options there), and
 * the plan refuses VM names that start with '-' or hold control
 * characters anyway. lume forwards no stdin to the command, so it cannot
 * run under transport_watched(): a lume command outlives a killed
 * shimbench (stopping the lume client ends only the local side).
 * Default login: lume/lume (the unattended images').
 */
#include "run/transport.h"
#include "run/plan.h"
#include "base/json.h"
#include "base/util.h"

#include <string.h>

static const char *const lume_env[] = { "LUME_LOG_LEVEL=error", NULL };

static int
lume_check(const struct plan_target *t, const char *path)
{
	if (transport_need(t, path, "vm", t->vm) < 0 ||
	    transport_check_name(path, "vm", t->vm) < 0 ||
	    transport_check_name(path, "user", t->user) < 0)
		return -1;
	return 0;
}

static int
lume_wrap(const struct plan_target *t, const char *const *argv,
	  const char *const *env_set, const char *const *env_unset,
	  struct transport_cmd *out)
{
	struct buf cmd = BUF_INIT, full = BUF_INIT;
	char **v = NULL;
	size_t n = 0;

	if (!t->vm)
		return error("target '%s': lume needs 'vm'", t->name);
	if (transport_shell_command(t, argv, env_set, env_unset, &cmd) < 0) {
		buf_release(&cmd);
		return -1;
	}
	/* Both streams into files in the guest, then one after the other
	 * with a separator; the status survives. */
	buf_adds(&full, "d=$(mktemp -d) || exit 125; (");
	buf_add(&full, cmd.buf, cmd.len);
	buf_adds(&full, ") >\"$d/o\" 2>\"$d/e\"; s=$?; cat \"$d/o\"; "
		 "printf '\\n%s\\n' '" TRANSPORT_SEPARATOR "'; "
		 "cat \"$d/e\"; rm -rf \"$d\"; exit $s");
	buf_release(&cmd);
	v = strv_push(v, &n, xstrdup("lume"));
	v = strv_push(v, &n, xstrdup("ssh"));
	if (t->user) {
		v = strv_push(v, &n, xstrdup("-u"));
		v = strv_push(v, &n, xstrdup(t->user));
	}
	v = strv_push(v, &n, xstrdup("-t"));
	v = strv_push(v, &n, xstrdup("0"));
	v = strv_push(v, &n, xstrdup("--"));
	v = strv_push(v, &n, xstrdup(t->vm));
	v = strv_push(v, &n, buf_detach(&full, NULL));
	out->argv = v;
	out->env_set = strv_dup(lume_env);
	out->env_unset = xcalloc(1, sizeof(char *));
	out->merged = 1;
	return 0;
}

/*
 * The JSON array in Lume's stdout: log lines ("[2026-…] INFO: …") may
 * come first, so it starts at the first line that opens an array.
 */
static struct json *
lume_json(const struct buf *out)
{
	const char *p = out->buf;
	size_t end;

	while (p && *p) {
		if (p[0] == '[' && strchr("\n\r\t {]", p[1]))
			return json_parse_prefix(p, out->len - (size_t)(p - out->buf),
						 &end);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* `lume get VM -f json`: an array of one entry; NULL after error(). */
static struct json *
lume_get(const struct plan_target *t)
{
	const char *argv[] = { "lume", "get", t->vm, "-f", "json", NULL };
	struct buf out = BUF_INIT;
	struct json *j = NULL;

	if (transport_host_run(argv, lume_env, 60, "lume get", &out) == 0) {
		j = lume_json(&out);
		if (!j)
			error("lume get printed no VM entry");
	}
	buf_release(&out);
	return j;
}

static int
lume_address(const struct plan_target *t, char **addr)
{
	struct json *j = lume_get(t);
	const char *ip = json_get_str(json_at(j, 0), "ipAddress");

	*addr = ip && *ip ? xstrdup(ip) : NULL;
	json_free(j);
	if (!*addr)
		return error("target '%s': VM '%s' has no IP address (lume get "
			     "says it is not running or still booting)",
			     t->name, t->vm);
	return 0;
}

/* Ready: status "running" with an address; sshAvailable is reported. */
static int
lume_vm_state(const struct plan_target *t, char **detail, char **fix)
{
	struct json *j;
	const struct json *e;
	const char *st, *ip;
	int ret = -1;

	error_silent++;
	j = lume_get(t);
	error_silent--;
	if (!j) {
		*detail = xstrdup(error_last());
		*fix = xstrfmt("create the VM '%s' (lume pull/create), or name "
			       "an existing one in the plan", t->vm);
		return -1;
	}
	e = json_at(j, 0);
	st = json_get_str(e, "status");
	ip = json_get_str(e, "ipAddress");
	if (!st) {
		*detail = xstrdup("lume get printed no VM entry");
	} else if (strcmp(st, "running") || !ip) {
		*detail = xstrfmt("VM '%s' is %s%s", t->vm, st,
				  strcmp(st, "running") ? "" :
				  " but has no IP address yet");
		*fix = xstrfmt("lume run %s --display none --vnc disabled "
			       "--detach", t->vm);
		ret = 0;
	} else {
		*detail = xstrfmt("VM '%s' running at %s%s", t->vm, ip,
				  json_bool(json_get(e, "sshAvailable")) == 1 ?
				  ", ssh available" : ", ssh not answering yet");
		ret = 1;
	}
	json_free(j);
	return ret;
}

const struct transport transport_lume = {
	.name = "lume",
	.remote = 1,
	.program = "lume",
	.program_fix = "install Lume (the cua project's lume CLI) and put it "
		"on PATH",
	.unreachable_fix = "check the VM's user and that its ssh answers",
	.default_user = "lume",
	.check = lume_check,
	.wrap = lume_wrap,
	.address = lume_address,
	.vm_state = lume_vm_state,
};
