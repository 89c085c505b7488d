#ifndef SUMS_H
#define SUMS_H

/*
 * Checksum files (SHA256SUMS) in the SHA-256 line forms that GNU
 * sha256sum, perl's shasum (macOS) and openssl dgst write:
 *
 *   HEX  NAME    HEX *NAME    HEX NAME (one space, BSD "-r")
 *   SHA256 (NAME) = HEX    SHA2-256(NAME)= HEX    SHA256(NAME)= HEX
 *
 * each optionally after a "\" that marks coreutils' escaped names
 * ("\\", "\n", "\r"). bench/t/fixtures/sums/FORMS.md lists every form
 * with the tool that writes it and what is refused, and why.
 */

#include <stddef.h>

#include "models/hash.h"

struct sums_entry {
	char *name;                     /* normalised: no "./", no "//",
					   escapes decoded; never empty,
					   absolute or containing ".." */
	char hex[SHA256_HEX_LEN + 1];   /* lowercase */
	int line;                       /* 1-based line in the file */
};

/* The entries in file order; a name listed twice appears once. */
struct sums {
	struct sums_entry *e;
	size_t n;
};

/*
 * Parses the text of a checksum file (len bytes, need not be
 * NUL-terminated); `file` names it in messages. Lines starting with "#"
 * and empty lines are skipped; CRLF line ends and a missing final newline
 * are fine. Returns 0 with out filled in (free it with sums_release()),
 * or -1 after error("'FILE' line N: ...") with out empty. A file with no
 * checksum line at all is refused too ("'FILE': no sha-256 checksum
 * lines"), as sha256sum -c and shasum -c refuse it.
 */
int sums_parse(const char *text, size_t len, const char *file,
	       struct sums *out);

/*
 * The entry for name, compared byte for byte with the normalised names
 * (so "a/b", not "./a/b"); NULL when there is none. Linear.
 */
const struct sums_entry *sums_find(const struct sums *s, const char *name);

/* Frees the entries and their names; s is left empty. */
void sums_release(struct sums *s);

#endif
