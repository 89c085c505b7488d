/*
 * The injected library's headers (run/shimlib.c): thin and universal
 * Mach-O files, ELF shared objects, and every malformed header refused
 * with the file named. The files are written here, byte by byte, as
 * the Mach-O and ELF formats lay them out (mach-o/loader.h,
 * mach-o/fat.h, elf.h); t5004 checks the same reader against files
 * linked by ld64.lld and combined by llvm-lipo.
 */
#define _POSIX_C_SOURCE 200809L
#include "run/shimlib.h"
#include "test.h"
#include "base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARM64 0x0100000cu
#define X86_64 0x01000007u

static char dir[] = "/tmp/test-shimlib.XXXXXX";
static char path[256];

static void
put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}

static void
put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v;
}

/* A 64-bit Mach-O header (32 bytes) at p. */
static void
macho(unsigned char *p, uint32_t cpu, uint32_t sub, uint32_t type)
{
	memset(p, 0, 32);
	put_le32(p, 0xfeedfacfu);
	put_le32(p + 4, cpu);
	put_le32(p + 8, sub);
	put_le32(p + 12, type);
}

static const char *
write_bytes(const char *name, const unsigned char *b, size_t n)
{
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	CHECK(fp && fwrite(b, 1, n, fp) == n);
	if (fp)
		fclose(fp);
	return path;
}

/*
 * A universal file of n slices (cpu, sub pairs; an entry's own header
 * says hcpu/hsub when given), each slice 4096-aligned and 64 bytes.
 */
struct slice { uint32_t cpu, sub, type, hcpu, hsub; };

static const char *
write_fat(const char *name, const struct slice *s, uint32_t n, int is64,
	  uint32_t bad_offset)
{
	static unsigned char b[4096 * 8];
	size_t esize = is64 ? 32 : 20;
	uint32_t i;

	memset(b, 0, sizeof(b));
	put_be32(b, is64 ? 0xcafebabfu : 0xcafebabeu);
	put_be32(b + 4, n);
	for (i = 0; i < n; i++) {
		unsigned char *e = b + 8 + i * esize;
		uint32_t off = bad_offset && i == n - 1 ? bad_offset :
			4096 * (i + 1);

		put_be32(e, s[i].cpu);
		put_be32(e + 4, s[i].sub);
		if (is64) {
			put_be32(e + 12, off);
			put_be32(e + 20, 64);
			put_be32(e + 24, 12);
		} else {
			put_be32(e + 8, off);
			put_be32(e + 12, 64);
			put_be32(e + 16, 12);
		}
		macho(b + 4096 * (i + 1), s[i].hcpu ? s[i].hcpu : s[i].cpu,
		      s[i].hcpu ? s[i].hsub : s[i].sub,
		      s[i].type ? s[i].type : 6);
	}
	return write_bytes(name, b, n ? 4096 * n + 64 : 64);
}

static void
test_thin(void)
{
	unsigned char b[64];
	struct shimlib_info i;
	struct buf d = BUF_INIT;

	macho(b, ARM64, 0, 6);
	CHECK(shimlib_inspect(write_bytes("a64.dylib", b, sizeof(b)), &i) == 0);
	CHECK(i.format == SHIMLIB_MACHO && !i.universal && i.nslices == 1);
	CHECK(i.has_arm64 && !i.has_arm64e);
	CHECK_STR(i.archs, "arm64");
	CHECK(shimlib_check_macos(path, &i) == 0);
	shimlib_describe(&d, &i);
	CHECK_STR(d.buf, "Mach-O dylib (arm64)");

	/* arm64e with the pointer-authentication ABI bits (0x80000002). */
	macho(b, ARM64, 0x80000002u, 6);
	CHECK(shimlib_inspect(write_bytes("a64e.dylib", b, sizeof(b)), &i) == 0);
	CHECK(!i.has_arm64 && i.has_arm64e);
	CHECK_STR(i.archs, "arm64e");
	CHECK(shimlib_check_macos(path, &i) == 0);
	buf_release(&d);
}

static void
test_universal(void)
{
	const struct slice both[] = {
		{ ARM64, 0, 0, 0, 0 }, { ARM64, 0x80000002u, 0, 0, 0 } };
	const struct slice intel[] = { { X86_64, 3, 0, 0, 0 } };
	struct shimlib_info i;
	struct buf d = BUF_INIT;

	CHECK(shimlib_inspect(write_fat("u.dylib", both, 2, 0, 0), &i) == 0);
	CHECK(i.universal && i.nslices == 2 && i.has_arm64 && i.has_arm64e);
	CHECK_STR(i.archs, "arm64 arm64e");
	shimlib_describe(&d, &i);
	CHECK_STR(d.buf, "Mach-O universal dylib (arm64 arm64e)");
	CHECK(shimlib_inspect(write_fat("u64.dylib", both, 2, 1, 0), &i) == 0);
	CHECK(i.universal && i.has_arm64 && i.has_arm64e);

	/* Intel only: a dylib, but nothing an Apple silicon process loads. */
	error_silent++;
	CHECK(shimlib_inspect(write_fat("x.dylib", intel, 1, 0, 0), &i) == 0);
	CHECK_STR(i.archs, "x86_64");
	CHECK(shimlib_check_macos(path, &i) < 0);
	CHECK(strstr(error_last(), "has no arm64 or arm64e slice (it has: x86_64)"));
	error_silent--;
	buf_release(&d);
}

