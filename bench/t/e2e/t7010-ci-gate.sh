#!/bin/bash
# The one-Mac macOS-update gate workflow's steps, run exactly as the
# workflow runs them (bench/scripts/ci/*.sh) with GitHub's files and
# variables set: build; provision (the lume and tart doubles start their
# VM, the shim is installed over a real sshd on loopback, doctor PLAN);
# run the study plan (real llama-bench on a synthetic model) into the
# kept store; gate: the first run is neutral, the second is gated against
# the previous one, an OS-update regression is red, an inconclusive gate
# is neutral with its reason (and a neutral check run through gh).
. "$(dirname "$0")/lib.sh"
. "$TOP/bench/t/helpers/sshd.sh"

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "CI gate steps: the real llama-bench is not provisioned"
	test_done; exit $?
fi
CI=$TOP/bench/scripts/ci
LIB=$T_BUILD/t/helpers/libmarker.so
ME=$(id -un)
export PATH="$FIXTURES/doubles:$PATH"
export GITHUB_ACTIONS=true GITHUB_OUTPUT=$WORK/gh-output GITHUB_STEP_SUMMARY=$WORK/summary.md
export SHIMBENCH SHIMBENCH_STATE=$WORK/state SHIMBENCH_HOST=mac-a GITHUB_RUN_ID=101 GITHUB_RUN_ATTEMPT=1
export FAKE_LUME_STATE=$WORK/lume FAKE_TART_STATE=$WORK/tart SHIMBENCH_VM_WAIT=10
mkdir -p "$WORK/lume" "$WORK/tart" "$WORK/shim"
echo stopped >"$WORK/lume/macos-tahoe"
echo stopped >"$WORK/tart/runner"
out_of() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT" | tail -n 1; }
step() { # step TITLE CODE [VAR=VALUE...] SCRIPT ARGS...: one workflow step, fresh outputs
	local title=$1 code=$2 vars=()
	shift 2
	while [ $# -gt 0 ] && [[ $1 == *=* ]]; do vars+=("$1"); shift; done
	: >"$GITHUB_OUTPUT"
	expect_code "$code" "$title" env "${vars[@]}" sh "$@"
}

have_sshd=1
start_sshd || have_sshd=0
expect_code 0 "synthesize the model" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
G=$WORK/guest/Users/lume/.local/share/lume/metal-capabilities
plan() { # plan SSH-OPTIONS LIB SHA PROBE
	cat <<JSON
{"name": "the study, here",
 "models": [{"name": "tiny", "path": "$WORK/tiny.gguf"}],
 "targets": {"host": {"transport": "local", "llama_bench": "$LB"},
             "guest": {"transport": "lume", "vm": "macos-tahoe", "user": "$ME",
                       "llama_bench": "$LB", "ssh_options": [$1]}},
 "variants": [
   {"name": "bare-metal", "target": "host", "role": "bare-metal"},
   {"name": "stock", "target": "guest", "role": "stock"},
   {"name": "shim", "target": "guest", "role": "shim",
    "inject": {"library": "$2", "sha256": "$3", "env": {"LUME_METAL_APPLE_FAMILY_MAX": "1009"}},
    "expect": ["[shimbench-test-preload] Enabled for"],
    "probe": {"argv": ["$4"], "expect": {"supportsFamily.1009": true}}}],
 "llama_bench": {"args": ["-p", "32", "-n", "8", "-r", "3", "-t", "2"]},
 "processes": 1, "order": "interleaved"}
JSON
}
cp "$LIB" "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
printf '#!/bin/sh\necho "{\\"supportsFamily\\": {\\"1009\\": true}}"\n' >"$WORK/shim/metal-capabilities"
chmod +x "$WORK/shim/metal-capabilities"
if [ "$have_sshd" = 1 ]; then
	plan "$SSH_OPTS" "$G/LumeMetalCapabilities-arm64.dylib" "$(printf '0%.0s' $(seq 64))" \
		"$G/metal-capabilities" >"$WORK/plan.json"
	export SHIMBENCH_SHIM_DIR=$WORK/shim
else
	skip "provisioning the shim over scp: needs sshd (openssh-server) and root"
	plan "" "$LIB" "$(sha256sum "$LIB" | cut -d' ' -f1)" "$WORK/shim/metal-capabilities" >"$WORK/plan.json"
fi

# --- build, provision ---------------------------------------------------------
step "build.sh" 0 "$CI/build.sh"
[ "$(out_of shimbench)" = "$TOP/build/shimbench" ] || [ -n "$(out_of shimbench)" ] \
	&& ok "build: names the binary" || not_ok "build: no shimbench output"
step "provision.sh starts the stopped VM and checks the plan" 0 \
	SHIMBENCH_VMS=lume:macos-tahoe "$CI/provision.sh" "$WORK/plan.json"
grep_in "$WORK/out" "starting lume VM 'macos-tahoe'" "says it starts the VM"
grep_in "$WORK/lume/macos-tahoe" "running" "lume run was called"
grep_in "$WORK/out" "lume VM 'macos-tahoe' is ready" "waited until running, addressed, ssh available"
grep_in "$GITHUB_STEP_SUMMARY" "shimbench doctor" "doctor's lines in the step summary"
grep_in "$WORK/state/doctor.txt" "every target ready" "doctor: every target ready"
if [ "$have_sshd" = 1 ]; then
	check "the shim was installed into the guest" cmp -s "$G/LumeMetalCapabilities-arm64.dylib" "$LIB"
	check "and pinned in the plan" grep -q "$(sha256sum "$LIB" | cut -d' ' -f1)" "$WORK/plan.json"
	unset SHIMBENCH_SHIM_DIR
fi
step "provision.sh with the VM already running" 0 \
	SHIMBENCH_VMS=lume:macos-tahoe "$CI/provision.sh" "$WORK/plan.json"
grep_in "$WORK/out" "lume VM 'macos-tahoe' is running" "does not start it twice"

# --- run, gate: first run, then a second one ------------------------------------
: >"$GITHUB_STEP_SUMMARY"
step "run-study.sh" 0 "$CI/run-study.sh" "$WORK/plan.json"
[ "$(out_of session)" = 1 ] && ok "output session=1" || not_ok "session output: $(cat "$GITHUB_OUTPUT")"
[ "$(out_of label)" = mac-a-101-1 ] && ok "labelled HOST-RUN-ATTEMPT" || not_ok "label: $(out_of label)"
check "the bundle is where the output says" test -f "$(out_of bundle)/bundle.json"
check "the report too" test -s "$WORK/state/reports/mac-a-101-1.md" -a -s "$WORK/state/reports/mac-a-101-1.html"
grep_in "$GITHUB_STEP_SUMMARY" "shimbench run: session 1 (mac-a-101-1)" "the run's report in the step summary"
grep_in "$GITHUB_STEP_SUMMARY" "tiny (llama.cpp)" "with its table"
step "gate.sh on the first session" 0 "$CI/gate.sh"
[ "$(out_of verdict)" = no-baseline ] && ok "verdict no-baseline" || not_ok "verdict: $(out_of verdict)"
grep_in "$WORK/out" "::warning title=shimbench gate: neutral::first session in this store" "a neutral annotation with the reason"
grep_in "$GITHUB_STEP_SUMMARY" "**Neutral** (not a failure)" "neutral in the summary"

export GITHUB_RUN_ID=102
step "run-study.sh, the next run" 0 "$CI/run-study.sh" "$WORK/plan.json"
[ "$(out_of session)" = 2 ] && ok "output session=2" || not_ok "session output: $(out_of session)"
# The verdict of two quick runs depends on the machine's noise; the
# job's result must follow it: red only for a regression.
: >"$GITHUB_OUTPUT"
sh "$CI/gate.sh" >"$WORK/out" 2>"$WORK/err"
rc=$?
grep_in "$WORK/out" "gating against session=latest~1" "gate.sh: no OS update: gated against the previous run"
[ "$(out_of baseline)" = "session=latest~1" ] && ok "output baseline" || not_ok "baseline: $(out_of baseline)"
case "$(out_of verdict):$rc" in
regression:1|pass:0|inconclusive:0) ok "verdict $(out_of verdict), exit $rc" ;;
*) not_ok "verdict $(out_of verdict) with exit $rc" ;;
esac
check "JUnit written and valid" xmllint --noout --schema "$FIXTURES/junit.xsd" "$WORK/state/gate/junit.xml"
grep_in "$GITHUB_STEP_SUMMARY" "### shimbench gate:" "the gate's table in the summary"
check "the run's bundles are kept in the state directory" test -d "$WORK/state/bundles/mac-a-102-1"
GITHUB_RUN_ID=102 step "a re-run of the same attempt takes a new bundle name" 0 "$CI/run-study.sh" "$WORK/plan.json"
[ "$(out_of label)" = mac-a-102-1-2 ] && ok "label mac-a-102-1-2" || not_ok "label: $(out_of label)"

