#define _POSIX_C_SOURCE 200809L
#ifdef __linux__
#define _GNU_SOURCE        /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#endif
#ifdef __APPLE__
#define _DARWIN_C_SOURCE   /* st_mtimespec */
#endif
#include "models/hash.h"
#include "base/util.h"


#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __APPLE__
#include <CommonCrypto/CommonDigest.h>
struct sha256_ctx {
	CC_SHA256_CTX cc;
};
#else
#include <openssl/crypto.h>
#include <openssl/evp.h>
struct sha256_ctx {
	EVP_MD_CTX *md;
};
#endif

const char *
hash_backend_version(void)
{
#ifdef __APPLE__
	return "CommonCrypto (system)";
#else
	return OpenSSL_version(OPENSSL_VERSION);
#endif
}

static struct sha256_ctx *
sha256_new(void)
{
	struct sha256_ctx *c = xcalloc(1, sizeof(*c));
#ifdef __APPLE__
	CC_SHA256_Init(&c->cc);
#else
	c->md = EVP_MD_CTX_new();
	if (!c->md || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1)
		die("cannot initialise SHA-256");
#endif
	return c;
}

static void
sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
#ifdef __APPLE__
	const unsigned char *p = data;
	while (len) {
		CC_LONG n = len > 0x40000000 ? 0x40000000 : (CC_LONG)len;
		CC_SHA256_Update(&c->cc, p, n);
		p += n;
		len -= n;
	}
#else
	if (EVP_DigestUpdate(c->md, data, len) != 1)
		die("SHA-256 update failed");
#endif
}

/* Writes the hex digest and frees the context. */
static void
sha256_final_hex(struct sha256_ctx *c, char hex[SHA256_HEX_LEN + 1])
{
	unsigned char md[32];
#ifdef __APPLE__
	CC_SHA256_Final(md, &c->cc);
#else
	unsigned int n = 0;
	if (EVP_DigestFinal_ex(c->md, md, &n) != 1 || n != 32)
		die("SHA-256 final failed");
	EVP_MD_CTX_free(c->md);
#endif
	free(c);
	hex_encode(md, 32, hex);
}

void
hash_buf_sha256(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1])
{
	struct sha256_ctx *c = sha256_new();

	sha256_update(c, data, len);
	sha256_final_hex(c, hex);
}

/* Read size: measured fastest on page-cached files (BENCHMARKS.md). */
#define HASH_BLOCK (256u << 10)

#ifdef __APPLE__
#define MTIME_NS(st) ((int64_t)(st).st_mtimespec.tv_sec * 1000000000 + \
		      (st).st_mtimespec.tv_nsec)
#define CTIME_NS(st) ((int64_t)(st).st_ctimespec.tv_sec * 1000000000 + \
		      (st).st_ctimespec.tv_nsec)
#else
#define MTIME_NS(st) ((int64_t)(st).st_mtim.tv_sec * 1000000000 + \
		      (st).st_mtim.tv_nsec)
#define CTIME_NS(st) ((int64_t)(st).st_ctim.tv_sec * 1000000000 + \
		      (st).st_ctim.tv_nsec)
#endif

static int64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sets j->err to a message (worker threads must not call error()). */
static void
job_fail(struct hash_job *j, const char *what, int errnum)
{
	char msg[128] = "";

	if (errnum) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
		/* _GNU_SOURCE (for the affinity mask) gives glibc's
		 * strerror_r, which returns the text, in tmp or not */
		char tmp[128];

		snprintf(msg, sizeof(msg), "%s",
			 strerror_r(errnum, tmp, sizeof(tmp)));
#else
		if (strerror_r(errnum, msg, sizeof(msg)))
			snprintf(msg, sizeof(msg), "error %d", errnum);
#endif
	}
	j->err = errnum ? xstrfmt("%s '%s': %s", what, j->path, msg) :
		xstrfmt("'%s' %s", j->path, what);
}

