#ifndef LAUNCHAGENT_H
#define LAUNCHAGENT_H

/*
 * A per-workload LaunchAgent property list that starts one long-running
 * program (a server) with the Metal capability shim injected, and the
 * launchctl commands to install, start and roll it back. Only this one
 * job gets DYLD_INSERT_LIBRARIES; never `launchctl setenv`.
 */

#include <stddef.h>

struct buf;

struct launchagent {
	const char *label;          /* [A-Za-z0-9._-], not starting '.' '-' */
	const char *program;        /* absolute path */
	const char *library;        /* absolute path of the shim dylib */
	const char *family_max;     /* decimal 1001..1999 */
	const char *threadgroup;    /* decimal, or NULL: shim default */
	const char *working_set;    /* decimal, or NULL: not set */
	const char *stdout_path;    /* absolute; NULL: /tmp/LABEL.stdout.log */
	const char *stderr_path;    /* absolute; NULL: /tmp/LABEL.stderr.log */
	char *const *args;          /* program arguments after the program */
	size_t nargs;
	int allow_arm64_only;       /* accept a dylib without an arm64e slice */
};

/*
 * Checks every field; returns 0, or -1 with error() naming the option
 * or argument that is wrong (bad label, relative path, a library path
 * with ':', a family outside 1001-1999, a non-decimal number, or text
 * XML 1.0 cannot carry: control characters or invalid UTF-8).
 */
int launchagent_validate(const struct launchagent *la);

/*
 * Checks the library when it is a file here (the agent is usually
 * written where it runs): it must be a Mach-O dylib with an arm64 or
 * arm64e slice, and, unless allow_arm64_only, with an arm64e slice, for
 * the job's arm64e children inherit DYLD_INSERT_LIBRARIES and dyld
 * terminates them on an arm64-only dylib. Returns 1 checked (*what then
 * describes it, malloc'd), 0 when no file is at that path here (nothing
 * checked), -1 with error() naming --library.
 */
int launchagent_check_library(const struct launchagent *la, char **what);

/*
 * Appends the plist (XML, UTF-8) to out: Label, ProgramArguments (one
 * string per argument), EnvironmentVariables (DYLD_INSERT_LIBRARIES and
 * the LUME_METAL_* values, all strings), StandardOutPath,
 * StandardErrorPath; no RunAtLoad or KeepAlive. Numbers are written in
 * canonical decimal ("01009" becomes "1009": the shim would read a
 * leading 0 as octal). Call after
 * launchagent_validate(); returns 0, or -1 with error() like it.
 */
int launchagent_plist(struct buf *out, const struct launchagent *la);

/*
 * Appends the shell commands that lint, install, start, inspect and
 * roll back the agent whose plist is at plist_path (quoted for a POSIX
 * shell; NULL: "$HOME"/Library/LaunchAgents/LABEL.plist).
 */
void launchagent_commands(struct buf *out, const struct launchagent *la,
			  const char *plist_path);

/*
 * Appends s to out escaped for XML 1.0 character data (& < > " ' and CR
 * as a character reference). Returns -1 with error() naming `what` when
 * s holds a character XML 1.0 cannot carry or is not valid UTF-8.
 */
int xml_escape(struct buf *out, const char *s, const char *what);

#endif
