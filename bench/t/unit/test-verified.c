/*
 * The store's verified mark (store_verify(), store-check.c): a reader
 * checks the store in full unless its files are exactly as the mark
 * says; writers carry the mark over their own writes and no others; a
 * store damaged, edited or replaced after the mark is checked again.
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "evidence/runrec.h"
#include "evidence/store.h"
#include "models/hash.h"
#include "base/files.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static const char *
at(const char *name)
{
	static char p[4][320];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static int64_t
add_session(struct store *s)
{
	struct session_rec sr = { 0 };
	int64_t id = 0;

	sr.kind = (char *)"import";
	sr.started_at = (char *)"2026-12-03T00:00:00Z";
	sr.status = (char *)"ok";
	CHECK(store_session_add(s, &sr, &id) == 0);
	return id;
}

/* The mark's text as the store's files are now (store-check.c). */
static char *
mark_now(const char *db)
{
	char wal[340];
	struct stat a, w;
	long long v[10] = { 0 };

	snprintf(wal, sizeof(wal), "%s-wal", db);
	if (stat(db, &a) < 0)
		return NULL;
	v[0] = (long long)a.st_dev;
	v[1] = (long long)a.st_ino;
	v[2] = (long long)a.st_size;
	v[3] = (long long)hash_mtime_ns(&a);
	v[4] = (long long)hash_ctime_ns(&a);
	if (stat(wal, &w) == 0 && w.st_size > 0) {
		v[5] = (long long)w.st_dev;
		v[6] = (long long)w.st_ino;
		v[7] = (long long)w.st_size;
		v[8] = (long long)hash_mtime_ns(&w);
		v[9] = (long long)hash_ctime_ns(&w);
	}
	return xstrfmt("shimbench store verified 1\ndb %lld %lld %lld %lld %lld\n"
		       "wal %lld %lld %lld %lld %lld\n", v[0], v[1], v[2], v[3],
		       v[4], v[5], v[6], v[7], v[8], v[9]);
}

/* 1 when the mark beside db says its files as they are now. */
static int
mark_current(const char *db)
{
	char name[340], *want = mark_now(db);
	struct buf b = BUF_INIT;
	int ret;

	snprintf(name, sizeof(name), "%s-verified", db);
	error_silent++;
	ret = want && buf_read_file(&b, name) == 0 && !strcmp(b.buf, want);
	error_silent--;
	buf_release(&b);
	free(want);
	return ret;
}

static void
zero_page(const char *db, long page)
{
	char zeros[4096] = { 0 };
	int fd = open(db, O_WRONLY);

	CHECK(fd >= 0 && pwrite(fd, zeros, sizeof(zeros), page * 4096) == 4096);
	close(fd);
}

/* A reader's verdict on db: store_verify() and the full check. */
static void
verdicts(const char *db, int *verify, int *check)
{
	struct store *s = NULL;

	CHECK(store_open_readonly(&s, db) == 0);
	error_silent++;
	*verify = store_verify(s);
	*check = store_check(s);
	error_silent--;
	store_close(s);
}

static void
test_writer_carries(void)
{
	struct store *s = NULL;
	int v, c;

	CHECK(store_open(&s, at("w.db")) == 0);
	CHECK(mark_current(at("w.db")));           /* created: verified */
	add_session(s);                             /* a write of its own */
	CHECK(mark_current(at("w.db")));
	CHECK(store_begin(s) == 0);
	add_session(s);
	add_session(s);
	CHECK(store_commit(s) == 0);
	CHECK(mark_current(at("w.db")));
	store_close(s);                             /* the checkpoint too */
	CHECK(mark_current(at("w.db")));
	verdicts(at("w.db"), &v, &c);
	CHECK(v == 0 && c == 0);
	/* a second writer carries it on */
	CHECK(store_open(&s, at("w.db")) == 0);
	add_session(s);
	store_close(s);
	CHECK(mark_current(at("w.db")));
}

static void
test_damage_after_the_mark(void)
{
	struct store *s = NULL;
	struct timespec t[2];
	struct stat st;
	int v, c;

	CHECK(store_open(&s, at("d.db")) == 0);
	add_session(s);
	store_close(s);
	CHECK(mark_current(at("d.db")));
	/* page 2, the sessions table's root, zeroed, its mtime put back:
	 * ctime moved, so the mark no longer holds */
	CHECK(stat(at("d.db"), &st) == 0);
	zero_page(at("d.db"), 1);
	t[0] = st.st_atim;
	t[1] = st.st_mtim;
	CHECK(utimensat(AT_FDCWD, at("d.db"), t, 0) == 0);
	CHECK(!mark_current(at("d.db")));
	verdicts(at("d.db"), &v, &c);
	CHECK(v == -1 && c == -1);
	CHECK(strstr(error_last(), "is damaged") != NULL);
	CHECK(!mark_current(at("d.db")));           /* none written */
}

