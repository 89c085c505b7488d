#define _POSIX_C_SOURCE 200809L
#include "run/target.h"
#include "run/plan.h"
#include "run/transport.h"
#include "evidence/fingerprint.h"
#include "evidence/hashcache.h"
#include "base/proc.h"
#include "base/util.h"

#include <string.h>

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