/*
 * Read-ahead in a second thread: while one block is hashed the next ones
 * are copied from the page cache, so a lone file hashes at nearly the
 * in-memory rate. Used only when a CPU would otherwise stay idle.
 *
 * The two threads share a ring of FEED_N blocks. Each side sleeps only
 * when it must (the hasher on an empty ring, the feeder on a full one)
 * and is woken only when it sleeps: the feeder once FEED_REFILL blocks
 * are free again, the hasher as soon as one block is ready. Waking a
 * thread for every block cost a futex call per 256 KiB on each side
 * (about four per block, measured with strace) and left the hasher
 * waiting on the feeder (bench/BENCHMARKS.md, "Hashing").
 */
#define FEED_N 8
#define FEED_BLOCK (1u << 20)
#define FEED_REFILL (FEED_N / 2)
#define FEED_MIN (8u << 20)   /* smaller files: not worth a thread */
#define FEED_NO_THREAD (-2)   /* hash_fed(): nothing was read */

struct feeder {
	int fd;
	pthread_mutex_t m;
	pthread_cond_t cv;
	unsigned char *buf[FEED_N];
	ssize_t len[FEED_N];
	int err[FEED_N];
	uint64_t filled, consumed; /* blocks; filled - consumed are ready */
	int feeder_waits, hasher_waits;
};

