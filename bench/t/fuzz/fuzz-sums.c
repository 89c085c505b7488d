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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sums s = { 0 };
	size_t i;

	if (sums_parse((const char *)data, size, "SHA256SUMS", &s) == 0) {
		for (i = 0; i < s.n; i++) {
			const char *n = s.e[i].name;
			/* a parsed name never leaves the directory */
			if (!*n || n[0] == '/' || strstr(n, "..") == n ||
			    strstr(n, "/../") || strlen(s.e[i].hex) != 64 ||
			    sums_find(&s, n) == NULL)
				__builtin_trap();
		}
		sums_find(&s, "out.jsonl");
	}
	sums_release(&s);
	return 0;
}
