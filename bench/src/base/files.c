#define _GNU_SOURCE            /* fopencookie */
#define _XOPEN_SOURCE 700
#if defined(__APPLE__)
#define _DARWIN_C_SOURCE
#endif
#include "base/files.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* ---- protected files ------------------------------------------------------- */

/*
 * Files no output may replace or write into: the store and its WAL,
 * shared-memory and journal files. Kept by device and inode when the
 * file exists, and by absolute name (for the side files made later).
 */
struct protected_file {
	dev_t dev;
	ino_t ino;
	int have_ino;
	char *name;          /* absolute, directory resolved */
	char *what;
};
static struct protected_file *protected;
static size_t nprotected;

/* path with its directory resolved (the file itself need not exist). */
static char *
resolve_dir_of(const char *path)
{
	char *copy = xstrdup(path), *slash = strrchr(copy, '/'), *dir, *ret;
	char real[PATH_MAX];
	const char *base;

	if (slash) {
		*slash = '\0';
		dir = copy[0] ? copy : "/";
		base = slash + 1;
	} else {
		dir = ".";
		base = copy;
	}
	ret = realpath(dir, real) ?
		xstrfmt("%s/%s", strcmp(real, "/") ? real : "", base) :
		xstrdup(path);
	free(copy);
	return ret;
}

/* by_inode: the file is also known by its inode (not for a file that is
 * replaced by rename, whose old inode another file may get). */
static void
protect_one(const char *path, const char *what, int by_inode)
{
	struct protected_file *p;
	struct stat st;

	protected = xrealloc(protected, (nprotected + 1) * sizeof(*p));
	p = &protected[nprotected++];
	memset(p, 0, sizeof(*p));
	if (by_inode && stat(path, &st) == 0) {
		p->dev = st.st_dev;
		p->ino = st.st_ino;
		p->have_ino = 1;
	}
	p->name = resolve_dir_of(path);
	p->what = xstrdup(what);
}

void
files_protect(const char *path, const char *what)
{
	static const char *const sides[] = { "-wal", "-shm", "-journal",
					     "-verified" };
	size_t i;

	if (!path || !*path)
		return;
	protect_one(path, what, 1);
	for (i = 0; i < ARRAY_SIZE(sides); i++) {
		char *side = xstrfmt("%s%s", path, sides[i]);
		char *of = xstrfmt("a file of %s", what);
		protect_one(side, of, strcmp(sides[i], "-verified") != 0);
		free(side);
		free(of);
	}
}

/* -1 after error() when path (existing or not) is a protected file. */
static int
check_protected(const char *path)
{
	struct stat st;
	int have = stat(path, &st) == 0;
	char *name = NULL;
	size_t i;
	int ret = 0;

	for (i = 0; i < nprotected && !ret; i++) {
		const struct protected_file *p = &protected[i];

		if (have && p->have_ino && st.st_dev == p->dev &&
		    st.st_ino == p->ino)
			ret = -1;
		if (!ret) {
			if (!name)
				name = resolve_dir_of(path);
			if (!strcmp(name, p->name))
				ret = -1;
		}
		if (ret)
			error("'%s' is %s; refusing to write over it", path,
			      p->what);
	}
	free(name);
	return ret;
}

/* ---- writing outputs --------------------------------------------------------- */

