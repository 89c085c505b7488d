#!/bin/sh
# Time and memory of compare, gate and history at scale (issue 11, §2
# and §5), against anchors measured in the same run.
#
#   sh bench/scripts/bench-compare.sh [QUICK|MWU]
#
# Needs build/shimbench (make), cc, python3, GNU time (/usr/bin/time),
# sort. Works in a temporary directory, removed at the end; prints one
# Markdown table per part.
#
# 1. The statistics of one workload through the library (a small C driver,
#    bench/scripts/bench-compare.c, linked with the project's objects):
#    100,000 samples per side as 1 x 100,000, 10 x 10,000, 1,000 x 100
#    and 10,000 x 10 processes x samples, without and with a calibrated
#    process effect, 2000 bootstrap draws.
# 2. The same end to end: `shimbench compare` and `gate` of two imported
#    sessions of 10 processes x 10,000 samples each.
# 3. history of one series of 1,000 sessions: the change-point search in
#    the driver, and `shimbench history` over a store of 1,000 imported
#    sessions.
# Anchors: `sort -g` of the same 200,000 numbers (GNU time), a qsort of
# 200,000 doubles in the driver.
#
# Every figure is the best of 5 runs (the machine may be shared; the
# best is the one least disturbed). QUICK: one run each. MWU: only part
# 4, the timing of the exact Mann-Whitney p.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/shimbench
runs=5
part=${1:-}
[ "$part" = QUICK ] && runs=1
[ -x "$bin" ] || { echo "bench-compare: build first (make)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
objs=$(ls "$top"/build/obj/base/*.o "$top"/build/obj/models/*.o \
	"$top"/build/obj/evidence/*.o "$top"/build/obj/run/*.o \
	"$top"/build/obj/analysis/*.o)
libs="-lcjson -lsqlite3 -lm -lpthread"
[ "$(uname -s)" = Darwin ] || libs="$libs -lcrypto"
# shellcheck disable=SC2086
cc -std=c11 -O2 -I"$top/bench/src" -o "$tmp/driver" \
	"$top/bench/scripts/bench-compare.c" $objs $libs

# best KEY CMD...: runs CMD $runs times; prints the line with the
# smallest KEY=value (the driver's key=value output).
best() {
	key=$1
	shift
	i=0
	while [ $i -lt $runs ]; do
		"$@"
		i=$((i + 1))
	done | awk -v k="$key" '{ for (f = 1; f <= NF; f++) if (index($f, k "=") == 1) {
		v = substr($f, length(k) + 2) + 0; if (!n || v < b) { b = v; l = $0 }; n++ } }
		END { print l }'
}
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# ratio A B [DECIMALS]: A / B
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { printf "%.*f", d, a / b }'; }
# gtime CMD...: "seconds maxrss_kb cpu_seconds" of CMD (best of $runs
# by time).
gtime() {
	i=0
	while [ $i -lt $runs ]; do
		/usr/bin/time -f "%e %M %U %S" -o "$tmp/t" "$@" >/dev/null 2>&1
		awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$tmp/t" >"$tmp/t2"
		mv "$tmp/t2" "$tmp/t"
		cat "$tmp/t"
		i=$((i + 1))
	done | sort -n | head -1
}

# 4. the exact Mann-Whitney p (issue 19 §7), samples rounded to 0.1
# (ties), against a qsort of 200,000 doubles in the same run
part_mwu() {
	qs=$(best seconds "$tmp/driver" qsort 200000)
	echo "| Mann-Whitney p (ties) | seconds | p | exact | / qsort of 200,000 |"
	echo "|---|---:|---:|---|---:|"
	for case in "60 8 1" "100 100 0" "100 100 0.5" "500 20 0" "200 200 0" \
		"1000 1000 0.3" "100000 100000 0"; do
		# shellcheck disable=SC2086
		l=$(best seconds "$tmp/driver" mwu $case)
		set -- $case
		echo "| $1 vs $2, shift $3 | $(field "$l" seconds) | $(field "$l" p) | $(field "$l" exact) | $(ratio "$(field "$l" seconds)" "$(field "$qs" seconds)" 2) |"
	done
	echo
}

echo "machine: $(uname -sm), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null |
	sed 's/.*: //'), $(getconf _NPROCESSORS_ONLN) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo
if [ "$part" = MWU ]; then
	part_mwu
	echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	exit 0
fi

"$tmp/driver" compare 1 100000 -1 "$tmp/samples" >/dev/null
sort_t=$(gtime sort -g "$tmp/samples" | cut -d' ' -f1)
q=$(best seconds "$tmp/driver" qsort 200000)
qsort_t=$(field "$q" seconds)

echo "| job (100,000 samples per side, 2000 draws) | seconds | CPU seconds | peak RSS | / sort -g | / qsort |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| anchor: sort -g, 200,000 numbers | $sort_t | | | 1.0 | |"
echo "| anchor: qsort, 200,000 doubles (in process) | $qsort_t | | | | 1 |"
for shape in "1 100000 -1" "10 10000 -1" "1000 100 -1" "10000 10 -1" \
	"1 100000 0.05" "10 10000 0.05" "100 1000 0.05" "1000 100 0.05" \
	"10000 10 0.05"; do
	# shellcheck disable=SC2086
	l=$(best seconds "$tmp/driver" compare $shape)
	s=$(field "$l" seconds)
	set -- $shape
	cal=no
	[ "$3" = -1 ] || cal="$3"
	echo "| library: $1 x $2, calibrated effect $cal | $s | $(field "$l" cpu) | $(($(field "$l" peak_rss_kb) / 1024)) MB | $(ratio "$s" "$sort_t") | $(ratio "$s" "$qsort_t" 0) |"
done

# 2. end to end, through a store
python3 - "$tmp" <<'PY'
import hashlib, json, os, random, sys
random.seed(1)
def raw(d, label, base, k, r, build, first=1):
    os.makedirs(d)
    runs = []
    for i in range(k):
        p = base * (1 + 0.02 * random.gauss(0, 1))
        ts = [round(p * (1 + 0.01 * random.gauss(0, 1)), 3) for _ in range(r)]
        row = {"build_commit": "Debian", "build_number": 1, "cpu_info": "cpu",
               "gpu_info": "", "backends": "CPU", "model_filename": "m.gguf",
               "model_type": "llama ?B F16", "model_size": 1000,
               "model_n_params": 100, "n_batch": 2048, "n_ubatch": 512,
               "n_threads": 2, "type_k": "f16", "type_v": "f16",
               "n_gpu_layers": -1, "split_mode": "layer", "main_gpu": 0,
               "flash_attn": -1, "devices": "auto", "n_prompt": 128,
               "n_gen": 0, "n_depth": 0, "test_time": "2026-12-02T10:10:31Z",
               "samples_ns": [int(round(128e9 / t)) for t in ts],
               "samples_ts": ts}
        f = "run%d.json" % (i + 1)
        json.dump([row], open(os.path.join(d, f), "w"))
        runs.append({"stdout": f, "target": "here", "variant": "plain",
                     "role": "bare-metal", "model": "m",
                     "argv": ["llama-bench", "-p", "128", "-n", "0", "-r",
                              str(r), "-o", "json"]})
    with open(os.path.join(d, "SHA256SUMS"), "w") as o:
        for x in runs:
            h = hashlib.sha256(open(os.path.join(d, x["stdout"]), "rb").read())
            o.write(h.hexdigest() + "  " + x["stdout"] + "\n")
    json.dump({"shimbench_mapping": 1, "label": label,
               "environments": {"here": {"hw_model": "h", "cpu_model": "c",
                   "cpu_cores": 2, "os_name": "Linux", "os_version": "v" + build,
                   "os_build": build, "is_vm": 0, "llama_build": "Debian"}},
               "models": {"m": {"label": "m", "file": "m.gguf",
                                "sha256": "0" * 64}},
               "runs": runs}, open(d + ".mapping.json", "w"))
t = sys.argv[1]
raw(t + "/cmp/base", "base", 100, 10, 10000, "24A100")
raw(t + "/cmp/cand", "cand", 97, 10, 10000, "24A200")
for s in range(1000):      # 1,000 nightly sessions, a 5 % step at 700
    raw(t + "/hist/s%04d" % s, "nightly %d" % s, 100 if s < 700 else 95,
        1, 10, "24A%03d" % (s // 100))
PY
(cd "$tmp/cmp" && "$bin" --db c.db --quiet import --mapping base.mapping.json \
	--mapping cand.mapping.json base cand >/dev/null)
set -- $(gtime "$bin" --db "$tmp/cmp/c.db" compare session=1 session=2)
echo "| shimbench compare, 2 sessions of 10 x 10,000 samples | $1 | $3 | $(($2 / 1024)) MB | $(ratio "$1" "$sort_t") | |"
set -- $(gtime "$bin" --db "$tmp/cmp/c.db" gate --baseline session=1 --candidate session=2)
echo "| shimbench gate, the same | $1 | $3 | $(($2 / 1024)) MB | $(ratio "$1" "$sort_t") | |"
echo

# 3. history
(cd "$tmp/hist" && set -- && for d in s*/; do d=${d%/}; set -- "$@" --mapping "$d.mapping.json"; done &&
	for d in s*/; do set -- "$@" "${d%/}"; done &&
	"$bin" --db h.db --quiet import "$@" >/dev/null)
l=$(best seconds "$tmp/driver" history 1000)
echo "| job (one series of 1,000 sessions) | seconds | CPU seconds | peak RSS | / sort -g | found |"
echo "|---|---:|---:|---:|---:|---|"
echo "| library: change points of 1,000 sessions of 3 processes (steps at 500, 750) | $(field "$l" seconds) | | $(($(field "$l" peak_rss_kb) / 1024)) MB | $(ratio "$(field "$l" seconds)" "$sort_t" 2) | $(field "$l" at) |"
set -- $(gtime "$bin" --db "$tmp/hist/h.db" history)
found=$("$bin" --db "$tmp/hist/h.db" history --format csv | awk -F, 'NR > 1 && $8 ~ /^change/ { print "session " $2 }' | paste -sd, -)
echo "| shimbench history, store of 1,000 sessions (5 % step at 701) | $1 | $3 | $(($2 / 1024)) MB | $(ratio "$1" "$sort_t" 2) | $found |"
echo

part_mwu
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
