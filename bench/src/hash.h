#ifndef HASH_H
#define HASH_H

/*
 * SHA-256 of files and buffers, through OpenSSL EVP (Linux) or
 * CommonCrypto (macOS). Hex digests are 64 lowercase characters + NUL.
 */

#include <stddef.h>

#define SHA256_HEX_LEN 64

/* Streaming context; opaque. */
struct sha256_ctx;

struct sha256_ctx *sha256_new(void);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
/* Writes the hex digest and frees the context. */
void sha256_final_hex(struct sha256_ctx *c, char hex[SHA256_HEX_LEN + 1]);

/* Hex digest of a buffer. */
void hash_buf_sha256(const void *data, size_t len,
		     char hex[SHA256_HEX_LEN + 1]);
/* Hex digest of a file, read sequentially; 0, or -1 with error(). */
int hash_file_sha256(const char *path, char hex[SHA256_HEX_LEN + 1]);
/* Returns 1 when s is 64 hex digits (any case), else 0. */
int hash_is_sha256_hex(const char *s);

#endif
