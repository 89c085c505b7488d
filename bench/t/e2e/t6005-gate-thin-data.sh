#!/bin/bash
# The gate on thin, lost or missing data (issue 19 §2, §5): one process
# per side without a noise floor is inconclusive unless the slowdown is
# gross, one sample per side decides nothing (a regression included),
# compare says inconclusive, a workload the candidate lacks or holds
# without samples is no pass, and lost processes are named in the
# verdict. The data: the recorded OS-update pair (real llama-bench
# runs), cut down and edited per case.
. "$(dirname "$0")/lib.sh"

OSU=$FIXTURES/os-update

# mk NAME SRC RUNS [EDIT [CRASHED]]: a raw directory NAME of the runs
# RUNS ("1 2 3") of base or slow with a mapping NAME.mapping.json; EDIT
# a Python expression over row r (a llama-bench row; None drops it; slower(r, f)
# is r with every sample f times the throughput, nanoseconds to match),
# CRASHED the run number recorded with status crashed.
mk() {
	python3 - "$OSU" "$WORK/$1" "$2" "$3" "${4:-r}" "${5:-0}" <<'PY'
import hashlib, json, os, sys
src, out, side, runs, edit, crashed = sys.argv[1:7]
def slower(r, f):
    return dict(r, samples_ts=[x * f for x in r['samples_ts']],
                samples_ns=[int(round(x / f)) for x in r['samples_ns']],
                avg_ts=r['avg_ts'] * f, stddev_ts=r['stddev_ts'] * f,
                avg_ns=int(round(r['avg_ns'] / f)), stddev_ns=int(round(r['stddev_ns'] / f)))
m = json.load(open('%s/%s.mapping.json' % (src, side)))
os.makedirs(out)
entry = m['runs'][0]
m['runs'] = []
for n in runs.split():
    rows = []
    for r in json.load(open('%s/%s/run%s.json' % (src, side, n))):
        r = eval(edit, {'r': r, 'slower': slower})
        if r is not None:
            rows.append(r)
    json.dump(rows, open('%s/run%s.json' % (out, n), 'w'))
    e = dict(entry, stdout='run%s.json' % n)
    if n == crashed:
        e['status'] = 'crashed'
    m['runs'].append(e)
with open(out + '/SHA256SUMS', 'w') as s:
    for f in sorted(os.listdir(out)):
        if f != 'SHA256SUMS':
            s.write('%s  %s\n' % (hashlib.sha256(open(out + '/' + f, 'rb').read()).hexdigest(), f))
json.dump(m, open(out + '.mapping.json', 'w'))
PY
}
# gate DB BASE CAND [OPTIONS...]: imports both into DB, gates CAND
# (session 2) against BASE (session 1)
pair() {
	local db=$WORK/$1.db
	"$SHIMBENCH" --db "$db" import --mapping "$WORK/$2.mapping.json" "$WORK/$2" >/dev/null &&
	"$SHIMBENCH" --db "$db" import --mapping "$WORK/$3.mapping.json" "$WORK/$3" >/dev/null
}
SB() { local db=$WORK/$1.db; shift; "$SHIMBENCH" --db "$db" "$@"; }
all="1 2 3 4 5 6 7 8 9 10"

# ---- lost processes: 1 of 10 killed -----------------------------------------
mk base10 base "$all"
mk slow9 slow "$all" r 3
check "import: 10 baseline processes, 10 candidate processes, one crashed" pair lost base10 slow9
expect_code 1 "the 13.8 % pp128 slowdown is still found on the 9 that are left" \
	SB lost gate --baseline session=1 --candidate session=2 --json "$WORK/lost.json"
check "and the verdict says in words what was lost" python3 -c "
import json; d = json.load(open('$WORK/lost.json'))
for c in d['checks']:
    assert '1 run of session 2 lost (status crashed)' in c['message'], c['message']
    assert 'the candidate has 9 processes against the baseline' in c['message'], c['message']"

# ---- one process a side, no noise floor --------------------------------------
mk base1 base 1
mk slow1 slow 1
check "import: one process a side" pair one base1 slow1
expect_code 4 "one process a side, 15 % slower: inconclusive, never a tight regression" \
	SB one gate --baseline session=1 --candidate session=2 --json "$WORK/one.json"
check "it says why: the process effect is assumed, with wide bounds" python3 -c "
import json; d = json.load(open('$WORK/one.json'))
for c in d['checks']:
    assert c['verdict'] == 'inconclusive', c
    assert c['noise'] == 'assumed', c
    assert 'one process per side and no noise floor' in c['message'], c['message']
    assert c['bound_hi'] / c['bound_lo'] > 1.5, c"
mk gross1 slow 1 "slower(r, 0.3)"
check "import: one process a side, the candidate 70 % slower" pair gross base1 gross1
expect_code 1 "a gross slowdown (the shim lost) still fails with one process a side" \
	SB gross gate --baseline session=1 --candidate session=2
grep_in "$WORK/out" "one process per side and no noise floor" "and says what the bounds assume"

# ---- one sample a side --------------------------------------------------------
one_sample="dict(r, samples_ts=r['samples_ts'][:1], samples_ns=r['samples_ns'][:1])"
mk base1s base 1 "$one_sample"
mk gross1s slow 1 "slower(dict(r, samples_ts=r['samples_ts'][:1], samples_ns=r['samples_ns'][:1]), 0.3)"
check "import: one sample a side, the candidate 70 % slower" pair thin base1s gross1s
expect_code 4 "one sample a side: inconclusive, even for a 70 % slowdown" \
	SB thin gate --baseline session=1 --candidate session=2
