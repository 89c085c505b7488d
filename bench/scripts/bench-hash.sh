#!/bin/sh
# Hashing benchmark for bench/BENCHMARKS.md (section "hashing"). Measures,
# side by side in one run, on page-cached files:
#   - openssl speed -evp sha256 (in-memory rate, 16 KiB blocks): the ceiling
#   - openssl dgst -sha256 on a 1 GiB file: the anchor
#   - shimbench models hash --no-cache on the same file
#   - shimbench models hash -j 2 on two 1 GiB files (parallel)
#   - the same file on one CPU (taskset -c 0: no read-ahead thread), to
#     tell the parallel speedup from the read-ahead thread's
#   - shimbench models hash of an unchanged file answered by the cache
# and prints the ratios against the targets. Best of N runs each.
#
#   sh bench/scripts/bench-hash.sh [DIR]     (DIR: scratch space, 2 GiB;
#                                             default $TMPDIR or /tmp)
# Environment: SHIMBENCH (default build/shimbench), RUNS (default 5).
# Needs GNU date (+%N) and /dev/urandom: Linux.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
sb=${SHIMBENCH:-$top/build/shimbench}
runs=${RUNS:-5}
dir=$(mktemp -d "${1:-${TMPDIR:-/tmp}}/bench-hash.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
export SHIMBENCH_DB="$dir/cache.db"

now_ns() { date +%s%N; }
true_prog() { /bin/true; }
# best CMD...: prints the best wall time in seconds of $runs runs.
best() {
	b=""
	i=0
	while [ $i -lt "$runs" ]; do
		t0=$(now_ns)
		"$@" >/dev/null 2>&1
		t1=$(now_ns)
		t=$((t1 - t0))
		if [ -z "$b" ] || [ $t -lt $b ]; then b=$t; fi
		i=$((i + 1))
	done
	awk -v n="$b" 'BEGIN { printf "%.4f", n / 1e9 }'
}

GiB=1073741824
load0=$(cut -d" " -f1-3 /proc/loadavg 2>/dev/null)
head -c $GiB /dev/urandom > "$dir/a.bin"
head -c $GiB /dev/urandom > "$dir/b.bin"
touch -t 202001010000 "$dir/a.bin" "$dir/b.bin"
cat "$dir/a.bin" "$dir/b.bin" > /dev/null      # page-cache them

# openssl speed: "sha256 ... <16384-byte rate>k" in 1000s of bytes per s.
speed=$(openssl speed -seconds 3 -evp sha256 2>/dev/null |
	awk '$1 == "sha256" { v = $NF; sub(/k$/, "", v); print v * 1000 }')
dgst=$(best openssl dgst -sha256 "$dir/a.bin")
one=$(best "$sb" models hash --no-cache "$dir/a.bin")
two=$(best "$sb" models hash --no-cache -j 2 "$dir/a.bin" "$dir/b.bin")
if command -v taskset >/dev/null 2>&1; then
	one1=$(best taskset -c 0 "$sb" models hash --no-cache "$dir/a.bin")
else
	one1=""
fi
# Check the hash once, then time the cached answer.
want=$(openssl dgst -sha256 -r "$dir/a.bin" | cut -d' ' -f1)
got=$("$sb" models hash "$dir/a.bin" | cut -d' ' -f1)
[ "$want" = "$got" ] || { echo "bench-hash: wrong hash $got (want $want)" >&2; exit 1; }
cached=$(best "$sb" models hash "$dir/a.bin")
start=$(best "$sb" --version)
spawn=$(best true_prog)
# In-process cost of the cached answer (stat + lookup), from --verbose.
lookup=$("$sb" models hash --verbose "$dir/a.bin" 2>&1 >/dev/null |
	sed -n 's/^cached: .*(stat and lookup: \([0-9.]*\) ms)$/\1/p')
[ -n "$lookup" ] ||
	{ echo "bench-hash: the last run was not answered by the cache" >&2; exit 1; }

echo "machine: $(uname -srm); load $load0 at the start, $(cut -d" " -f1-3 /proc/loadavg 2>/dev/null) at the end; $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'); $(getconf _NPROCESSORS_ONLN) CPUs; $(openssl version | cut -d' ' -f1-2)"
awk -v speed="$speed" -v dgst="$dgst" -v one="$one" -v two="$two" \
    -v cached="$cached" -v start="$start" -v lookup="$lookup" -v spawn="$spawn" \
    -v one1="$one1" \
    -v gib=$GiB 'BEGIN {
	r_dgst = gib / dgst; r_one = gib / one; r_two = 2 * gib / two
	printf "| measurement | time | rate | ratio | target | met |\n"
	printf "|---|---|---|---|---|---|\n"
	printf "| openssl speed -evp sha256, 16 KiB blocks (in memory) | | %.0f MB/s | | | |\n", speed / 1e6
	printf "| openssl dgst -sha256, 1 GiB page-cached | %.3f s | %.0f MB/s | 1.00 | anchor | |\n", dgst, r_dgst / 1e6
	printf "| shimbench models hash, same file | %.3f s | %.0f MB/s | %.2fx dgst | >= 1.30x | %s |\n", one, r_one / 1e6, r_one / r_dgst, ((r_one / r_dgst >= 1.3) ? "yes" : "NO")
	printf "| shimbench vs in-memory rate | | | %.1f%% of speed | >= 85%% | %s |\n", 100 * r_one / speed, ((r_one / speed >= 0.85) ? "yes" : "NO")
	printf "| shimbench models hash -j 2, two 1 GiB files | %.3f s | %.0f MB/s | %.2fx one file | >= 1.80x | %s |\n", two, r_two / 1e6, r_two / r_one, ((r_two / r_one >= 1.8) ? "yes" : "NO")
	if (one1 != "") {
		r_one1 = gib / one1
		printf "| for scale: one file on one CPU (taskset -c 0, no read-ahead thread) | %.3f s | %.0f MB/s | %.2fx dgst | | |\n", one1, r_one1 / 1e6, r_one1 / r_dgst
		printf "| for scale: -j 2 against one file on one CPU | | | %.2fx | | |\n", r_two / r_one1
	}
	printf "| cached re-verify in process (stat + cache lookup) | %.3f ms | | | < 5 ms | %s |\n", lookup, ((lookup < 5) ? "yes" : "NO")
	printf "| cached re-verify, whole process (exec, open store, stat, print) | %.1f ms | | | | |\n", cached * 1000
	printf "| for scale: /bin/true (spawning any process here) | %.1f ms | | | | |\n", spawn * 1000
	printf "| for scale: shimbench --version | %.1f ms | | | | |\n", start * 1000
	printf "| cached re-verify, whole process minus /bin/true | %.1f ms | | | < 5 ms | %s |\n", (cached - spawn) * 1000, ((cached - spawn < 0.005) ? "yes" : "NO")
}'
