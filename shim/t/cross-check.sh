#!/bin/sh
# The Mach-O cross-build check, run on Linux without an Apple SDK:
# compiles the shim for arm64-apple-macos13 against the stand-in headers
# in t/darwin-stub, links an arm64 dylib with LLVM's ld64.lld against
# the stand-in SDK stubs in t/darwin-stub/sdk (libSystem, libobjc, Metal,
# Foundation), and checks what it imports (and from which library),
# exports and contains. The arm64e code is compiled for real with
# pointer authentication (clang 19: -fptrauth-calls -fptrauth-returns
# -fptrauth-intrinsics ...) and disassembled: t/pac-check.awk fails on
# any unauthenticated indirect branch, call or return, with negative
# controls. The arm64e and universal dylibs are linked here only when
# ld64.lld really links arm64e (no release does: it writes an arm64
# header and plain stubs); otherwise that step says SKIP and why, and
# the Mac build (Apple's ld, lipo) and verify.sh make and check them.
#
# Environment (set by shim/Makefile): O (output dir), CLANG, LD64, NM,
# OBJDUMP, PAC_CLANG (clang 19 or newer), PAC_OBJDUMP (an llvm-objdump
# that decodes arm64e), LIPO, FORBIDDEN_STRINGS and FORBIDDEN_IMPORTS
# (extended regexps).
# Prints "ok"/"not ok" lines and "N passed, N failed, N skipped".
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../src
out=$O/cross
passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok $*"; }
finish() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit $?; }

for tool in "$CLANG" "$LD64" "$NM" "$OBJDUMP" "$PAC_CLANG" "$PAC_OBJDUMP" "$LIPO"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "tool '$tool' not found (install clang, lld-14, llvm-14, clang-19, llvm-19: make deps)"
		finish
	fi
done
rm -rf "$out"
mkdir -p "$out"
res=$("$CLANG" -print-resource-dir)
cflags="-nostdinc -isystem $res/include -isystem $here/darwin-stub -std=c11
	-Wall -Wextra -Wno-unused-parameter -Werror -O2 -fvisibility=hidden"
pac_res=$("$PAC_CLANG" -print-resource-dir)
pac_cflags="-nostdinc -isystem $pac_res/include -isystem $here/darwin-stub -std=c11
	-Wall -Wextra -Wno-unused-parameter -Werror -O2 -fvisibility=hidden"
# Pointer authentication as Apple's clang enables it for arm64e.
PAC_FLAGS="-fptrauth-calls -fptrauth-returns -fptrauth-intrinsics
	-fptrauth-indirect-gotos -fptrauth-auth-traps"
# What the Mac build links (shim/Makefile's Darwin rules), resolved
# against the stand-in SDK stubs instead of the SDK.
LINK="-platform_version macos 13.0 13.0 -syslibroot $here/darwin-stub/sdk
	-lSystem -lobjc -framework Metal -framework Foundation"
LIBS_WANTED="/usr/lib/libSystem.B.dylib /usr/lib/libobjc.A.dylib
	/System/Library/Frameworks/Metal.framework/Versions/A/Metal
	/System/Library/Frameworks/Foundation.framework/Versions/C/Foundation"

# macho_header FILE: prints "cputype cpusubtype filetype" (decimal),
# after checking the 64-bit little-endian magic 0xfeedfacf.
macho_header() {
	set -- $(od -An -tu4 -N16 "$1")
	[ "${1:-}" = 4277009103 ] || return 1
	echo "$2 $(( $3 & 0xffffff )) $4"
}

