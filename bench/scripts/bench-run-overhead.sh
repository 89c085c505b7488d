#!/bin/sh
# Benchmark: harness overhead of `shimbench run` for a one-process plan
# against the same llama-bench command run directly (the anchor), in
# PAIRS pairs whose order alternates (AB, BA, ...). Target: the median
# wall time of run is at most 2 % above the median direct time.
# Usage: bench/scripts/bench-run-overhead.sh [PAIRS] [PROCESSES]
# (defaults 5 and 1). With PROCESSES > 1 the plan runs that many processes
# and the anchor runs llama-bench that many times: the session's fixed
# cost (probe, store, bundle) is then spread over more benchmark time.
# With OTHER_BIN=PATH (another shimbench build, e.g. the one before a
# change), that binary runs the same plan in the same rounds, so both are
# measured against one anchor; the load average is printed before and
# after (figures on a shared machine are only comparable as ratios).
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
"$bin" --db "$work/s-r.db" --quiet run --bundle "$work/w" "$work/plan.json" >/dev/null 2>&1
"$lb" -m "$model" -p 512 -n 128 -r 10 -o jsonl >/dev/null 2>&1
# The clock: GNU date (one small process, the same for every contender),
# else Python's (its start-up, ~20 ms, is then in every figure alike).
case $(date +%N 2>/dev/null) in
*N*|'') now() { python3 -c 'import time; print(time.time())'; } ;;
*) now() { date +%s.%N; } ;;
esac
direct() {
	t0=$(now); j=0
	while [ "$j" -lt "$procs" ]; do
		"$lb" -m "$model" -p 512 -n 128 -r 10 -o jsonl >/dev/null 2>&1; j=$((j + 1))
	done; t1=$(now)
	echo "$t0 $t1" | awk '{print $2 - $1}' >>"$work/direct"
}
harness() { # harness BIN OUT TAG
	t0=$(now); "$1" --db "$work/s-$3.db" --quiet run --bundle "$work/b$3-$i" "$work/plan.json" >/dev/null 2>&1; t1=$(now)
	echo "$t0 $t1" | awk '{print $2 - $1}' >>"$2"
}
other=${OTHER_BIN:-}
if [ -n "$other" ]; then
	"$other" --db "$work/s-o.db" --quiet run --bundle "$work/wo" "$work/plan.json" >/dev/null 2>&1
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
: >"$work/other"
i=1
while [ "$i" -le "$pairs" ]; do
	# the order rotates, so no contender always follows another
	case $((i % 3)) in
	1) direct; harness "$bin" "$work/run" r; [ -z "$other" ] || harness "$other" "$work/other" o ;;
	2) harness "$bin" "$work/run" r; [ -z "$other" ] || harness "$other" "$work/other" o; direct ;;
	0) [ -z "$other" ] || harness "$other" "$work/other" o; direct; harness "$bin" "$work/run" r ;;
	esac
	i=$((i + 1))
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
python3 - "$work/direct" "$work/run" "$work/other" <<'PY'
import statistics as st, sys
d = [float(x) for x in open(sys.argv[1])]
r = [float(x) for x in open(sys.argv[2])]
o = [float(x) for x in open(sys.argv[3])]
md, mr = st.median(d), st.median(r)
print("direct llama-bench: " + " ".join(f"{x:.2f}" for x in d) + f" s; median {md:.3f} s")
print("shimbench run:      " + " ".join(f"{x:.2f}" for x in r) + f" s; median {mr:.3f} s")
print(f"overhead: {100*(mr/md-1):+.2f} % = {1000*(mr-md):.0f} ms (target <= 2 %)",
      "met" if mr <= md * 1.02 else "MISSED")
# Paired within each round (the contenders ran back to back), which a
# load that drifts between rounds disturbs less than the medians above.
pr = st.median(b / a for a, b in zip(d, r))
print(f"paired: median ratio run/direct {pr:.4f} ({100*(pr-1):+.2f} %), "
      f"median difference {1000*st.median(b - a for a, b in zip(d, r)):.0f} ms")
if o:
    mo = st.median(o)
    print("OTHER_BIN run:      " + " ".join(f"{x:.2f}" for x in o) + f" s; median {mo:.3f} s")
    print(f"OTHER_BIN overhead: {100*(mo/md-1):+.2f} % = {1000*(mo-md):.0f} ms")
    po = st.median(b / a for a, b in zip(d, o))
    print(f"OTHER_BIN paired: median ratio {po:.4f} ({100*(po-1):+.2f} %), "
          f"median difference {1000*st.median(b - a for a, b in zip(d, o)):.0f} ms")
PY
