#!/bin/bash
# The universal shim dylib through `shim pin`, `shim install` and `shim
# launchagent`: each reads the library's headers, takes a universal
# (arm64 + arm64e) dylib, warns about (pin, install) or refuses
# (launchagent) an arm64-only one, and refuses what no Apple silicon
# process can load, naming the file and storing nothing.
#
# The arm64 slice is the shim itself, linked by ld64.lld in the Mach-O
# cross-check. No Linux linker writes arm64e (see shim/README.md), so the
# arm64e slice here is that dylib with its header's subtype set to
# CPU_SUBTYPE_ARM64E | CPU_SUBTYPE_PTRAUTH_ABI (0x80000002): a header
# for the header reader, never a shim. llvm-lipo combines them, and its
# own reading of the result must agree with shimbench's.
. "$(dirname "$0")/lib.sh"

LIPO=""
for t in llvm-lipo llvm-lipo-19 llvm-lipo-14; do
	command -v "$t" >/dev/null 2>&1 && { LIPO=$t; break; }
done
if [ -z "$LIPO" ]; then
	not_ok "llvm-lipo not found (llvm-14 or llvm-19: make deps)"
	test_done; exit $?
fi
if ! make -s -C "$TOP/shim" cross-check O="$T_BUILD/shim" >"$WORK/cross" 2>&1; then
	not_ok "make -C shim cross-check (the arm64 dylib)"
	sed 's/^/# /' "$WORK/cross" | tail -20
	test_done; exit $?
fi
A64=$WORK/LumeMetalCapabilities-arm64.dylib
A64E=$WORK/arm64e-header.dylib
U=$WORK/LumeMetalCapabilities.dylib
cp "$T_BUILD/shim/cross/LumeMetalCapabilities-arm64.dylib" "$A64"
cp "$A64" "$A64E"
printf '\002\000\000\200' | dd of="$A64E" bs=1 seek=8 conv=notrunc status=none
"$LIPO" -create "$A64" "$A64E" -output "$U"
check "llvm-lipo reads the universal file as arm64 arm64e" \
	test "$("$LIPO" -archs "$U" | sed "s/ *$//")" = "arm64 arm64e"

cp "$TOP/bench/plans/shim-study.json" "$WORK/plan.json"
USHA=$(sha256sum "$U" | cut -d' ' -f1)

# --- shim pin
expect_code 0 "pin the universal dylib" "$SHIMBENCH" shim pin "$WORK/plan.json" shim "$U"
grep_in "$WORK/out" "library: $U: Mach-O universal dylib (arm64 arm64e)" "says what it is, as llvm-lipo does"
grep_in "$WORK/out" "-> $USHA" "pinned its SHA-256 (the whole universal file)"
check "no warning for the universal dylib" test ! -s "$WORK/err"
expect_code 0 "pin an arm64-only dylib" "$SHIMBENCH" shim pin "$WORK/plan.json" shim "$A64"
grep_in "$WORK/out" "library: $A64: Mach-O dylib (arm64)" "says it is arm64 only"
grep_in "$WORK/err" "warning: '$A64': it has no arm64e slice: dyld terminates every arm64e process" "warns about arm64e processes"
grep_in "$WORK/err" "inject the universal LumeMetalCapabilities.dylib" "and says what to use"
cp "$WORK/plan.json" "$WORK/before.json"
printf '#!/bin/sh\n' >"$WORK/not-a-library"
expect_code 2 "pin a file that is no library" "$SHIMBENCH" shim pin "$WORK/plan.json" shim "$WORK/not-a-library"
grep_in "$WORK/err" "'$WORK/not-a-library' is neither a Mach-O dylib nor an ELF shared object" "names the file and why"
check "the plan is untouched" cmp -s "$WORK/plan.json" "$WORK/before.json"
cp "$A64" "$WORK/intel.dylib"
printf '\007\000\000\001\003\000\000\000' | dd of="$WORK/intel.dylib" bs=1 seek=4 conv=notrunc status=none
expect_code 2 "pin an Intel-only dylib" "$SHIMBENCH" shim pin "$WORK/plan.json" shim "$WORK/intel.dylib"
grep_in "$WORK/err" "has no arm64 or arm64e slice (it has: x86_64)" "no Apple silicon process can load it"
check "the plan is still untouched" cmp -s "$WORK/plan.json" "$WORK/before.json"

# --- shim install to a local target
G=$WORK/guest/lib
cat >"$WORK/local.json" <<JSON
{"models": [{"name": "tiny", "path": "$WORK/tiny.gguf"}],
 "targets": {"guest": {"transport": "local"}},
 "variants": [
   {"name": "shim", "target": "guest", "role": "shim",
    "inject": {"library": "$G/LumeMetalCapabilities.dylib",
               "sha256": "$(printf '0%.0s' $(seq 64))",
               "env": {"LUME_METAL_APPLE_FAMILY_MAX": "1009"}}}],
 "llama_bench": {"args": ["-p", "16"]}}
JSON
expect_code 0 "install the universal dylib" "$SHIMBENCH" shim install "$WORK/local.json" shim "$U"
check "it is in place, byte for byte" cmp -s "$G/LumeMetalCapabilities.dylib" "$U"
grep_in "$WORK/out" "Mach-O universal dylib (arm64 arm64e)" "install says what it installs"
grep_in "$WORK/out" "SHA-256 $USHA checked there" "checked on the target"
check "and pinned" grep -q "\"sha256\": \"$USHA\"" "$WORK/local.json"
rm -rf "$WORK/guest"
expect_code 2 "install a file that is no library" "$SHIMBENCH" shim install "$WORK/local.json" shim "$WORK/not-a-library"
check "nothing was copied" test ! -e "$G/LumeMetalCapabilities.dylib"

# --- shim launchagent
la() { "$SHIMBENCH" shim launchagent --label com.example.srv --program /usr/bin/true \
	--family-max 1009 -o "$WORK/agent.plist" "$@"; }
expect_code 0 "launchagent with the universal dylib" la --library "$U"
grep_in "$WORK/err" "library: $U: Mach-O universal dylib (arm64 arm64e)" "launchagent checked it"
check "the plist injects it" grep -q "<string>$U</string>" "$WORK/agent.plist"
rm -f "$WORK/agent.plist"
expect_code 2 "launchagent refuses an arm64-only dylib" la --library "$A64"
grep_in "$WORK/err" "error: --library '$A64': it has no arm64e slice" "says why"
grep_in "$WORK/err" "--allow-arm64-only" "names the way out"
check "no plist written" test ! -e "$WORK/agent.plist"
expect_code 0 "--allow-arm64-only takes it" la --library "$A64" --allow-arm64-only
grep_in "$WORK/err" "Mach-O dylib (arm64)" "and says what it took"
rm -f "$WORK/agent.plist"
expect_code 2 "launchagent refuses an ELF library" la --library "$T_BUILD/t/helpers/libmarker.so"
grep_in "$WORK/err" "shared object, not a Mach-O dylib" "dyld cannot load it"
check "no plist written" test ! -e "$WORK/agent.plist"
expect_code 0 "a library that is not here is not checked" la --library /Users/lume/lmc/LumeMetalCapabilities.dylib
grep_in "$WORK/err" "is not on this machine, so its slices were not checked" "and it says so"
expect_code 2 "--threadgroup-memory 0" la --library "$U" --threadgroup-memory 0
grep_in "$WORK/err" "--threadgroup-memory 0 is out of range" "refused (the shim ignores 0)"
test_done