/*
 * What the mark trusts, shown by forging one: a damaged store with a
 * mark that says its files as they are is taken as checked (the mark is
 * not a seal against whoever can write the store's directory), while a
 * mark that is a link, or owned by someone else, is never read.
 */
static void
test_what_the_mark_trusts(void)
{
	struct store *s = NULL;
	char *text;
	int v, c;

	CHECK(store_open(&s, at("f.db")) == 0);
	add_session(s);
	store_close(s);
	zero_page(at("f.db"), 1);
	text = mark_now(at("f.db"));
	CHECK(text && write_file_atomic(at("forged"), text, strlen(text)) == 0);
	CHECK(unlink(at("f.db-verified")) == 0);
	CHECK(symlink(at("forged"), at("f.db-verified")) == 0);
	verdicts(at("f.db"), &v, &c);
	CHECK(v == -1 && c == -1);                  /* a link: not read */
	CHECK(unlink(at("f.db-verified")) == 0);
	CHECK(rename(at("forged"), at("f.db-verified")) == 0);
	if (geteuid() == 0) {
		CHECK(chown(at("f.db-verified"), 65534, 65534) == 0);
		verdicts(at("f.db"), &v, &c);
		CHECK(v == -1);                     /* another user's */
		CHECK(chown(at("f.db-verified"), 0, 0) == 0);
	}
	verdicts(at("f.db"), &v, &c);
	CHECK(v == 0 && c == -1);
	free(text);
}

/* A write that is not the writer's own ends the chain. */
static void
test_outside_write_ends_it(void)
{
	struct store *s = NULL;
	char page[4096];
	int fd, v, c;

	CHECK(store_open(&s, at("o.db")) == 0);
	add_session(s);
	CHECK(mark_current(at("o.db")));
	/* the same bytes written back behind SQLite's back: new ctime */
	fd = open(at("o.db"), O_RDWR);
	CHECK(fd >= 0 && pread(fd, page, sizeof(page), 0) == 4096 &&
	      pwrite(fd, page, sizeof(page), 0) == 4096);
	close(fd);
	add_session(s);
	CHECK(!mark_current(at("o.db")));
	store_close(s);
	CHECK(!mark_current(at("o.db")));
	/* a reader checks in full; it does not mark a store changed less
	 * than two seconds ago (a change in the same tick could hide) */
	verdicts(at("o.db"), &v, &c);
	CHECK(v == 0 && c == 0);
	CHECK(!mark_current(at("o.db")));
}

/* A reader marks a store it checked when the files are old enough. */
static void
test_reader_marks(void)
{
	struct store *s = NULL;
	char cmd[700];
	int v, c;

	CHECK(store_open(&s, at("r.db")) == 0);
	add_session(s);
	store_close(s);
	/* a copy: a new file, no mark; its ctime is now, so not yet */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", at("r.db"), at("r2.db"));
	CHECK(system(cmd) == 0);
	verdicts(at("r2.db"), &v, &c);
	CHECK(v == 0 && !mark_current(at("r2.db")));
	sleep(3);                               /* older than HASH_RACY_NS */
	verdicts(at("r2.db"), &v, &c);
	CHECK(v == 0 && c == 0 && mark_current(at("r2.db")));
}

int
main(void)
{
	static const struct test_case tests[] = {
		{ "a writer carries the mark over its own writes",
		  test_writer_carries },
		{ "damage after the mark: checked again, refused",
		  test_damage_after_the_mark },
		{ "what the mark trusts, and what it never reads",
		  test_what_the_mark_trusts },
		{ "a write behind SQLite's back ends the chain",
		  test_outside_write_ends_it },
		{ "a reader marks what it checked, not too soon",
		  test_reader_marks },
	};
	char cmd[300];
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/shimbench-verified-%ld",
		 (long)getpid());
	if (mkdir(dir, 0777) < 0) {
		perror(dir);
		return 1;
	}
	rc = test_main(tests, ARRAY_SIZE(tests));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return rc;
}
