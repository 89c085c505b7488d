/*
 * The headers of an injected library (see shimlib.h): Mach-O thin and
 * universal (fat and fat64) files, ELF shared objects. Only headers are
 * read; nothing is executed or mapped.
 */
#define _POSIX_C_SOURCE 200809L
#include "run/shimlib.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MH_MAGIC_64 0xfeedfacfu
#define MH_CIGAM_64 0xcffaedfeu
#define MH_MAGIC 0xfeedfaceu
#define MH_CIGAM 0xcefaedfeu
#define FAT_MAGIC 0xcafebabeu
#define FAT_MAGIC_64 0xcafebabfu
#define MH_DYLIB 6
#define CPU_TYPE_X86_64 0x01000007u
#define CPU_TYPE_ARM64 0x0100000cu
#define CPU_SUBTYPE_MASK 0x00ffffffu    /* below the capability bits */
#define CPU_SUBTYPE_ARM64E 2u
/* More slices than any real universal file has: a bound, not a limit. */
#define MAX_SLICES 16

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3];
}

static uint64_t
be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
		(uint32_t)p[1] << 8 | p[0];
}

/* Reads exactly n bytes at off; -1 with error() when short or failing. */
static int
read_at(int fd, const char *path, uint64_t off, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got,
				  (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return error("cannot read '%s': %s", path,
				     strerror(errno));
		if (r == 0)
			return error("'%s' is truncated: its headers end at "
				     "byte %llu", path,
				     (unsigned long long)(off + got));
		got += (size_t)r;
	}
	return 0;
}

static void
add_arch(struct shimlib_info *info, uint32_t cpu, uint32_t sub)
{
	size_t len = strlen(info->archs);
	char name[40];

	if (cpu == CPU_TYPE_ARM64 && (sub & CPU_SUBTYPE_MASK) == CPU_SUBTYPE_ARM64E) {
		snprintf(name, sizeof(name), "arm64e");
		info->has_arm64e = 1;
	} else if (cpu == CPU_TYPE_ARM64) {
		snprintf(name, sizeof(name), "arm64");
		info->has_arm64 = 1;
	} else if (cpu == CPU_TYPE_X86_64) {
		snprintf(name, sizeof(name), "x86_64");
	} else {
		snprintf(name, sizeof(name), "cputype 0x%x", (unsigned)cpu);
	}
	snprintf(info->archs + len, sizeof(info->archs) - len, "%s%s",
		 len ? " " : "", name);
	info->nslices++;
}

/*
 * The 64-bit Mach-O header at off must be a dylib; with a fat entry
 * (cpu, sub not 0) its own CPU type and subtype must agree with it.
 */
static int
macho_slice(int fd, const char *path, uint64_t off, int fat, uint32_t fcpu,
	    uint32_t fsub, struct shimlib_info *info)
{
	unsigned char h[16];
	uint32_t magic, cpu, sub, type;

	if (read_at(fd, path, off, h, sizeof(h)) < 0)
		return -1;
	magic = le32(h);
	if (magic == MH_MAGIC || magic == MH_CIGAM)
		return error("'%s' is a 32-bit Mach-O file: no Apple silicon "
			     "process can load it", path);
	if (magic != MH_MAGIC_64)
		return error("'%s': %s at byte %llu is not a 64-bit Mach-O "
			     "header (magic 0x%08x)", path,
			     fat ? "the slice" : "the file",
			     (unsigned long long)off, (unsigned)magic);
	cpu = le32(h + 4);
	sub = le32(h + 8);
	type = le32(h + 12);
	if (fat && (cpu != fcpu ||
		    (sub & CPU_SUBTYPE_MASK) != (fsub & CPU_SUBTYPE_MASK)))
		return error("'%s': the slice at byte %llu says cputype 0x%x "
			     "subtype 0x%x, its fat entry 0x%x 0x%x", path,
			     (unsigned long long)off, (unsigned)cpu,
			     (unsigned)sub, (unsigned)fcpu, (unsigned)fsub);
	if (type != MH_DYLIB)
		return error("'%s'%s is not a dynamic library (Mach-O file "
			     "type %u, a dylib is %u)", path,
			     fat ? ": a slice" : "", (unsigned)type, MH_DYLIB);
	add_arch(info, cpu, sub);
	return 0;
}

/* A universal file: its fat header, then every slice's own header. */
static int
fat_file(int fd, const char *path, uint64_t size, int is64,
	 struct shimlib_info *info)
{
	unsigned char h[8], e[32];
	size_t esize = is64 ? 32 : 20;
	uint32_t n, i;

