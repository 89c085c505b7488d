#define _POSIX_C_SOURCE 200809L
#include "run/target.h"
#include "run/plan.h"
#include "run/tools.h"
#include "run/transport.h"
#include "evidence/fingerprint.h"
#include "evidence/hashcache.h"
#include "base/files.h"
#include "base/json.h"
#include "base/proc.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void
target_cut_merged(const struct transport_cmd *tc, struct buf *out)
{
	const char *sep = "\n" TRANSPORT_SEPARATOR "\n", *p = NULL, *q;

	if (!tc->merged)
		return;
	for (q = out->buf; (q = strstr(q, sep)); q++)
		p = q;
	if (p)
		buf_setlen(out, (size_t)(p - out->buf));
}

int
target_capture(const struct plan_target *t, const char *const *argv,
	       double timeout, const char *what, struct buf *out)
{
	struct transport_cmd tc;
	struct proc p = PROC_INIT;
	int ret = -1;

	if (transport_wrap(t, argv, NULL, NULL, &tc) < 0)
		return -1;
	p.argv = (const char *const *)tc.argv;
	p.env_set = (const char *const *)tc.env_set;
	p.timeout = timeout;
	if (proc_run(&p) < 0 || p.status != 0) {
		struct buf d = BUF_INIT;
		proc_describe(&p, &d);
		error("%s on target '%s' failed: %s%s%.300s", what, t->name,
		      d.buf, p.err.len ? ": " : "", p.err.buf);
		buf_release(&d);
		goto cleanup;
	}
	target_cut_merged(&tc, &p.out);
	buf_add(out, p.out.buf, p.out.len);
	ret = 0;
cleanup:
	proc_release(&p);
	transport_cmd_free(&tc);
	return ret;
}

int
target_sha256(struct store *s, const struct plan_target *t, const char *path,
	      char hex[SHA256_HEX_LEN + 1])
{
	const char *argv[] = {
		"/bin/sh", "-c",
		"if command -v sha256sum >/dev/null 2>&1; then sha256sum -- \"$1\"; "
		"else shasum -a 256 -- \"$1\"; fi", "sh", path, NULL,
	};
	struct buf out = BUF_INIT;
	int ret = -1;

	if (!transport_is_remote(t))
		return s ? hash_file_cached(s, path, 0, hex) :
			hash_file_sha256(path, hex);
	if (target_capture(t, argv, 3600, "hashing", &out) < 0)
		goto cleanup;
	if (out.len < 65 || (out.buf[64] != ' ' && out.buf[64] != '\t')) {
		error("target '%s': no SHA-256 for '%s'", t->name, path);
		goto cleanup;
	}
	out.buf[64] = '\0';
	if (!hash_is_sha256_hex(out.buf)) {
		error("target '%s': no SHA-256 for '%s'", t->name, path);
		goto cleanup;
	}
	memcpy(hex, out.buf, 65);
	ret = 0;
cleanup:
	buf_release(&out);
	return ret;
}

int
target_fingerprint(const struct plan_target *t, char **fp, char **warnings)
{
	const char *argv[] = { "/bin/sh", "-c", fingerprint_probe_script, NULL };
	struct buf out = BUF_INIT;
	int ret = -1;

	if (target_capture(t, argv, 60, "fingerprint probe", &out) == 0)
		ret = fingerprint_parse(out.buf, out.len, fp, warnings);
	buf_release(&out);
	return ret;
}

/*
 * Runs a program here (lume, tart, scp), its stdout into out. 0, or -1
 * after error() naming what failed with the program's own message.
 */
static int
host_run(const char *const *argv, const char *const *env, double timeout,
	 const char *what, struct buf *out)
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

