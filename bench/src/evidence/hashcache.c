#define _POSIX_C_SOURCE 200809L
#include "evidence/hashcache.h"
#include "evidence/store.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int
stat_key(const char *path, struct stat *st)
{
	return stat(path, st) == 0 && S_ISREG(st->st_mode) ? 0 : -1;
}

int
hash_files_cached(struct store *s, struct hash_job *jobs, size_t n,
		  int rehash, int threads, int progress)
{
	struct hash_job *todo = xcalloc(n ? n : 1, sizeof(*todo));
	size_t *idx = xcalloc(n ? n : 1, sizeof(*idx));
	size_t i, m = 0;
	int ret = 0;

	for (i = 0; i < n; i++) {
		struct stat st;
		double t0 = mono_now();

		jobs[i].ok = jobs[i].cached = jobs[i].cacheable = 0;
		jobs[i].err = NULL;
		jobs[i].bytes = 0;
		jobs[i].seconds = 0;
		if (s && !rehash && stat_key(jobs[i].path, &st) == 0 &&
		    store_hash_cache_get(s, (uint64_t)st.st_dev,
					 (uint64_t)st.st_ino,
					 (int64_t)st.st_size,
					 hash_mtime_ns(&st), hash_ctime_ns(&st),
					 jobs[i].hex) == 1) {
			jobs[i].ok = jobs[i].cached = 1;
			jobs[i].seconds = mono_now() - t0;
			continue;
		}
		todo[m] = jobs[i];
		idx[m++] = i;
	}
	if (m && hash_files(todo, m, threads, progress) < 0)
		ret = -1;
	for (i = 0; i < m; i++) {
		struct hash_job *j = &todo[i];
		struct stat st;

		/*
		 * Cache only what cannot be racy: the path still names the
		 * file that was read, unchanged, and its mtime is older than
		 * the read by more than a timestamp tick could hide.
		 */
		if (s && j->ok && j->mtime_ns < j->started_ns - HASH_RACY_NS &&
		    stat_key(j->path, &st) == 0 &&
		    (uint64_t)st.st_dev == j->dev &&
		    (uint64_t)st.st_ino == j->ino &&
		    (int64_t)st.st_size == j->size &&
		    hash_mtime_ns(&st) == j->mtime_ns &&
		    hash_ctime_ns(&st) == j->ctime_ns) {
			if (store_hash_cache_put(s, j->dev, j->ino, j->size,
						 j->mtime_ns, j->ctime_ns,
						 j->path, j->hex) == 0)
				j->cacheable = 1;
		}
		jobs[idx[i]] = *j;
	}
	free(todo);
	free(idx);
	return ret;
}

int
hash_file_cached(struct store *s, const char *path, int rehash,
		 char hex[SHA256_HEX_LEN + 1])
{
	struct hash_job j;
	int ret;

	memset(&j, 0, sizeof(j));
	j.path = path;
	ret = hash_files_cached(s, &j, 1, rehash, 1, 0);
	if (ret == 0)
		memcpy(hex, j.hex, sizeof(j.hex));
	hash_jobs_release(&j, 1);
	return ret;
}
