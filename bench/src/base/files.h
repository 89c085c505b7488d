#ifndef BASE_FILES_H
#define BASE_FILES_H

/*
 * Files and directories: atomic writes, directory creation, existence
 * checks, and where the running executable and the data files shimbench
 * ships live. Functions returning char * return memory the caller frees.
 */

#include <stddef.h>
#include <stdio.h>

/*
 * Writes an output (a report, a chart, a bundle member) to path; 0, or
 * -1 after error(). What path is decides how:
 *  - absent or a regular file: a new file beside it, written, fsync()ed
 *    and renamed over it (readers never see half a file; an existing
 *    file keeps its permission bits);
 *  - a symbolic link: followed to where it ends, and that file is
 *    replaced in its own directory (the link stays a link);
 *  - a FIFO, character device or terminal (/dev/null, /dev/tty): written
 *    through, never replaced, whoever runs it; a FIFO with no reader is
 *    refused at once (opened non-blocking: ENXIO), never waited for;
 *  - "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written
 *    to that descriptor of this process ("-" is stdout, as everywhere);
 *  - either of the last two on a terminal: control characters shown as
 *    escapes (buf_add_term_safe()), never sent raw;
 *  - a directory, block device or socket: refused;
 *  - a file registered with files_protect() (the store): refused.
 */
int write_file_atomic(const char *path, const void *data, size_t len);
/*
 * Removes from dir and its subdirectories (runs/, charts/; links not
 * followed) the temporary files write_file_atomic() makes beside
 * the file it replaces (".NAME.XXXXXX", six letters or digits) that a
 * killed writer left behind. Call it only on a directory this command
 * owns (export --force). A missing dir is fine. 0, or -1 after error().
 */
int remove_write_temps(const char *dir);
/*
 * Registers path, and its "-wal", "-shm", "-journal" and "-verified"
 * side files, as files no write_file_atomic() may touch; what names it
 * in the refusal ("the store"). Lasts for the process.
 */
void files_protect(const char *path, const char *what);
/*
 * fp itself when it is not a terminal; otherwise a line-buffered stream
 * over the same descriptor that writes every byte through
 * buf_add_term_safe(), so labels and names from evidence files never
 * reach a terminal as escape sequences. Falls back to fp where the C
 * library has no custom streams.
 */
FILE *term_guard(FILE *fp);
/* Creates dir and its parents (mode 0777 & umask); 0 / -1. */
int mkdir_p(const char *dir);
/* Returns 1 when path exists as a regular file, 0 otherwise. */
int file_exists(const char *path);
/* Returns 1 when path is a directory. */
int dir_exists(const char *path);
/* 1 when dir is empty or does not exist, 0 when it holds an entry,
 * -1 when it cannot be read. */
int dir_is_empty(const char *dir);
/* Writes all of data to fd, going on after EINTR and short writes; 0, or
 * -1 after error("cannot write 'WHAT': ..."). */
int write_all(int fd, const char *what, const void *data, size_t len);

/*
 * The one PATH lookup (doctor, run, tools, charts, child processes all use
 * it, so what one finds the others find). The rule is POSIX's execvp():
 *  - a name holding a '/' is not searched: it is returned as it is;
 *  - otherwise each entry of path (the value of PATH) is tried in order,
 *    and an empty entry (a leading or trailing ':', "::", or PATH set to
 *    "") means the current directory, found as "./NAME";
 *  - path NULL (PATH unset) searches the system's default path
 *    (confstr(_CS_PATH), else "/usr/bin:/bin").
 * A candidate counts when it is a regular file this process may execute.
 * Relative entries are looked up in cwd (NULL: the current directory; a
 * child that changes directory before it executes passes its own) and
 * come back relative, as the child will execute them. Returns the path
 * (the caller frees it), or NULL when nothing counts; then *err (may be
 * NULL) is EACCES when a file of that name exists but cannot be
 * executed, ENOENT otherwise. An empty name finds nothing.
 */
char *path_search(const char *name, const char *path, const char *cwd,
		  int *err);
/* path_search(name, getenv("PATH"), NULL, NULL). */
char *path_find(const char *name);

/*
 * The directory of the running executable (via /proc/self/exe on Linux,
 * _NSGetExecutablePath on macOS), symlinks resolved; NULL when unknown.
 * The caller frees it.
 */
char *tool_exe_dir(void);

/*
 * Finds a data file shimbench ships: REL (a path inside the repository,
 * e.g. "models/manifest.json") in the current directory, then beside the
 * executable (<exe dir>/../REL), then where `make install` puts it
 * (<exe dir>/../share/shimbench/<base name of REL>). Returns an allocated
 * path (free() it); REL itself when none exists, so errors name it.
 */
char *tool_data_path(const char *rel);

#endif
