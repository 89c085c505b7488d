#ifndef EVIDENCE_HASHCACHE_H
#define EVIDENCE_HASHCACHE_H

/*
 * Model hashing through the store's hash cache. A file's answer is
 * reused when its (device, inode, size, mtime, ctime) are those recorded
 * when it was hashed: an unchanged 17 GB model is re-verified by one
 * stat. ctime is part of the key because no program can set it back: a
 * model edited in place with its mtime restored (touch -d) has a new
 * ctime and is read again. What the cache trusts: that the file system
 * updates ctime on every write, and that nobody changes the clock to
 * forge one (root can).
 *
 * A file is entered in the cache only when its stat did not change while
 * it was read and its mtime is more than HASH_RACY_NS older than the read.
 */

#include <stddef.h>

#include "models/hash.h"

struct store;

/*
 * hash_files() through the cache of s (NULL: no cache); rehash reads
 * everything again and refreshes the cache. Same return as hash_files().
 */
int hash_files_cached(struct store *s, struct hash_job *jobs, size_t n,
		      int rehash, int threads, int progress);
/* One file through the cache; 0, or -1 after error(). */
int hash_file_cached(struct store *s, const char *path, int rehash,
		     char hex[SHA256_HEX_LEN + 1]);

#endif