static void *
feeder_main(void *arg)
{
	struct feeder *f = arg;
	uint64_t i;

	for (i = 0;; i++) {
		int k = (int)(i % FEED_N), e = 0;
		ssize_t n;

		pthread_mutex_lock(&f->m);
		if (f->filled - f->consumed == FEED_N) {
			f->feeder_waits = 1;
			while (f->filled - f->consumed > FEED_N - FEED_REFILL)
				pthread_cond_wait(&f->cv, &f->m);
			f->feeder_waits = 0;
		}
		pthread_mutex_unlock(&f->m);
		do {
			n = read(f->fd, f->buf[k], FEED_BLOCK);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			e = errno;
		pthread_mutex_lock(&f->m);
		f->len[k] = n;
		f->err[k] = e;
		f->filled++;
		if (f->hasher_waits)
			pthread_cond_signal(&f->cv);
		pthread_mutex_unlock(&f->m);
		if (n <= 0)
			return NULL;
	}
}

/*
 * Hashes the rest of fd into c with a feeder thread. Returns the last
 * read()'s result (0 at end of file, -1 with errno set); FEED_NO_THREAD
 * when the thread could not be started (nothing was read).
 */
static ssize_t
hash_fed(int fd, struct sha256_ctx *c, struct hash_job *j,
	 _Atomic uint64_t *done)
{
	struct feeder f;
	pthread_t tid;
	ssize_t n;
	uint64_t i;
	int k, e = 0;

	memset(&f, 0, sizeof(f));
	f.fd = fd;
	pthread_mutex_init(&f.m, NULL);
	pthread_cond_init(&f.cv, NULL);
	for (k = 0; k < FEED_N; k++)
		f.buf[k] = xmalloc(FEED_BLOCK);
	if (pthread_create(&tid, NULL, feeder_main, &f) != 0) {
		n = FEED_NO_THREAD;
		goto cleanup;
	}
	for (i = 0;; i++) {
		k = (int)(i % FEED_N);
		pthread_mutex_lock(&f.m);
		if (f.filled == i) {
			f.hasher_waits = 1;
			while (f.filled == i)
				pthread_cond_wait(&f.cv, &f.m);
			f.hasher_waits = 0;
		}
		n = f.len[k];
		e = f.err[k];
		pthread_mutex_unlock(&f.m);
		if (n <= 0)
			break;
		sha256_update(c, f.buf[k], (size_t)n);
		j->bytes += (uint64_t)n;
		if (done)
			atomic_fetch_add(done, (uint64_t)n);
		pthread_mutex_lock(&f.m);
		f.consumed++;
		if (f.feeder_waits &&
		    f.filled - f.consumed <= FEED_N - FEED_REFILL)
			pthread_cond_signal(&f.cv);
		pthread_mutex_unlock(&f.m);
	}
	pthread_join(tid, NULL);
cleanup:
	for (k = 0; k < FEED_N; k++)
		free(f.buf[k]);
	pthread_mutex_destroy(&f.m);
	pthread_cond_destroy(&f.cv);
	if (n < 0 && n != FEED_NO_THREAD)
		errno = e;
	return n;
}

/*
 * Reads and hashes one file into j; never calls error(), so it can run
 * in any thread. done, when not NULL, is advanced by every block read.
 * feed: a CPU is spare, use a read-ahead thread for large files.
 */
static void
hash_one(struct hash_job *j, _Atomic uint64_t *done, int feed)
{
	struct sha256_ctx *c = NULL;
	unsigned char *block = NULL;
	struct stat a, b;
	double t0 = mono_now();
	ssize_t n;
	int fd;

	j->ok = 0;
	j->bytes = 0;
	j->started_ns = wall_ns();
	fd = open(j->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		job_fail(j, "cannot open", errno);
		return;
	}
	if (fstat(fd, &a) < 0) {
		job_fail(j, "cannot stat", errno);
		goto cleanup;
	}
	if (!S_ISREG(a.st_mode)) {
		job_fail(j, "is not a regular file", 0);
		goto cleanup;
	}
#if defined(POSIX_FADV_SEQUENTIAL)
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#elif defined(F_RDAHEAD)
	fcntl(fd, F_RDAHEAD, 1);
#endif
	c = sha256_new();
	n = FEED_NO_THREAD;
	if (feed && a.st_size >= (off_t)FEED_MIN)
		n = hash_fed(fd, c, j, done);
	if (n == FEED_NO_THREAD) {
		block = xmalloc(HASH_BLOCK);
		for (;;) {
			n = read(fd, block, HASH_BLOCK);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			sha256_update(c, block, (size_t)n);
			j->bytes += (uint64_t)n;
			if (done)
				atomic_fetch_add(done, (uint64_t)n);
		}
	}
	if (n < 0) {
		job_fail(j, "cannot read", errno);
		goto cleanup;
	}
	if (fstat(fd, &b) < 0) {
		job_fail(j, "cannot stat", errno);
		goto cleanup;
	}
	if (a.st_size != b.st_size || MTIME_NS(a) != MTIME_NS(b) ||
	    (uint64_t)b.st_size != j->bytes) {
		job_fail(j, "changed while it was being hashed", 0);
		goto cleanup;
	}
	sha256_final_hex(c, j->hex);
	c = NULL;
	j->dev = (uint64_t)b.st_dev;
	j->ino = (uint64_t)b.st_ino;
	j->size = (int64_t)b.st_size;
	j->mtime_ns = MTIME_NS(b);
	j->ctime_ns = CTIME_NS(b);
	j->ok = 1;
cleanup:
	if (c) {
		char discard[SHA256_HEX_LEN + 1];
		sha256_final_hex(c, discard);
	}
	free(block);
	close(fd);
	j->seconds = mono_now() - t0;
}

/*
 * The CPUs this process may run on: on Linux those of its affinity mask
 * (taskset, a container's cpuset), else the online ones. A read-ahead
 * thread on a CPU the process does not have would only take turns with
 * the hasher.
 */
static int
online_cpus(void)
{
	long n;
#ifdef __linux__
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
#endif
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

int
hash_file_sha256(const char *path, char hex[SHA256_HEX_LEN + 1])
{
	struct hash_job j;

	memset(&j, 0, sizeof(j));
	j.path = path;
	hash_one(&j, NULL, online_cpus() > 1);
	if (!j.ok) {
		error("%s", j.err);
		free(j.err);
		return -1;
	}
	memcpy(hex, j.hex, sizeof(j.hex));
	return 0;
}

struct pool {
	struct hash_job *jobs;
	size_t n, next, finished;
	int feed;                  /* spare CPUs: read-ahead threads */
	pthread_mutex_t lock;
	_Atomic uint64_t done;
};

static void *
worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&p->lock);
		i = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->lock);
		if (i == p->n)
			return NULL;
		hash_one(&p->jobs[i], &p->done, p->feed);
		pthread_mutex_lock(&p->lock);
		p->finished++;
		pthread_mutex_unlock(&p->lock);
	}
}