	if (read_at(fd, path, 0, h, sizeof(h)) < 0)
		return -1;
	n = be32(h + 4);
	if (n == 0 || n > MAX_SLICES)
		return error("'%s': a universal file with %u slices",
			     path, (unsigned)n);
	info->universal = 1;
	for (i = 0; i < n; i++) {
		uint32_t cpu, sub;
		uint64_t off, len;

		if (read_at(fd, path, 8 + (uint64_t)i * esize, e, esize) < 0)
			return -1;
		cpu = be32(e);
		sub = be32(e + 4);
		off = is64 ? be64(e + 8) : be32(e + 8);
		len = is64 ? be64(e + 16) : be32(e + 12);
		if (off < 8 + (uint64_t)n * esize || off > size ||
		    len > size - off || len < 16)
			return error("'%s': slice %u (bytes %llu+%llu) lies "
				     "outside the file (%llu bytes) or over its "
				     "header", path, (unsigned)i + 1,
				     (unsigned long long)off,
				     (unsigned long long)len,
				     (unsigned long long)size);
		if (macho_slice(fd, path, off, 1, cpu, sub, info) < 0)
			return -1;
	}
	return 0;
}

static int
elf_file(int fd, const char *path, struct shimlib_info *info)
{
	unsigned char h[20];
	unsigned type, machine;

	if (read_at(fd, path, 0, h, sizeof(h)) < 0)
		return -1;
	/* e_type and e_machine in the file's own byte order (EI_DATA). */
	type = h[5] == 2 ? (unsigned)(h[16] << 8 | h[17]) :
		(unsigned)(h[17] << 8 | h[16]);
	machine = h[5] == 2 ? (unsigned)(h[18] << 8 | h[19]) :
		(unsigned)(h[19] << 8 | h[18]);
	if (type != 3)
		return error("'%s' is an ELF file but not a shared object "
			     "(e_type %u)", path, type);
	info->format = SHIMLIB_ELF;
	info->nslices = 1;
	if (machine == 62 || machine == 183)   /* EM_X86_64, EM_AARCH64 */
		snprintf(info->archs, sizeof(info->archs), "ELF %s",
			 machine == 62 ? "x86-64" : "aarch64");
	else
		snprintf(info->archs, sizeof(info->archs), "ELF machine %u",
			 machine);
	return 0;
}

int
shimlib_inspect(const char *path, struct shimlib_info *info)
{
	unsigned char m[4];
	struct stat st;
	uint32_t magic;
	int fd, ret = -1;

	memset(info, 0, sizeof(*info));
	fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		error("cannot stat '%s': %s", path, strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		error("'%s' is not a regular file", path);
		goto cleanup;
	}
	if (st.st_size < 4) {
		error("'%s' (%lld bytes) is no library", path,
		      (long long)st.st_size);
		goto cleanup;
	}
	if (read_at(fd, path, 0, m, sizeof(m)) < 0)
		goto cleanup;
	magic = be32(m);
	if (magic == FAT_MAGIC || magic == FAT_MAGIC_64) {
		info->format = SHIMLIB_MACHO;
		ret = fat_file(fd, path, (uint64_t)st.st_size,
			       magic == FAT_MAGIC_64, info);
	} else if (!memcmp(m, "\177ELF", 4)) {
		ret = elf_file(fd, path, info);
	} else if (le32(m) == MH_MAGIC_64 || le32(m) == MH_MAGIC ||
		   le32(m) == MH_CIGAM || le32(m) == MH_CIGAM_64) {
		info->format = SHIMLIB_MACHO;
		ret = macho_slice(fd, path, 0, 0, 0, 0, info);
	} else {
		error("'%s' is neither a Mach-O dylib nor an ELF shared object "
		      "(it starts with bytes %02x %02x %02x %02x)", path,
		      m[0], m[1], m[2], m[3]);
	}
cleanup:
	close(fd);
	if (ret < 0)
		memset(info, 0, sizeof(*info));
	return ret;
}

int
shimlib_check_macos(const char *path, const struct shimlib_info *info)
{
	if (info->format != SHIMLIB_MACHO)
		return error("'%s' is an %s shared object, not a Mach-O dylib: "
			     "dyld cannot load it", path, info->archs);
	if (!info->has_arm64 && !info->has_arm64e)
		return error("'%s' has no arm64 or arm64e slice (it has: %s): "
			     "no Apple silicon process can load it", path,
			     info->archs);
	return 0;
}

void
shimlib_describe(struct buf *out, const struct shimlib_info *info)
{
	if (info->format == SHIMLIB_ELF)
		buf_addf(out, "%s shared object", info->archs);
	else
		buf_addf(out, "Mach-O %sdylib (%s)",
			 info->universal ? "universal " : "", info->archs);
}
