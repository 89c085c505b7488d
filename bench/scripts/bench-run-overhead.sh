#!/bin/sh
# Benchmark: harness overhead of `shimbench run` for a one-process plan
# against the same llama-bench command run directly (the anchor), in
# PAIRS pairs whose order alternates (AB, BA, ...). Target: the median
# wall time of run is at most 2 % above the median direct time.
# Usage: bench/scripts/bench-run-overhead.sh [PAIRS] [PROCESSES]
# (defaults 5 and 1). With PROCESSES > 1 the plan runs that many processes
# and the anchor runs llama-bench that many times: the session's fixed
# cost (probe, store, bundle) is then spread over more benchmark time.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
pairs=${1:-5}
procs=${2:-1}
bin=$top/build/shimbench
lb=$top/.llama/bin/llama-bench
model=$top/models/synth-tiny.gguf
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -f "$model" ] || "$bin" models synth tiny -o "$model" >/dev/null
cat >"$work/plan.json" <<JSON
{"models":[{"name":"synth-tiny","path":"$model"}],
 "targets":{"here":{"transport":"local"}},
 "variants":[{"name":"direct-equivalent","target":"here"}],
 "llama_bench":{"path":"$lb","args":["-p","512","-n","128","-r","10"]},
 "processes":$procs}
JSON
# One warm-up of each so the model is in the page cache and hashed.
"$bin" --db "$work/s.db" --quiet run --bundle "$work/w" "$work/plan.json" >/dev/null 2>&1
"$lb" -m "$model" -p 512 -n 128 -r 10 -o jsonl >/dev/null 2>&1
now() { python3 -c 'import time; print(time.monotonic())'; }
direct() {
	t0=$(now); j=0
	while [ "$j" -lt "$procs" ]; do
		"$lb" -m "$model" -p 512 -n 128 -r 10 -o jsonl >/dev/null 2>&1; j=$((j + 1))
	done; t1=$(now)
	echo "$t0 $t1" | awk '{print $2 - $1}' >>"$work/direct"
}
harness() {
	t0=$(now); "$bin" --db "$work/s.db" --quiet run --bundle "$work/b$1" "$work/plan.json" >/dev/null 2>&1; t1=$(now)
	echo "$t0 $t1" | awk '{print $2 - $1}' >>"$work/run"
}
i=1
while [ "$i" -le "$pairs" ]; do
	if [ $((i % 2)) -eq 1 ]; then direct; harness "$i"; else harness "$i"; direct; fi
	i=$((i + 1))
done
python3 - "$work/direct" "$work/run" <<'PY'
import statistics as st, sys
d = [float(x) for x in open(sys.argv[1])]
r = [float(x) for x in open(sys.argv[2])]
md, mr = st.median(d), st.median(r)
print("direct llama-bench: " + " ".join(f"{x:.2f}" for x in d) + f" s; median {md:.3f} s")
print("shimbench run:      " + " ".join(f"{x:.2f}" for x in r) + f" s; median {mr:.3f} s")
print(f"overhead: {100*(mr/md-1):+.2f} % = {1000*(mr-md):.0f} ms (target <= 2 %)",
      "met" if mr <= md * 1.02 else "MISSED")
PY
