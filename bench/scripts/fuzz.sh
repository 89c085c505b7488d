#!/bin/sh
# Runs every libFuzzer target (bench/t/fuzz/fuzz-*.c, built by `make fuzz`)
# for SECONDS each (default 120), JOBS at a time (default: the number of
# CPUs), starting from its committed seed corpus. New inputs go to a work
# corpus (build-fuzz/corpus/NAME, kept between runs, never committed);
# crashes to build-fuzz/crashes/NAME/. Prints one line per target:
#
#   NAME  SECONDS  EXECUTIONS  EXEC/S  COVERAGE  CORPUS  CRASHES
#
# and exits 1 when any target crashed (leak, sanitizer report, timeout
# or out of memory included). Usage: sh bench/scripts/fuzz.sh [SECONDS
# [JOBS [NAME...]]]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
secs=${1:-120}
jobs=${2:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
[ $# -gt 2 ] && shift 2 || set --
make --no-print-directory fuzz >build-fuzz.log 2>&1 || {
	echo "fuzz.sh: make fuzz failed (see build-fuzz.log)" >&2
	exit 3
}
rm -f build-fuzz.log
names=${*:-$(ls bench/t/fuzz/fuzz-*.c | sed 's|.*/fuzz-||; s|\.c$||')}
logs=build-fuzz/logs
mkdir -p "$logs"

run_one() {
	n=$1
	mkdir -p "build-fuzz/corpus/$n" "build-fuzz/crashes/$n"
	"build-fuzz/fuzz-$n" -max_total_time="$secs" -print_final_stats=1 \
		-timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-artifact_prefix="build-fuzz/crashes/$n/" \
		"build-fuzz/corpus/$n" "bench/t/fuzz/corpus/$n" \
		>"$logs/$n.log" 2>&1
	echo $? >"$logs/$n.rc"
}

running=0
for n in $names; do
	run_one "$n" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

status=0
printf '%-11s %7s %12s %8s %9s %7s %8s\n' target seconds executions exec/s coverage corpus crashes
for n in $names; do
	log=$logs/$n.log
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	t=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	corp=$(ls "build-fuzz/corpus/$n" | wc -l)
	crashes=$(ls "build-fuzz/crashes/$n" | wc -l)
	rc=$(cat "$logs/$n.rc")
	[ "$rc" = 0 ] && [ "$crashes" = 0 ] || status=1
	printf '%-11s %7s %12s %8s %9s %7s %8s\n' "$n" "$secs" "${execs:-?}" "${t:-?}" \
		"${cov:-?}" "$corp" "$crashes"
	[ "$rc" = 0 ] || grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -5 | sed 's/^/    /'
done
exit $status