int
target_address(const struct plan_target *t, char **addr)
{
	struct buf out = BUF_INIT;
	int ret = -1;

	*addr = NULL;
	if (!strcmp(t->transport, "ssh")) {
		*addr = xstrdup(t->host);
		return 0;
	}
	if (!strcmp(t->transport, "lume")) {
		const char *argv[] = { "lume", "get", t->vm, "-f", "json", NULL };
		const char *env[] = { "LUME_LOG_LEVEL=error", NULL };
		struct json *j;
		const char *ip;

		if (host_run(argv, env, 60, "lume get", &out) < 0)
			goto cleanup;
		j = lume_json(&out);
		ip = json_get_str(json_at(j, 0), "ipAddress");
		if (ip && *ip)
			*addr = xstrdup(ip);
		json_free(j);
		if (!*addr) {
			error("target '%s': VM '%s' has no IP address (lume get "
			      "says it is not running or still booting)",
			      t->name, t->vm);
			goto cleanup;
		}
	} else if (!strcmp(t->transport, "tart")) {
		const char *argv[] = { "tart", "ip", t->vm, NULL };
		size_t n;

		if (host_run(argv, NULL, 60, "tart ip", &out) < 0)
			goto cleanup;
		n = strcspn(out.buf, " \t\r\n");
		if (!n) {
			error("target '%s': tart ip printed no address", t->name);
			goto cleanup;
		}
		*addr = xstrndup(out.buf, n);
	} else {
		error("target '%s' is local: it has no address", t->name);
		goto cleanup;
	}
	ret = 0;
cleanup:
	buf_release(&out);
	return ret;
}

/* Characters a remote path may hold: scp passes it to a remote shell
 * (legacy protocol) or not (SFTP), so only those both read the same. */
static int
scp_safe(const char *path)
{
	return path[0] == '/' && strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"abcdefghijklmnopqrstuvwxyz0123456789"
					"/._-+@,") == strlen(path);
}

static int
install_local(const char *src, const char *dst, int executable)
{
	struct buf data = BUF_INIT;
	char *dir = xstrdup(dst), *slash = strrchr(dir, '/');
	int ret = -1;

	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir_p(dir) < 0)
			goto cleanup;
	}
	if (buf_read_file(&data, src) < 0 ||
	    write_file_atomic(dst, data.buf, data.len) < 0)
		goto cleanup;
	if (chmod(dst, executable ? 0755 : 0644) < 0) {
		error("cannot chmod '%s': %s", dst, strerror(errno));
		goto cleanup;
	}
	ret = 0;
cleanup:
	free(dir);
	buf_release(&data);
	return ret;
}

/* scp's own arguments from the target: ssh's -p PORT is scp's -P. */
static char **
scp_argv(const struct plan_target *t, const char *src, const char *to)
{
	char **v = NULL, port[32];
	size_t n = 0, i;

	v = strv_push(v, &n, xstrdup("scp"));
	v = strv_push(v, &n, xstrdup("-q"));
	v = strv_push(v, &n, xstrdup("-o"));
	v = strv_push(v, &n, xstrdup("BatchMode=yes"));
	for (i = 0; t->ssh_options && t->ssh_options[i]; i++) {
		const char *o = t->ssh_options[i];

		v = strv_push(v, &n, xstrdup(strcmp(o, "-p") ? o : "-P"));
	}
	if (t->port > 0) {
		snprintf(port, sizeof(port), "%d", t->port);
		v = strv_push(v, &n, xstrdup("-P"));
		v = strv_push(v, &n, xstrdup(port));
	}
	v = strv_push(v, &n, xstrdup("--"));
	v = strv_push(v, &n, xstrdup(src));
	v = strv_push(v, &n, xstrdup(to));
	return v;
}

