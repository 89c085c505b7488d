#!/bin/bash
# The default CI call on a plan with several variants (issue 19 §1): the
# real llama-bench runs a bare-metal, a stock and a shim variant (the
# shim is libmarker.so through LD_PRELOAD, which prints its marker as
# the capability shim does); then a run where the library loads but
# does not take effect (SHIMBENCH_TEST_MARKER_QUIET=1: no marker), as a
# macOS update that stops the shim. `run` stores those runs unverified
# and fails the session; `gate --baseline auto --candidate
# session=latest` must exit 1 and say, per variant, that injection
# stopped, and gate the other variants against the same variants; the
# shipped bench/scripts/ci/gate.sh must go red on it. The OS update
# itself cannot happen here: the baseline is the first run's evidence
# bundle with its fingerprint's os_build edited (and its SHA256SUMS
# rewritten), imported before the candidate runs for real.
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "gate injection: the real llama-bench is not provisioned"
	test_done; exit $?
fi
LIB=$T_BUILD/t/helpers/libmarker.so
SB() { local db=$WORK/$1.db; shift; "$SHIMBENCH" --db "$db" "$@"; }
expect_code 0 "synthesize the model" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
cat >"$WORK/plan.json" <<JSON
{"name": "three variants",
 "models": [{"name": "tiny", "path": "$WORK/tiny.gguf"}],
 "targets": {"here": {"transport": "local", "llama_bench": "$LB"}},
 "variants": [
   {"name": "bare-metal", "target": "here", "role": "bare-metal"},
   {"name": "stock", "target": "here", "role": "stock"},
   {"name": "shim", "target": "here", "role": "shim",
    "inject": {"library": "$LIB", "sha256": "$(sha256sum "$LIB" | cut -d' ' -f1)"},
    "expect": ["[shimbench-test-preload] Enabled for"]}],
 "llama_bench": {"args": ["-p", "32", "-n", "8", "-r", "3", "-t", "1"]},
 "processes": 2}
JSON

# --- the baseline: a real run, its bundle as if before an OS update -------
expect_code 0 "run 1: every shim run verified" \
	SB first --quiet run --bundle "$WORK/b1" "$WORK/plan.json"
check "run 1 wrote its bundle" test -f "$WORK/b1/bundle.json"
python3 - "$WORK/b1" <<'PY' || not_ok "edit the bundle's OS build"
import hashlib, json, os, sys
d = sys.argv[1]
b = json.load(open(d + '/bundle.json'))
for e in b['environments'].values():
    e['os_build'] = e['os_build'] + '-before-update'
json.dump(b, open(d + '/bundle.json', 'w'))
lines = []
for root, _, files in os.walk(d):
    for f in files:
        p = os.path.join(root, f)
        rel = os.path.relpath(p, d)
        if rel != 'SHA256SUMS':
            lines.append('%s  %s\n' % (hashlib.sha256(open(p, 'rb').read()).hexdigest(), rel))
open(d + '/SHA256SUMS', 'w').writelines(sorted(lines, key=lambda l: l.split('  ', 1)[1]))
PY
expect_code 0 "import it as the baseline (session 1)" SB osu import "$WORK/b1"

# --- the candidate: the shim loads but no longer takes effect --------------
expect_code 1 "run 2: the shim runs lack their marker, run fails" \
	env SHIMBENCH_TEST_MARKER_QUIET=1 "$SHIMBENCH" --db "$WORK/osu.db" --quiet run "$WORK/plan.json"
expect_code 0 "sessions" SB osu sessions --format csv
grep_in "$WORK/out" "failed" "the candidate session is stored as failed"

expect_code 1 "the default CI call: gate --baseline auto --candidate session=latest fails" \
	SB osu gate --baseline auto --candidate session=latest --json "$WORK/g.json" --junit "$WORK/g.xml"
grep_in "$WORK/out" "FAIL, 1 regression: shim: injection stopped" "the headline says injection stopped"
grep_in "$WORK/out" "injection stopped: 2 of 2 runs of variant 'shim' in the candidate (session 2) lack the markers" \
	"in words, for the variant, with the runs"
grep_in "$WORK/out" "where the baseline's 2 runs of it (session 1) carried them" "and that the baseline's carried them"
grep_in "$WORK/out" "measured without them: tiny pp32 at" "with the speed measured without them"
check "each other variant gated against the same variant" python3 -c "
import json; d = json.load(open('$WORK/g.json'))
names = sorted(c['name'] for c in d['checks'])
assert names == ['bare-metal: tiny pp32', 'bare-metal: tiny tg8', 'shim: injection stopped',
                 'stock: tiny pp32', 'stock: tiny tg8'], names
