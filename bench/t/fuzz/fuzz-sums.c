/* Checksum files in every form sha256sum, shasum and openssl write: sums_parse(). */
#include "fuzz.h"
#include "evidence/sums.h"
#include "base/util.h"

#include <string.h>

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	error_silent = 1;
	return 0;
}

/* 1 when name stays inside the directory: relative, no "." or ".." part. */
static int
inside(const char *name)
{
	const char *p = name;

	if (!*name || *name == '/')
		return 0;
	while (*p) {
		size_t len = strcspn(p, "/");

		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += len;
		if (*p == '/')
			p++;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sums s = { 0 };
	size_t i;

	if (sums_parse((const char *)data, size, "SHA256SUMS", &s) == 0) {
		for (i = 0; i < s.n; i++) {
			const char *n = s.e[i].name;
			/* a parsed name never leaves the directory */
			if (!inside(n) || strlen(s.e[i].hex) != 64 ||
			    sums_find(&s, n) == NULL)
				__builtin_trap();
		}
		sums_find(&s, "out.jsonl");
	}
	sums_release(&s);
	return 0;
}
