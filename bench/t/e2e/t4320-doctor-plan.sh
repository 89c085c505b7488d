#!/bin/bash
# shimbench doctor PLAN: every target of the plan, checked the way run
# will use it: the transport's program, the VM running (lume and tart
# doubles), a command run there (a real sshd on loopback for ssh), SIP on
# a macOS target, llama-bench and MLX-LM's benchmark there, the injected
# library's SHA-256 against the pin, the probe, the model files.
. "$(dirname "$0")/lib.sh"
. "$TOP/bench/t/helpers/sshd.sh"

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "doctor PLAN: the real llama-bench is not provisioned"
	test_done; exit $?
fi
if ! start_sshd; then
	skip "doctor PLAN: needs sshd (openssh-server) and root to run it"
	test_done; exit $?
fi
LIB=$T_BUILD/t/helpers/libmarker.so
LIBSHA=$(sha256sum "$LIB" | cut -d' ' -f1)
ZERO=$(printf '0%.0s' $(seq 64))
G=$WORK/guest
export PATH="$FIXTURES/doubles:$PATH"
export FAKE_LUME_VMS=macos-tahoe FAKE_LUME_STOPPED=off FAKE_TART_VMS=runner FAKE_TART_STOPPED=tart-off
expect_code 0 "synthesize the tiny model" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
ME=$(id -un)
plan() { # plan LUME-VM TART-VM SSH-PORT SHIM-SHA [LLAMA-BENCH]
	cat <<JSON
{"models": [{"name": "tiny", "path": "$WORK/tiny.gguf"},
            {"name": "mlx-model", "runtime": "mlx-lm", "path": "mlx-community/x-4bit"}],
 "targets": {
   "host": {"transport": "local", "llama_bench": "$LB"},
   "guest": {"transport": "lume", "vm": "$1", "user": "$ME", "llama_bench": "${5:-$LB}",
             "ssh_options": [$SSH_OPTS]},
   "ci": {"transport": "tart", "vm": "$2", "llama_bench": "$LB"}$(far_target "$3")},
 "variants": [
   {"name": "bare-metal", "target": "host", "role": "bare-metal", "runtime": "llama.cpp"},
   {"name": "mlx", "target": "host", "runtime": "mlx-lm"},
   {"name": "stock", "target": "guest", "role": "stock", "runtime": "llama.cpp"},
   {"name": "shim", "target": "guest", "role": "shim", "runtime": "llama.cpp",
    "inject": {"library": "$G/shim.so", "sha256": "$4"},
    "probe": {"argv": ["$G/metal-capabilities"], "expect": {"ok": true}}},
   {"name": "tart", "target": "ci", "runtime": "llama.cpp"}$(far_variant "$3")]}
JSON
}
# The ssh target costs a connection per check: only in the plans that
# test it (an SSH-PORT of "-" leaves it out).
far_target() {
	[ "$1" = - ] && return
	cat <<JSON
,
   "far": {"transport": "ssh", "host": "127.0.0.1", "user": "$ME", "llama_bench": "$LB",
           "ssh_options": ["-o", "Port=$1", "-i", "$SSH_KEY", "-o", "UserKnownHostsFile=$WORK/sshd-known_hosts",
                           "-o", "StrictHostKeyChecking=accept-new", "-o", "IdentitiesOnly=yes", $SSH_MUX]}
JSON
}
far_variant() {
	[ "$1" = - ] || printf ',\n   {"name": "ssh", "target": "far", "runtime": "llama.cpp"}'
}
line() { grep -F -- "$1" "$WORK/out" | head -n 1; }
has_line() { # has_line TITLE STATUS NAME [TEXT]
	local l
	l=$(grep -E "^$2 +$3 " "$WORK/out" | head -n 1)
	if [ -n "$l" ] && { [ -z "${4:-}" ] || echo "$l" | grep -qF -- "$4"; }; then
		ok "$1"
	else
		not_ok "$1 (no '$2 $3 ${4:-}' line)"
		sed 's/^/# /' "$WORK/out" | head -40
	fi
}

# Everything in place: the shim installed (and pinned) by shim install.
plan macos-tahoe runner "$SSHD_PORT" "$ZERO" >"$WORK/p.json"
printf '#!/bin/sh\necho "{\\"ok\\": true}"\n' >"$WORK/probe"
expect_code 0 "install the shim into the guest" "$SHIMBENCH" shim install --probe "$WORK/probe" \
	"$WORK/p.json" shim "$LIB"
