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
for t in "${SHIMBENCH_E2E_DIR:-$top/bench/t/e2e}"/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	n=$(basename "$t")
	selected "$n" "$@" || continue
	echo "# $n"
	sh_start=$(date +%s)
	bash "$t" >"$log" 2>"$errlog"
	rc=$?
	show "$n" "$rc"
	echo "# $n took $(( $(date +%s) - sh_start ))s"
	tally "$n" "$rc"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
