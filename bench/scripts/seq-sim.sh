#!/bin/sh
# The sequential gate against the fixed one by simulation
# (bench/scripts/seq-sim.c): false alarms, power and the processes used,
# at the published noise and at a 2 % and 5 % process effect.
#
#   sh bench/scripts/seq-sim.sh [TRIALS [SEED [PROFILE|all [loop]]]]
#
# Defaults: 1000 trials per cell, seed 2027, every profile. Builds the
# driver against build/obj (run make first); runs it under nice, since
# it is CPU bound. Prints one Markdown table; the figures are in
# bench/BENCHMARKS.md ("The sequential gate").
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
trials=${1:-1000}
seed=${2:-2027}
[ -f "$top/build/obj/analysis/sequential.o" ] || { echo "seq-sim: build first (make)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/seq-sim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
objs=$(ls "$top"/build/obj/base/*.o "$top"/build/obj/models/*.o \
	"$top"/build/obj/evidence/*.o "$top"/build/obj/analysis/*.o)
libs="-lcjson -lsqlite3 -lm -lpthread"
[ "$(uname -s)" = Darwin ] || libs="$libs -lcrypto"
# shellcheck disable=SC2086
cc -std=c11 -O2 -I"$top/bench/src" -o "$tmp/sim" "$top/bench/scripts/seq-sim.c" \
	$objs $libs
shift $(( $# < 2 ? $# : 2 ))
nice -n 10 "$tmp/sim" "$trials" "$seed" "$@"
