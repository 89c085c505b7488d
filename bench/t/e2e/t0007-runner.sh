#!/bin/bash
# The test runner keeps what tests write to stderr (shimbench's own
# warnings from commands run unchecked, a check's traceback) out from
# between the summary lines (issue 22 §6): counted for a passing test,
# shown, marked, after a failing test's checks.
. "$(dirname "$0")/lib.sh"

D=$WORK/e2e
mkdir -p "$D" "$WORK/nobuild/t"
cat >"$D/t1-pass.sh" <<'SH'
echo "ok one"
echo "warning: session 1: load average 3.9 is above 0.5 per core" >&2
echo "warning: left out by default: session 4" >&2
echo "1 passed, 0 failed, 0 skipped"
SH
cat >"$D/t2-fail.sh" <<'SH'
echo "ok two"
echo "Traceback: AssertionError 4871.99" >&2
echo "not ok the median"
echo "1 passed, 1 failed, 0 skipped"
exit 1
SH
SHIMBENCH_E2E_DIR=$D SHIMBENCH_BUILD=$WORK/nobuild sh "$TOP/bench/t/run-all.sh" t1-pass t2-fail >"$WORK/log" 2>&1
rc=$?
check "the runner fails when a test fails" test "$rc" = 1
check "no warning of a passing test between the summary lines" sh -c "! grep -q '^warning:' '$WORK/log'"
grep_in "$WORK/log" "# t1-pass.sh: 2 lines on stderr (shown when it fails)" "a passing test's stderr is counted"
check "a failing test's stderr follows its checks, marked" python3 -c "
l = open('$WORK/log').read().split('\n')
i = l.index('not ok the median')
assert l[i + 1] == '# stderr of t2-fail.sh:', l
assert l[i + 2] == '#   Traceback: AssertionError 4871.99', l
assert l[i + 3] == '1 passed, 1 failed, 0 skipped', 'then its summary line'
j = l.index('# t1-pass.sh: 2 lines on stderr (shown when it fails)')
assert l[j + 1] == '1 passed, 0 failed, 0 skipped', l"
check "the summary counts both" test "$(tail -n 1 "$WORK/log")" = "2 passed, 1 failed, 0 skipped"
test_done
