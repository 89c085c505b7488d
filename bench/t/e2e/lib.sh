# Shared helpers for the numbered end-to-end tests. Source it first.
# Each check prints "ok"/"not ok"/"SKIP"; the script ends with
# test_done, which prints "N passed, N failed, N skipped".

set -u
T_PASSED=0
T_FAILED=0
T_SKIPPED=0
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
SHIMBENCH=${SHIMBENCH:-$TOP/build/shimbench}
T_BUILD=${SHIMBENCH_BUILD:-$TOP/build}
FIXTURES=$TOP/bench/t/fixtures
# The published evidence ships in the project (evidence/, unchanged bytes).
EVIDENCE=$TOP/evidence
WORK=$(mktemp -d "${TMPDIR:-/tmp}/shimbench-t.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export SHIMBENCH_DB=$WORK/default.db

ok() { T_PASSED=$((T_PASSED + 1)); echo "ok $*"; }
not_ok() { T_FAILED=$((T_FAILED + 1)); echo "not ok $*"; }
skip() { T_SKIPPED=$((T_SKIPPED + 1)); echo "SKIP $*"; }

# expect_code CODE TITLE CMD...: runs CMD with stdout in $WORK/out and
# stderr in $WORK/err; passes when its exit status is exactly CODE. A
# death by signal never counts as an expected failure.
expect_code() {
	local want=$1 title=$2 got
	shift 2
	"$@" >"$WORK/out" 2>"$WORK/err"
	got=$?
	if [ "$got" -gt 128 ] && [ "$got" -lt 160 ]; then
		not_ok "$title (killed by signal $((got - 128)))"
		sed 's/^/# /' "$WORK/err" | head -20
		return 1
	fi
	if [ "$got" -eq "$want" ]; then
		ok "$title"
		return 0
	fi
	not_ok "$title (exit $got, wanted $want)"
	sed 's/^/# /' "$WORK/err" | head -20
	return 1
}

# check TITLE CMD...: passes when CMD succeeds.
check() {
	local title=$1
	shift
	if "$@"; then ok "$title"; else not_ok "$title"; fi
}

# grep_out FILE PATTERN TITLE: passes when FILE contains PATTERN (fixed).
grep_in() {
	if grep -qF -- "$2" "$1"; then ok "$3"; else
		not_ok "$3 ('$2' not in $(basename "$1"))"
		sed 's/^/# /' "$1" | head -20
	fi
}

# The shipped evidence sets must be there: their absence is a failure.
need_shared() {
	if [ ! -d "$EVIDENCE/cua-lume-2026-08-09-m1-ultra" ] ||
	   [ ! -d "$EVIDENCE/cua-lume-2026-08-10-m1-ultra-gemma4" ]; then
		not_ok "$1: the shipped evidence in evidence/ is missing"
		return 1
	fi
	return 0
}

test_done() {
	echo "$T_PASSED passed, $T_FAILED failed, $T_SKIPPED skipped"
	[ "$T_FAILED" -eq 0 ]
}