int
target_install_file(const struct plan_target *t, const char *src,
		    const char *dst, int executable, const char *sha256)
{
	const char *user = t->user;
	char *addr = NULL, *part = NULL, *dir = NULL, *to = NULL, **argv = NULL;
	char have[SHA256_HEX_LEN + 1];
	struct buf out = BUF_INIT;
	int ret = -1;

	if (!transport_is_remote(t)) {
		if (install_local(src, dst, executable) < 0)
			return -1;
		goto verify;
	}
	if (!scp_safe(dst))
		return error("target '%s': '%s' must be an absolute path of "
			     "letters, digits and / . _ - + @ , to be copied "
			     "with scp", t->name, dst);
	if (!user)
		user = !strcmp(t->transport, "lume") ? "lume" :
			!strcmp(t->transport, "tart") ? "admin" : NULL;
	if (target_address(t, &addr) < 0)
		goto cleanup;
	part = xstrfmt("%s.part", dst);
	dir = xstrdup(dst);
	*strrchr(dir, '/') = '\0';
	{
		const char *mk[] = { "mkdir", "-p", *dir ? dir : "/", NULL };

		if (target_capture(t, mk, 60, "creating the directory", &out) < 0)
			goto cleanup;
	}
	to = xstrfmt("%s%s%s%s%s:%s", user ? user : "", user ? "@" : "",
		     strchr(addr, ':') ? "[" : "", addr,
		     strchr(addr, ':') ? "]" : "", part);
	argv = scp_argv(t, src, to);
	if (host_run((const char *const *)argv, NULL, 600, "copying", NULL) < 0)
		goto cleanup;
	{
		const char *ch[] = { "chmod", executable ? "755" : "644", part,
				     NULL };
		const char *mv[] = { "mv", "-f", part, dst, NULL };

		if (target_capture(t, ch, 60, "chmod", &out) < 0 ||
		    target_capture(t, mv, 60, "moving into place", &out) < 0)
			goto cleanup;
	}
verify:
	if (target_sha256(NULL, t, dst, have) < 0)
		goto cleanup;
	if (strcmp(have, sha256)) {
		error("target '%s': '%s' has SHA-256 %s after the copy, not "
		      "%s", t->name, dst, have, sha256);
		goto cleanup;
	}
	ret = 0;
cleanup:
	strv_free(argv);
	free(addr);
	free(part);
	free(dir);
	free(to);
	buf_release(&out);
	return ret;
}

/* ---- doctor ------------------------------------------------------------------ */

static struct target_check *
add(struct target_check **v, size_t *n, char *name, const char *status)
{
	struct target_check *c;

	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	c = &(*v)[(*n)++];
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->status = status;
	return c;
}

static int
on_path(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;

	for (p = path ? path : ""; *p; p = *end ? end + 1 : end) {
		char *cand;
		int ok;

		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			continue;
		cand = xstrfmt("%.*s/%s", (int)(end - p), p, name);
		ok = access(cand, X_OK) == 0;
		free(cand);
		if (ok)
			return 1;
	}
	return 0;
}

/* The last error() as a detail line. */
static char *
why(void)
{
	return xstrdup(error_last());
}

