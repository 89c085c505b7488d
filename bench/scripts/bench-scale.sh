#!/bin/sh
# Time and peak memory of report, sessions, gate --baseline auto, compare
# and history over stores of 10 to 10,000 sessions, of compare and gate of
# two sessions (which must not grow with the store), and of one import of
# many bundles (issue 11 §5, issue 17), with an anchor measured in the
# same run.
#
#   sh bench/scripts/bench-scale.sh [QUICK]
#
# Stores: bench/scripts/scale-store.c writes N nightly sessions through
# the store's own functions (6 runs, 3 stock and 3 shim, pp512 and tg128
# with 10 samples each: 120 samples per session; a new OS build every
# 100 sessions). Anchor: the sqlite3 shell reading every sample of the
# same store (SELECT count(*), sum(ts) FROM samples), the least any
# command that reports on all of them must do. Each figure is the best
# of 3 runs (the machine may be shared); GNU time gives wall seconds,
# CPU seconds (user + system) and peak RSS; wall seconds are taken to
# the millisecond around it.
#
# Import: N copies of a real bundle (the configs fixture: 2 runs, 16
# results), each with new raw bytes, imported by one `shimbench import`
# of all N directories into a fresh store: peak RSS must not grow with N.
#
# The store check: every read-only command checks the store in full
# (quick_check, every raw output) unless the verified mark beside it says
# its files passed as they are (store.h store_verify()). The stores here
# are written by scale-store through the store, which marks them; the
# rows "(no mark)" remove the mark before each run, so they pay the full
# check, as the first read after a change behind SQLite's back does.
#
# QUICK: 10, 100 and 1,000 sessions only, and one run each.
# Environment: BENCH_SIZES="10000" times those store sizes only;
# BENCH_IMPORTS="" skips the import rows (or names their counts);
# BENCH_BEFORE=path/to/another/shimbench runs every job with it too,
# right after this build's run of the job, on the same store with the
# same anchor (a "before" row; that build must read this build's store
# version).
# Needs: make (build/), cc, sqlite3, python3, GNU time (/usr/bin/time).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/shimbench
runs=3
sizes="10 100 1000 10000"
imports="10 100 1000"
if [ "${1:-}" = QUICK ]; then
	runs=1
	sizes="10 100 1000"
	imports="10 100"
