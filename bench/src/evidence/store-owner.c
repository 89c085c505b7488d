#define _POSIX_C_SOURCE 200809L
/*
 * Who runs a session (issue 21 §1): the session_owners row (host, pid,
 * start, bundle directory) and a lock the running process holds, an
 * fcntl() write lock on the byte at offset SESSION of STORE-sessions.lock
 * beside the store. The kernel drops the lock when the process ends,
 * however it ends, so a session stored as running whose lock nobody holds
 * on this host was abandoned (killed, rebooted): `sessions` and `report`
 * show it so, and `run --resume` may take it over.
 *
 * fcntl() locks belong to the process and are dropped when it closes
 * ANY descriptor of the file, so the descriptors of lock files are kept
 * in one table for the whole process and never closed (a second store
 * handle on the same store, opened and closed by a report inside a run,
 * must not drop the run's lock); they end with the process. The locks
 * are not inherited across fork(), so no child keeps one alive.
 */
#include "evidence/store-internal.h"
#include "evidence/state.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The process's lock files: path and descriptor, never closed. */
static struct {
	char *path;
	int fd, writable;
} locks[16];
static size_t nlocks;

/*
 * The descriptor of s's lock file, opened once per process (again
 * read-write when a claim needs it and the first was read-only); with
 * create, made when absent. -1 when it cannot be had (after error(),
 * except for an absent file without create).
 */
static int
lock_fd(struct store *s, int create)
{
	char *path = xstrfmt("%s-sessions.lock", s->path);
	size_t i;
	int fd, writable = 1;

	for (i = 0; i < nlocks; i++)
		if (!strcmp(locks[i].path, path) &&
		    (locks[i].writable || !create)) {
			free(path);
			return locks[i].fd;
		}
	fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0666);
	if (fd < 0 && !create) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		writable = 0;
	}
	if (fd < 0) {
		if (create || errno != ENOENT)
			error("cannot open the session lock '%s': %s", path,
			      strerror(errno));
		free(path);
		return -1;
	}
	if (nlocks == ARRAY_SIZE(locks)) {
		/* kept open unrecorded: closing it could drop a lock */
		free(path);
		return fd;
	}
	locks[nlocks].path = path;
	locks[nlocks].fd = fd;
	locks[nlocks++].writable = writable;
	return fd;
}

static void
this_host(char *host, size_t size)
{
	if (gethostname(host, size) < 0 || !*host)
		snprintf(host, size, "localhost");
	host[size - 1] = '\0';
}

int
store_session_claim(struct store *s, int64_t sid, const char *bundle_dir)
{
	struct flock fl;
	char host[HOST_NAME_MAX + 1], now[21];
	sqlite3_stmt *st;
	int fd = lock_fd(s, 1), own;

	if (fd < 0)
		return -1;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)sid;
	fl.l_len = 1;
	if (fcntl(fd, F_SETLK, &fl) < 0)
		return error("session %lld is being run by another process "
			     "(its lock in '%s-sessions.lock' is held)",
			     (long long)sid, s->path);
	this_host(host, sizeof(host));
	utc_now(now);
	if (sq_write_begin(s, &own) < 0)
		return -1;
	sq_op_begin(s);
	st = sq_prepare(s,
		"INSERT OR REPLACE INTO session_owners(session_id, host, pid,"
		" started_at, bundle_dir) VALUES(?1,?2,?3,?4,?5)");
	if (st) {
		sqlite3_bind_int64(st, 1, sid);
		sq_bind_text(st, 2, host);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)getpid());
		sq_bind_text(st, 4, now);
		sq_bind_text(st, 5, bundle_dir);
	}
	return sq_write_end(s, own, st ? sq_step_done(s, st, "claim session")
			    : -1);
}

/* 1 when some process holds sid's lock, 0 when none does. */
static int
lock_held(struct store *s, int64_t sid)
{
	struct flock fl;
	int fd = lock_fd(s, 0);

	if (fd < 0)
		return 0;        /* no lock file: nobody ever held one */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)sid;
	fl.l_len = 1;
	if (fcntl(fd, F_GETLK, &fl) < 0)
		return 1;        /* cannot tell: never call it abandoned */
	return fl.l_type != F_UNLCK;
}

int
store_session_owner(struct store *s, int64_t sid, struct store_owner *o)
{
	char host[HOST_NAME_MAX + 1];
	sqlite3_stmt *st;
	int rc;

	memset(o, 0, sizeof(*o));
	o->alive = 1;
	sq_op_begin(s);
	/* A store read-only at an older schema has no such table: no owner
	 * is known there, which is no error. */
	if (sqlite3_prepare_v2(s->db, "SELECT host, pid, started_at, "
			       "bundle_dir FROM session_owners WHERE "
			       "session_id=?1", -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return 0;
	}
	sqlite3_bind_int64(st, 1, sid);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		o->found = 1;
		o->host = sq_col_text(st, 0);
		o->pid = (long)sqlite3_column_int64(st, 1);
		o->started_at = sq_col_text(st, 2);
		o->bundle_dir = sq_col_text_null(st, 3);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sq_error(s, "read session owner");
	if (!o->found)
		return 0;
	this_host(host, sizeof(host));
	/* Another host's lock cannot be seen from here: alive, unknown. */
	o->same_host = !strcmp(host, o->host);
	o->alive = !o->same_host || lock_held(s, sid);
	/* The lock answers on this host; its process may have died before
	 * the lock and the row (a start that failed half-way). */
	return 1;
}

void
store_owner_release(struct store_owner *o)
{
	free(o->host);
	free(o->started_at);
	free(o->bundle_dir);
	memset(o, 0, sizeof(*o));
}

const char *
store_session_shown_status(struct store *s, int64_t sid, const char *stored)
{
	struct store_owner o;
	const char *shown = stored;

	if (session_state_of(stored) != SESSION_STATE_RUNNING)
		return stored;
	if (store_session_owner(s, sid, &o) == 1 && !o.alive)
		shown = session_state_name(SESSION_STATE_ABANDONED);
	store_owner_release(&o);
	return shown;
}
