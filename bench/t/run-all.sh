#!/bin/sh
# Runs every unit-test binary and every numbered end-to-end script and
# prints one summary line: "N passed, N failed, N skipped". Exits 1 when
# anything failed. Optional arguments: name patterns to select tests.
# SHIMBENCH_E2E_DIR: another directory of numbered scripts (its own test).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
passed=0 failed=0 skipped=0
log=$(mktemp)
errlog=$(mktemp)
trap 'rm -f "$log" "$errlog"' EXIT

# What a test wrote to stderr (shimbench's own warnings from commands a
# test runs unchecked, a check's traceback) never lands between the
# summary lines: shown after a failing test's checks, counted otherwise.
stderr_of() {
	lines=$(wc -l <"$errlog" | tr -d ' ')
	[ "$lines" -gt 0 ] || return 0
	if [ "$2" -ne 0 ] || grep -qE '^not ok ' "$log"; then
		echo "# stderr of $1:"
		sed 's/^/#   /' "$errlog"
	else
		echo "# $1: $lines lines on stderr (shown when it fails)"
	fi
}

tally() {
	# The last "N passed, N failed[, N skipped]" line of the log counts.
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "not ok $1 (no summary line; exit $2)"
		failed=$((failed + 1))
		return
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + ${s:-0}))
	if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok $1 (exit $2 with no failed check)"
		failed=$((failed + 1))
	fi
}

# A test's output less its "ok" lines, its stderr, then its summary line.
show() {
	grep -v '^ok ' "$log" | grep -vE '^[0-9]+ passed, [0-9]+ failed'
	stderr_of "$1" "$2"
	grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1
}

selected() {
	[ $# -le 1 ] && return 0
	name=$1; shift
	for pat in "$@"; do
		case "$name" in *"$pat"*) return 0 ;; esac
	done
	return 1
}

bindir=${SHIMBENCH_BUILD:-$top/build}
for t in "$bindir"/t/test-*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	selected "$n" "$@" || continue
	echo "# $n"
	"$t" >"$log" 2>"$errlog"
	rc=$?
	show "$n" "$rc"
	tally "$n" "$rc"
done
# The end-to-end scripts run SHIMBENCH_TEST_JOBS at a time (default: the
# number of CPUs, at most 4): each works in its own temporary directory.
# A lane takes the next script that no other lane has claimed (mkdir is
# atomic); the slowest of the last full run go first. Each script's
# output is kept apart and shown, in order, when all are done; a line
# "# [k/N] NAME: ..." says when each one ends.
e2e=${SHIMBENCH_E2E_DIR:-$top/bench/t/e2e}
jobs=${SHIMBENCH_TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
case $jobs in ''|*[!0-9]*|0) jobs=1 ;; esac
[ "$jobs" -le 4 ] || jobs=4
times=$bindir/t/e2e-times
runs=$(mktemp -d)
trap 'rm -f "$log" "$errlog"; rm -rf "$runs"' EXIT
: >"$runs/list"
for t in "$e2e"/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	n=$(basename "$t")
	selected "$n" "$@" || continue
	s=$(awk -v n="$n" '$1 == n { print $2 }' "$times" 2>/dev/null)
	echo "${s:-0} $n" >>"$runs/list"
done
sort -k1,1nr -k2,2 "$runs/list" | awk '{ print $2 }' >"$runs/order"
total=$(wc -l <"$runs/order" | tr -d ' ')
mkdir "$runs/claim" "$runs/out"
lane() {
	while read -r n; do
		mkdir "$runs/claim/$n" 2>/dev/null || continue
		start=$(date +%s)
		bash "$e2e/$n" >"$runs/out/$n.log" 2>"$runs/out/$n.err" </dev/null
		echo $? >"$runs/out/$n.rc"
		secs=$(( $(date +%s) - start ))
		echo "$n $secs" >"$runs/out/$n.secs"
		done_n=$(ls "$runs/out" | grep -c '\.secs$')
		sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$runs/out/$n.log" | tail -n 1)
		echo "# [$done_n/$total] $n: ${sum:-no summary line} (${secs}s)"
	done <"$runs/order"
}
i=0
while [ "$i" -lt "$jobs" ]; do
	lane &
	i=$((i + 1))
done
wait
for n in $(sort "$runs/order"); do
	echo "# $n"
	log=$runs/out/$n.log
	errlog=$runs/out/$n.err
	rc=$(cat "$runs/out/$n.rc" 2>/dev/null || echo 1)
	show "$n" "$rc"
	echo "# $n took $(awk '{ print $2 }' "$runs/out/$n.secs" 2>/dev/null)s"
	tally "$n" "$rc"
done
# The times of a full run order the next one.
if [ $# -eq 0 ] && [ -z "${SHIMBENCH_E2E_DIR:-}" ]; then
	cat "$runs"/out/*.secs >"$times" 2>/dev/null || true
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
