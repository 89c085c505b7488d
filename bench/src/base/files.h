#ifndef BASE_FILES_H
#define BASE_FILES_H

/*
 * Files and directories: atomic writes, directory creation, existence
 * checks, and where the running executable and the data files shimbench
 * ships live. Functions returning char * return memory the caller frees.
 */

#include <stddef.h>

/* Writes data to path through a temporary file and rename(); 0 / -1. */
int write_file_atomic(const char *path, const void *data, size_t len);
/* Creates dir and its parents (mode 0777 & umask); 0 / -1. */
int mkdir_p(const char *dir);
/* Returns 1 when path exists as a regular file, 0 otherwise. */
int file_exists(const char *path);
/* Returns 1 when path is a directory. */
int dir_exists(const char *path);
/* 1 when dir is empty or does not exist, 0 when it holds an entry,
 * -1 when it cannot be read. */
int dir_is_empty(const char *dir);

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
