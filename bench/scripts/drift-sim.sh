#!/bin/sh
# Drifts in history by simulation (bench/scripts/drift-sim.c): how often
# a gradual change is named a drift, an abrupt step is not, and a flat
# series shows nothing; K = 3 processes of 10 samples per session, the
# OS-update pair's noise (between-process CV 5 %, within 2 %), without
# and with a 2 % session effect.
#
#   sh bench/scripts/drift-sim.sh [TRIALS [SEED]]
#
# Prints Markdown tables; the figures are in bench/BENCHMARKS.md
# ("history: drifts").
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
trials=${1:-1000}
seed=${2:-2027}
[ -f "$top/build/obj/analysis/changepoint.o" ] || { echo "drift-sim: build first (make)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/drift-sim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -O2 -I"$top/bench/src" -o "$tmp/sim" "$top/bench/scripts/drift-sim.c" \
	"$top/build/obj/analysis/changepoint.o" "$top/build/obj/analysis/stats.o" \
	"$top/build/obj/base/rng.o" "$top/build/obj/base/util.o" -lm
for sess in 0 0.02; do
	echo
	echo "K = 3 processes of 10 samples per session, between-process CV 5 %, within 2 %, session effect $sess; $trials trials"
	echo
	nice -n 10 "$tmp/sim" "$trials" 3 0.05 0.02 "$sess" "$seed"
done
