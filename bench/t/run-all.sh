#!/bin/sh
# Runs every unit-test binary and every numbered end-to-end script and
# prints one summary line: "N passed, N failed, N skipped". Exits 1 when
# anything failed. Optional arguments: name patterns to select tests.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
passed=0 failed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

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
	"$t" >"$log" 2>&1
	rc=$?
	grep -v '^ok ' "$log"
	tally "$n" "$rc"
done
for t in "$top"/bench/t/e2e/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	n=$(basename "$t")
	selected "$n" "$@" || continue
	echo "# $n"
	sh_start=$(date +%s)
	bash "$t" >"$log" 2>&1
	rc=$?
	grep -v '^ok ' "$log"
	echo "# $n took $(( $(date +%s) - sh_start ))s"
	tally "$n" "$rc"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
