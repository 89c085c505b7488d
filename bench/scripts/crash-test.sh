#!/bin/sh
# The long crash-safety and race test: t8020 with 50 SIGKILL moments for
# `import` and for `run` (plus one each on a full disk where a tmpfs can
# be mounted) and 20 trials of 8 concurrent imports of the same content;
# then t8050 (issue 21) with 20 SIGKILLs of `run`, each resumed with
# `run --resume`, and as many of the real llama-bench under a killed
# shimbench. Prints the checks and their "figures:" lines (the numbers in
# bench/BENCHMARKS.md, "Robustness"). Usage:
#   sh bench/scripts/crash-test.sh [MOMENTS [TRIALS [SEED [KILLS]]]]
# after `make build-tests`.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
CRASH_MOMENTS=${1:-50} RACE_TRIALS=${2:-20} CRASH_SEED=${3:-$$} \
	bash "$top/bench/t/e2e/t8020-crash-race.sh"
rc=$?
LIFECYCLE_TRIALS=${4:-20} LIFECYCLE_SEED=${3:-$$} \
	bash "$top/bench/t/e2e/t8050-run-lifecycle.sh" || rc=1
exit $rc
