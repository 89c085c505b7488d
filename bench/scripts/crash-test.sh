#!/bin/sh
# The long crash-safety and race test: t8020 with 50 SIGKILL moments for
# `import` and for `run` (plus one each on a full disk where a tmpfs can
# be mounted) and 20 trials of 8 concurrent imports of the same content.
# Prints t8020's checks and its "figures:" lines (the numbers in
# bench/BENCHMARKS.md, "Robustness"). Usage:
#   sh bench/scripts/crash-test.sh [MOMENTS [TRIALS [SEED]]]
# after `make build-tests`.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
CRASH_MOMENTS=${1:-50} RACE_TRIALS=${2:-20} CRASH_SEED=${3:-$$} \
	exec bash "$top/bench/t/e2e/t8020-crash-race.sh"