# --- across an OS update: a regression is red, an undecided gate neutral ---------
OSU=$FIXTURES/os-update
if [ -f "$OSU/base.mapping.json" ]; then
	export SHIMBENCH_STATE=$WORK/osu
	mkdir -p "$WORK/osu"
	expect_code 0 "a store across an OS update" "$SHIMBENCH" --db "$WORK/osu/store.db" import \
		--mapping "$OSU/base.mapping.json" --mapping "$OSU/slow.mapping.json" "$OSU/base" "$OSU/slow"
	: >"$GITHUB_STEP_SUMMARY"
	step "gate.sh: a regression after the OS update is red" 1 "$CI/gate.sh"
	[ "$(out_of verdict)" = regression ] && ok "verdict regression" || not_ok "verdict: $(out_of verdict)"
	[ "$(out_of baseline)" = auto ] && ok "baseline auto (the other OS build)" || not_ok "baseline: $(out_of baseline)"
	grep_in "$WORK/out" "::error title=shimbench gate: regression::FAIL, 2 regressions" "an error annotation naming them"
	check "JUnit has the failures" test "$(grep -c '<failure ' "$WORK/osu/gate/junit.xml")" = 2
	grep_in "$GITHUB_STEP_SUMMARY" "shimbench gate: FAIL" "the summary says FAIL"
	# prove mode, 15 %: pp128 is 13.8 % slower, no regression beyond 15 %,
	# but within 15 % cannot be shown either: inconclusive (exit 4).
	export SHIMBENCH_NEUTRAL_CHECK=1 GITHUB_REPOSITORY=owner/repo GITHUB_SHA=0123abc FAKE_GH_LOG=$WORK/gh.log
	: >"$GITHUB_STEP_SUMMARY"
	step "gate.sh: an inconclusive gate is neutral, not red" 0 \
		SHIMBENCH_GATE_ARGS="--mode prove --threshold 15" "$CI/gate.sh"
	[ "$(out_of verdict)" = inconclusive ] && ok "verdict inconclusive" || not_ok "verdict: $(out_of verdict)"
	[ "$(out_of exit-code)" = 4 ] && ok "gate's own exit code 4 in the outputs" || not_ok "exit-code: $(out_of exit-code)"
	grep_in "$WORK/out" "::warning title=shimbench gate: neutral::INCONCLUSIVE, 1 of 2 checks undecided" "a warning with the reason, not an error"
	check "no error annotation" sh -c "! grep -q '^::error' '$WORK/out'"
	grep_in "$GITHUB_STEP_SUMMARY" "**Neutral** (not a failure): INCONCLUSIVE" "neutral in the summary"
	grep_in "$WORK/osu/gate/junit.xml" "<skipped message=\"" "JUnit marks the undecided check as skipped (neutral), with the reason"
	check "never as an error or a failure" sh -c "! grep -q '<error \\|<failure ' '$WORK/osu/gate/junit.xml'"
	check "JUnit with skipped validates" xmllint --noout --schema "$FIXTURES/junit.xsd" "$WORK/osu/gate/junit.xml"
	grep_in "$WORK/gh.log" "repos/owner/repo/check-runs" "a check run is posted"
	grep_in "$WORK/gh.log" "conclusion=neutral" "with conclusion neutral"
	grep_in "$WORK/gh.log" "head_sha=0123abc" "on the commit"
	grep_in "$WORK/gh.log" "output[title]=INCONCLUSIVE" "titled with the reason"
	unset SHIMBENCH_NEUTRAL_CHECK
	export SHIMBENCH_STATE=$WORK/state
