#!/bin/sh
# The Mach-O cross-build check, run on Linux without an Apple SDK:
# compiles the shim for arm64-apple-macos13 against the stand-in headers
# in t/darwin-stub, links an arm64 dylib with LLVM's ld64.lld
# (-undefined dynamic_lookup), and checks what it imports, exports and
# contains. arm64e is compiled (cpusubtype E checked) but not linked:
# lld 14 cannot link arm64e, so that dylib is built on macOS only.
#
# Environment (set by shim/Makefile): O (output dir), CLANG, LD64, NM,
# OBJDUMP,
# FORBIDDEN_STRINGS and FORBIDDEN_IMPORTS (extended regexps).
# Prints "ok"/"not ok" lines and "N passed, N failed, N skipped".
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../src
out=$O/cross
passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok $*"; }
finish() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit $?; }

for tool in "$CLANG" "$LD64" "$NM" "$OBJDUMP"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "tool '$tool' not found (install clang, lld-14, llvm-14: make deps)"
		finish
	fi
done
rm -rf "$out"
mkdir -p "$out"
res=$("$CLANG" -print-resource-dir)
cflags="-nostdinc -isystem $res/include -isystem $here/darwin-stub -std=c11
	-Wall -Wextra -Wno-unused-parameter -Werror -O2 -fvisibility=hidden"

# macho_header FILE: prints "cputype cpusubtype filetype" (decimal),
# after checking the 64-bit little-endian magic 0xfeedfacf.
macho_header() {
	set -- $(od -An -tu4 -N16 "$1")
	[ "${1:-}" = 4277009103 ] || return 1
	echo "$2 $(( $3 & 0xffffff )) $4"
}

# imports_ok LIB ALLOWLIST: every undefined symbol of LIB is listed in
# ALLOWLIST and none matches FORBIDDEN_IMPORTS; prints the offenders.
imports_ok() {
	"$NM" -u "$1" | awk '{print $NF}' | sort -u >"$1.imports" || return 1
	grep -v '^#' "$2" | sed '/^$/d' | sort -u >"$out/allow"
	comm -23 "$1.imports" "$out/allow" >"$1.unexpected"
	grep -Ei "$FORBIDDEN_IMPORTS" "$1.imports" >>"$1.unexpected"
	if [ -s "$1.unexpected" ]; then
		sed 's/^/# unexpected import: /' "$1.unexpected"
		return 1
	fi
	return 0
}

ARM64_CPU=16777228      # CPU_TYPE_ARM64 = 0x0100000c
objs=""
for f in lmc_shim lmc_config; do
	if "$CLANG" -target arm64-apple-macos13 $cflags -c "$src/$f.c" \
		-o "$out/$f.o" 2>"$out/$f.err"; then
		objs="$objs $out/$f.o"
	else
		sed 's/^/# /' "$out/$f.err"
		not_ok "compile $f.c for arm64-apple-macos13"
		finish
	fi
done
ok "shim compiles for arm64-apple-macos13, warning-free"

dylib=$out/LumeMetalCapabilities-arm64.dylib
if "$LD64" -arch arm64 -platform_version macos 13.0 13.0 -dylib \
	-undefined dynamic_lookup \
	-install_name @rpath/LumeMetalCapabilities.dylib \
	-o "$dylib" $objs 2>"$out/ld.err"; then
	ok "ld64.lld links an arm64 Mach-O dylib"
else
	sed 's/^/# /' "$out/ld.err"
	not_ok "ld64.lld links an arm64 Mach-O dylib"
	finish
fi

if [ "$(macho_header "$dylib")" = "$ARM64_CPU 0 6" ]; then
	ok "dylib header: 64-bit, CPU_TYPE_ARM64, subtype ALL, MH_DYLIB"
else
	not_ok "dylib header: got '$(macho_header "$dylib")'"
fi

if imports_ok "$dylib" "$here/expected-imports.txt"; then
	ok "dylib imports only the expected symbols ($(wc -l <"$dylib.imports") of them)"