/* lume get / tart list: 1 when the VM runs, 0 when not, -1 on failure. */
static int
vm_state(const struct plan_target *t, struct target_check *c)
{
	struct buf out = BUF_INIT;
	struct json *j = NULL;
	int ret = -1;

	error_silent++;
	if (!strcmp(t->transport, "lume")) {
		const char *argv[] = { "lume", "get", t->vm, "-f", "json", NULL };
		const char *env[] = { "LUME_LOG_LEVEL=error", NULL };
		const struct json *e;
		const char *st, *ip;

		if (host_run(argv, env, 60, "lume get", &out) < 0) {
			c->detail = why();
			c->fix = xstrfmt("create the VM '%s' (lume pull/create), or "
					 "name an existing one in the plan", t->vm);
			goto cleanup;
		}
		j = lume_json(&out);
		e = json_at(j, 0);
		st = json_get_str(e, "status");
		ip = json_get_str(e, "ipAddress");
		if (!st) {
			c->detail = xstrdup("lume get printed no VM entry");
			goto cleanup;
		}
		if (strcmp(st, "running") || !ip) {
			c->detail = xstrfmt("VM '%s' is %s%s", t->vm, st,
					    strcmp(st, "running") ? "" :
					    " but has no IP address yet");
			c->fix = xstrfmt("lume run %s --display none --vnc "
					 "disabled --detach", t->vm);
			ret = 0;
			goto cleanup;
		}
		c->detail = xstrfmt("VM '%s' running at %s%s", t->vm, ip,
				    json_bool(json_get(e, "sshAvailable")) == 1 ?
				    ", ssh available" : ", ssh not answering yet");
		ret = 1;
	} else {
		const char *argv[] = { "tart", "list", "--format", "json", NULL };
		const struct json *e, *hit = NULL;

		if (host_run(argv, NULL, 60, "tart list", &out) < 0) {
			c->detail = why();
			goto cleanup;
		}
		j = json_parse(out.buf, out.len, "tart list");
		JSON_FOR_EACH(e, j)
			if (json_get_str(e, "Name") &&
			    !strcmp(json_get_str(e, "Name"), t->vm))
				hit = e;
		if (!hit) {
			c->detail = xstrfmt("tart has no VM '%s'", t->vm);
			c->fix = xstrfmt("tart clone IMAGE %s, or name an existing "
					 "VM in the plan", t->vm);
			goto cleanup;
		}
		if (json_bool(json_get(hit, "Running")) != 1) {
			c->detail = xstrfmt("VM '%s' is %s", t->vm,
					    json_get_str(hit, "State") ?
					    json_get_str(hit, "State") : "stopped");
			c->fix = xstrfmt("tart run --no-graphics %s &", t->vm);
			ret = 0;
			goto cleanup;
		}
		c->detail = xstrfmt("VM '%s' running", t->vm);
		ret = 1;
	}
cleanup:
	error_silent--;
	json_free(j);
	buf_release(&out);
	return ret;
}

/* A command's first output line on the target; NULL after a failure. */
static char *
first_line(const struct plan_target *t, const char *script, const char *arg,
	   const char *what)
{
	const char *argv[] = { "/bin/sh", "-c", script, "sh", arg, NULL };
	struct buf out = BUF_INIT;
	char *line = NULL;

	error_silent++;
	if (target_capture(t, argv, 60, what, &out) == 0)
		line = xstrndup(out.buf, strcspn(out.buf, "\r\n"));
	error_silent--;
	buf_release(&out);
	return line;
}

static int
runs_model(const struct plan *p, const struct plan_target *t, size_t m)
{
	size_t v;

	for (v = 0; v < p->nvariants; v++)
		if (!strcmp(p->variants[v].target, t->name) && plan_runs(p, m, v))
			return 1;
	return 0;
}

static void
check_program(const struct plan *p, const struct plan_target *t, int mlx,
	      struct target_check **v, size_t *n)
{
	const char *want = mlx ? (t->mlx_lm ? t->mlx_lm : p->mlx_command[0]) :
		t->llama_bench ? t->llama_bench :
		p->llama_bench ? p->llama_bench : "llama-bench";
	struct target_check *c = add(v, n, xstrdup(mlx ? "mlx-lm" :
						   "llama-bench"), "ok");
	char *line;

	if (!transport_is_remote(t)) {
		/* the lookup run itself makes: plan, env, PATH, prefix… */
		struct tool tl = TOOL_INIT;
		const char *explicit = mlx || t->llama_bench || p->llama_bench ?
			want : NULL;

		error_silent++;
		if (tool_find(mlx ? "mlx_lm.benchmark" : "llama-bench",
			      explicit, &tl) == 0) {
			c->detail = xstrfmt("%s (%s)", tl.path, tl.where);
			tool_release(&tl);
			error_silent--;
			return;
		}
		error_silent--;
	}
	line = first_line(t, mlx ?
		"command -v \"$1\" || exit 127" :
		"p=$(command -v \"$1\") || exit 127; "
		"v=$(\"$1\" --version 2>&1 | sed -n 's/^version: //p' | head -n 1); "
		"echo \"$p${v:+ ($v)}\"", want, "finding the program");