else
	skip "the OS-update gate paths: bench/t/fixtures/os-update is absent"
fi

# --- tart, and what stops a provision -------------------------------------------
plan "" "$LIB" "$(sha256sum "$LIB" | cut -d' ' -f1)" "$WORK/shim/metal-capabilities" |
	sed 's/"transport": "lume", "vm": "macos-tahoe"/"transport": "tart", "vm": "runner"/' >"$WORK/tart.json"
step "provision.sh starts a tart VM" 0 SHIMBENCH_VMS=tart:runner "$CI/provision.sh" "$WORK/tart.json"
grep_in "$WORK/out" "starting tart VM 'runner'" "says so"
grep_in "$WORK/out" "tart VM 'runner' is ready" "waited for tart ip and exec"
step "a VM lume does not know" 3 SHIMBENCH_VMS=lume:nowhere "$CI/provision.sh" "$WORK/plan.json"
step "a bad VM spec" 2 SHIMBENCH_VMS=vbox:x "$CI/provision.sh" "$WORK/plan.json"
sed "s/\"sha256\": \"[0-9a-f]*\"/\"sha256\": \"$(printf '1%.0s' $(seq 64))\"/" "$WORK/tart.json" >"$WORK/pin.json"
step "doctor finds the shim is not the pinned one: provision fails" 1 \
	SHIMBENCH_VMS=tart:runner "$CI/provision.sh" "$WORK/pin.json"
grep_in "$WORK/out" "::error title=provision::doctor" "an error annotation"
test_done
