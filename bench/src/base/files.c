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

int
write_file_atomic(const char *path, const void *data, size_t len)
{
	struct buf tmp = BUF_INIT;
	const char *p = data;
	size_t left = len;
	int fd, ret = -1;

	buf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0) {
		error("cannot create '%s': %s", tmp.buf, strerror(errno));
		goto cleanup;
	}
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			error("cannot write '%s': %s", tmp.buf,
			      strerror(errno));
			close(fd);
			unlink(tmp.buf);
			goto cleanup;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd) < 0 || rename(tmp.buf, path) < 0) {
		error("cannot write '%s': %s", path, strerror(errno));
		unlink(tmp.buf);
		goto cleanup;
	}
	ret = 0;
cleanup:
	buf_release(&tmp);
	return ret;
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
