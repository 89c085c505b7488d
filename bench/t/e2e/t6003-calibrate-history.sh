#!/bin/bash
# Calibration and history (issue 11 §4): calibrate refuses a selection
# that mixes configurations, never stores a failed calibration, lists and
# forgets floors; history dates sessions by measurement, never by import,
# and flags a clean -14 % step over six sessions at the default level.
. "$(dirname "$0")/lib.sh"

OSU=$FIXTURES/os-update
DB=$WORK/c.db
SB() { "$SHIMBENCH" --db "$DB" "$@"; }

expect_code 0 "import the OS-update pair" SB import --mapping "$OSU/base.mapping.json" \
	--mapping "$OSU/slow.mapping.json" "$OSU/base" "$OSU/slow"

# ---- calibrate -------------------------------------------------------------------
expect_code 2 "calibrate over both sessions mixes two fingerprints: refused" \
	SB calibrate --from variant=plain --store
grep_in "$WORK/err" "mixes configurations of 'calib pp128': fingerprint" "names what differs"
expect_code 0 "calibrate --list: nothing stored by the refusal" SB calibrate --list --format csv
check "no floor" test "$(tail -n +2 "$WORK/out" | wc -l)" = 0
expect_code 0 "calibrate one session and store" SB calibrate --from session=1 --store --format csv
grep_in "$WORK/err" "stored the noise floor of 2 workloads" "two floors stored"
expect_code 0 "calibrate --list" SB calibrate --list --format csv
check "lists both, with their variant and configuration" python3 -c "
import csv, json; rows = list(csv.DictReader(open('$WORK/out')))
assert [r['test'] for r in rows] == ['pp128', 'tg32'], rows
d = json.loads(rows[0]['details'])
assert d['variant'] == 'plain' and 'n_threads=2' in d['configuration']"
expect_code 0 "gate uses the stored floor" SB compare session=1 session=2 --format csv
expect_code 0 "forget floor 1 by id" SB calibrate --forget 1
grep_in "$WORK/out" "forgot 1 noise floor" "says how many"
expect_code 0 "forget by selection" SB calibrate --forget test=tg32,model=calib
expect_code 3 "forgetting what is not there" SB calibrate --forget 99
expect_code 2 "forget with an unknown key" SB calibrate --forget flavour=x
expect_code 2 "--list goes alone" SB calibrate --list --from session=1
expect_code 0 "nothing left" SB calibrate --list --format csv
check "no floor left" test "$(tail -n +2 "$WORK/out" | wc -l)" = 0
# A failed calibration (fewer than 3 processes) stores nothing at all,
# not even the workloads that could be calibrated.
expect_code 0 "calibrate --power leaves the store alone" SB calibrate --from session=1 --power session=2 --trials 20 --format csv
python3 - "$OSU" "$WORK/two" <<'PY'
import json, os, shutil, sys, hashlib
src, out = sys.argv[1:]
os.makedirs(out)
m = json.load(open(src + '/base.mapping.json'))
runs = []
for i in (1, 2):
    t = open('%s/base/run%d.json' % (src, i)).read().replace('"test_time": "2026-12-02', '"test_time": "2026-12-09')
    # pp128 of run 1 and 2 only: tg32 keeps three processes
    open('%s/run%d.json' % (out, i), 'w').write(t)
for i in (3, 4, 5):
    t = open('%s/base/run%d.json' % (src, i)).read().replace('"test_time": "2026-12-02', '"test_time": "2026-12-09')
    rows = [r for r in json.loads(t) if r['n_gen']]
    open('%s/run%d.json' % (out, i), 'w').write(json.dumps(rows))
m['runs'] = m['runs'][:5]
m['label'] = 'two pp128 processes'
for e in m['environments'].values():
    e['hw_model'] = 'other-host'