	if (line && *line) {
		c->detail = line;
		return;
	}
	free(line);
	c->status = "missing";
	c->detail = xstrfmt("'%s' not found on target '%s'", want, t->name);
	c->fix = mlx ? xstrdup("pip install mlx-lm there, or set the target's "
			       "mlx_lm to its path") :
		transport_is_remote(t) ?
		xstrdup("brew install llama.cpp there, or set the target's "
			"llama_bench to its path") :
		xstrdup("make llama-bench (Linux) or brew install llama.cpp "
			"(macOS), or set llama_bench in the plan");
}

/* SIP on a macOS target: it drops DYLD_* for protected binaries. */
static void
check_sip(const struct plan_target *t, const char *uname, int inject,
	  struct target_check **v, size_t *n)
{
	struct target_check *c;
	char *line;

	c = add(v, n, xstrdup("sip"), "ok");
	if (strncmp(uname, "Darwin", 6)) {
		c->detail = xstrdup("not macOS: no SIP");
	} else {
		line = first_line(t, "csrutil status 2>&1 | head -n 1", NULL,
				  "csrutil");
		if (line && strstr(line, "disabled")) {
			c->detail = xstrdup("System Integrity Protection disabled");
		} else if (line && strstr(line, "enabled")) {
			c->detail = xstrdup("System Integrity Protection enabled");
			if (inject) {
				c->status = "warning";
				c->fix = xstrdup("SIP drops DYLD_INSERT_LIBRARIES "
						 "for protected binaries: keep "
						 "llama-bench outside /usr and "
						 "/System (Homebrew's is fine)");
			}
		} else {
			c->status = "warning";
			c->detail = xstrfmt("SIP state unknown: %s",
					    line ? line : "csrutil did not answer");
		}
		free(line);
	}
}

/* A variant's injected library (against its pin) and probe, there. */
static void
check_variant(const struct plan_target *t, const struct plan_variant *pv,
	      struct target_check **v, size_t *n)
{
	struct target_check *c;
	char have[SHA256_HEX_LEN + 1], *line;

	if (pv->inject_lib) {
		c = add(v, n, xstrfmt("shim(%s)", pv->name), "ok");
		error_silent++;
		if (target_sha256(NULL, t, pv->inject_lib, have) < 0) {
			c->status = "missing";
			c->detail = xstrfmt("'%s' cannot be read there",
					    pv->inject_lib);
			c->fix = xstrfmt("shimbench shim install PLAN %s "
					 "build/shim/LumeMetalCapabilities."
					 "dylib", pv->name);
		} else if (strcasecmp(have, pv->inject_sha256)) {
			c->status = "mismatch";
			c->detail = xstrfmt("'%s' has SHA-256 %s; the plan "
					    "pins %s", pv->inject_lib,
					    have, pv->inject_sha256);
			c->fix = xstrfmt("install the pinned build, or pin "
					 "this one: shimbench shim install "
					 "(or shim pin) PLAN %s DYLIB",
					 pv->name);
		} else {
			c->detail = xstrfmt("'%s' SHA-256 %.12s… as "
					    "pinned", pv->inject_lib, have);
		}
		error_silent--;
	}
	if (pv->probe_argv) {
		c = add(v, n, xstrfmt("probe(%s)", pv->name), "ok");
		line = first_line(t, "test -x \"$1\" && echo yes",
				  pv->probe_argv[0], "probe");
		if (line && !strcmp(line, "yes")) {
			c->detail = xstrfmt("'%s' is there",
					    pv->probe_argv[0]);
		} else {
			c->status = "missing";
			c->detail = xstrfmt("'%s' is not an executable "
					    "there", pv->probe_argv[0]);
			c->fix = xstrfmt("shimbench shim install --probe "
					 "build/shim/metal-capabilities "
					 "PLAN %s DYLIB", pv->name);
		}
		free(line);
	}
}

