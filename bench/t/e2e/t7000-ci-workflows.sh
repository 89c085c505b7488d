#!/bin/bash
# The GitHub Actions workflows (.github/workflows): parsed with Debian's
# python3-yaml and checked for their structure: triggers, jobs, needs,
# the fleet's matrix over the one-Mac workflow, every run step calling a
# script of bench/scripts/ci/ (or one make goal: no shell logic inline),
# the cache and artifact steps and names, and that every artifact a job
# downloads is one a job uploads. The scripts themselves run in
# t7010-t7030 against doubles.
. "$(dirname "$0")/lib.sh"

PY=
for p in /usr/bin/python3 python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import yaml' 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
	skip "workflows: no python3 with the yaml module (apt-get install python3-yaml)"
	test_done; exit $?
fi
W=$TOP/.github/workflows
for f in macos-update-gate.yml macos-update-gate-fleet.yml macos-ci.yml; do
	check "$f exists" test -f "$W/$f"
done
for s in build provision run-study gate fleet-merge macos-smoke; do
	check "bench/scripts/ci/$s.sh is there and parses" sh -n "$TOP/bench/scripts/ci/$s.sh"
done

"$PY" - "$W" "$TOP" >"$WORK/py.out" 2>&1 <<'EOF'
import glob, os, re, sys, yaml

wdir, top = sys.argv[1], sys.argv[2]
ok = bad = 0

def check(title, cond):
    global ok, bad
    if cond:
        ok += 1
        print("ok", title)
    else:
        bad += 1
        print("not ok", title)

def load(name):
    with open(os.path.join(wdir, name)) as f:
        return yaml.safe_load(f)

def triggers(w):
    # YAML 1.1 reads the key `on` as true
    return w.get("on", w.get(True)) or {}

def runs(job):
    return [s["run"] for s in job.get("steps", []) if "run" in s]

def uses(job, action):
    return [s for s in job.get("steps", []) if s.get("uses", "").startswith(action)]

SCRIPT = re.compile(r'^sh bench/scripts/ci/([a-z-]+)\.sh( [^\n;|&]*)?$')
MAKE = re.compile(r'^make [a-z-]+$')

def shell_free(name, job):
    for r in runs(job):
        r = r.strip()
        m = SCRIPT.match(r)
        check("%s: run step '%s' is one script or make goal" % (name, r),
              "\n" not in r and (m or MAKE.match(r)))
        if m:
            check("%s: %s.sh exists" % (name, m.group(1)),
                  os.path.isfile(os.path.join(top, "bench/scripts/ci/%s.sh" % m.group(1))))

def scripts(job):
    return [m.group(1) for m in (SCRIPT.match(r.strip()) for r in runs(job)) if m]

# --- one Mac --------------------------------------------------------------
g = load("macos-update-gate.yml")
on = triggers(g)
check("gate: runs on a schedule, by hand and when called", {"schedule", "workflow_dispatch", "workflow_call"} <= set(on))
check("gate: a fleet can name the host and switch its gate off",
      {"host", "gate", "runner", "plan", "vms"} <= set(on["workflow_call"]["inputs"]))
check("gate: checks: write for the neutral check run", g["permissions"].get("checks") == "write")
job = g["jobs"]["gate"]
check("gate: on a self-hosted macOS runner", "self-hosted" in job["runs-on"] and "macOS" in job["runs-on"])
check("gate: the steps in order", scripts(job) == ["build", "provision", "run-study", "gate"])
shell_free("gate", job)
gate_step = [s for s in job["steps"] if s.get("id") == "gate"][0]
check("gate: the gate step needs a stored session", "steps.run.outputs.session" in gate_step["if"])
check("gate: and can be switched off by a fleet", "inputs.gate" in gate_step["if"])
restore, save = uses(job, "actions/cache/restore"), uses(job, "actions/cache/save")
check("gate: the store is restored before the run and saved after",
      len(restore) == 1 and len(save) == 1 and
      job["steps"].index(restore[0]) < job["steps"].index(gate_step) < job["steps"].index(save[0]))
check("gate: the cache holds the state directory",
      restore[0]["with"]["path"] == save[0]["with"]["path"] == job["env"]["SHIMBENCH_STATE"])
check("gate: restored by prefix, saved under a new key (caches are immutable)",
      save[0]["with"]["key"].startswith(restore[0]["with"]["restore-keys"].strip())
      and "github.run_id" in save[0]["with"]["key"])
check("gate: the state is kept even when the gate is red", "!cancelled()" in save[0]["if"])
ups = uses(job, "actions/upload-artifact")
names = [u["with"]["name"] for u in ups]
check("gate: uploads the bundle as shimbench-bundle-HOST",
      any(n.startswith("shimbench-bundle-") and "inputs.host" in n for n in names))