int
write_all(int fd, const char *what, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return error("cannot write '%s': %s", what,
				     strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The descriptor a path names when it is one of this process's own
 * streams (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), else -1.
 * Writing there goes to the descriptor itself: reopening the path would
 * start at offset 0 or replace the file the shell redirected into.
 */
static int
own_fd(const char *path)
{
	static const char *const prefixes[] = {
		"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/",
	};
	char pid[64];
	long fd;
	size_t i;

	if (!strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	snprintf(pid, sizeof(pid), "/proc/%ld/fd/", (long)getpid());
	for (i = 0; i <= ARRAY_SIZE(prefixes); i++) {
		const char *pre = i < ARRAY_SIZE(prefixes) ? prefixes[i] : pid;
		size_t n = strlen(pre);

		if (!strncmp(path, pre, n) && parse_long(path + n, &fd) == 0 &&
		    fd >= 0 && fd < 1 << 20)
			return (int)fd;
	}
	return -1;
}

/*
 * Follows path's symbolic links to the name they end at (which need not
 * exist). Returns an allocated path, or NULL after error() for a loop.
 */
static char *
follow_links(const char *path)
{
	char *cur = xstrdup(path);
	int hops;

	for (hops = 0; hops < 40; hops++) {
		char target[PATH_MAX], *slash, *next;
		struct stat st;
		ssize_t n;

		if (own_fd(cur) >= 0 || lstat(cur, &st) < 0 ||
		    !S_ISLNK(st.st_mode))
			return cur;
		n = readlink(cur, target, sizeof(target) - 1);
		if (n < 0) {
			error("cannot read the link '%s': %s", cur,
			      strerror(errno));
			free(cur);
			return NULL;
		}
		target[n] = '\0';
		slash = strrchr(cur, '/');
		if (target[0] == '/' || !slash)
			next = xstrdup(target);
		else
			next = xstrfmt("%.*s/%s", (int)(slash - cur), cur,
				       target);
		free(cur);
		cur = next;
	}
	error("'%s': too many levels of symbolic links", path);
	free(cur);
	return NULL;
}

/*
 * Writes to a descriptor that is not a regular file: on a terminal with
 * control characters shown, never obeyed (buf_add_term_safe()).
 */
static int
write_stream(int fd, const char *what, const void *data, size_t len)
{
	struct buf safe = BUF_INIT;
	int ret;

	if (!isatty(fd))
		return write_all(fd, what, data, len);
	buf_add_term_safe(&safe, data, len);
	ret = write_all(fd, what, safe.buf, safe.len);
	buf_release(&safe);
	return ret;
}

/*
 * Writes through an existing FIFO, character device or terminal. Opened
 * without blocking: a FIFO nobody reads would otherwise hang the command
 * forever in open(); with no reader it is refused (ENXIO). Once open,
 * writes block as usual (the reader sets the pace).
 */
static int
write_through(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK), ret;
	int flags;

	if (fd < 0 && errno == ENXIO)
		return error("'%s' is a FIFO that nobody reads; start its "
			     "reader first (or write to a file, or '-' for "
			     "stdout)", path);
	if (fd < 0)
		return error("cannot open '%s' for writing: %s", path,
			     strerror(errno));
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		ret = error("cannot write '%s': %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	ret = write_stream(fd, path, data, len);
	if (close(fd) < 0 && ret == 0 && errno != EINTR)
		ret = error("cannot write '%s': %s", path, strerror(errno));
	return ret;
}

/*
 * Replaces the regular file (or the absent name) path: a new file in the
 * same directory, written, flushed to disk and renamed over it. An
 * existing file keeps its permission bits.
 */
static int
replace_file(const char *path, const struct stat *old, const void *data,
	     size_t len)
{
	const char *slash = strrchr(path, '/');
	char *tmp;
	mode_t mask;
	int fd, rc, ret = -1;

	tmp = slash ? xstrfmt("%.*s/.%s.XXXXXX", (int)(slash - path), path,
			      slash + 1) :
		xstrfmt(".%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		error("cannot create a file beside '%s': %s", path,
		      strerror(errno));
		free(tmp);
		return -1;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, old ? old->st_mode & 07777 : 0666 & ~mask) < 0) {
		error("cannot write '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (write_all(fd, path, data, len) < 0)
		goto fail;
	if (fsync(fd) < 0) {
		error("cannot write '%s': %s", path, strerror(errno));
		goto fail;
	}
	rc = close(fd);
	fd = -1;
	if (rc < 0) {
		error("cannot write '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		error("cannot write '%s': %s", path, strerror(errno));
		goto fail;
	}
	ret = 0;
fail:
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		unlink(tmp);
	free(tmp);
	return ret;
}

int
write_file_atomic(const char *path, const void *data, size_t len)
{
	struct stat st;
	char *real;
	int fd, ret = -1;

	if (!*path)
		return error("an empty output path");
	if (check_protected(path) < 0)
		return -1;
	fd = !strcmp(path, "-") ? 1 : own_fd(path);
	if (fd >= 0) {
		if (fd == 1)
			fflush(stdout);
		return write_stream(fd, path, data, len);
	}
	real = follow_links(path);
	if (!real)
		return -1;
	if ((fd = own_fd(real)) >= 0) {
		if (fd == 1)
			fflush(stdout);
		ret = write_stream(fd, path, data, len);
	} else if (check_protected(real) < 0) {
		ret = -1;
	} else if (lstat(real, &st) < 0) {
		ret = errno == ENOENT ? replace_file(real, NULL, data, len) :
			error("cannot write '%s': %s", path, strerror(errno));
	} else if (S_ISREG(st.st_mode)) {
		ret = replace_file(real, &st, data, len);
	} else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		ret = write_through(real, data, len);
	} else {
		ret = error("'%s' is %s; refusing to write there", path,
			    S_ISDIR(st.st_mode) ? "a directory" :
			    S_ISBLK(st.st_mode) ? "a block device" :
			    S_ISSOCK(st.st_mode) ? "a socket" :
			    "not a regular file");
	}
	free(real);
	return ret;
}

/* 1 for ".NAME.XXXXXX" as replace_file()'s mkstemp() names it. */
static int
is_write_temp(const char *name)
{
	size_t n = strlen(name), i;

	if (n < 9 || name[0] != '.' || name[n - 7] != '.')
		return 0;
	for (i = n - 6; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9')))
			return 0;
	return 1;
}

static int
remove_temps_in(const char *dir, int depth)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!dh)
		return errno == ENOENT || errno == ENOTDIR ? 0 :
			error("cannot open '%s': %s", dir, strerror(errno));
	while ((e = readdir(dh))) {
		char *path;
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path = xstrfmt("%s/%s", dir, e->d_name);
		if (lstat(path, &st) < 0) {
			free(path);
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth < 4) {
			if (remove_temps_in(path, depth + 1) < 0)
				ret = -1;
		} else if (S_ISREG(st.st_mode) && is_write_temp(e->d_name) &&
			   unlink(path) < 0) {
			ret = error("cannot remove '%s': %s", path,
				    strerror(errno));
		}
		free(path);
	}
	closedir(dh);
	return ret;
}

int
remove_write_temps(const char *dir)
{
	return remove_temps_in(dir, 0);
}

int
mkdir_p(const char *dir)
{
	char *p, *copy = xstrdup(dir);
	int ret = 0;

	for (p = copy + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(copy, 0777) < 0 && errno != EEXIST) {
				ret = error("cannot create directory '%s': %s",
					    copy, strerror(errno));
				break;
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	free(copy);
	if (ret == 0 && !dir_exists(dir))
		ret = error("'%s' exists and is not a directory", dir);
	return ret;
}

int
file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int
dir_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *
tool_exe_dir(void)
{
	char path[PATH_MAX], real[PATH_MAX], *slash;

#if defined(__APPLE__)
	uint32_t size = sizeof(path);

	if (_NSGetExecutablePath(path, &size) != 0)
		return NULL;
#else
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		return NULL;
	path[n] = '\0';
#endif
	if (!realpath(path, real))
		return NULL;
	slash = strrchr(real, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return xstrdup(real[0] ? real : "/");
}

char *
tool_data_path(const char *rel)
{
	const char *base = strrchr(rel, '/');
	char *dir, *p;

	if (file_exists(rel))
		return xstrdup(rel);
	dir = tool_exe_dir();
	if (dir) {
		p = xstrfmt("%s/../%s", dir, rel);
		if (file_exists(p)) {
			free(dir);
			return p;
		}
		free(p);
		p = xstrfmt("%s/../share/shimbench/%s", dir,
			    base ? base + 1 : rel);
		if (file_exists(p)) {
			free(dir);
			return p;
		}
		free(p);
		free(dir);
	}
	return xstrdup(rel);
}

int
dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return errno == ENOENT ? 1 : -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

/* ---- terminals ----------------------------------------------------------- */

struct term_guard {
	int fd;
	int pending;      /* a 0xc2 byte held back: it may start a C1 control */
};

static ssize_t
guard_write(void *cookie, const char *data, size_t len)
{
	struct term_guard *g = cookie;
	struct buf in = BUF_INIT, out = BUF_INIT;
	ssize_t ret = (ssize_t)len;

	if (g->pending)
		buf_addch(&in, 0xc2);
	buf_add(&in, data, len);
	g->pending = in.len && (unsigned char)in.buf[in.len - 1] == 0xc2;
	buf_add_term_safe(&out, in.buf, in.len - (size_t)g->pending);
	if (write_all(g->fd, "the terminal", out.buf, out.len) < 0)
		ret = -1;
	buf_release(&in);
	buf_release(&out);
	return ret;
}

static int
guard_close(void *cookie)
{
	struct term_guard *g = cookie;

	if (g->pending)
		(void)write_all(g->fd, "the terminal", "\xc2", 1);
	g->pending = 0;
	return 0;
}

#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
	defined(__NetBSD__)
static int
guard_write_bsd(void *cookie, const char *data, int len)
{
	return (int)guard_write(cookie, data, (size_t)len);
}
#endif

FILE *
term_guard(FILE *fp)
{
	/* Static: the guarded streams live until exit, which does not close
	 * them (a malloc'd cookie was a leak LeakSanitizer reported). */
	static struct term_guard slots[4];
	static size_t nslots;
	struct term_guard *g;
	FILE *guarded = NULL;

	if (!isatty(fileno(fp)) || nslots == ARRAY_SIZE(slots))
		return fp;
	fflush(fp);
	g = &slots[nslots++];
	memset(g, 0, sizeof(*g));
	g->fd = fileno(fp);
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
	defined(__NetBSD__)
	guarded = funopen(g, NULL, guard_write_bsd, NULL, guard_close);
#elif defined(__GLIBC__) || defined(_GNU_SOURCE)
	{
		cookie_io_functions_t io = { NULL, guard_write, NULL,
					     guard_close };
		guarded = fopencookie(g, "w", io);
	}
#endif
	if (!guarded) {
		nslots--;
		return fp;
	}
	setvbuf(guarded, NULL, _IOLBF, 0);
	return guarded;
}

/* ---- the PATH lookup ------------------------------------------------------------- */

/* The search list when PATH is unset (what execvp() uses then). */
static char *
default_path(void)
{
#ifdef _CS_PATH
	size_t n = confstr(_CS_PATH, NULL, 0);

	if (n > 1) {
		char *p = xmalloc(n);

		if (confstr(_CS_PATH, p, n) == n && *p)
			return p;
		free(p);
	}
#endif
	return xstrdup("/usr/bin:/bin");
}

char *
path_search(const char *name, const char *path, const char *cwd, int *err)
{
	char *own = NULL, *found = NULL;
	const char *p, *end;
	int seen = 0;

	if (err)
		*err = ENOENT;
	if (!name || !*name)
		return NULL;
	if (strchr(name, '/'))
		return xstrdup(name);
	if (!path)
		path = own = default_path();
	for (p = path; !found; p = end + 1) {
		struct stat st;
		char *cand, *at;

		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		cand = end == p ? xstrfmt("./%s", name) :
			xstrfmt("%.*s/%s", (int)(end - p), p, name);
		/* where the check looks: a relative entry inside cwd */
		at = cwd && cand[0] != '/' ? xstrfmt("%s/%s", cwd, cand) : cand;
		if (stat(at, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(at, X_OK) == 0)
				found = cand;
			else
				seen = 1;
		}
		if (at != cand)
			free(at);
		if (!found)
			free(cand);
		if (!*end)
			break;
	}
	if (!found && seen && err)
		*err = EACCES;
	free(own);
	return found;
}

char *
path_find(const char *name)
{
	return path_search(name, getenv("PATH"), NULL, NULL);
}