expect_code 0 "doctor PLAN: every target ready" "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/p.json"
has_line "host reachable" ok host/reachable "this machine"
has_line "host's llama-bench found as run finds it" ok host/llama-bench "$LB (plan)"
has_line "MLX-LM's benchmark found on the host" ok host/mlx-lm "mlx_lm.benchmark"
has_line "lume present" ok guest/lume
has_line "lume VM running, with its address" ok guest/vm "VM 'macos-tahoe' running at 127.0.0.1, ssh available"
has_line "guest reachable through lume" ok guest/reachable "commands run there"
has_line "SIP line for a non-macOS target" ok guest/sip "not macOS"
has_line "llama-bench on the guest, with its version" ok guest/llama-bench "$LB (0.7.0"
has_line "the shim's hash as pinned" ok "guest/shim\\(shim\\)" "as pinned"
has_line "the probe is there" ok "guest/probe\\(shim\\)"
has_line "the model is there" ok "guest/model\\(tiny\\)"
has_line "tart VM running" ok ci/vm "VM 'runner' running"
has_line "ssh target reachable" ok far/reachable "commands run there"
has_line "llama-bench over ssh" ok far/llama-bench "$LB"
grep_in "$WORK/out" "every target ready" "says the plan is ready"
check "no MLX model check (MLX-LM loads ids and directories)" sh -c "! grep -q 'model(mlx-model)' '$WORK/out'"
expect_code 0 "--json" "$SHIMBENCH" --db "$WORK/d.db" doctor --json "$WORK/p.json"
python3 - "$WORK/out" <<'EOF' && ok "JSON names each check's target" || not_ok "JSON target checks"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True
t = [c for c in d["checks"] if c.get("target") == "guest"]
assert [c["name"] for c in t][:4] == ["lume", "vm", "reachable", "sip"], t
assert all(c["status"] == "ok" for c in t), t
EOF

# A macOS target: SIP from csrutil (fake uname and csrutil on the guest's PATH).
plan macos-tahoe runner - "$LIBSHA" >"$WORK/mac.json"
mkdir -p "$WORK/mac"
printf '#!/bin/sh\necho "Darwin arm64"\n' >"$WORK/mac/uname"
printf '#!/bin/sh\necho "System Integrity Protection status: %s."\n' enabled >"$WORK/mac/csrutil"
chmod +x "$WORK/mac/uname" "$WORK/mac/csrutil"
expect_code 0 "SIP enabled with a shim variant: a warning" env PATH="$WORK/mac:$PATH" \
	"$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/mac.json"
has_line "SIP enabled named, with what it means" warning guest/sip "enabled; fix: SIP drops DYLD_INSERT_LIBRARIES"
printf '#!/bin/sh\necho "System Integrity Protection status: disabled."\n' >"$WORK/mac/csrutil"
expect_code 0 "SIP disabled" env PATH="$WORK/mac:$PATH" "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/mac.json"
has_line "SIP disabled: ok" ok guest/sip "disabled"

# What is wrong, with the fix, and the exit code.
plan off runner - "$LIBSHA" >"$WORK/off.json"
expect_code 3 "lume VM stopped" "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/off.json"
has_line "says it is stopped, with the command to start it" error guest/vm "VM 'off' is stopped; fix: lume run off --display none --vnc disabled --detach"
check "nothing else checked on a stopped guest" sh -c "! grep -q 'guest/reachable' '$WORK/out'"
grep_in "$WORK/out" "not ready" "summary says so"
plan macos-tahoe tart-off - "$LIBSHA" >"$WORK/toff.json"
expect_code 3 "tart VM stopped" "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/toff.json"
has_line "tart: stopped, with the command" error ci/vm "fix: tart run --no-graphics tart-off &"
plan nowhere runner - "$LIBSHA" >"$WORK/none.json"
expect_code 3 "lume VM that does not exist" "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/none.json"
has_line "lume's own message" error guest/vm "not found"
expect_code 3 "lume and tart not installed" env PATH=/usr/bin:/bin "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/mac.json"
has_line "lume missing" missing guest/lume "'lume' not on PATH"
has_line "tart missing, with the fix" missing ci/tart "brew install cirruslabs/cli/tart"
plan macos-tahoe runner 1 "$LIBSHA" >"$WORK/port.json"
expect_code 3 "ssh target unreachable" "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/port.json"
has_line "unreachable, with ssh's reason" error far/reachable "cannot run a command on target 'far'"
plan macos-tahoe runner - "$ZERO" >"$WORK/pin.json"
expect_code 1 "the guest's shim differs from the pin" "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/pin.json"
has_line "mismatch names both hashes" mismatch "guest/shim\\(shim\\)" "has SHA-256 $LIBSHA; the plan pins $ZERO"
plan macos-tahoe runner - "$LIBSHA" /opt/none/llama-bench >"$WORK/lb.json"
rm -f "$G/shim.so" "$WORK/tiny.gguf"
expect_code 3 "missing pieces on the guest" "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/lb.json"
has_line "llama-bench missing there" missing guest/llama-bench "'/opt/none/llama-bench' not found on target 'guest'"
has_line "shim missing, fix: shim install" missing "guest/shim\\(shim\\)" "fix: shimbench shim install PLAN shim"
has_line "model missing on the local target: fix: models fetch" missing "host/model\\(tiny\\)" "fix: shimbench models fetch tiny"
echo '{"models": []}' >"$WORK/bad.json"
expect_code 2 "a bad plan" "$SHIMBENCH" --db "$WORK/d.db" doctor "$WORK/bad.json"
grep_in "$WORK/err" "'models' must be a non-empty array" "says why"
test_done