check("gate: uploads reports, JUnit and the store",
      any(".shimbench-ci/gate/" in u["with"]["path"] and "store.db" in u["with"]["path"] for u in ups))
check("gate: outputs session and verdict", {"session", "verdict"} <= set(job["outputs"]))
# JUnit published as test results (a check with skipped = neutral), not
# only inside an artifact
pub = uses(job, "mikepenz/action-junit-report")
check("gate: the gate's JUnit is published as test results",
      len(pub) == 1 and pub[0]["with"]["report_paths"] == job["env"]["SHIMBENCH_STATE"] + "/gate/junit.xml")
check("gate: published after the gate step, also when it is red",
      job["steps"].index(gate_step) < job["steps"].index(pub[0]) and "!cancelled()" in pub[0]["if"])

# --- the fleet ------------------------------------------------------------
f = load("macos-update-gate-fleet.yml")
host, merge = f["jobs"]["host"], f["jobs"]["merge"]
check("fleet: the one-Mac workflow, called per host",
      host["uses"] == "./.github/workflows/macos-update-gate.yml")
check("fleet: a matrix over the hosts", "host" in host["strategy"]["matrix"])
check("fleet: one host failing does not cancel the others", host["strategy"]["fail-fast"] is False)
check("fleet: each host runs on its own runner label", "matrix.host" in host["with"]["runner"])
check("fleet: the hosts do not gate alone", host["with"]["gate"] is False)
check("fleet: merge needs every host", merge["needs"] in ("host", ["host"]))
check("fleet: merge runs when a host failed", "!cancelled()" in merge["if"])
check("fleet: merge steps", scripts(merge) == ["build", "fleet-merge"])
shell_free("fleet merge", merge)
dl = uses(merge, "actions/download-artifact")
check("fleet: downloads every host's bundle",
      len(dl) == 1 and dl[0]["with"]["pattern"] == "shimbench-bundle-*")
check("fleet: fleet-merge reads the download directory",
      any(r.strip().endswith(" " + dl[0]["with"]["path"]) for r in runs(merge) if "fleet-merge" in r))
check("fleet: the fleet store is cached",
      uses(merge, "actions/cache/restore") and uses(merge, "actions/cache/save"))
fpub = uses(merge, "mikepenz/action-junit-report")
check("fleet: every host's gate JUnit is published as test results",
      len(fpub) == 1 and fpub[0]["with"]["report_paths"] == merge["env"]["SHIMBENCH_STATE"] + "/fleet/gate-*/junit.xml"
      and "!cancelled()" in fpub[0]["if"])
check("fleet: the fleet report is uploaded",
      any(u["with"]["name"] == "shimbench-fleet" for u in uses(merge, "actions/upload-artifact")))
check("fleet: the downloaded pattern matches the uploaded name",
      all(re.match(dl[0]["with"]["pattern"].replace("*", ".*"), n) for n in names if "bundle" in n))

# --- macOS CI on GitHub-hosted runners --------------------------------------
m = load("macos-ci.yml")
mj = m["jobs"]["macos"]
oses = mj["strategy"]["matrix"]["os"]
check("macos-ci: GitHub-hosted Apple-silicon images", oses and all(re.match(r"macos-1[4-9]$", o) for o in oses))
check("macos-ci: runs on the matrix image", mj["runs-on"] == "${{ matrix.os }}")
r = [x.strip() for x in runs(mj)]
check("macos-ci: build, check, shim-verify, llama-bench, smoke",
      r == ["sh bench/scripts/ci/build.sh", "make check", "make shim-verify",
            "make llama-bench", "sh bench/scripts/ci/macos-smoke.sh smoke"])
shell_free("macos-ci", mj)
up = uses(mj, "actions/upload-artifact")
check("macos-ci: the smoke bundle and report are kept",
      len(up) == 1 and "smoke/bundle/" in up[0]["with"]["path"] and "smoke/report.html" in up[0]["with"]["path"])

# --- every workflow -----------------------------------------------------------
for name in sorted(os.listdir(wdir)):
    w = load(name)
    check("%s: has a name and jobs" % name, w.get("name") and w.get("jobs"))
    for jn, j in w["jobs"].items():
        for s in j.get("steps", []):
            u = s.get("uses", "")
            check("%s/%s: action '%s' pinned to a version" % (name, jn, u), not u or "@" in u)

print("%d passed, %d failed" % (ok, bad))
EOF
rc=$?
grep -E '^(ok|not ok) ' "$WORK/py.out" | while read -r line; do echo "$line"; done
T_PASSED=$((T_PASSED + $(grep -c '^ok ' "$WORK/py.out")))
T_FAILED=$((T_FAILED + $(grep -c '^not ok ' "$WORK/py.out")))
if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$WORK/py.out"; then
	not_ok "the workflow checker itself failed (exit $rc)"
	sed 's/^/# /' "$WORK/py.out" | tail -20
fi
test_done
