#define _POSIX_C_SOURCE 200809L
#include "models/fetch.h"
#include "models/hash.h"
#include "models/manifest.h"
#include "base/files.h"
#include "base/proc.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct attempt {
	const struct fetch_opts *o;
	const char *name, *part;
	int64_t total;
	uint64_t start;
	double t0;
	int n;
};

static uint64_t
size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void
tick(void *ctx)
{
	struct attempt *a = ctx;
	struct fetch_progress p = { 0 };
	double dt = mono_now() - a->t0;

	p.name = a->name;
	p.have = size_of(a->part);
	p.total = a->total;
	p.resumed_at = a->start;
	p.attempt = a->n;
	p.rate = dt > 0 && p.have > a->start ?
		(double)(p.have - a->start) / dt : 0;
	a->o->progress(a->o->progress_ctx, &p);
}

/* curl's exit codes after which the transfer is worth resuming. */
static int
resumable(int code)
{
	switch (code) {
	case 7:   /* could not connect */
	case 18:  /* partial file: the transfer was cut */
	case 28:  /* timed out, or slower than --speed-limit */
	case 35:  /* TLS handshake failed */
	case 52:  /* empty reply */
	case 55:  /* send error */
	case 56:  /* receive error */
	case 92:  /* HTTP/2 stream error */
		return 1;
	}
	return 0;
}

static void
pause_for(double seconds)
{
	struct timespec ts;

	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !proc_interrupted())
		;
}

/* curl's last stderr line, trimmed, into b. */
static void
last_line(const struct buf *err, struct buf *b)
{
	size_t end = err->len, start;

	while (end && (err->buf[end - 1] == '\n' || err->buf[end - 1] == '\r'))
		end--;
	start = end;
	while (start && err->buf[start - 1] != '\n')
		start--;
	buf_add(b, err->buf + start, end - start);
}

/*
 * One curl run into part. Returns 0 when it completed, 1 when it should
 * be tried again (*fresh: without the partial file), -1 after error().
 */
static int
curl_once(const struct manifest_model *mm, const struct fetch_opts *o,
	  const char *url, const char *part, int n, int *fresh)
{
	char ua[64];
	const char *argv[] = {
		o->curl ? o->curl : "curl", "--fail", "--location", "--silent",
		"--show-error", "--proto", "=http,https", "--proto-redir",
		"=http,https", "--connect-timeout", "30", "--speed-limit", "1024",
		"--speed-time", "60", "--user-agent", ua, "--continue-at", "-",
		"--output", part, "--", url, NULL,
	};
	struct attempt a = { o, mm->name, part, mm->size, size_of(part),
			     mono_now(), n };
	struct proc p = PROC_INIT;
	struct buf why = BUF_INIT;
	int ret = -1;

	snprintf(ua, sizeof(ua), "shimbench/%s", SHIMBENCH_VERSION);
	p.argv = argv;
	p.mem_cap = 64 << 10;
	if (o->progress) {
		p.tick = tick;
		p.tick_ctx = &a;
	}
	*fresh = 0;
	if (proc_run(&p) < 0 && !p.exec_errno)
		goto cleanup;
	if (p.exec_errno) {
		error("cannot run '%s': %s; install curl (Debian: apt-get "
		      "install curl; macOS ships it)", argv[0],
		      strerror(p.exec_errno));
		goto cleanup;
	}
	if (p.status == 0) {
		ret = 0;
		goto cleanup;
	}
	last_line(&p.err, &why);
	if (!why.len)
		proc_describe(&p, &why);
	if (p.interrupted) {
		error("downloading '%s' was interrupted; '%s' is kept and the "
		      "next fetch resumes it", mm->name, part);
	} else if (p.exit_code == 33) {
		/* the server ignores Range: start over */
		*fresh = 1;
		ret = 1;
	} else if (p.exit_code == 22 && strstr(why.buf, "416")) {
		/* nothing left to fetch: the .part is whole (or wrong) */
		ret = 0;
	} else if (p.exit_code > 0 && resumable(p.exit_code)) {
		warning("downloading '%s' stopped at %llu bytes: %s", mm->name,
			(unsigned long long)size_of(part), why.buf);
		ret = 1;
	} else {
		error("downloading '%s' from %s failed: %s", mm->name, url,
		      why.buf);
	}
cleanup:
	buf_release(&why);
	proc_release(&p);
	return ret;
}

