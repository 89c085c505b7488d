#!/bin/sh
# The fixed gate by simulation (bench/scripts/gate-sim.c): A/A false
# alarms, the MDE it prints and its power at a slowdown equal to that
# MDE, per noise profile, K processes per side and calibration.
#
#   sh bench/scripts/gate-sim.sh [TRIALS [SEED [PROFILE [K [CALIB]]]]]
#
# Defaults: 1000 trials per cell, seed 2027, every cell. Builds the
# driver against build/obj (run make first); runs it under nice, since
# it is CPU bound. Prints one Markdown table; the figures are in
# bench/BENCHMARKS.md ("The fixed gate: false alarms and a true MDE").
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
trials=${1:-1000}
seed=${2:-2027}
[ -f "$top/build/obj/analysis/gate.o" ] || { echo "gate-sim: build first (make)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gate-sim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
objs=$(ls "$top"/build/obj/base/*.o "$top"/build/obj/models/*.o \
	"$top"/build/obj/evidence/*.o "$top"/build/obj/analysis/*.o)
libs="-lcjson -lsqlite3 -lm -lpthread"
[ "$(uname -s)" = Darwin ] || libs="$libs -lcrypto"
# shellcheck disable=SC2086
cc -std=c11 -O2 -I"$top/bench/src" -o "$tmp/sim" "$top/bench/scripts/gate-sim.c" \
	$objs $libs
shift $(( $# < 2 ? $# : 2 ))
nice -n 10 "$tmp/sim" "$trials" "$seed" "$@"