# imports_ok LIB ALLOWLIST: every undefined symbol of LIB, with the
# library it binds to ("SYMBOL LIBRARY", from llvm-nm -m), is listed in
# ALLOWLIST, and none matches FORBIDDEN_IMPORTS; prints the offenders.
imports_ok() {
	"$NM" -m "$1" | sed -n 's/.*(undefined) external \([^ ]*\) (from \([^)]*\)).*/\1 \2/p' |
		sort -u >"$1.imports" || return 1
	grep -v '^#' "$2" | sed '/^$/d' | sort -u >"$out/allow"
	comm -23 "$1.imports" "$out/allow" >"$1.unexpected"
	grep -Ei "^[^ ]*($FORBIDDEN_IMPORTS)" "$1.imports" >>"$1.unexpected"
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
if "$LD64" -arch arm64 $LINK -dylib \
	-install_name @rpath/LumeMetalCapabilities.dylib \
	-o "$dylib" $objs 2>"$out/ld.err"; then
	ok "ld64.lld links an arm64 Mach-O dylib against libSystem, libobjc, Metal and Foundation, every symbol resolved"
else
	sed 's/^/# /' "$out/ld.err"
	not_ok "ld64.lld links an arm64 Mach-O dylib against libSystem, libobjc, Metal and Foundation"
	finish
fi

if [ "$(macho_header "$dylib")" = "$ARM64_CPU 0 6" ]; then
	ok "dylib header: 64-bit, CPU_TYPE_ARM64, subtype ALL, MH_DYLIB"
else
	not_ok "dylib header: got '$(macho_header "$dylib")'"
fi

if imports_ok "$dylib" "$here/expected-imports.txt"; then
	ok "dylib imports only the expected symbols, each from its library ($(wc -l <"$dylib.imports") of them, $(grep -c ' libobjc$' "$dylib.imports") from libobjc)"
else
	not_ok "dylib imports only the expected symbols, each from its library"
fi
for need in "_class_addMethod libobjc" "_objc_getClass libobjc" \
	"_method_setImplementation libobjc" "_objc_msgSend libobjc" "_dlsym libSystem"; do
	grep -qx "$need" "$dylib.imports" || not_ok "dylib does not import ${need% *} from ${need#* }"
done
# Linked, and kept (no -dead_strip_dylibs): Metal and Foundation
# register _MTLDevice before the constructor runs.
"$OBJDUMP" --macho --dylibs-used "$dylib" >"$out/dylibs" 2>&1
missing=""
for lib in $LIBS_WANTED; do
	grep -q "^[[:space:]]*$lib (" "$out/dylibs" || missing="$missing $lib"
done
if [ -z "$missing" ]; then
	ok "dylib loads libSystem, libobjc, Metal and Foundation (LC_LOAD_DYLIB)"
else
	sed 's/^/# /' "$out/dylibs"
	not_ok "dylib does not load:$missing"
fi

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
   "$LD64" -arch arm64 $LINK -dylib -o "$out/canary.dylib" $objs "$out/canary.o" &&
   ! imports_ok "$out/canary.dylib" "$here/expected-imports.txt" >/dev/null &&
   grep -qx '_mach_absolute_time libSystem' "$out/canary.dylib.unexpected"; then
	ok "negative control: a dylib importing mach_absolute_time is rejected"
else
	not_ok "negative control: a dylib importing mach_absolute_time is rejected"
fi

# ---- arm64e: pointer authentication ----------------------------------

# pac_check FILE: t/pac-check.awk over the disassembly of FILE; its
# report lands in FILE.pac.
pac_check() {
	"$PAC_OBJDUMP" -d --no-show-raw-insn "$1" >"$1.dis" 2>&1 &&
		awk -f "$here/pac-check.awk" "$1.dis" >"$1.pac" 2>&1
}

ARM64E_SUB=2            # CPU_SUBTYPE_ARM64E (low 24 bits)
pac_objs=""
for f in lmc_shim lmc_config; do
	if "$PAC_CLANG" -target arm64e-apple-macos13 $PAC_FLAGS $pac_cflags \
		-c "$src/$f.c" -o "$out/$f-arm64e.o" 2>"$out/$f-arm64e.err"; then
		pac_objs="$pac_objs $out/$f-arm64e.o"
	else
		sed 's/^/# /' "$out/$f-arm64e.err"
		not_ok "compile $f.c for arm64e with pointer authentication ($PAC_CLANG)"
		finish
	fi
done
ok "shim compiles for arm64e-apple-macos13 with pointer authentication ($("$PAC_CLANG" --version | sed -n '1s/ (.*//p')), warning-free"

for o in $pac_objs; do
	set -- $(od -An -tu4 -N12 "$o")
	sub=$(( $3 & 0xffffff )) caps=$(( ($3 >> 24) & 0xff ))
	if [ "$1" = 4277009103 ] && [ "$2" = "$ARM64_CPU" ] && [ "$sub" = "$ARM64E_SUB" ]; then
		# 0x80: CPU_SUBTYPE_PTRAUTH_ABI, set by Apple's clang and by
		# LLVM 20 and later; clang 19 leaves it clear (Apple's ld
		# calls such objects arm64e.old: they check code here, the
		# Mac build compiles its own).
		ok "$(basename "$o"): CPU_TYPE_ARM64, CPU_SUBTYPE_ARM64E (ptrauth ABI bits 0x$(printf %02x "$caps"))"
	else
		not_ok "$(basename "$o") header: magic $1 cputype $2 subtype $3"
	fi
	if pac_check "$o"; then
		ok "$(basename "$o"): every indirect branch, call and return authenticated ($(sed -n 's/^pac-check: //p' "$o.pac"))"
	else
		sed 's/^/# /' "$o.pac"
		not_ok "$(basename "$o"): unauthenticated control flow"
	fi
done

# Negative controls: the same code without each part of pointer
# authentication must fail the check, for the reason that part covers.
control() { # control TITLE WANT FLAGS...
	title=$1 want=$2
	shift 2
	"$PAC_CLANG" -target arm64e-apple-macos13 "$@" $pac_cflags \
		-c "$src/lmc_shim.c" -o "$out/control.o" 2>/dev/null &&
		! pac_check "$out/control.o" && grep -q "($want)" "$out/control.o.pac"
}
if control "no ptrauth" "indirect branch without authentication" &&
   grep -q "(x30 stored to memory without pacibsp first)" "$out/control.o.pac"; then
	ok "negative control: arm64e without -fptrauth-* is rejected (blr, unsigned frames)"
else
	not_ok "negative control: arm64e without -fptrauth-* is rejected"
fi
if control "calls only" "x30 stored to memory without pacibsp first" -fptrauth-calls; then
	ok "negative control: -fptrauth-calls alone is rejected (return addresses unsigned)"
else
	not_ok "negative control: -fptrauth-calls alone is rejected"
fi
if control "returns only" "indirect branch without authentication" -fptrauth-returns; then
	ok "negative control: -fptrauth-returns alone is rejected (blr through unsigned pointers)"
else
	not_ok "negative control: -fptrauth-returns alone is rejected"
fi

# The arm64e dylib and the universal one. ld64.lld links arm64e only if
# what it writes is arm64e and its own stubs authenticate too.
e_dylib=$out/LumeMetalCapabilities-arm64e.dylib
universal=$out/LumeMetalCapabilities.dylib
e_hdr=""
if "$LD64" -arch arm64e $LINK -dylib -install_name @rpath/LumeMetalCapabilities.dylib \
	-o "$e_dylib" $pac_objs 2>"$out/ld-arm64e.err"; then
	e_hdr=$(macho_header "$e_dylib")
fi
if [ "$e_hdr" != "$ARM64_CPU $ARM64E_SUB 6" ] || ! pac_check "$e_dylib"; then
	skipped=$((skipped + 1))
	echo "SKIP arm64e and universal dylibs: $("$LD64" --version 2>&1 | head -1) cannot link arm64e (it wrote '${e_hdr:-nothing}', not '$ARM64_CPU $ARM64E_SUB 6', or unauthenticated stubs); the Mac build links them with Apple's ld and lipo, verify.sh checks both slices"
else
	ok "ld64.lld links an arm64e dylib whose stubs authenticate"
	"$LIPO" -create "$dylib" "$e_dylib" -output "$universal" &&
		[ "$("$LIPO" -archs "$universal" | sed "s/ *$//")" = "arm64 arm64e" ] &&
		"$LIPO" "$universal" -thin arm64e -output "$out/slice-arm64e.dylib" &&
		pac_check "$out/slice-arm64e.dylib" &&
		imports_ok "$e_dylib" "$here/expected-imports.txt" &&
		ok "universal dylib: arm64 and arm64e slices, the arm64e one authenticated, both importing only the expected symbols" ||
		not_ok "universal dylib: arm64 and arm64e slices"
fi

probe=$out/metal-capabilities
if "$CLANG" -target arm64-apple-macos13 $cflags -c "$src/lmc_probe.c" -o "$out/lmc_probe.o" &&
   "$CLANG" -target arm64-apple-macos13 $cflags -c "$src/lmc_config.c" -o "$out/probe-config.o" &&
   "$CLANG" -target arm64-apple-macos13 $cflags -c "$src/metal-capabilities.c" -o "$out/probe-main.o" &&
   "$LD64" -arch arm64 $LINK -execute -e _main -o "$probe" "$out/probe-main.o" \
	"$out/lmc_probe.o" "$out/probe-config.o"; then
	"$NM" -m "$probe" | sed -n 's/.*(undefined) external \([^ ]*\) (from \([^)]*\)).*/\1 \2/p' >"$probe.imports"
	if grep -Ei "^[^ ]*($FORBIDDEN_IMPORTS)" "$probe.imports"; then
		not_ok "probe imports a clock or time function"
	elif ! grep -qx '_MTLCreateSystemDefaultDevice Metal' "$probe.imports" ||
	     ! grep -qx '_objc_msgSend libobjc' "$probe.imports"; then
		sed 's/^/# import: /' "$probe.imports"
		not_ok "probe imports MTLCreateSystemDefaultDevice from Metal and objc_msgSend from libobjc"
	else
		ok "probe links as an arm64 Mach-O executable: Metal's device, libobjc's runtime, no time functions"
	fi
else
	not_ok "probe compiles and links for arm64-apple-macos13"
fi
finish