/* Size and SHA-256 of the complete part; deleted when they differ. */
static int
verify_part(const struct manifest_model *mm, const char *url,
	    const char *part, struct fetch_result *res)
{
	uint64_t have = size_of(part);

	if (mm->size >= 0 && have != (uint64_t)mm->size) {
		unlink(part);
		error("'%s' downloaded from %s is %llu bytes; the manifest's "
		      "'%s' is %lld bytes; the download was deleted", part, url,
		      (unsigned long long)have, mm->name, (long long)mm->size);
		return FETCH_MISMATCH;
	}
	if (hash_file_sha256(part, res->sha256) < 0)
		return FETCH_ENV;
	if (strcmp(res->sha256, mm->sha256)) {
		unlink(part);
		error("'%s' downloaded from %s has SHA-256 %s; the manifest's "
		      "'%s' pins %s; the download was deleted", part, url,
		      res->sha256, mm->name, mm->sha256);
		return FETCH_MISMATCH;
	}
	res->bytes = have;
	return 0;
}

int
fetch_model(const struct manifest_model *mm, const struct fetch_opts *o,
	    struct fetch_result *res)
{
	char *part = NULL, *dir = NULL, *slash;
	int ret = FETCH_ENV, rc = 1, fresh = 0, n;

	memset(res, 0, sizeof(*res));
	res->url = manifest_model_url(mm, o->base_url);
	if (!res->url || !mm->file) {
		error("model '%s' has no download source in the manifest "
		      "(repository, revision and file, or url)%s", mm->name,
		      mm->synth_shape ? "; it is synthetic: make it with "
		      "'shimbench models synth'" : "");
		return FETCH_NO_SOURCE;
	}
	if (!mm->sha256) {
		error("model '%s' pins no SHA-256 in the manifest; refusing to "
		      "download what cannot be verified", mm->name);
		return FETCH_NO_SOURCE;
	}
	res->path = manifest_model_path(mm, o->dir);
	if (file_exists(res->path)) {
		if (hash_file_sha256(res->path, res->sha256) < 0)
			return FETCH_ENV;
		if (strcmp(res->sha256, mm->sha256)) {
			error("'%s' exists but has SHA-256 %s, not the "
			      "manifest's %s; move it away to download '%s' "
			      "again", res->path, res->sha256, mm->sha256,
			      mm->name);
			return FETCH_MISMATCH;
		}
		res->present = 1;
		res->bytes = size_of(res->path);
		return 0;
	}
	dir = xstrdup(res->path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir_p(dir) < 0)
			goto cleanup;
	}
	part = xstrfmt("%s.part", res->path);
	res->resumed_at = size_of(part);
	/* An earlier attempt may have finished the file already. */
	if (mm->size >= 0 && res->resumed_at > (uint64_t)mm->size) {
		unlink(part);
		res->resumed_at = 0;
	}
	if (mm->size >= 0 && res->resumed_at == (uint64_t)mm->size)
		rc = 0;
	for (n = 1; rc == 1 && n <= 1 + (o->retries > 0 ? o->retries : 0);
	     n++) {
		if (n > 1)
			pause_for(o->retry_delay * (n - 1));
		if (fresh)
			unlink(part);
		res->attempts = n;
		rc = curl_once(mm, o, res->url, part, n, &fresh);
	}
	if (rc < 0)
		goto cleanup;
	if (rc == 1) {
		error("downloading '%s' failed after %d attempts; '%s' is kept "
		      "and the next fetch resumes it", mm->name, res->attempts,
		      part);
		goto cleanup;
	}
	ret = verify_part(mm, res->url, part, res);
	if (ret < 0)
		goto cleanup;
	if (rename(part, res->path) < 0) {
		ret = error("cannot rename '%s' to '%s': %s", part, res->path,
			    strerror(errno));
		goto cleanup;
	}
	ret = 0;
cleanup:
	free(part);
	free(dir);
	return ret;
}

void
fetch_result_release(struct fetch_result *res)
{
	free(res->path);
	free(res->url);
	memset(res, 0, sizeof(*res));
}
