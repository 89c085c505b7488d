/*
 * A full disk for the tests, where mounting a small file system is not
 * allowed: loaded through LD_PRELOAD, it makes write(), pwrite() and
 * writev() on files under $SHIMBENCH_TEST_ENOSPC_DIR fail with ENOSPC
 * once $SHIMBENCH_TEST_ENOSPC_BYTES bytes (default 0) have been written
 * there by this process, as a real file system that fills up would; a
 * write that crosses the limit is cut short, as on a real disk. It takes
 * LD_PRELOAD out of the environment, so children run without it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *dir;
static size_t dirlen;
static long long budget;

__attribute__((constructor)) static void
init(void)
{
	const char *b = getenv("SHIMBENCH_TEST_ENOSPC_BYTES");

	dir = getenv("SHIMBENCH_TEST_ENOSPC_DIR");
	dirlen = dir ? strlen(dir) : 0;
	budget = b ? atoll(b) : 0;
	unsetenv("LD_PRELOAD");
}

/* 1 when fd is a file under the full directory. */
static int
watched(int fd)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (!dirlen)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	return !strncmp(path, dir, dirlen) &&
	       (path[dirlen] == '/' || path[dirlen] == '\0');
}

/* How many of len bytes may still be written to fd; -1: none (ENOSPC). */
static ssize_t
allow(int fd, size_t len)
{
	if (!len || !watched(fd))
		return (ssize_t)len;
	if (budget <= 0) {
		errno = ENOSPC;
		return -1;
	}
	if ((long long)len > budget)
		len = (size_t)budget;
	budget -= (long long)len;
	return (ssize_t)len;
}

ssize_t
write(int fd, const void *buf, size_t len)
{
	static ssize_t (*real)(int, const void *, size_t);
	ssize_t n = allow(fd, len);

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t))
			dlsym(RTLD_NEXT, "write");
	return n < 0 ? -1 : real(fd, buf, (size_t)n);
}

ssize_t
pwrite(int fd, const void *buf, size_t len, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);
	ssize_t n = allow(fd, len);

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t, off_t))
			dlsym(RTLD_NEXT, "pwrite");
	return n < 0 ? -1 : real(fd, buf, (size_t)n, off);
}

ssize_t
pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	return pwrite(fd, buf, len, off);
}

ssize_t
writev(int fd, const struct iovec *iov, int cnt)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	size_t len = 0;
	int i;

	if (!real)
		real = (ssize_t (*)(int, const struct iovec *, int))
			dlsym(RTLD_NEXT, "writev");
	for (i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	if (watched(fd)) {
		/* simplest honest form: all of it fits, or nothing is written */
		if ((long long)len > budget) {
			budget = 0;
			errno = ENOSPC;
			return -1;
		}
		budget -= (long long)len;
	}
	return real(fd, iov, cnt);
}