else
	not_ok "dylib imports only the expected symbols"
fi
for need in _class_addMethod _objc_getClass _method_setImplementation _dlsym; do
	grep -qx "$need" "$dylib.imports" || not_ok "dylib does not import $need"
done

exports=$("$NM" -gU "$dylib" | awk '{print $NF}' | tr '\n' ' ')
if [ "$exports" = "_lume_metal_capabilities_status " ]; then
	ok "dylib exports only _lume_metal_capabilities_status"
else
	not_ok "dylib exports: $exports"
fi

if "$OBJDUMP" --macho --section-headers "$dylib" |
   grep -Eq '__mod_init_func|__init_offsets'; then
	ok "dylib has an initializer section (the constructor runs at load)"
else
	not_ok "dylib has no __mod_init_func: the constructor would never run"
fi

if strings -a "$dylib" | grep -Eq "$FORBIDDEN_STRINGS"; then
	strings -a "$dylib" | grep -E "$FORBIDDEN_STRINGS" | sed 's/^/# forbidden string: /'
	not_ok "dylib contains forbidden strings"
else
	ok "dylib contains no forbidden strings (time functions, broader-profile variables)"
fi

# A negative control: the same check must reject a dylib that calls a
# clock function, or it proves nothing.
printf 'extern unsigned long long mach_absolute_time(void);\n__attribute__((visibility("default"))) unsigned long long lmc_canary(void) { return mach_absolute_time(); }\n' >"$out/canary.c"
if "$CLANG" -target arm64-apple-macos13 $cflags -c "$out/canary.c" -o "$out/canary.o" &&
   "$LD64" -arch arm64 -platform_version macos 13.0 13.0 -dylib \
	-undefined dynamic_lookup -o "$out/canary.dylib" $objs "$out/canary.o" &&
   ! imports_ok "$out/canary.dylib" "$here/expected-imports.txt" >/dev/null &&
   grep -qx _mach_absolute_time "$out/canary.dylib.unexpected"; then
	ok "negative control: a dylib importing mach_absolute_time is rejected"
else
	not_ok "negative control: a dylib importing mach_absolute_time is rejected"
fi

if "$CLANG" -target arm64e-apple-macos13 $cflags -c "$src/lmc_shim.c" \
	-o "$out/lmc_shim-arm64e.o" 2>"$out/arm64e.err"; then
	hdr=$(macho_header "$out/lmc_shim-arm64e.o")
	# CPU_SUBTYPE_ARM64E = 2 (the ptrauth ABI bits are masked off);
	# MH_OBJECT = 1.
	if [ "$hdr" = "$ARM64_CPU 2 1" ]; then
		ok "arm64e object: CPU_TYPE_ARM64, CPU_SUBTYPE_ARM64E"
	else
		not_ok "arm64e object header: got '$hdr'"
	fi
else
	sed 's/^/# /' "$out/arm64e.err"
	not_ok "shim compiles for arm64e-apple-macos13"
fi

probe=$out/metal-capabilities
if "$CLANG" -target arm64-apple-macos13 $cflags -c "$src/lmc_probe.c" -o "$out/lmc_probe.o" &&
   "$CLANG" -target arm64-apple-macos13 $cflags -c "$src/lmc_config.c" -o "$out/probe-config.o" &&
   "$CLANG" -target arm64-apple-macos13 $cflags -c "$src/metal-capabilities.c" -o "$out/probe-main.o" &&
   "$LD64" -arch arm64 -platform_version macos 13.0 13.0 -execute -e _main \
	-undefined dynamic_lookup -o "$probe" "$out/probe-main.o" "$out/lmc_probe.o" \
	"$out/probe-config.o"; then
	if "$NM" -u "$probe" | grep -Ei "$FORBIDDEN_IMPORTS"; then
		not_ok "probe imports a clock or time function"
	else
		ok "probe links as an arm64 Mach-O executable, no time functions"
	fi
else
	not_ok "probe compiles and links for arm64-apple-macos13"
fi
finish