grep_in "$WORK/out" "only 1 and 1 samples; --min-samples is 5" "names the rule"
expect_code 1 "--min-samples 1: the 70 % slowdown is flagged, on the assumed floor" \
	SB thin gate --baseline session=1 --candidate session=2 --min-samples 1 --json "$WORK/thin.json"
check "its bounds are wide, never of zero width" python3 -c "
import json; d = json.load(open('$WORK/thin.json'))
assert all(c['noise'] == 'assumed' and c['bound_hi'] / c['bound_lo'] > 1.5 for c in d['checks']), d['checks']"
expect_code 0 "compare with one sample a side" SB thin compare session=1 session=2 --format json
check "says inconclusive, not a verdict on one sample" python3 -c "
import json; d = json.load(open('$WORK/out'))
assert d and all(r['verdict'] == 'inconclusive' for r in d), d"

# ---- a workload the candidate lacks, or holds without samples ----------------
mk slow_nopp slow "$all" "None if r['n_prompt'] else r"
check "import: the candidate lacks pp128" pair missing base10 slow_nopp
# tg32 regressed (exit 1 wins); pp128 is missing: no pass for it
expect_code 1 "a missing workload is no pass" \
	SB missing gate --baseline session=1 --candidate session=2 --json "$WORK/miss.json"
check "one inconclusive check names it" python3 -c "
import json; d = json.load(open('$WORK/miss.json'))
m = [c for c in d['checks'] if 'but not in the candidate' in c['message']]
assert len(m) == 1 and m[0]['name'] == 'calib pp128' and m[0]['verdict'] == 'inconclusive', d['checks']
assert any(c['name'] == 'calib tg32' and c['verdict'] == 'regression' for c in d['checks'])"
mk slow_empty slow "$all" "dict(r, samples_ts=[], samples_ns=[]) if r['n_prompt'] else r"
check "import: the candidate's pp128 has no samples" pair empty base10 slow_empty
expect_code 1 "a workload without samples is no pass" \
	SB empty gate --baseline session=1 --candidate session=2 --json "$WORK/empty.json"
check "its check is inconclusive and says why" python3 -c "
import json; d = json.load(open('$WORK/empty.json'))
m = [c for c in d['checks'] if c['name'] == 'calib pp128']
assert len(m) == 1 and m[0]['verdict'] == 'inconclusive' and 'hold no samples' in m[0]['message'], d['checks']"

mk base_nopp base "$all" "None if r['n_prompt'] else r"
check "import: the candidate is the baseline's data without pp128" pair nopass base10 base_nopp
expect_code 4 "only a missing workload left undecided: inconclusive (exit 4), never a pass" \
	SB nopass gate --baseline session=1 --candidate session=2 --threshold 25 --json "$WORK/nopass.json"
check "the gated workload passes, the missing one is named" python3 -c "
import json; d = json.load(open('$WORK/nopass.json'))
v = {c['name']: c['verdict'] for c in d['checks']}
assert v == {'calib tg32': 'pass', 'calib pp128': 'inconclusive'}, v
assert d['verdict'] == 'inconclusive', d['verdict']"

# ---- a real run: one of three llama-bench processes killed --------------------
LB=$TOP/.llama/bin/llama-bench
if [ -x "$LB" ]; then
	expect_code 0 "synthesize a model" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
	# the real llama-bench; its 5th start (the 2nd process of run 2) is
	# killed with SIGKILL before it prints anything
	cat >"$WORK/lb" <<SH
#!/bin/sh
n=\$(cat '$WORK/count' 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n >'$WORK/count'
[ "\$n" = 5 ] && kill -9 \$\$
exec '$LB' "\$@"
SH
	chmod +x "$WORK/lb"
	cat >"$WORK/plan.json" <<JSON
{"name": "three processes", "models": [{"name": "tiny", "path": "$WORK/tiny.gguf"}],
 "targets": {"here": {"transport": "local", "llama_bench": "$WORK/lb"}},
 "variants": [{"name": "plain", "target": "here"}],
 "llama_bench": {"args": ["-p", "32", "-n", "8", "-r", "3", "-t", "1"]}, "processes": 3}
JSON
	expect_code 0 "run 1: three processes" SB killed --quiet run "$WORK/plan.json"
	expect_code 1 "run 2: one of three killed, the run fails" SB killed --quiet run "$WORK/plan.json"
	grep_in "$WORK/err" "killed by signal 9" "run says which was killed"
	expect_code 4 "the failed session does not count by default: inconclusive, not a pass" \
		SB killed gate --baseline session=1 --candidate session=2
	grep_in "$WORK/out" "add include=failed to the selection" "and says how to count it"
	SB killed gate --baseline session=1 --candidate session=2,include=failed --json "$WORK/k.json" >/dev/null 2>&1
	check "counted: the verdict says it decided on 2 of the 3 processes, and which was killed" python3 -c "
import json; d = json.load(open('$WORK/k.json'))
assert len(d['checks']) == 2, d['checks']
for c in d['checks']:
    assert 'decided on 2 of the 3 processes session 2 ran of it' in c['message'], c['message']
    assert 'crashed, killed by signal 9' in c['message'], c['message']
    assert c['candidate_processes'] == 2 and c['baseline_processes'] == 3, c"
else
	skip "one of three processes killed: the real llama-bench is not provisioned"
fi

test_done
