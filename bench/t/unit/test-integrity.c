/*
 * Outputs and the store at the edges (issue 13): what write_file_atomic
 * does with each kind of path, the store that no output may overwrite,
 * stores that are not files, read-only opening, the integrity check,
 * terminal escapes and CSV cells that spreadsheets would run.
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "analysis/table.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static char *
at(const char *name)
{
	static char path[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

static int
holds(const char *path, const char *text)
{
	struct buf b = BUF_INIT;
	int same;

	if (buf_read_file(&b, path) < 0)
		return 0;
	same = !strcmp(b.buf, text);
	buf_release(&b);
	return same;
}

static void
test_write_regular_and_links(void)
{
	struct stat st;
	char target[300];

	CHECK(write_file_atomic(at("new.txt"), "one", 3) == 0);
	CHECK(holds(at("new.txt"), "one"));
	CHECK(chmod(at("new.txt"), 0640) == 0);
	CHECK(write_file_atomic(at("new.txt"), "two", 3) == 0);
	CHECK(holds(at("new.txt"), "two"));
	CHECK(stat(at("new.txt"), &st) == 0 && (st.st_mode & 0777) == 0640);

	/* a link stays a link; its target gets the data */
	CHECK(symlink("new.txt", at("link.txt")) == 0);
	CHECK(write_file_atomic(at("link.txt"), "three", 5) == 0);
	CHECK(lstat(at("link.txt"), &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(holds(at("new.txt"), "three"));
	/* a dangling link: the file it names is made */
	CHECK(symlink("made.txt", at("dangling.txt")) == 0);
	CHECK(write_file_atomic(at("dangling.txt"), "four", 4) == 0);
	CHECK(holds(at("made.txt"), "four"));
	CHECK(lstat(at("dangling.txt"), &st) == 0 && S_ISLNK(st.st_mode));
	/* a chain of links, one relative to another directory */
	CHECK(mkdir(at("sub"), 0777) == 0);
	snprintf(target, sizeof(target), "%s", at("new.txt"));
	CHECK(symlink(target, at("sub/abs.txt")) == 0);
	CHECK(symlink("sub/abs.txt", at("chain.txt")) == 0);
	CHECK(write_file_atomic(at("chain.txt"), "five", 4) == 0);
	CHECK(holds(at("new.txt"), "five"));
	/* a loop is an error */
	CHECK(symlink("loop-b", at("loop-a")) == 0);
	CHECK(symlink("loop-a", at("loop-b")) == 0);
	error_silent++;
	CHECK(write_file_atomic(at("loop-a"), "x", 1) == -1);
	CHECK(write_file_atomic(at("sub"), "x", 1) == -1);   /* a directory */
	CHECK(write_file_atomic("", "x", 1) == -1);
	error_silent--;
}

static void
test_write_fifo_and_devices(void)
{
	struct stat before, after;
	char got[16] = { 0 };
	int fd;

	CHECK(mkfifo(at("fifo"), 0666) == 0);
	fd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	CHECK(fd >= 0);
	CHECK(write_file_atomic(at("fifo"), "through", 7) == 0);
	CHECK(read(fd, got, sizeof(got) - 1) == 7 && !strcmp(got, "through"));
	close(fd);
	CHECK(lstat(at("fifo"), &after) == 0 && S_ISFIFO(after.st_mode));

	CHECK(stat("/dev/null", &before) == 0);
	CHECK(write_file_atomic("/dev/null", "gone", 4) == 0);
	CHECK(stat("/dev/null", &after) == 0 && S_ISCHR(after.st_mode) &&
	      after.st_ino == before.st_ino && after.st_rdev == before.st_rdev);
}

static void
test_protected_store(void)
{
	struct store *s = NULL;
	char link[300];

	CHECK(store_open(&s, at("s.db")) == 0);
	error_silent++;
	CHECK(write_file_atomic(at("s.db"), "x", 1) == -1);
	CHECK(write_file_atomic(at("s.db-wal"), "x", 1) == -1);
	CHECK(write_file_atomic(at("s.db-journal"), "x", 1) == -1);
	snprintf(link, sizeof(link), "%s", at("s.db"));
	CHECK(symlink(link, at("to-store")) == 0);
	CHECK(write_file_atomic(at("to-store"), "x", 1) == -1);
	error_silent--;
	CHECK(store_count(s, "sessions") == 0);
	CHECK(store_check(s) == 0);
	store_close(s);
	/* still protected after it is closed: the registration is for the
	 * process */
	error_silent++;
	CHECK(write_file_atomic(at("s.db"), "x", 1) == -1);
	error_silent--;
}

static void
test_store_paths(void)
{
	struct store *s = NULL;

	error_silent++;
	CHECK(store_open(&s, "") == -1 && s == NULL);
	CHECK(store_open(&s, ":memory:") == -1 && s == NULL);
	CHECK(store_open_readonly(&s, at("absent.db")) == -1 && s == NULL);
	error_silent--;
	/* a URI is a file name: nothing in memory, a file of that name */
	CHECK(chdir(dir) == 0);
	CHECK(store_open(&s, "file:u.db?mode=memory") == 0);
	store_close(s);
	CHECK(access(at("file:u.db?mode=memory"), F_OK) == 0);
	CHECK(store_open_readonly(&s, "file:u.db?mode=memory") == 0);
	CHECK(store_count(s, "sessions") == 0);
	store_close(s);
}

static void
test_readonly_store(void)
{
	struct store *s = NULL;
	struct session_rec sr = { 0 };
	int64_t id;

	CHECK(store_open(&s, at("ro.db")) == 0);
	sr.kind = (char *)"import";
	sr.started_at = (char *)"2026-12-03T00:00:00Z";
	sr.status = (char *)"ok";
	CHECK(store_session_add(s, &sr, &id) == 0);
	store_close(s);
	CHECK(store_open_readonly(&s, at("ro.db")) == 0);
	CHECK(store_count(s, "sessions") == 1);
	CHECK(store_check(s) == 0);
	error_silent++;
	CHECK(store_session_add(s, &sr, &id) == -1);   /* query_only */
	error_silent--;
	store_close(s);
}

static void
test_damaged_store(void)
{
	struct store *s = NULL;
	struct session_rec sr = { 0 };
	int64_t id;
	char zeros[4096] = { 0 };
	int fd;

	CHECK(store_open(&s, at("dmg.db")) == 0);
	sr.kind = (char *)"import";
	sr.started_at = (char *)"2026-12-03T00:00:00Z";
	sr.status = (char *)"ok";
	CHECK(store_session_add(s, &sr, &id) == 0);
	store_close(s);
	/* page 2, the sessions table's root */
	fd = open(at("dmg.db"), O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, zeros, sizeof(zeros), 4096) == 4096);
	close(fd);
	CHECK(store_open_readonly(&s, at("dmg.db")) == 0);
	error_silent++;
	CHECK(store_check(s) == -1);
	error_silent--;
	CHECK(strstr(error_last(), "is damaged") != NULL);
	store_close(s);
}

