#define _POSIX_C_SOURCE 200809L
/*
 * The store's integrity check (store_check()): SQLite's quick_check and
 * every stored raw output against its recorded SHA-256.
 */
#include "evidence/store.h"
#include "evidence/store-internal.h"
#include "models/hash.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * The raw files stored with each run against their recorded SHA-256: a
 * zeroed overflow page holds no b-tree structure for quick_check to miss
 * or catch, only content. Every run has its texts row (written with
 * it, or by the migration that moved them): one missing is damage.
 */
static int
check_raw_copies(struct store *s, struct buf *msg)
{
	static const char *const cols[][2] = {
		{ "stdout_text", "stdout_sha256" },
		{ "stderr_text", "stderr_sha256" },
		{ "probe_text", "probe_sha256" },
	};
	sqlite3_stmt *st = sq_prepare(s, "SELECT r.id, r.seq, r.session_id,"
				   " t.stdout_text, r.stdout_sha256,"
				   " t.stderr_text, r.stderr_sha256,"
				   " t.probe_text, r.probe_sha256, t.run_id"
				   " FROM runs r LEFT JOIN run_texts t"
				   " ON t.run_id=r.id");
	int rc, bad = 0;
	size_t k;

	if (!st)
		return 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 9) == SQLITE_NULL) {
			if (bad++ < 3)
				buf_addf(msg, "%srun %lld of session %lld: its "
					 "stored raw output is missing",
					 msg->len ? "; " : "",
					 (long long)sqlite3_column_int64(st, 1),
					 (long long)sqlite3_column_int64(st, 2));
			continue;
		}
		for (k = 0; k < ARRAY_SIZE(cols); k++) {
			const void *p = sqlite3_column_blob(st, 3 + 2 * (int)k);
			size_t n = (size_t)sqlite3_column_bytes(st, 3 + 2 * (int)k);
			const unsigned char *want =
				sqlite3_column_text(st, 4 + 2 * (int)k);
			char have[65];

			if (sqlite3_column_type(st, 3 + 2 * (int)k) == SQLITE_NULL ||
			    !want)
				continue;
			hash_buf_sha256(p ? p : "", n, have);
			if (strcasecmp(have, (const char *)want)) {
				if (bad++ < 3)
					buf_addf(msg, "%srun %lld of session %lld: "
						 "its stored %s does not match its "
						 "SHA-256", msg->len ? "; " : "",
						 (long long)sqlite3_column_int64(st, 1),
						 (long long)sqlite3_column_int64(st, 2),
						 cols[k][0]);
			}
		}
	}
	if (rc != SQLITE_DONE) {
		buf_addf(msg, "%s%s", msg->len ? "; " : "",
			 sqlite3_errmsg(s->db));
		bad++;
	}
	sqlite3_finalize(st);
	return bad;
}

int
store_check(struct store *s)
{
	sqlite3_stmt *st;
	struct buf msg = BUF_INIT;
	int rc, n = 0, ret = 0;

	sq_op_begin(s);
	st = sq_prepare(s, "PRAGMA quick_check");
	if (!st)
		return error("store '%s' is damaged; restore it from a backup "
			     "or import the evidence again", s->path);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		if (t && !strcmp(t, "ok") && n == 0)
			continue;
		if (n++ < 3)
			buf_addf(&msg, "%s%s", msg.len ? "; " : "", t ? t : "");
	}
	if (rc != SQLITE_DONE) {
		buf_addf(&msg, "%s%s", msg.len ? "; " : "",
			 sqlite3_errmsg(s->db));
		n++;
	}
	sqlite3_finalize(st);
	if (!n)
		n = check_raw_copies(s, &msg);
	if (n)
		ret = error("store '%s' is damaged (%s); restore it from a "
			    "backup or import the evidence again", s->path,
			    msg.buf);
	buf_release(&msg);
	return ret;
}

/* ---- the verified mark ------------------------------------------------ */

/*
 * A full check reads the whole store (quick_check, every raw output):
 * 0.3 s at 10,000 sessions, for a gate of two sessions as much as for a
 * report of all of them. The mark, a small file beside the store
 * ("DB-verified"), says which state of the files passed it: device,
 * inode, size, mtime and ctime of the database and of its -wal, as the
 * model hash cache keys files (hashcache.h). A command that reads the
 * store checks it in full unless the files are exactly as the mark says;
 * any write that is not the store's own changes ctime (no program can
 * set it back), so a store damaged, edited or replaced since is checked
 * again before it is read.
 *
 * Who writes it: a reader after a full check that passed, when the
 * files did not change while it ran and are older than HASH_RACY_NS (a
 * file changed within a timestamp tick of the mark could change again
 * unseen); and a writer, which carries it over its own writes: a store
 * it created, or found verified when it took the write lock, is
 * verified after its commit. The mark is never trusted when it is not a
 * regular file owned by the store's owner or by this user. Writing it is
 * best effort: a directory that cannot take it (a read-only mount,
 * another user's) means a full check each time, as before.
 *
 * What this trusts beyond the check itself: that the file system updates
 * ctime on every write, and that a program writing the store behind
 * SQLite's back does not do so within the same timestamp tick as
 * shimbench's own last write (file systems with coarse timestamps; on
 * Linux 6.13 and later, and APFS, a change after a stat always gets a
 * new one).
 */

static void
stat_fill(const struct stat *st, int64_t v[5])
{
	v[0] = (int64_t)st->st_dev;
	v[1] = (int64_t)st->st_ino;
	v[2] = (int64_t)st->st_size;
	v[3] = hash_mtime_ns(st);
	v[4] = hash_ctime_ns(st);
}

/* The files of the store at path now; -1 when the database cannot be
 * stat()ed as a regular file (or the -wal is not one). */