static void
test_elf(void)
{
	unsigned char b[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	struct shimlib_info i;

	b[16] = 3; b[18] = 62;          /* ET_DYN, EM_X86_64 */
	CHECK(shimlib_inspect(write_bytes("l.so", b, sizeof(b)), &i) == 0);
	CHECK(i.format == SHIMLIB_ELF);
	CHECK_STR(i.archs, "ELF x86-64");
	error_silent++;
	CHECK(shimlib_check_macos(path, &i) < 0);
	CHECK(strstr(error_last(), "is an ELF x86-64 shared object, not a Mach-O dylib"));
	b[16] = 2;                      /* ET_EXEC */
	CHECK(shimlib_inspect(write_bytes("e", b, sizeof(b)), &i) < 0);
	CHECK(strstr(error_last(), "is an ELF file but not a shared object"));
	error_silent--;
}

/* Each malformed file and the words its refusal must contain. */
static void
test_refusals(void)
{
	const struct slice objslice[] = {
		{ ARM64, 0, 0, 0, 0 }, { ARM64, 2, 1, 0, 0 } };
	const struct slice liar[] = { { ARM64, 2, 0, ARM64, 0 } };
	const struct slice one[] = { { ARM64, 0, 0, 0, 0 } };
	unsigned char b[64];
	struct shimlib_info i;

	error_silent++;
	CHECK(shimlib_inspect(write_bytes("text", (const unsigned char *)
					  "#!/bin/sh\necho hi\n", 18), &i) < 0);
	CHECK(strstr(error_last(), "is neither a Mach-O dylib nor an ELF shared object"));
	CHECK(strstr(error_last(), path));
	CHECK(shimlib_inspect(write_bytes("tiny", (const unsigned char *)"ab", 2), &i) < 0);
	CHECK(strstr(error_last(), "(2 bytes) is no library"));
	macho(b, ARM64, 0, 1);          /* MH_OBJECT */
	CHECK(shimlib_inspect(write_bytes("o.o", b, sizeof(b)), &i) < 0);
	CHECK(strstr(error_last(), "is not a dynamic library (Mach-O file type 1"));
	macho(b, ARM64, 0, 6);
	put_le32(b, 0xfeedfaceu);       /* 32-bit */
	CHECK(shimlib_inspect(write_bytes("m32", b, sizeof(b)), &i) < 0);
	CHECK(strstr(error_last(), "is a 32-bit Mach-O file"));
	CHECK(shimlib_inspect(write_bytes("trunc", b, 8), &i) < 0);
	CHECK(strstr(error_last(), "is truncated"));
	CHECK(shimlib_inspect(write_fat("obj.fat", objslice, 2, 0, 0), &i) < 0);
	CHECK(strstr(error_last(), ": a slice is not a dynamic library"));
	CHECK(shimlib_inspect(write_fat("liar.fat", liar, 1, 0, 0), &i) < 0);
	CHECK(strstr(error_last(), "its fat entry"));
	CHECK(shimlib_inspect(write_fat("out.fat", one, 1, 0, 1u << 30), &i) < 0);
	CHECK(strstr(error_last(), "slice 1 (bytes 1073741824+64) lies outside the file"));
	CHECK(shimlib_inspect(write_fat("over.fat", one, 1, 0, 8), &i) < 0);
	CHECK(strstr(error_last(), "or over its header"));
	CHECK(shimlib_inspect(write_fat("none.fat", one, 0, 0, 0), &i) < 0);
	CHECK(strstr(error_last(), "a universal file with 0 slices"));
	CHECK(shimlib_inspect(dir, &i) < 0);
	CHECK(strstr(error_last(), "is not a regular file"));
	snprintf(path, sizeof(path), "%s/absent", dir);
	CHECK(shimlib_inspect(path, &i) < 0);
	CHECK(strstr(error_last(), "cannot open"));
	error_silent--;
}

static void
setup(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void
cleanup_dir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

static const struct test_case tests[] = {
	{ "thin arm64 and arm64e dylibs", test_thin },
	{ "universal dylibs (fat and fat64), an Intel-only one refused for macOS", test_universal },
	{ "ELF shared objects; an ELF executable refused", test_elf },
	{ "malformed headers refused, the file named", test_refusals },
};

int
main(void)
{
	int rc;

	setup();
	rc = test_main(tests, sizeof(tests) / sizeof(tests[0]));
	cleanup_dir();
	return rc;
}
