#define _POSIX_C_SOURCE 200809L
#include "run/target.h"
#include "run/plan.h"
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
#include <sys/stat.h>

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
