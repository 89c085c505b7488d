#define _POSIX_C_SOURCE 200809L
#include "hash.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#ifdef __APPLE__
#include <CommonCrypto/CommonDigest.h>
struct sha256_ctx {
	CC_SHA256_CTX cc;
};
#else
#include <openssl/evp.h>
struct sha256_ctx {
	EVP_MD_CTX *md;
};
#endif

struct sha256_ctx *
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

void
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

void
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

int
hash_file_sha256(const char *path, char hex[SHA256_HEX_LEN + 1])
{
	enum { CHUNK = 1 << 20 };
	struct sha256_ctx *c;
	unsigned char *chunk;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	chunk = xmalloc(CHUNK);
	c = sha256_new();
	for (;;) {
		n = read(fd, chunk, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		sha256_update(c, chunk, (size_t)n);
	}
	sha256_final_hex(c, hex);
	free(chunk);
	close(fd);
	if (n < 0)
		return error("cannot read '%s': %s", path, strerror(errno));
	return 0;
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
