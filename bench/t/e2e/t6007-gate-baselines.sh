#!/bin/bash
# Which baseline the gate takes (issue 19 §6): --baseline auto picks the
# newest *comparable* session (one that shares a workload with the
# candidate) and names what it skipped and why; when every candidate is
# incomparable it says so in gate.json (no_baseline: nothing-comparable)
# and exits 3; an explicit baseline of another machine is gated with a
# warning in the verdict. The data: the recorded OS-update pair (real
# llama-bench runs), the base session exported and edited per case
# (another backend, another machine), its SHA256SUMS remade.
. "$(dirname "$0")/lib.sh"

OSU=$FIXTURES/os-update
DB=$WORK/b.db
SB() { "$SHIMBENCH" --db "$DB" "$@"; }

expect_code 0 "import the OS-update pair (sessions 1 and 2)" SB import \
	--mapping "$OSU/base.mapping.json" --mapping "$OSU/slow.mapping.json" "$OSU/base" "$OSU/slow"
expect_code 0 "export the base session as a bundle" SB export 1 "$WORK/b1"

# edited OUT OS_BUILD SHIFT EDIT: the base bundle as another session,
# its runs SHIFT seconds later, its OS build set; EDIT: "backend" (its
# rows ran on Vulkan: another configuration) or "machine" (another
# hw_model in its fingerprint).
edited() {
	python3 - "$WORK/b1" "$@" <<'PY'
import hashlib, json, os, re, shutil, sys, datetime
src, out, osb, shift, edit = sys.argv[1:6]
shutil.copytree(src, out)
b = json.load(open(out + '/bundle.json'))
for e in b['environments'].values():
    e['os_build'] = osb
    e['os_version'] = 'sim-' + osb
    if edit == 'machine':
        e['hw_model'] = 'another-host'
def later(m):
    t = datetime.datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%SZ')
    return '"test_time": "%s"' % (t + datetime.timedelta(seconds=int(shift))).strftime('%Y-%m-%dT%H:%M:%SZ')
for r in b['runs']:
    p = out + '/' + r['stdout']
    t = re.sub(r'"test_time": "([^"]*)"', later, open(p).read())
    t = t.replace('"cpu_info": "AMD EPYC"', '"cpu_info": "AMD EPYC %s %s"' % (osb, edit))
    if edit == 'backend':
        t = t.replace('"backends": "CPU"', '"backends": "Vulkan"')
    open(p, 'w').write(t)
    r['stdout_sha256'] = hashlib.sha256(t.encode()).hexdigest()
    r.pop('started_at', None)
json.dump(b, open(out + '/bundle.json', 'w'), indent=1)
names = sorted(f for f in os.listdir(out) if os.path.isfile(out + '/' + f) and f != 'SHA256SUMS')
with open(out + '/SHA256SUMS', 'w') as s:
    for f in names:
        s.write('%s  %s\n' % (hashlib.sha256(open(out + '/' + f, 'rb').read()).hexdigest(), f))
PY
}

# ---- auto: the newest session of another OS build runs another backend --------
edited "$WORK/vulkan" 24A150 1 backend
expect_code 0 "import a newer session of another OS build on Vulkan (session 3)" SB import "$WORK/vulkan"
expect_code 1 "gate --baseline auto still finds the regression" \
	SB gate --baseline auto --candidate session=2 --json "$WORK/g.json"
grep_in "$WORK/err" "baseline auto: session 1:" "against session 1, the newest comparable one"
grep_in "$WORK/err" "session 3 (nothing comparable" "naming the newer session it skipped and why"
grep_in "$WORK/err" "backends=Vulkan" "with what differs"
check "JSON: baseline_auto session 1, why names session 3" python3 -c "
import json; d = json.load(open('$WORK/g.json'))
assert d['baseline_auto']['session'] == 1, d['baseline_auto']
assert 'session 3 (nothing comparable' in d['baseline_auto']['why'], d['baseline_auto']
assert d['verdict'] == 'regression' and d['exit_code'] == 1, d"

# ---- auto: nothing of another OS build is comparable -------------------------
DB=$WORK/only.db
expect_code 0 "a store of the candidate and the Vulkan session only" SB import \
	--mapping "$OSU/slow.mapping.json" "$OSU/slow"
expect_code 0 "import the Vulkan session" SB import "$WORK/vulkan"
expect_code 3 "nothing comparable: exit 3, not a pass" \
	SB gate --baseline auto --candidate session=1 --json "$WORK/n.json"
grep_in "$WORK/err" "shares a workload with it; passed over: session 2 (nothing comparable" "says why"
check "JSON: verdict no-baseline, no_baseline nothing-comparable" python3 -c "
import json; d = json.load(open('$WORK/n.json'))
assert d['verdict'] == 'no-baseline' and d['exit_code'] == 3, d
assert d['no_baseline'] == 'nothing-comparable', d"

# the shipped CI step on that store: neutral with the reason, from the field
mkdir -p "$WORK/ci"
cp "$WORK/only.db" "$WORK/ci/store.db"
: >"$WORK/gh-output"
expect_code 0 "gate.sh: nothing comparable is neutral, never green" \
	env GITHUB_ACTIONS=true GITHUB_OUTPUT="$WORK/gh-output" GITHUB_STEP_SUMMARY="$WORK/summary.md" \
	SHIMBENCH="$SHIMBENCH" SHIMBENCH_STATE="$WORK/ci" sh "$TOP/bench/scripts/ci/gate.sh"
grep_in "$WORK/gh-output" "verdict=no-baseline" "verdict no-baseline"
grep_in "$WORK/out" "::warning title=shimbench gate: neutral::no baseline to gate against (nothing-comparable)" \
	"a neutral annotation naming the reason"
check "no fallback to the previous run: that is for 'no OS update' only" sh -c "! grep -q 'gating against' '$WORK/out'"

# ---- no session of another OS build: the field CI reads ------------------------
DB=$WORK/alone.db
expect_code 0 "a store of one session" SB import --mapping "$OSU/slow.mapping.json" "$OSU/slow"
expect_code 3 "auto with no other OS build: exit 3" \
	SB gate --baseline auto --candidate session=latest --json "$WORK/a.json" --format json
check "JSON: no_baseline no-other-os-build (stdout and --json alike)" python3 -c "
import json
for f in ('$WORK/a.json', '$WORK/out'):
    d = json.load(open(f))
    assert d['verdict'] == 'no-baseline' and d['no_baseline'] == 'no-other-os-build', d"

# ---- an explicit baseline of another machine ----------------------------------
DB=$WORK/b.db
edited "$WORK/other" 24A100 1 machine
expect_code 0 "import the base session as measured on another machine (session 4)" SB import "$WORK/other"
expect_code 1 "gate --baseline session=4 gates it" \
	SB gate --baseline session=4 --candidate session=2 --json "$WORK/m.json"
grep_in "$WORK/out" "was measured on another machine or setup than the candidate" "with a warning in the verdict"
check "JSON: the warning" python3 -c "
import json; d = json.load(open('$WORK/m.json'))
assert any('another machine or setup' in w and 'session 4' in w for w in d['warnings']), d['warnings']"
expect_code 1 "the same machine's baseline: no such warning" \
	SB gate --baseline session=1 --candidate session=2
check "no machine warning for session 1" sh -c "! grep -q 'another machine' '$WORK/out'"
test_done
