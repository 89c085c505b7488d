#!/bin/sh
# Verifies the macOS build artifacts in $1 (make -C shim verify): each
# has the right architectures (lipo: the universal dylib exactly arm64
# and arm64e), a valid ad-hoc signature (codesign --verify --strict), no
# forbidden strings or imported time functions, links Metal (so the
# private device class is registered before the constructor runs) and
# libobjc, the arm64e code authenticates every indirect branch, call and
# return (t/pac-check.awk over objdump's disassembly, as the Linux
# cross-check does), and everything matches SHA256SUMS. macOS only.
# Written from the documented behaviour of lipo, codesign, nm, otool,
# objdump and shasum; it has not been run in this repository's CI,
# which is Linux.
# Environment: FORBIDDEN_STRINGS, FORBIDDEN_IMPORTS (extended regexps).
set -u
dir=$1
status=0
fail() { echo "verify: $*" >&2; status=1; }

here=$(cd "$(dirname "$0")" && pwd)
universal=$dir/LumeMetalCapabilities.dylib
arm64=$dir/LumeMetalCapabilities-arm64.dylib
arm64e=$dir/LumeMetalCapabilities-arm64e.dylib
probe=$dir/metal-capabilities

for f in "$universal" "$arm64" "$arm64e" "$probe" "$dir/SHA256SUMS"; do
	[ -f "$f" ] || { echo "verify: '$f' is missing; run 'make -C shim' first" >&2; exit 3; }
done

lipo "$arm64" -verify_arch arm64 || fail "'$arm64' lacks arm64"
lipo "$arm64e" -verify_arch arm64e || fail "'$arm64e' lacks arm64e"
lipo "$probe" -verify_arch arm64 || fail "'$probe' lacks arm64"
archs=$(lipo -archs "$universal" | sed "s/ *$//")
[ "$archs" = "arm64 arm64e" ] || fail "'$universal' has slices '$archs', not 'arm64 arm64e'"
# The arm64e code, in its own dylib and in the universal one's slice.
tmp=$(mktemp -d) || exit 3
trap 'rm -rf "$tmp"' EXIT
lipo "$universal" -thin arm64e -output "$tmp/slice-arm64e.dylib" ||
	fail "cannot extract the arm64e slice of '$universal'"
for f in "$arm64e" "$tmp/slice-arm64e.dylib"; do
	if objdump -d --no-show-raw-insn "$f" >"$tmp/dis" &&
	   awk -f "$here/t/pac-check.awk" "$tmp/dis" >"$tmp/pac"; then
		sed -n 's/^pac-check: /pointer authentication: /p' "$tmp/pac"
	else
		cat "$tmp/pac" >&2
		fail "'$f': unauthenticated indirect branch, call or return"
	fi
done
for f in "$universal" "$arm64" "$arm64e" "$probe"; do
	codesign --verify --strict "$f" || fail "'$f': bad signature"
done
for f in "$universal" "$arm64" "$arm64e"; do
	if strings -a "$f" | grep -Eq "$FORBIDDEN_STRINGS"; then
		fail "'$f' contains forbidden strings: $(strings -a "$f" | grep -E "$FORBIDDEN_STRINGS" | tr '\n' ' ')"
	fi
	if nm -u "$f" | grep -Eiq "$FORBIDDEN_IMPORTS"; then
		fail "'$f' imports time functions: $(nm -u "$f" | grep -Ei "$FORBIDDEN_IMPORTS" | tr '\n' ' ')"
	fi
	otool -L "$f" | grep -q '/Metal.framework/' ||
		fail "'$f' does not link Metal.framework"
	otool -L "$f" | grep -q '/usr/lib/libobjc.A.dylib' ||
		fail "'$f' does not link libobjc"
	nm -gU "$f" | grep -q '_lume_metal_capabilities_status' ||
		fail "'$f' does not export lume_metal_capabilities_status"
done
(cd "$dir" && shasum -a 256 -c SHA256SUMS) || fail "checksums do not match SHA256SUMS"

if [ "$status" -eq 0 ]; then
	echo "shim artifacts verified in $dir"
fi
exit "$status"