static void
test_term_safe(void)
{
	struct buf b = BUF_INIT;
	const char in[] = "a\033]0;x\007b\tc\nd\r\177e\xc2\x9b" "f\xc3\xa9";

	buf_add_term_safe(&b, in, sizeof(in) - 1);
	CHECK_STR(b.buf, "a\\x1b]0;x\\x07b\tc\nd\\x0d\\x7fe\\u009bf\xc3\xa9");
	buf_release(&b);
}

static void
test_csv_formulas(void)
{
	static const char *const cols[] = { "name", "value#" };
	static const char *const rows[][2] = {
		{ "=1+1", "-5.25" }, { "+x", "+3" }, { "-2+3", "1e3" },
		{ "@SUM(A1)", "" }, { "\tx", "0" }, { "\rx", "-0" },
		{ "plain", "2" },
	};
	struct table t;
	struct buf b = BUF_INIT;
	size_t i;

	table_init(&t, 2, cols);
	for (i = 0; i < ARRAY_SIZE(rows); i++)
		table_add_row(&t, rows[i]);
	table_render_csv(&t, &b);
	CHECK_STR(b.buf, "name,value\n"
		  "\"'=1+1\",-5.25\n"
		  "\"'+x\",+3\n"
		  "\"'-2+3\",1e3\n"
		  "\"'@SUM(A1)\",\n"
		  "\"'\tx\",0\n"
		  "\"'\\x0dx\",-0\n"
		  "plain,2\n");
	table_release(&t);
	buf_release(&b);
}

int
main(void)
{
	static const struct test_case tests[] = {
		{ "write_file_atomic: regular files and links",
		  test_write_regular_and_links },
		{ "write_file_atomic: FIFOs and devices are written through",
		  test_write_fifo_and_devices },
		{ "no output overwrites the store", test_protected_store },
		{ "store paths: no memory store, no URI", test_store_paths },
		{ "a store opened read-only", test_readonly_store },
		{ "a damaged store fails the check", test_damaged_store },
		{ "control characters for a terminal", test_term_safe },
		{ "CSV cells a spreadsheet would run", test_csv_formulas },
	};
	char cmd[128];
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/shimbench-integrity-%ld",
		 (long)getpid());
	if (mkdir(dir, 0777) < 0) {
		perror(dir);
		return 1;
	}
	rc = test_main(tests, ARRAY_SIZE(tests));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (chdir("/") != 0 || system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return rc;
}
