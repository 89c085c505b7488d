#!/bin/sh
# The power and false alarms of history's change-point test, by
# simulation (bench/scripts/history-power.c): 6 sessions before a step
# and 1, 3 or 6 after it, K processes of 10 samples per session; then six
# sessions in all, three on each side.
#
#   sh bench/scripts/history-power.sh [TRIALS]
#
# Noise from the recorded OS-update pair (bench/t/fixtures/os-update,
# pp128 on this machine class): between-process CV 5 %, within-process CV
# 2 %; once without a session effect and once with a 2 % one (sessions on
# different days differ more than processes of one session). Prints
# Markdown tables; the figures are in bench/BENCHMARKS.md.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
trials=${1:-1000}
[ -f "$top/build/obj/analysis/changepoint.o" ] || { echo "history-power: build first (make)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/history-power.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -O2 -I"$top/bench/src" -o "$tmp/sim" "$top/bench/scripts/history-power.c" \
	"$top/build/obj/analysis/changepoint.o" "$top/build/obj/analysis/stats.o" \
	"$top/build/obj/base/rng.o" "$top/build/obj/base/util.o" -lm
for k in 3 6; do
	for sess in 0 0.02; do
		echo
		echo "K = $k processes of 10 samples per session, between-process CV 5 %, within 2 %, session effect $sess; $trials trials"
		echo
		"$tmp/sim" "$trials" "$k" 10 0.05 0.02 "$sess" 2026
	done
done
echo
echo "Six sessions in all, three before and three after the step, K = 3, session effect 0.02; $trials trials"
echo
"$tmp/sim" "$trials" 3 10 0.05 0.02 0.02 2026 3
