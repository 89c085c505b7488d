/*
 * Runs fuzz targets without libFuzzer: every FILE, and every file in
 * every DIR, once through LLVMFuzzerTestOneInput(). Used by make check
 * (t8030) to replay the corpora under the sanitizers of the build.
 *
 *   replay-NAME FILE|DIR...
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static long done;

static int
one(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return -1;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			data = realloc(data, cap);
			if (!data)
				abort();
		}
		n = fread(data + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	done++;
	return 0;
}

static int
walk(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int ret = 0;

	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return one(path);
	d = opendir(path);
	if (!d) {
		perror(path);
		return -1;
	}
	while ((e = readdir(d))) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = malloc(strlen(path) + strlen(e->d_name) + 2);
		if (!p)
			abort();
		sprintf(p, "%s/%s", path, e->d_name);
		if (walk(p) < 0)
			ret = -1;
		free(p);
	}
	closedir(d);
	return ret;
}

int
main(int argc, char **argv)
{
	int i, ret = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
		if (walk(argv[i]) < 0)
			ret = 1;
	printf("%ld inputs replayed\n", done);
	return ret;
}
