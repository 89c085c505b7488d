#!/bin/bash
# run --until-decided PLAN (issue 19 §8): the sequential gate as a loop
# of real llama-bench runs. After each round the workloads are decided
# by seq_decide() against the baseline; those that need more get another
# round (their variants and models only, as many processes as the gate
# asks, never past --cap), each round a session of its own. A slowdown
# of known size comes from libslowclock.so (LD_PRELOAD into the real
# llama-bench: every clock interval stretched 10x, the work and its
# noise real), since this shared machine's load swamps a small real one.
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "run --until-decided: the real llama-bench is not provisioned"
	test_done; exit $?
fi
SLOW=$T_BUILD/t/helpers/libslowclock.so
LIB=$T_BUILD/t/helpers/libmarker.so
DB=$WORK/u.db
SB() { "$SHIMBENCH" --db "$DB" "$@"; }
expect_code 0 "synthesize the model" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
# plan NAME PROCESSES [ENV-JSON]: one variant plain, one thread (two
# threads on this shared machine spin on each other: a far noisier clock)
plan() {
	cat >"$WORK/$1.json" <<JSON
{"name": "$1", "models": [{"name": "tiny", "path": "$WORK/tiny.gguf"}],
 "targets": {"here": {"transport": "local", "llama_bench": "$LB"}},
 "variants": [{"name": "plain", "target": "here", "env": ${3:-{\}}}],
 "llama_bench": {"args": ["-p", "32", "-n", "8", "-r", "3", "-t", "1"]}, "processes": $2}
JSON
}
plan base 5
plan slow 1 "{\"LD_PRELOAD\": \"$SLOW\", \"SHIMBENCH_TEST_SLOW_FACTOR\": \"10\"}"
plan same 1

expect_code 2 "--baseline without --until-decided is a usage error" SB run --baseline session=1 "$WORK/base.json"
expect_code 2 "a bad --threshold" SB run --until-decided --threshold 0 "$WORK/base.json"
expect_code 3 "a fresh store, --baseline auto: round 1 runs, then no baseline (exit 3)" \
	"$SHIMBENCH" --db "$WORK/fresh.db" --quiet run --until-decided "$WORK/same.json"
check "without a word about a missing store" sh -c "! grep -q 'no store at' '$WORK/err'"
expect_code 0 "the baseline: 5 processes (session 1)" SB --quiet run "$WORK/base.json"
expect_code 3 "--baseline auto with no session of another OS build: exit 3" \
	SB --quiet run --until-decided "$WORK/same.json"
grep_in "$WORK/err" "no other session has the candidate's fingerprint with another OS build" "says why"

# ---- a 3x slower candidate: decided a regression in a few rounds --------------
expect_code 1 "run --until-decided on the slowed candidate: regression" \
	SB --quiet run --until-decided --baseline session=1 --json "$WORK/slow.json" --bundle "$WORK/rounds" "$WORK/slow.json"
grep_in "$WORK/out" "### shimbench run --until-decided: FAIL, 2 regressions" "the verdict in the Markdown"
check "JSON: every workload a regression, within the cap, the rounds its sessions" python3 -c "
import json, sqlite3
d = json.load(open('$WORK/slow.json'))
assert d['verdict'] == 'regression' and d['exit_code'] == 1, d
assert len(d['checks']) == 2 and all(c['verdict'] == 'regression' for c in d['checks']), d['checks']
assert all(c['baseline_processes'] == 5 and 1 <= c['candidate_processes'] <= 30 for c in d['checks']), d['checks']
assert all(c['ratio'] < 0.3 for c in d['checks']), d['checks']
assert d['rounds'] == len(d['sessions']) >= 1, d
db = sqlite3.connect('$DB')
labels = [db.execute('select label from sessions where id=?', (s,)).fetchone()[0] for s in d['sessions']]
assert labels == ['until-decided round %d' % (i + 1) for i in range(d['rounds'])], labels
n = sum(db.execute('select count(*) from runs where session_id=?', (s,)).fetchone()[0] for s in d['sessions'])
assert n == d['checks'][0]['candidate_processes'], (n, d['checks'])"
check "each round has its evidence bundle" test -f "$WORK/rounds/round-1/bundle.json"
if [ -f "$WORK/rounds/until-decided-round-2.json" ]; then
	check "a later round's plan asks for the processes the gate wanted, variant plain only" python3 -c "
import json; p = json.load(open('$WORK/rounds/until-decided-round-2.json'))
assert p['processes'] >= 1 and [v['name'] for v in p['variants']] == ['plain'], p"
fi

# ---- the cap --------------------------------------------------------------------
rc=0
SB --quiet run --until-decided --baseline session=1 --cap 1 --json "$WORK/cap.json" "$WORK/same.json" >/dev/null 2>&1 || rc=$?
check "--cap 1: one round, one process, and the exit code is the verdict's" python3 -c "
import json; d = json.load(open('$WORK/cap.json'))
assert d['rounds'] == 1 and all(c['candidate_processes'] == 1 for c in d['checks']), d
want = {'pass': 0, 'regression': 1, 'inconclusive': 4}[d['verdict']]
assert d['exit_code'] == want == $rc, (d['verdict'], d['exit_code'], $rc)
assert all(c['verdict'] in ('pass', 'regression', 'inconclusive') for c in d['checks']), d['checks']"

# ---- an unchanged candidate at a 90 % threshold is never a regression -----------
rc=0
SB --quiet run --until-decided --baseline session=1 --threshold 90 --cap 6 --json "$WORK/same90.json" "$WORK/same.json" >/dev/null 2>&1 || rc=$?
check "unchanged: pass or undecided, never a regression (exit $rc)" python3 -c "
import json; d = json.load(open('$WORK/same90.json'))
assert d['verdict'] in ('pass', 'inconclusive') and $rc in (0, 4), d
assert all(c['candidate_processes'] <= 6 for c in d['checks']), d['checks']"

# ---- a round whose run fails stops the loop --------------------------------------
cat >"$WORK/shim.json" <<JSON
{"name": "shim", "models": [{"name": "tiny", "path": "$WORK/tiny.gguf"}],
 "targets": {"here": {"transport": "local", "llama_bench": "$LB"}},
 "variants": [{"name": "plain", "target": "here",
   "inject": {"library": "$LIB", "sha256": "$(sha256sum "$LIB" | cut -d' ' -f1)"},
   "expect": ["[shimbench-test-preload] Enabled for"]}],
 "llama_bench": {"args": ["-p", "32", "-n", "8", "-r", "3", "-t", "1"]}, "processes": 1}
JSON
expect_code 1 "an unverified injection in round 1: exit 1, no sequential verdict on it" \
	env SHIMBENCH_TEST_MARKER_QUIET=1 "$SHIMBENCH" --db "$DB" --quiet run --until-decided \
	--baseline session=1 "$WORK/shim.json"
grep_in "$WORK/err" "the sequential gate stops" "says the loop stopped and why"
test_done
