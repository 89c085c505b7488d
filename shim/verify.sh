#!/bin/sh
# Verifies the macOS build artifacts in $1 (make -C shim verify): each
# has the right architecture (lipo), a valid ad-hoc signature (codesign
# --verify --strict), no forbidden strings or imported time functions,
# links Metal (so the private device class is registered before the
# constructor runs), and matches SHA256SUMS. macOS only. Written from
# the documented behaviour of lipo, codesign, nm, otool and shasum; it
# has not been run in this repository's CI, which is Linux.
# Environment: FORBIDDEN_STRINGS, FORBIDDEN_IMPORTS (extended regexps).
set -u
dir=$1
status=0
fail() { echo "verify: $*" >&2; status=1; }

arm64=$dir/LumeMetalCapabilities-arm64.dylib
arm64e=$dir/LumeMetalCapabilities-arm64e.dylib
probe=$dir/metal-capabilities

for f in "$arm64" "$arm64e" "$probe" "$dir/SHA256SUMS"; do
	[ -f "$f" ] || { echo "verify: '$f' is missing; run 'make -C shim' first" >&2; exit 3; }
done

lipo "$arm64" -verify_arch arm64 || fail "'$arm64' lacks arm64"
lipo "$arm64e" -verify_arch arm64e || fail "'$arm64e' lacks arm64e"
lipo "$probe" -verify_arch arm64 || fail "'$probe' lacks arm64"
for f in "$arm64" "$arm64e" "$probe"; do
	codesign --verify --strict "$f" || fail "'$f': bad signature"
done
for f in "$arm64" "$arm64e"; do
	if strings -a "$f" | grep -Eq "$FORBIDDEN_STRINGS"; then
		fail "'$f' contains forbidden strings: $(strings -a "$f" | grep -E "$FORBIDDEN_STRINGS" | tr '\n' ' ')"
	fi
	if nm -u "$f" | grep -Eiq "$FORBIDDEN_IMPORTS"; then
		fail "'$f' imports time functions: $(nm -u "$f" | grep -Ei "$FORBIDDEN_IMPORTS" | tr '\n' ' ')"
	fi
	otool -L "$f" | grep -q '/Metal.framework/' ||
		fail "'$f' does not link Metal.framework"
	nm -gU "$f" | grep -q '_lume_metal_capabilities_status' ||
		fail "'$f' does not export lume_metal_capabilities_status"
done
(cd "$dir" && shasum -a 256 -c SHA256SUMS) || fail "checksums do not match SHA256SUMS"

if [ "$status" -eq 0 ]; then
	echo "shim artifacts verified in $dir"
fi
exit "$status"