fi
sizes=${BENCH_SIZES:-$sizes}
imports=${BENCH_IMPORTS-$imports}
before=${BENCH_BEFORE:-}
[ -x "$bin" ] || { echo "bench-scale: build first (make)" >&2; exit 2; }
[ -z "$before" ] || [ -x "$before" ] ||
	{ echo "bench-scale: BENCH_BEFORE '$before' is not an executable" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
objs=$(ls "$top"/build/obj/base/*.o "$top"/build/obj/models/*.o "$top"/build/obj/evidence/*.o)
libs="-lcjson -lsqlite3 -lm -lpthread"
[ "$(uname -s)" = Darwin ] || libs="$libs -lcrypto"
# shellcheck disable=SC2086
cc -std=c11 -O2 -I"$top/bench/src" -o "$tmp/scale-store" \
	"$top/bench/scripts/scale-store.c" $objs $libs

# best [nomark DB] CMD...: "wall cpu rss_mb" of the fastest of $runs runs
# of CMD (its exit status is not judged: gate exits 1 or 4 by design),
# wall seconds to the millisecond;
# with nomark, DB's verified mark is removed before each run.
best() {
	nomark=
	if [ "$1" = nomark ]; then nomark=$2; shift 2; fi
	i=0
	while [ $i -lt $runs ]; do
		[ -z "$nomark" ] || rm -f "$nomark-verified"
		t0=$(date +%s%N)
		/usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$@" >/dev/null 2>&1 || true
		t1=$(date +%s%N)
		# wall to the millisecond (GNU time's %e has 10 ms); GNU time
		# puts "Command exited with ..." first on a failure
		tail -n 1 "$tmp/t" | awk -v w=$(((t1 - t0) / 1000000)) \
			'{ printf "%.3f %.2f %.0f\n", w / 1000, $2 + $3, $4 / 1024 }'
		i=$((i + 1))
	done | sort -n | head -1
}
# The jobs; "nomark:JOB" runs JOB without the verified mark.
jobs="report
sessions
gate --baseline auto --candidate session=latest
compare variant=stock variant=shim
history --select variant=shim,test=pp512
compare session=1 session=2
gate --baseline session=1 --candidate session=2
nomark:report
nomark:gate --baseline session=1 --candidate session=2"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b < 0.005) printf "–"; else printf "%.1f", a / b }'; }

echo "machine: $(uname -sm), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null |
	sed 's/.*: //'), $(getconf _NPROCESSORS_ONLN) CPUs; load at start $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo
echo "| sessions | job | seconds | CPU s | peak RSS MB | / anchor |"
echo "|---:|---|---:|---:|---:|---:|"
for n in $sizes; do
	db=$tmp/s$n.db
	/usr/bin/time -f "%e" -o "$tmp/gen" "$tmp/scale-store" "$db" "$n"
	anchor=$(best sqlite3 "$db" "SELECT count(*), sum(ts) FROM samples")
	a=$(echo "$anchor" | cut -d' ' -f1)
	echo "| $n | (store written in $(cat "$tmp/gen") s, $(du -m "$db" | cut -f1) MB) | | | | |"
	echo "| $n | anchor: sqlite3, every sample | $(echo "$anchor" | tr ' ' '|' | sed 's/|/ | /g') | 1.0 |"
	echo "$jobs" | while IFS= read -r job; do
		# shellcheck disable=SC2086
		case "$job" in
		nomark:*) r=$(best nomark "$db" "$bin" --db "$db" ${job#nomark:}) ;;
		*) r=$(best "$bin" --db "$db" $job) ;;
		esac
		w=$(echo "$r" | cut -d' ' -f1)
		name=$(echo "$job" | sed 's/^nomark:\(.*\)/\1 (no mark)/')
		echo "| $n | $name | $(echo "$r" | tr ' ' '|' | sed 's/|/ | /g') | $(ratio "$w" "$a") |"
		echo "$n $name|$w" >>"$tmp/all"
		[ -n "$before" ] || continue
		# shellcheck disable=SC2086
		case "$job" in
		nomark:*) r=$(best nomark "$db" "$before" --db "$db" ${job#nomark:}) ;;
		*) r=$(best "$before" --db "$db" $job) ;;
		esac
		w=$(echo "$r" | cut -d' ' -f1)
		echo "| $n | $name (before) | $(echo "$r" | tr ' ' '|' | sed 's/|/ | /g') | $(ratio "$w" "$a") |"
	done
	rm -f "$db" "$db-wal" "$db-shm"
done
# shellcheck disable=SC2086
set -- $sizes
[ $# -lt 2 ] || {
echo
echo "Growth exponents (seconds ~ sessions^k), from the two largest stores:"
echo
# shellcheck disable=SC2086
set -- $sizes
while [ $# -gt 2 ]; do shift; done
lo=$1 hi=$2
echo "$jobs" | sed 's/^nomark:\(.*\)/\1 (no mark)/' | while IFS= read -r job; do
	t1=$(awk -F'|' -v k="$lo $job" '$1 == k { print $2 }' "$tmp/all")
	t2=$(awk -F'|' -v k="$hi $job" '$1 == k { print $2 }' "$tmp/all")
	awk -v j="$job" -v a="$t1" -v b="$t2" -v n1="$lo" -v n2="$hi" 'BEGIN {
		if (a < 0.005) printf "- %s: below the timer at %d sessions\n", j, n1;
		else printf "- %s: k = %.2f (%s s at %d, %s s at %d)\n", j, log(b / a) / log(n2 / n1), a, n1, b, n2 }'
done
}
[ -n "$imports" ] || exit 0

# ---- import of many bundles: streaming ---------------------------------------------
echo
cf=$top/bench/t/fixtures/configs
"$bin" --db "$tmp/t.db" --quiet import --mapping "$cf/a.mapping.json" "$cf/a" >/dev/null
"$bin" --db "$tmp/t.db" --quiet export 1 "$tmp/template" >/dev/null
max=0
for k in $imports; do [ "$k" -gt "$max" ] && max=$k; done
python3 - "$tmp/template" "$tmp/bundles" "$max" <<'PY'
import hashlib, json, os, shutil, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
b0 = json.load(open(src + '/bundle.json'))
os.makedirs(out)
for k in range(n):
    d = '%s/b%05d' % (out, k)
    os.makedirs(d)
    b = json.loads(json.dumps(b0))
    b['label'] = 'copy %d' % k
    for r in b['runs']:
        t = open(src + '/' + r['stdout']).read()
        t = t.replace('"test_time": "', '"test_time": "%05d-' % k)
        os.makedirs(os.path.dirname(d + '/' + r['stdout']), exist_ok=True)
        open(d + '/' + r['stdout'], 'w').write(t)
        r['stdout_sha256'] = hashlib.sha256(t.encode()).hexdigest()
    json.dump(b, open(d + '/bundle.json', 'w'))
    names = [r['stdout'] for r in b['runs']] + ['bundle.json']
    with open(d + '/SHA256SUMS', 'w') as s:
        for f in sorted(names):
            s.write('%s  %s\n' % (hashlib.sha256(open(d + '/' + f, 'rb').read()).hexdigest(), f))
PY
echo "| bundles in one import | seconds | CPU s | peak RSS MB | per bundle ms |"
echo "|---:|---:|---:|---:|---:|"
for k in $imports; do
	ls -d "$tmp"/bundles/b* | head -n "$k" >"$tmp/list"
	i=0
	while [ $i -lt $runs ]; do
		rm -f "$tmp/imp.db"*
		# shellcheck disable=SC2046
		/usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$bin" --db "$tmp/imp.db" --quiet \
			import $(cat "$tmp/list") >/dev/null 2>"$tmp/err" ||
			{ echo "import of $k bundles failed:" >&2; head -3 "$tmp/err" >&2; exit 1; }
		awk '{ printf "%.3f %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$tmp/t"
		i=$((i + 1))
	done | sort -n | head -1 >"$tmp/r"
	[ "$(sqlite3 "$tmp/imp.db" 'select count(*) from sessions')" = "$k" ] ||
		{ echo "import of $k bundles: wrong session count" >&2; exit 1; }
	read -r w c m <"$tmp/r"
	echo "| $k | $w | $c | $m | $(awk -v w="$w" -v k="$k" 'BEGIN { printf "%.1f", 1000 * w / k }') |"
done
echo
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
