/* SHA-256 of buffers and files, parallel hashing and the hash cache. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "models/hash.h"
#include "evidence/hashcache.h"
#include "evidence/store.h"
#include "base/files.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static const char *
path_of(const char *name)
{
	static char p[4][128];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* Writes data and sets the mtime to secs_ago seconds in the past. */
static void
write_aged(const char *path, const char *data, size_t len, long secs_ago)
{
	struct timespec t[2];

	CHECK(write_file_atomic(path, data, len) == 0);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= secs_ago;
	t[1] = t[0];
	CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
}

static void
test_vectors(void)
{
	char hex[65];

	hash_buf_sha256("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223"
		  "b00361a396177a9cb410ff61f20015ad");
	hash_buf_sha256("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb924"
		  "27ae41e4649b934ca495991b7852b855");
	CHECK(hash_is_sha256_hex(hex));
	CHECK(!hash_is_sha256_hex("abc"));
}

static void
test_file_matches_buffer(void)
{
	/* several read blocks, and large enough for the read-ahead thread */
	size_t len = (20u << 20) + 12345, i;
	char *data = xmalloc(len), a[65], b[65];
	const char *p = path_of("big");

	for (i = 0; i < len; i++)
		data[i] = (char)(i * 2654435761u >> 13);
	CHECK(write_file_atomic(p, data, len) == 0);
	hash_buf_sha256(data, len, a);
	CHECK(hash_file_sha256(p, b) == 0);
	CHECK_STR(a, b);
	CHECK(write_file_atomic(path_of("empty"), "", 0) == 0);
	CHECK(hash_file_sha256(path_of("empty"), b) == 0);
	CHECK_STR(b, "e3b0c44298fc1c149afbf4c8996fb924"
		  "27ae41e4649b934ca495991b7852b855");
	error_silent++;
	CHECK(hash_file_sha256(path_of("missing"), b) < 0);
	CHECK(strstr(error_last(), "missing") != NULL);
	/* and why, in words: "cannot open '…/missing': No such file…" */
	CHECK(strstr(error_last(), "No such file or directory") != NULL);
	CHECK(hash_file_sha256(dir, b) < 0);
	error_silent--;
	free(data);
}

/*
 * The read-ahead ring at its edges: a file of exactly the size that gets
 * a feeder thread, one byte more (a last short block), and sizes that
 * fill the ring exactly once, twice and not quite twice. Each must hash
 * as the buffer does.
 */
static void
test_feeder_edges(void)
{
	const size_t mib = 1u << 20;
	const size_t sizes[] = { 8 * mib, 8 * mib + 1, 16 * mib - 1,
				 16 * mib, 24 * mib + 4096 };
	size_t len = 24 * mib + 4096, i, k;
	char *data = xmalloc(len), a[65], b[65];
	const char *p = path_of("edge");

	for (i = 0; i < len; i++)
		data[i] = (char)(i * 40503u >> 7);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		CHECK(write_file_atomic(p, data, sizes[k]) == 0);
		hash_buf_sha256(data, sizes[k], a);
		CHECK(hash_file_sha256(p, b) == 0);
		CHECK_STR(a, b);
	}
	free(data);
}

static void
test_parallel(void)
{
	struct hash_job j[5];
	const char *names[] = { "p0", "p1", "p2", "p3" };
	char want[4][65];
	int i;

	memset(j, 0, sizeof(j));
	for (i = 0; i < 4; i++) {
		char data[100000];
		memset(data, 'a' + i, sizeof(data));
		CHECK(write_file_atomic(path_of(names[i]), data,
					sizeof(data) - (size_t)i) == 0);
		hash_buf_sha256(data, sizeof(data) - (size_t)i, want[i]);
		j[i].path = xstrdup(path_of(names[i]));
	}
	j[4].path = xstrdup(path_of("nope"));
	error_silent++;
	CHECK(hash_files(j, 5, 3, 0) < 0);      /* one is missing */
	error_silent--;
	for (i = 0; i < 4; i++) {
		CHECK(j[i].ok);
		CHECK_STR(j[i].hex, want[i]);
		CHECK(j[i].bytes == 100000 - (uint64_t)i);
	}
	CHECK(!j[4].ok && j[4].err && strstr(j[4].err, "nope"));
	CHECK(hash_files(j, 4, 0, 0) == 0);
	for (i = 0; i < 4; i++)
		CHECK_STR(j[i].hex, want[i]);
	hash_jobs_release(j, 5);
	for (i = 0; i < 5; i++)
		free((char *)j[i].path);
}

static void
test_cache(void)
{
	struct store *s = NULL;
	struct hash_job j;
	char want[65], hex[65];
	const char *db = path_of("cache.db");
	const char *f = path_of("model.gguf");

	CHECK(store_open(&s, db) == 0);
	if (!s)
		return;
	write_aged(f, "first version", 13, 100);
	hash_buf_sha256("first version", 13, want);

	memset(&j, 0, sizeof(j));
	j.path = f;
	CHECK(hash_files_cached(s, &j, 1, 0, 1, 0) == 0);
	CHECK(j.ok && !j.cached && j.cacheable && j.bytes == 13);
	CHECK_STR(j.hex, want);
	/* Unchanged: answered from the cache, nothing read. */
	CHECK(hash_files_cached(s, &j, 1, 0, 1, 0) == 0);
	CHECK(j.ok && j.cached && j.bytes == 0);
	CHECK_STR(j.hex, want);
	CHECK(store_count(s, "hash_cache") == 1);
	/* --rehash reads it again. */
	CHECK(hash_files_cached(s, &j, 1, 1, 1, 0) == 0);
	CHECK(j.ok && !j.cached && j.bytes == 13);

	/* Same size, different content, another (old) mtime: a miss. */
	write_aged(f, "other version", 13, 50);
	hash_buf_sha256("other version", 13, want);
	CHECK(hash_files_cached(s, &j, 1, 0, 1, 0) == 0);
	CHECK(j.ok && !j.cached);
	CHECK_STR(j.hex, want);
	CHECK(hash_files_cached(s, &j, 1, 0, 1, 0) == 0);
	CHECK(j.cached);

	/* Touched now: a miss, and too recent to be cached (racy). */
	write_aged(f, "third version", 13, 0);
	hash_buf_sha256("third version", 13, want);
	CHECK(hash_files_cached(s, &j, 1, 0, 1, 0) == 0);
	CHECK(j.ok && !j.cached && !j.cacheable);
	CHECK_STR(j.hex, want);
	CHECK(hash_files_cached(s, &j, 1, 0, 1, 0) == 0);
	CHECK(!j.cached);

	/* The single-file API, and no store at all. */
	CHECK(hash_file_cached(s, f, 0, hex) == 0);
	CHECK_STR(hex, want);
	CHECK(hash_file_cached(NULL, f, 0, hex) == 0);
	CHECK_STR(hex, want);
	error_silent++;
	CHECK(hash_file_cached(s, path_of("absent"), 0, hex) < 0);
	error_silent--;
	hash_jobs_release(&j, 1);
	store_close(s);
}

static void
test_zz_cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

static const struct test_case tests[] = {
	{ "sha-256 vectors", test_vectors },
	{ "file hash equals buffer hash", test_file_matches_buffer },
	{ "read-ahead ring at its edges", test_feeder_edges },
	{ "parallel hashing, one failure", test_parallel },
	{ "cache: hit, rehash, invalidation, racy guard", test_cache },
	{ "cleanup", test_zz_cleanup },
};

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/shimbench-hash-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	return test_main(tests, ARRAY_SIZE(tests));
}
