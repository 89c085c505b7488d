#ifndef SHIMLIB_H
#define SHIMLIB_H

/*
 * What an injected library file is, from its headers alone: a Mach-O
 * dylib (thin or universal, with which slices) or an ELF shared object
 * (LD_PRELOAD on Linux). `shim install`, `shim pin` and `shim
 * launchagent` use it to refuse what cannot be injected and to warn
 * about an arm64-only dylib: dyld terminates every arm64e process that
 * inherits DYLD_INSERT_LIBRARIES with it ("terminating because inserted
 * dylib '…' could not be loaded: … need 'arm64e'"), which with SIP off
 * includes the system's own tools.
 */

enum shimlib_format {
	SHIMLIB_MACHO = 1,   /* MH_DYLIB, thin or in a universal file */
	SHIMLIB_ELF,         /* ET_DYN */
};

struct shimlib_info {
	enum shimlib_format format;
	int universal;       /* a fat (universal) Mach-O file */
	int has_arm64;       /* a CPU_TYPE_ARM64 slice of any other subtype */
	int has_arm64e;      /* a CPU_SUBTYPE_ARM64E slice */
	int nslices;         /* 1 for a thin file */
	char archs[160];     /* "arm64 arm64e", "x86_64", "ELF x86-64" ... */
};

/*
 * Reads the headers of the file at path into *info. Returns 0, or -1
 * with error() naming the file when it cannot be read or is neither a
 * 64-bit Mach-O dylib (every slice of a universal file one, each slice
 * inside the file and agreeing with its fat entry) nor an ELF shared
 * object.
 */
int shimlib_inspect(const char *path, struct shimlib_info *info);

/*
 * For a Mach-O library, checks that it can be injected into an arm64
 * process at all: 0 when it has an arm64 or arm64e slice, -1 with
 * error() naming path and its slices otherwise.
 */
int shimlib_check_macos(const char *path, const struct shimlib_info *info);

/*
 * Appends what info says in words: "Mach-O universal dylib (arm64
 * arm64e)", "Mach-O dylib (arm64)", "ELF x86-64 shared object".
 */
struct buf;
void shimlib_describe(struct buf *out, const struct shimlib_info *info);

/* The warning for a Mach-O library without an arm64e slice (no newline). */
#define SHIMLIB_NO_ARM64E_WARNING \
	"it has no arm64e slice: dyld terminates every arm64e process " \
	"that inherits DYLD_INSERT_LIBRARIES with it (the system's own " \
	"tools when SIP is off), 'need arm64e'; inject the universal " \
	"LumeMetalCapabilities.dylib (make shim) instead"

#endif