void
target_doctor(const struct plan *p, const struct plan_target *t,
	      struct target_check **v, size_t *n)
{
	const char *prog = !strcmp(t->transport, "ssh") ? "ssh" :
		!strcmp(t->transport, "lume") ? "lume" :
		!strcmp(t->transport, "tart") ? "tart" : NULL;
	struct target_check *c;
	char *uname = NULL, *line;
	int llama = 0, mlx = 0, inject = 0;
	size_t i;

	if (prog) {
		c = add(v, n, xstrdup(prog), "ok");
		if (!on_path(prog)) {
			c->status = "missing";
			c->detail = xstrfmt("'%s' not on PATH", prog);
			c->fix = xstrdup(!strcmp(prog, "lume") ?
				"install Lume (the cua project's lume CLI) and put it on PATH" :
				!strcmp(prog, "tart") ?
				"brew install cirruslabs/cli/tart" :
				"install the OpenSSH client");
			return;
		}
		c->detail = xstrfmt("'%s' found", prog);
	}
	if (prog && strcmp(prog, "ssh")) {
		c = add(v, n, xstrdup("vm"), "ok");
		if (vm_state(t, c) != 1) {
			c->status = "error";
			return;
		}
	}
	c = add(v, n, xstrdup("reachable"), "ok");
	uname = first_line(t, "uname -sm", NULL, "reaching the target");
	if (!uname) {
		c->status = "error";
		c->detail = xstrfmt("cannot run a command on target '%s': %s",
				    t->name, error_last());
		c->fix = xstrdup(!strcmp(t->transport, "ssh") ?
			"check host, user, port and keys (ssh -o BatchMode=yes "
			"must log in without a password)" :
			"check the VM's user and that its ssh (lume) or guest "
			"agent (tart) answers");
		return;
	}
	c->detail = xstrfmt("%s (%s)", transport_is_remote(t) ?
			    "commands run there" : "this machine", uname);
	for (i = 0; i < p->nmodels; i++)
		if (runs_model(p, t, i)) {
			if (plan_model_mlx(p, i))
				mlx = 1;
			else
				llama = 1;
		}
	for (i = 0; i < p->nvariants; i++)
		inject |= !strcmp(p->variants[i].target, t->name) &&
			p->variants[i].inject_lib != NULL;
	check_sip(t, uname, inject, v, n);
	if (llama)
		check_program(p, t, 0, v, n);
	if (mlx)
		check_program(p, t, 1, v, n);
	for (i = 0; i < p->nvariants; i++)
		if (!strcmp(p->variants[i].target, t->name))
			check_variant(t, &p->variants[i], v, n);
	for (i = 0; i < p->nmodels; i++) {
		const struct plan_model *m = &p->models[i];

		if (!runs_model(p, t, i) || plan_model_mlx(p, i))
			continue;
		c = add(v, n, xstrfmt("model(%s)", m->name), "ok");
		line = first_line(t, "test -r \"$1\" && echo yes", m->path,
				  "model");
		if (line && !strcmp(line, "yes")) {
			c->detail = xstrfmt("'%s' is there (run hashes it)",
					    m->path);
		} else {
			c->status = "missing";
			c->detail = xstrfmt("'%s' cannot be read there", m->path);
			c->fix = transport_is_remote(t) ?
				xstrfmt("copy the model to '%s' on target '%s'",
					m->path, t->name) :
				xstrfmt("shimbench models fetch %s (or models "
					"synth for a synthetic one)", m->name);
		}
		free(line);
	}
	free(uname);
}

void
target_checks_free(struct target_check *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].detail);
		free(v[i].fix);
	}
	free(v);
}