static void
human(char *out, size_t len, double bytes)
{
	const char *unit[] = { "B", "KB", "MB", "GB", "TB" };
	int u = 0;

	while (bytes >= 1000 && u < 4) {
		bytes /= 1000;
		u++;
	}
	snprintf(out, len, u ? "%.2f %s" : "%.0f %s", bytes, unit[u]);
}

static void
draw_bar(uint64_t done, uint64_t total, double elapsed)
{
	char d[32], t[32], r[32];
	int width = 30, fill = total ? (int)(done * (uint64_t)width / total) : 0;
	int i;

	human(d, sizeof(d), (double)done);
	human(t, sizeof(t), (double)total);
	human(r, sizeof(r), elapsed > 0 ? (double)done / elapsed : 0);
	fprintf(stderr, "\rhashing %3d%% [", total ? (int)(done * 100 / total) :
		100);
	for (i = 0; i < width; i++)
		fputc(i < fill ? '#' : ' ', stderr);
	fprintf(stderr, "] %10s / %-10s %10s/s ", d, t, r);
	fflush(stderr);
}

int
hash_files(struct hash_job *jobs, size_t n, int threads, int progress)
{
	struct pool p;
	pthread_t *tid;
	uint64_t total = 0;
	size_t i, started = 0;
	int show, ret = 0;
	double t0 = mono_now();

	for (i = 0; i < n; i++) {
		struct stat st;

		jobs[i].ok = jobs[i].cached = jobs[i].cacheable = 0;
		jobs[i].err = NULL;
		if (stat(jobs[i].path, &st) == 0 && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	}
	if (threads <= 0)
		threads = online_cpus();
	if ((size_t)threads > n)
		threads = (int)n;
	show = progress && total > HASH_PROGRESS_MIN && isatty(2);

	memset(&p, 0, sizeof(p));
	p.jobs = jobs;
	p.n = n;
	p.feed = online_cpus() > threads;
	pthread_mutex_init(&p.lock, NULL);
	atomic_init(&p.done, 0);
	if (threads <= 1 && !show) {
		worker(&p);
	} else {
		tid = xcalloc((size_t)threads, sizeof(*tid));
		for (i = 0; i < (size_t)threads; i++)
			if (pthread_create(&tid[i], NULL, worker, &p) == 0)
				started++;
		if (!started)
			worker(&p);
		while (show) {
			struct timespec nap = { 0, 100 * 1000 * 1000 };
			size_t fin;

			pthread_mutex_lock(&p.lock);
			fin = p.finished;
			pthread_mutex_unlock(&p.lock);
			draw_bar(atomic_load(&p.done), total, mono_now() - t0);
			if (fin == n)
				break;
			nanosleep(&nap, NULL);
		}
		if (show)
			fputc('\n', stderr);
		for (i = 0; i < started; i++)
			pthread_join(tid[i], NULL);
		free(tid);
	}
	pthread_mutex_destroy(&p.lock);
	for (i = 0; i < n; i++)
		if (!jobs[i].ok) {
			error("%s", jobs[i].err ? jobs[i].err : "hash failed");
			ret = -1;
		}
	return ret;
}

int64_t
hash_mtime_ns(const struct stat *st)
{
	return MTIME_NS(*st);
}

int64_t
hash_ctime_ns(const struct stat *st)
{
	return CTIME_NS(*st);
}

void
hash_jobs_release(struct hash_job *jobs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(jobs[i].err);
		jobs[i].err = NULL;
	}
}
int
hash_is_sha256_hex(const char *s)
{
	size_t i;

	for (i = 0; i < SHA256_HEX_LEN; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return s[i] == '\0';
}
