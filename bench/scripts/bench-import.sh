#!/bin/sh
# Benchmark: import + report of the two published evidence sets into a
# fresh store, against an anchor measured in the same run: sha256sum of
# the same evidence files (the verification work import cannot skip).
# Target: import + report under 100 ms. Needs hyperfine; the evidence ships in evidence/
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/shimbench
ev=$top/evidence
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
e1=$ev/cua-lume-2026-08-09-m1-ultra
e2=$ev/cua-lume-2026-08-10-m1-ultra-gemma4
cat >"$work/job.sh" <<JOB
rm -f "$work/b.db" "$work/b.db-wal" "$work/b.db-shm"
"$bin" --db "$work/b.db" --quiet import --mapping "$e1/mapping.json" \
	--mapping "$e2/mapping.json" "$e1" "$e2" >/dev/null
"$bin" --db "$work/b.db" --quiet report --format csv >/dev/null
JOB
hyperfine -N --warmup 3 --runs 30 --export-json "$work/h.json" \
	-n anchor-sha256sum "sha256sum $(echo "$e1"/* "$e2"/*)" \
	-n import-report "sh $work/job.sh"
python3 - "$work/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
a, b = r["anchor-sha256sum"], r["import-report"]
print(f"anchor sha256sum: median {a['median']*1e3:.2f} ms")
print(f"import + report:  median {b['median']*1e3:.2f} ms (max {b['max']*1e3:.2f} ms)")
print(f"ratio import+report / anchor: {b['median']/a['median']:.2f}")
print("target < 100 ms:", "met" if b["median"] < 0.1 else "MISSED")
PY