json.dump(m, open(out + '.mapping.json', 'w'))
with open(out + '/SHA256SUMS', 'w') as s:
    for i in range(1, 6):
        s.write('%s  run%d.json\n' % (hashlib.sha256(open('%s/run%d.json' % (out, i), 'rb').read()).hexdigest(), i))
PY
expect_code 0 "a session with two pp128 processes, five tg32" SB import --mapping "$WORK/two.mapping.json" "$WORK/two"
expect_code 4 "its calibration fails for pp128" SB calibrate --from session=3 --store --format csv
grep_in "$WORK/err" "calibration needs at least 3" "says why"
grep_in "$WORK/err" "no noise floor was stored" "and that nothing was stored"
expect_code 0 "list" SB calibrate --list --format csv
check "not even tg32's floor was stored" test "$(tail -n +2 "$WORK/out" | wc -l)" = 0

# ---- history: a clean -14 % step over six sessions ------------------------------
# Six sessions of three real processes each (the base series, reshuffled),
# measured a day apart; the last three 14 % slower (samples_ts x 0.86,
# samples_ns to match). Imported newest first: the order of measurement,
# not of import, must date them.
python3 - "$OSU" "$WORK/series" <<'PY'
import json, os, sys, hashlib
src, out = sys.argv[1:]
base = json.load(open(src + '/base.mapping.json'))
for k in range(6):
    d = '%s/s%d' % (out, k)
    os.makedirs(d)
    f = 0.86 if k >= 3 else 1.0
    runs = []
    for j in range(3):
        i = 1 + (3 * k + j) % 10
        rows = json.load(open('%s/base/run%d.json' % (src, i)))
        for r in rows:
            r['test_time'] = '2026-12-%02dT10:%02d:00Z' % (10 + k, j)
            r['samples_ts'] = [round(x * f, 3) for x in r['samples_ts']]
            r['samples_ns'] = [int(round(x / f)) for x in r['samples_ns']]
            r['avg_ts'] *= f
            r['avg_ns'] = int(r['avg_ns'] / f)
        name = 'run%d.json' % (j + 1)
        open(d + '/' + name, 'w').write(json.dumps(rows))
        runs.append({'stdout': name, 'target': 'here', 'variant': 'plain', 'role': 'bare-metal', 'model': 'calib'})
    with open(d + '/SHA256SUMS', 'w') as s:
        for j in range(3):
            n = 'run%d.json' % (j + 1)
            s.write('%s  %s\n' % (hashlib.sha256(open(d + '/' + n, 'rb').read()).hexdigest(), n))
    m = dict(base, label='day %d' % k, runs=runs)
    json.dump(m, open(d + '.mapping.json', 'w'))
PY
DB=$WORK/h.db
for k in 5 4 3 2 1 0; do
	SB import --mapping "$WORK/series/s$k.mapping.json" "$WORK/series/s$k" >/dev/null 2>&1 ||
		not_ok "import day $k"
done
expect_code 0 "history of the six sessions" SB history --format csv
check "points in order of measurement, dated by it (imported in reverse)" python3 -c "
import csv; rows = [r for r in csv.DictReader(open('$WORK/out')) if 'pp128' in r['series']]
assert [r['session'] for r in rows] == ['6', '5', '4', '3', '2', '1'], [r['session'] for r in rows]
assert [r['measured'][:10] for r in rows] == ['2026-12-%02d' % d for d in range(10, 16)]
assert all(r['processes'] == '3' for r in rows)"
check "the -14 % step is flagged at the default level, where it starts" python3 -c "
import csv; rows = [r for r in csv.DictReader(open('$WORK/out')) if 'pp128' in r['series']]
ch = [(r['session'], r['change']) for r in rows if r['change']]
assert len(ch) == 1 and ch[0][0] == '3', ch
import re; pct = float(re.search(r'change (-[0-9.]+)%', ch[0][1]).group(1))
assert -20 < pct < -10, ch"
expect_code 0 "history md" SB history
grep_in "$WORK/out" "| measured " "the column says measured"
test_done
