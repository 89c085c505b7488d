#ifndef HASH_H
#define HASH_H

/*
 * SHA-256 of files and buffers, through OpenSSL EVP (Linux) or
 * CommonCrypto (macOS). Hex digests are 64 lowercase characters + NUL.
 */

#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN 64

/* "OpenSSL 3.0.x …" or "CommonCrypto (system)": what hashes here. */
const char *hash_backend_version(void);

/* Hex digest of a buffer. */
void hash_buf_sha256(const void *data, size_t len,
		     char hex[SHA256_HEX_LEN + 1]);
/* Hex digest of a file, read sequentially; 0, or -1 with error(). */
int hash_file_sha256(const char *path, char hex[SHA256_HEX_LEN + 1]);
/* Returns 1 when s is 64 hex digits (any case), else 0. */
int hash_is_sha256_hex(const char *s);

/*
 * Fast file hashing (the cached variant is evidence/hashcache.h). Files
 * are read sequentially in 256 KiB blocks (a size that stays in the CPU
 * cache between the copy and the hash) after read-ahead advice; several
 * files are hashed in parallel, one thread per file, up to the number of
 * CPUs the process may use (on Linux its affinity mask: taskset, a
 * container's cpuset). When CPUs are left over (fewer files than CPUs),
 * each file of 8 MiB or more also gets a read-ahead thread that copies
 * the next 1 MiB blocks (a ring of eight) while the current one is
 * hashed.
 *
 * struct hash_job describes one file: path is the caller's; everything
 * else is filled in. err, when set, is an allocated message (free it with
 * hash_jobs_release()).
 */
struct hash_job {
	const char *path;          /* in */
	char hex[SHA256_HEX_LEN + 1];
	int ok;                    /* 1 when hex is valid */
	int cached;                /* 1 when hex came from the cache */
	int cacheable;             /* 1 when hashed and stored in the cache */
	uint64_t bytes;            /* bytes read (0 when cached) */
	double seconds;            /* time spent reading and hashing, or
				      answering from the cache */
	char *err;                 /* why it failed, or NULL */
	/* The file's identity when it was hashed (private to hash.c). */
	uint64_t dev, ino;
	int64_t size, mtime_ns, ctime_ns;
	int64_t started_ns;        /* wall clock when reading began */
};

/* Progress bar: shown for files over this size when stderr is a TTY. */
#define HASH_PROGRESS_MIN (256ull << 20)

/*
 * Hashes n files, at most threads at a time (0 = the CPUs above). progress:
 * draw a bar with throughput on stderr when the total is over
 * HASH_PROGRESS_MIN and stderr is a TTY. Returns 0 when every job is ok,
 * -1 when any failed (each failure is reported with error() and left in
 * its job's err).
 */
int hash_files(struct hash_job *jobs, size_t n, int threads, int progress);

/*
 * A cache may keep an answer only when the file's mtime is older than
 * the start of its read by more than this (a later write in the same
 * timestamp tick could otherwise leave a stale entry).
 */
#define HASH_RACY_NS 2000000000LL

/* A file's modification and status-change times in nanoseconds. */
struct stat;
int64_t hash_mtime_ns(const struct stat *st);
int64_t hash_ctime_ns(const struct stat *st);

/* Frees the err messages of n jobs. */
void hash_jobs_release(struct hash_job *jobs, size_t n);

#endif
