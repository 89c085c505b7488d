#!/bin/bash
# Noise floors are keyed by everything that changes the measurement
# (issue 19 §3): fingerprint identity, test, model, variant and
# configuration. A floor calibrated for one variant or configuration
# never stands in for another: no exact match is "uncalibrated", said so
# (the conservative 10 % is assumed at one process a side), never
# "calibrated". Floors of an older store (before the key had variant
# and configuration) keep applying to their own measurement after the
# migration. The data: the recorded OS-update pair (real llama-bench
# runs, 10 processes a side): 8 of the baseline calibrate, the others
# are gated one process a side.
. "$(dirname "$0")/lib.sh"

OSU=$FIXTURES/os-update
DB=$WORK/n.db
SB() { "$SHIMBENCH" --db "$DB" "$@"; }

# cut NAME SIDE RUNS VARIANT: runs RUNS of base or slow as a raw
# directory with its mapping, every run of variant VARIANT
cut() {
	python3 - "$OSU" "$WORK/$1" "$2" "$3" "$4" <<'PY'
import hashlib, json, os, sys
src, out, side, runs, variant = sys.argv[1:6]
m = json.load(open('%s/%s.mapping.json' % (src, side)))
os.makedirs(out)
entry = dict(m['runs'][0], variant=variant)
m['runs'] = []
for n in runs.split():
    open('%s/run%s.json' % (out, n), 'w').write(open('%s/%s/run%s.json' % (src, side, n)).read())
    m['runs'].append(dict(entry, stdout='run%s.json' % n))
with open(out + '/SHA256SUMS', 'w') as s:
    for f in sorted(os.listdir(out)):
        if f != 'SHA256SUMS':
            s.write('%s  %s\n' % (hashlib.sha256(open(out + '/' + f, 'rb').read()).hexdigest(), f))
json.dump(m, open(out + '.mapping.json', 'w'))
PY
}
imp() { SB import --mapping "$WORK/$1.mapping.json" "$WORK/$1"; }

cut aa base "3 4 5 6 7 8 9 10" plain
cut b1 base "1" plain
cut c1 slow "1" plain
cut b1o base "2" other
cut c1o slow "2" other
expect_code 0 "import 8 A/A processes of variant plain (session 1)" imp aa
expect_code 0 "calibrate and store their floor" SB calibrate --from session=1 --store --format csv
expect_code 0 "calibrate --list" SB calibrate --list --format csv
grep_in "$WORK/out" "pp128" "a pp128 floor is stored"
check "the floor's key holds variant and configuration" test \
	"$(sqlite3 "$DB" "select count(*) from noise where variant='plain' and config like '%n_threads=2%'")" = 2
expect_code 0 "one baseline process of plain (session 2), same fingerprint" imp b1
expect_code 0 "one candidate process of plain (session 3)" imp c1
expect_code 0 "one baseline process of variant other (session 4)" imp b1o
expect_code 0 "one candidate process of variant other (session 5)" imp c1o

SB gate --baseline session=2 --candidate session=3 --json "$WORK/same.json" >/dev/null 2>&1
check "the floor of exactly this measurement is used: noise calibrated" python3 -c "
import json; d = json.load(open('$WORK/same.json'))
c = [c for c in d['checks'] if c['name'] == 'calib pp128'][0]
assert c['noise'] == 'calibrated', c"
SB gate --baseline session=4 --candidate session=5 --json "$WORK/other.json" >/dev/null 2>&1
check "another variant: the plain floor does not stand in, uncalibrated and said" python3 -c "
import json; d = json.load(open('$WORK/other.json'))
for c in d['checks']:
    assert c['noise'] == 'assumed', c
    assert c['verdict'] != 'regression' or c['bound_hi'] / c['bound_lo'] > 1.5, c
    assert 'uncalibrated' in c['message'] and 'none stands in' in c['message'], c['message']"

# ---- an older store: floors without variant and configuration columns --------
cp "$DB" "$WORK/old.db"
# (version 8's runs.measure_sha256, issue 20, and version 9's session_owners,
# issue 21, go too: 6 had neither)
sqlite3 "$WORK/old.db" "DROP INDEX noise_key; ALTER TABLE noise DROP COLUMN variant;
	ALTER TABLE noise DROP COLUMN config; DROP INDEX runs_measure;
	ALTER TABLE runs DROP COLUMN measure_sha256; DROP TABLE session_owners;
	PRAGMA user_version=6;" ||
	not_ok "make a store of schema version 6"
DB=$WORK/old.db
# issue 22 §4: read as it is, through a copy upgraded in memory, and said
expect_code 4 "a read-only command reads the old store (the gate: inconclusive)" SB gate --baseline session=2 --candidate session=3
grep_in "$WORK/err" "schema version 6" "naming its version"
grep_in "$WORK/err" "upgrade\` upgrades it in place" "and the command that upgrades it"
check "the old store is untouched" test "$(sqlite3 "$DB" 'pragma user_version')" = 6
cut again slow "3" plain
expect_code 0 "a writing command (import) migrates it" imp again
check "the old floors got their variant and configuration from their details" test \
	"$(sqlite3 "$DB" "select count(*) from noise where variant='plain' and config like '%n_threads=2%'")" = 2
SB gate --baseline session=2 --candidate session=3 --json "$WORK/old.json" >/dev/null 2>&1
check "and still apply to their own measurement" python3 -c "
import json; d = json.load(open('$WORK/old.json'))
assert [c['noise'] for c in d['checks']] == ['calibrated', 'calibrated'], d['checks']"
test_done
