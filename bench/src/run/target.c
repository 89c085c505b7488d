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

/*
 * Runs argv on target t (no extra environment) and appends its stdout to
 * out. 0, or -1 after error() naming what failed (what) and where.
 */
static int
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
	p.hold_stdin = tc.hold_stdin;
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
	/* The file on stdin: the tools escape a name with a newline or a
	 * backslash in their output ("\\HASH  name"), a stream has none. */
	const char *argv[] = {
		"/bin/sh", "-c",
		"if command -v sha256sum >/dev/null 2>&1; then sha256sum <\"$1\"; "
		"else shasum -a 256 <\"$1\"; fi", "sh", path, NULL,
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
target_fingerprint(const struct plan_target *t, int gpu,
		   struct fingerprint *fp, char ***warnings, size_t *nwarn)
{
	struct buf script = BUF_INIT, out = BUF_INIT;
	const char *argv[] = { "/bin/sh", "-c", NULL, NULL };
	int ret = -1;

	/*
	 * Here on Linux, the base probe's files are read in this process
	 * (no shell: most of a session's fixed cost was that shell); the
	 * GPU lines, when wanted, still come from the snippet's programs.
	 * Elsewhere one shell runs both, the GPU lines after the base's.
	 */
	if (!transport_is_remote(t) && fingerprint_probe_here(&out) == 0) {
		if (gpu)
			buf_adds(&script, fingerprint_gpu_probe_script);
	} else {
		buf_adds(&script, fingerprint_probe_script);
		if (gpu)
			buf_adds(&script, fingerprint_gpu_probe_script);
	}
	argv[2] = script.buf;
	if (!script.len ||
	    target_capture(t, argv, 60, "fingerprint probe", &out) == 0) {
		fingerprint_from_probe(fp, out.buf, out.len, warnings, nwarn);
		ret = 0;
	}
	buf_release(&script);
	buf_release(&out);
	return ret;
}

int
target_fingerprint_gpu(const struct plan_target *t, struct fingerprint *fp)
{
	const char *argv[] = { "/bin/sh", "-c", fingerprint_gpu_probe_script,
			       NULL };
	struct buf out = BUF_INIT;
	int ret = -1;

	if (target_capture(t, argv, 60, "GPU probe", &out) == 0)
		ret = fingerprint_add_gpu_probe(fp, out.buf, out.len);
	buf_release(&out);
	return ret;
}

/*
 * The network address of a remote target, for scp (its transport's
 * address hook: ssh's host; lume's `lume get VM -f json` ipAddress;
 * tart's `tart ip VM`). *addr is malloc'd. 0, or -1 after error() (a
 * local target, the VM is not running, no address).
 */
static int
target_address(const struct plan_target *t, char **addr)
{
	*addr = NULL;
	if (!t->tp->address)
		return error("target '%s' is %s: it has no address", t->name,
			     t->tp->name);
	return t->tp->address(t, addr);
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
		user = t->tp->default_user;
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
	if (transport_host_run((const char *const *)argv, NULL, 600, "copying",
			       NULL) < 0)
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
add(struct target_check **v, size_t *n, char *name, enum check_status status)
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
	char *p = path_find(name);
	int found = p != NULL;

	free(p);
	return found;
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
						   "llama-bench"), CHECK_OK);
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
	c->status = CHECK_MISSING;
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

	c = add(v, n, xstrdup("sip"), CHECK_OK);
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
				c->status = CHECK_WARNING;
				c->fix = xstrdup("SIP drops DYLD_INSERT_LIBRARIES "
						 "for protected binaries: keep "
						 "llama-bench outside /usr and "
						 "/System (Homebrew's is fine)");
			}
		} else {
			c->status = CHECK_WARNING;
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
		c = add(v, n, xstrfmt("shim(%s)", pv->name), CHECK_OK);
		error_silent++;
		if (target_sha256(NULL, t, pv->inject_lib, have) < 0) {
			c->status = CHECK_MISSING;
			c->detail = xstrfmt("'%s' cannot be read there",
					    pv->inject_lib);
			c->fix = xstrfmt("shimbench shim install PLAN %s "
					 "build/shim/LumeMetalCapabilities."
					 "dylib", pv->name);
		} else if (strcasecmp(have, pv->inject_sha256)) {
			c->status = CHECK_MISMATCH;
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
		c = add(v, n, xstrfmt("probe(%s)", pv->name), CHECK_OK);
		line = first_line(t, "test -x \"$1\" && echo yes",
				  pv->probe_argv[0], "probe");
		if (line && !strcmp(line, "yes")) {
			c->detail = xstrfmt("'%s' is there",
					    pv->probe_argv[0]);
		} else {
			c->status = CHECK_MISSING;
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
	const struct transport *tp = t->tp;
	struct target_check *c;
	char *uname = NULL, *line;
	int llama = 0, mlx = 0, inject = 0;
	size_t i;

	if (tp->program) {
		c = add(v, n, xstrdup(tp->program), CHECK_OK);
		if (!on_path(tp->program)) {
			c->status = CHECK_MISSING;
			c->detail = xstrfmt("'%s' not on PATH", tp->program);
			c->fix = xstrdup(tp->program_fix);
			return;
		}
		c->detail = xstrfmt("'%s' found", tp->program);
	}
	if (tp->vm_state) {
		c = add(v, n, xstrdup("vm"), CHECK_OK);
		if (tp->vm_state(t, &c->detail, &c->fix) != 1) {
			c->status = CHECK_ERROR;
			return;
		}
	}
	c = add(v, n, xstrdup("reachable"), CHECK_OK);
	uname = first_line(t, "uname -sm", NULL, "reaching the target");
	if (!uname) {
		c->status = CHECK_ERROR;
		c->detail = xstrfmt("cannot run a command on target '%s': %s",
				    t->name, error_last());
		c->fix = xstrdup(tp->unreachable_fix);
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
		c = add(v, n, xstrfmt("model(%s)", m->name), CHECK_OK);
		line = first_line(t, "test -r \"$1\" && echo yes", m->path,
				  "model");
		if (line && !strcmp(line, "yes")) {
			c->detail = xstrfmt("'%s' is there (run hashes it)",
					    m->path);
		} else {
			c->status = CHECK_MISSING;
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

static const char *const check_names[] = {
	[CHECK_OK] = "ok",
	[CHECK_WARNING] = "warning",
	[CHECK_MISSING] = "missing",
	[CHECK_ERROR] = "error",
	[CHECK_MISMATCH] = "mismatch",
};

const char *
check_status_name(enum check_status s)
{
	return (size_t)s < ARRAY_SIZE(check_names) ? check_names[s] : "error";
}