inj = [c for c in d['checks'] if c['suite'] == 'injection']
assert len(inj) == 1 and inj[0]['verdict'] == 'regression', inj
assert d['verdict'] == 'regression' and d['exit_code'] == 1, d
assert d['baseline_auto']['session'] == 1, d
assert any('failed only because shim runs were not injection-verified' in w for w in d['warnings']), d['warnings']
assert any('judged by its injection check' in w for w in d['warnings']), d['warnings']"
check "JUnit: the injection check is a failure" grep -q '<failure message="injection stopped' "$WORK/g.xml"
check "JUnit validates" xmllint --noout --schema "$FIXTURES/junit.xsd" "$WORK/g.xml"

# one variant at a time, as a user narrows it
expect_code 1 "variant=shim alone: injection stopped, exit 1" \
	SB osu gate --baseline session=1,variant=shim --candidate session=2,variant=shim
grep_in "$WORK/out" "FAIL, 1 regression: shim: injection stopped" "says so"
SB osu gate --baseline session=1,variant=stock --candidate session=2,variant=stock --json "$WORK/st.json" >/dev/null 2>&1
check "variant=stock alone: its workloads are gated (the session failed only for the shim)" python3 -c "
import json; d = json.load(open('$WORK/st.json'))
assert sorted(c['name'] for c in d['checks']) == ['tiny pp32', 'tiny tg8'], d['checks']
assert all('noise' in c for c in d['checks']), d['checks']"

# the same call on a candidate whose shim still works: no injection check
expect_code 0 "run 3: the shim works again" SB osu --quiet run "$WORK/plan.json"
SB osu gate --baseline auto --candidate session=latest --json "$WORK/g3.json" >/dev/null 2>&1
check "a working shim: no injection check, each variant against itself" python3 -c "
import json; d = json.load(open('$WORK/g3.json'))
assert d['exit_code'] in (0, 1, 4), d
assert not [c for c in d['checks'] if c['suite'] == 'injection'], d['checks']
assert sorted(c['name'] for c in d['checks']) == ['bare-metal: tiny pp32', 'bare-metal: tiny tg8',
    'shim: tiny pp32', 'shim: tiny tg8', 'stock: tiny pp32', 'stock: tiny tg8'], d['checks']"

# a failed session whose runs failed otherwise still does not count
# (only an injection-only failure is gated this way): several variants
# against one stays refused
expect_code 2 "several variants against one is refused" \
	SB osu gate --baseline session=1 --candidate session=3,variant=shim
grep_in "$WORK/err" "mixes variants" "says why"

# --- the shipped CI step on the same kind of store -------------------------
export GITHUB_ACTIONS=true GITHUB_OUTPUT=$WORK/gh-output GITHUB_STEP_SUMMARY=$WORK/summary.md
export SHIMBENCH SHIMBENCH_STATE=$WORK/state
mkdir -p "$WORK/state"
: >"$GITHUB_OUTPUT"
expect_code 0 "ci: run 1 into the kept store" "$SHIMBENCH" --db "$WORK/state/store.db" --quiet run "$WORK/plan.json"
env SHIMBENCH_TEST_MARKER_QUIET=1 "$SHIMBENCH" --db "$WORK/state/store.db" --quiet run "$WORK/plan.json" >/dev/null 2>&1
expect_code 1 "gate.sh: the shim stopped taking effect is red" sh "$TOP/bench/scripts/ci/gate.sh"
grep_in "$GITHUB_OUTPUT" "verdict=regression" "verdict regression"
grep_in "$WORK/out" "::error title=shimbench gate: regression::FAIL, 1 regression: shim: injection stopped" \
	"an error annotation naming it"
grep_in "$WORK/out" "no macOS update since the last baseline; gating against session=latest~1" \
	"no OS update here: gated against the previous run, decided from the JSON field"
check "gate.json holds the fallback's verdict" python3 -c "
import json; d = json.load(open('$WORK/state/gate/gate.json'))
assert d['verdict'] == 'regression' and d['baseline'] == 'session=latest~1', d"
check "JUnit of the CI step validates" xmllint --noout --schema "$FIXTURES/junit.xsd" "$WORK/state/gate/junit.xml"
test_done
