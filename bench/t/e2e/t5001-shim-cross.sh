#!/bin/bash
# The Mach-O cross-build check (make -C shim cross-check): clang
# -target arm64-apple-macos13 + ld64.lld link an arm64 dylib whose
# imports must be on shim/t/expected-imports.txt; an arm64e object must
# carry CPU_SUBTYPE_ARM64E.
. "$(dirname "$0")/lib.sh"

if [ "$(uname -s)" != Linux ]; then
	skip "Mach-O cross-check: runs on Linux; on macOS run make shim-verify"
	test_done; exit $?
fi
make -s -C "$TOP/shim" cross-check O="$T_BUILD/shim" >"$WORK/cross" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok "*) ok "cross: ${line#ok }" ;;
	"not ok "*) not_ok "cross: ${line#not ok }" ;;
	"SKIP "*) skip "cross: ${line#SKIP }" ;;
	"#"*) echo "$line" ;;
	esac
done <"$WORK/cross"
if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$WORK/cross"; then
	not_ok "make -C shim cross-check failed (exit $rc)"
	sed 's/^/# /' "$WORK/cross" | tail -20
fi
test_done
