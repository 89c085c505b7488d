/*
 * What both directions of a bundle share: the names of its files, the
 * identity of its evidence, and where the bundles of runs go. Reading is
 * bundleread.c, writing bundlewrite.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/bundle.h"
#include "evidence/runrec.h"
#include "models/hash.h"
#include "base/json.h"
#include "base/files.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- names ---------------------------------------------------------------- */

/* File-name-safe copy of s: letters, digits, '-', '_' and '.' only. */
static char *
safe_part(const char *s)
{
	char *c = xstrdup(s && *s ? s : "none"), *p;

	for (p = c; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789-_.", *p))
			*p = '_';
	return c;
}

void
bundle_run_paths(int seq, const char *variant, const char *model,
		 char **stdout_rel, char **stderr_rel)
{
	char *v = safe_part(variant), *m = safe_part(model);

	*stdout_rel = xstrfmt("runs/%03d-%s-%s.jsonl", seq, v, m);
	*stderr_rel = xstrfmt("runs/%03d-%s-%s.stderr", seq, v, m);
	free(v);
	free(m);
}

char *
bundle_probe_path(const char *variant)
{
	char *v = safe_part(variant), *p = xstrfmt("runs/probe-%s.out", v);

	free(v);
	return p;
}

/*
 * A bundle-relative name must stay inside the bundle: relative, no ".."
 * or "." component, no empty component, no control character.
 */
int
bundle_safe_name(const char *name)
{
	const char *p, *c;

	if (!*name || name[0] == '/' || strlen(name) > 4096)
		return 0;
	for (p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	for (c = name; c; c = strchr(c, '/')) {
		size_t len;

		if (*c == '/')
			c++;
		len = strcspn(c, "/");
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
	}
	return 1;
}

/* ---- the identity of the evidence ---------------------------------------- */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A run field's value as the store keeps it: its default when absent. */
static const char *
stored_value(const char *v, const char *key)
{
	const struct rec_field *f = rec_field_by_key(runrec_fields,
						     runrec_nfields, key);

	return v ? v : f ? f->dflt : NULL;
}

size_t
bundle_content_hash(const struct session_data *d, char hex[65])
{
	char **lines = xcalloc(d->nruns + 1, sizeof(char *));
	struct buf all = BUF_INIT;
	size_t i, n = 0;

	for (i = 0; i < d->nruns; i++) {
		const struct run_rec *r = &d->runs[i].r;
		struct buf b = BUF_INIT;

		if (!r->stdout_sha256)
			continue;
		buf_addf(&b, "run %s %s %s", r->stdout_sha256,
			 r->stderr_sha256 ? r->stderr_sha256 : "-",
			 r->probe_sha256 ? r->probe_sha256 : "-");
		/* As stored: an absent key means its default, so a mapping
		 * and the bundle exported from its session agree. */
		json_quote(&b, stored_value(r->target, "target"));
		json_quote(&b, r->variant);
		json_quote(&b, stored_value(r->role, "role"));
		json_quote(&b, r->model);
		json_quote(&b, stored_value(r->runtime, "runtime"));
		lines[n++] = buf_detach(&b, NULL);
	}
	xqsort(lines, n, sizeof(char *), cmp_str);
	buf_adds(&all, "shimbench content 1\n");
	for (i = 0; i < n; i++) {
		buf_adds(&all, lines[i]);
		buf_addch(&all, '\n');
		free(lines[i]);
	}
	free(lines);
	hash_buf_sha256(all.buf, all.len, hex);
	buf_release(&all);
	return n;
}

/* ---- where run bundles go ------------------------------------------------- */

/* This host's name as a temp directory may hold it: [A-Za-z0-9.] */
static void
host_tag(char *out, size_t size)
{
	char host[256];
	size_t i, n = 0;

	if (gethostname(host, sizeof(host)) < 0 || !*host)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	for (i = 0; host[i] && n + 1 < size && n < 40; i++) {
		char c = host[i];

		out[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '.' ? c : '_';
	}
	out[n] = '\0';
}

char *
bundle_tmpdir(const char *parent)
{
	char *tmpl, host[48];

	if (mkdir_p(parent) < 0)
		return NULL;
	host_tag(host, sizeof(host));
	tmpl = xstrfmt("%s/.run-%s-%ld-XXXXXX", parent, host, (long)getpid());
	if (!mkdtemp(tmpl)) {
		error("cannot create a directory in '%s': %s", parent,
		      strerror(errno));
		free(tmpl);
		return NULL;
	}
	return tmpl;
}

/* Removes dir and everything in it (no links followed); 0 or -1. */
static int
remove_tree(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!dh)
		return -1;
	while ((e = readdir(dh))) {
		char *path;
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path = xstrfmt("%s/%s", dir, e->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			ret |= remove_tree(path);
		else if (unlink(path) < 0)
			ret = -1;
		free(path);
	}
	closedir(dh);
	return rmdir(dir) < 0 ? -1 : ret;
}

int
bundle_clean_dead(const char *parent)
{
	DIR *dh = opendir(parent);
	struct dirent *e;
	char host[48], *prefix;
	int removed = 0;

	if (!dh)
		return 0;
	host_tag(host, sizeof(host));
	prefix = xstrfmt(".run-%s-", host);
	while ((e = readdir(dh))) {
		const char *rest = e->d_name + strlen(prefix);
		char *end, *path;
		long pid;

		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		pid = strtol(rest, &end, 10);
		/* ours looks like PID-XXXXXX; a live process keeps its own */
		if (end == rest || *end != '-' || strlen(end) != 7 || pid <= 0 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		path = xstrfmt("%s/%s", parent, e->d_name);
		if (remove_tree(path) < 0)
			warning("cannot remove '%s', the bundle directory of a "
				"dead run: %s", path, strerror(errno));
		else
			removed++;
		free(path);
	}
	closedir(dh);
	free(prefix);
	return removed;
}

char *
bundle_settle(const char *tmp, const char *parent, int64_t sid)
{
	char *name = NULL;
	int k;

	for (k = 1; k < 1000; k++) {
		free(name);
		name = k == 1 ?
			xstrfmt("%s/session-%lld", parent, (long long)sid) :
			xstrfmt("%s/session-%lld-%d", parent, (long long)sid, k);
		if (mkdir(name, 0777) < 0) {
			if (errno == EEXIST)
				continue;
			break;
		}
		/* rename() replaces the empty directory just made: ours */
		if (rename(tmp, name) == 0)
			return name;
		rmdir(name);
		break;
	}
	warning("cannot rename '%s' to a session directory: %s; the bundle "
		"stays there", tmp, strerror(errno));
	free(name);
	return xstrdup(tmp);
}