static int
files_now(const char *path, struct store_files *f)
{
	char *wal = xstrfmt("%s-wal", path);
	struct stat st;
	int ret = -1;

	memset(f, 0, sizeof(*f));
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		goto out;
	stat_fill(&st, f->db);
	f->uid = (int64_t)st.st_uid;
	if (stat(wal, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			goto out;
		if (st.st_size > 0)
			stat_fill(&st, f->wal);
	} else if (errno != ENOENT) {
		goto out;
	}
	ret = 0;
out:
	free(wal);
	return ret;
}

static int
files_equal(const struct store_files *a, const struct store_files *b)
{
	return !memcmp(a->db, b->db, sizeof(a->db)) &&
	       !memcmp(a->wal, b->wal, sizeof(a->wal)) && a->uid == b->uid;
}

/* The mark's text for f (caller frees). */
static char *
mark_text(const struct store_files *f)
{
	const int64_t *d = f->db, *w = f->wal;

	return xstrfmt("shimbench store verified 1\n"
		       "db %lld %lld %lld %lld %lld\n"
		       "wal %lld %lld %lld %lld %lld\n",
		       (long long)d[0], (long long)d[1], (long long)d[2],
		       (long long)d[3], (long long)d[4], (long long)w[0],
		       (long long)w[1], (long long)w[2], (long long)w[3],
		       (long long)w[4]);
}

/* 1 when the mark beside the store says f. */
static int
mark_says(const char *path, const struct store_files *f)
{
	char *name = xstrfmt("%s-verified", path), *want = mark_text(f);
	char got[512];
	struct stat st;
	ssize_t n = -1;
	int fd, ret = 0;

	fd = open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    ((int64_t)st.st_uid == f->uid || st.st_uid == geteuid()))
		n = read(fd, got, sizeof(got) - 1);
	if (fd >= 0)
		close(fd);
	if (n >= 0) {
		got[n] = '\0';
		ret = !strcmp(got, want);
	}
	free(name);
	free(want);
	return ret;
}

/* Writes the mark for f, replacing the old one; silent when it cannot. */
static void
mark_write(const char *path, const struct store_files *f)
{
	static unsigned seq;
	char *name = xstrfmt("%s-verified", path);
	char *tmp = xstrfmt("%s-verified.new-%ld-%u", path, (long)getpid(),
			    seq++);
	char *text = mark_text(f);
	size_t len = strlen(text);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);

	if (fd >= 0) {
		int ok = write(fd, text, len) == (ssize_t)len;

		if (close(fd) < 0 || !ok || rename(tmp, name) < 0)
			unlink(tmp);
	}
	free(name);
	free(tmp);
	free(text);
}

/* 1 when a file of f changed less than HASH_RACY_NS ago. */
static int
files_racy(const struct store_files *f)
{
	struct timespec now;
	int64_t t, newest = f->db[3];
	int i;

	if (clock_gettime(CLOCK_REALTIME, &now) < 0)
		return 1;
	t = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	for (i = 3; i < 5; i++) {
		if (f->db[i] > newest)
			newest = f->db[i];
		if (f->wal[i] > newest)
			newest = f->wal[i];
	}
	return newest > t - HASH_RACY_NS;
}

int
store_verify(struct store *s)
{
	struct store_files before, after;

	if (files_now(s->path, &before) == 0 && mark_says(s->path, &before))
		return 0;
	if (store_check(s) < 0)
		return -1;
	if (!s->writable && files_now(s->path, &after) == 0 &&
	    files_equal(&before, &after) && !files_racy(&after))
		mark_write(s->path, &after);
	return 0;
}

/*
 * A writer's store is verified when this open created it, or when it is
 * as its mark says; else a full check (silent: a writer's commands do
 * not refuse a damaged store, the readers do) decides, as a reader's
 * would.
 */
void
sq_check_open(struct store *s, int fresh)
{
	struct store_files now, after;

	s->writable = 1;
	s->verified = 0;
	if (files_now(s->path, &now) < 0)
		return;
	if (fresh || mark_says(s->path, &now)) {
		s->verified = 1;
	} else {
		error_silent++;
		if (store_check(s) == 0 && files_now(s->path, &after) == 0 &&
		    files_equal(&now, &after) && !files_racy(&now))
			s->verified = 1;
		error_silent--;
	}
	s->seen = now;
	if (s->verified && !mark_says(s->path, &now))
		mark_write(s->path, &now);
}

/*
 * With the write lock held: still verified when nobody wrote since this
 * writer last did, or when the writer that did carried the mark.
 */
void
sq_check_write_begin(struct store *s)
{
	struct store_files now;

	if (!s->writable)
		return;
	if (files_now(s->path, &now) < 0) {
		s->verified = 0;
		return;
	}
	s->verified = (s->verified && files_equal(&now, &s->seen)) ||
		      mark_says(s->path, &now);
	s->seen = now;
}

/* After this writer's commit or rollback: its own writes, verified on. */
void
sq_check_write_end(struct store *s)
{
	struct store_files now;

	if (!s->writable || !s->verified)
		return;
	if (files_now(s->path, &now) < 0) {
		s->verified = 0;
		return;
	}
	s->seen = now;
	mark_write(s->path, &now);
}

/* Closing checkpoints the -wal into the database and removes it. */
void
sq_check_close(struct store *s, int after)
{
	struct store_files now;

	if (!s->writable || !s->verified)
		return;
	if (files_now(s->path, &now) < 0) {
		s->verified = 0;
		return;
	}
	if (!after) {
		/* someone else wrote since this writer's last commit */
		s->verified = files_equal(&now, &s->seen);
		return;
	}
	mark_write(s->path, &now);
}
