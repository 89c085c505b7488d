/* GGUF headers and tensor infos: gguf_read_fd() over an in-memory file. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "models/gguf.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fd = -1;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *f = tmpfile();

	(void)argc;
	(void)argv;
	error_silent = 1;
	if (!f) {
		perror("tmpfile");
		exit(1);
	}
	fd = fileno(f);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gguf_file g;

	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size ||
	    lseek(fd, 0, SEEK_SET) < 0)
		abort();
	if (gguf_read_fd(fd, size, "fuzz.gguf", &g) == 0)
		gguf_free(&g);
	return 0;
}
