#!/bin/bash
# The capability shim's hook logic on the GNU Objective-C runtime: the
# real shim library dlopen()ed into processes that built a fake
# paravirtual Metal device (make -C shim test). Each "ok"/"not ok" of
# shim/t/test-shim is counted here.
. "$(dirname "$0")/lib.sh"

if [ "$(uname -s)" != Linux ]; then
	skip "shim runtime tests: they use GNU libobjc (Linux); on macOS run make shim-verify"
	test_done; exit $?
fi
make -s -C "$TOP/shim" test O="$T_BUILD/shim" >"$WORK/shim-test" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok "*) ok "shim: ${line#ok }" ;;
	"not ok "*) not_ok "shim: ${line#not ok }" ;;
	"  "*) echo "#$line" ;;
	esac
done <"$WORK/shim-test"
if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$WORK/shim-test"; then
	not_ok "make -C shim test failed (exit $rc)"
	sed 's/^/# /' "$WORK/shim-test" | tail -20
fi
grep -q '^[0-9]* passed, 0 failed$' "$WORK/shim-test" ||
	not_ok "shim test summary missing or failing"
test_done
