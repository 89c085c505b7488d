#!/bin/bash
# Installing the shim in a guest: `shim pin` rewrites the plan's pinned
# SHA-256 (everything else kept); `shim install` copies `make shim`'s
# output to the variant's target (scp to the guest address from the lume
# and tart doubles, served by a real sshd on loopback; a copy for a local
# target), checks the hash there and pins it; `run` then accepts the
# library and verifies the injection. On Linux the test library
# libmarker.so stands in for the dylib (LD_PRELOAD prints its marker).
. "$(dirname "$0")/lib.sh"
. "$TOP/bench/t/helpers/sshd.sh"

LIB=$T_BUILD/t/helpers/libmarker.so
LIBSHA=$(sha256sum "$LIB" | cut -d' ' -f1)
export PATH="$FIXTURES/doubles:$PATH"
mkdir -p "$WORK/shim"
cp "$LIB" "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
printf '#!/bin/sh\necho "{\\"supportsFamily\\": {\\"1009\\": true}}"\n' >"$WORK/shim/metal-capabilities"
PROBESHA=$(sha256sum "$WORK/shim/metal-capabilities" | cut -d' ' -f1)
ZERO=$(printf '0%.0s' $(seq 64))
G=$WORK/guest/Users/lume/.local/share/lume/metal-capabilities

# --- shim pin: only the pin changes.
cp "$TOP/bench/plans/shim-study.json" "$WORK/study.json"
expect_code 0 "shim pin" "$SHIMBENCH" shim pin "$WORK/study.json" shim "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
grep_in "$WORK/out" "sha256 515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31 -> $LIBSHA" "says old and new pin"
python3 - "$TOP/bench/plans/shim-study.json" "$WORK/study.json" "$LIBSHA" <<'EOF' && ok "every other key and value kept" || not_ok "pin changed more than the hash"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
shim = [v for v in a["variants"] if v["name"] == "shim"][0]
shim["inject"]["sha256"] = sys.argv[3]
assert a == b, (a, b)
EOF
expect_code 0 "pinning again" "$SHIMBENCH" shim pin "$WORK/study.json" shim "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
grep_in "$WORK/out" "already pins $LIBSHA" "says nothing changed"
expect_code 0 "pin with --library" "$SHIMBENCH" shim pin --library /opt/shim/x.dylib "$WORK/study.json" shim "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
check "library path set" grep -q '"library": "/opt/shim/x.dylib"' "$WORK/study.json"
expect_code 2 "a variant that injects nothing needs --library" "$SHIMBENCH" shim pin "$WORK/study.json" stock "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
grep_in "$WORK/err" "injects no library" "says so"
expect_code 0 "with --library it gains an inject" "$SHIMBENCH" shim pin --library /opt/x.dylib "$WORK/study.json" stock "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
expect_code 2 "unknown variant" "$SHIMBENCH" shim pin "$WORK/study.json" nope "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
grep_in "$WORK/err" "has no variant 'nope'" "names it"
expect_code 3 "unreadable dylib" "$SHIMBENCH" shim pin "$WORK/study.json" shim "$WORK/none.dylib"
cp "$WORK/study.json" "$WORK/before.json"
echo '{"models": [' >"$WORK/broken.json"
expect_code 2 "a plan that is not JSON is left alone" "$SHIMBENCH" shim pin "$WORK/broken.json" shim "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
check "untouched" grep -qx '{"models": \[' "$WORK/broken.json"

# --- shim install: a plan whose guest is this machine.
plan() { # plan TRANSPORT-JSON
	cat <<JSON
{"models": [{"name": "tiny", "path": "$WORK/tiny.gguf"}],
 "targets": {"host": {"transport": "local"}, "guest": $1},
 "variants": [
   {"name": "stock", "target": "guest", "role": "stock"},
   {"name": "shim", "target": "guest", "role": "shim",
    "inject": {"library": "$G/LumeMetalCapabilities-arm64.dylib", "sha256": "$ZERO",
               "env": {"LUME_METAL_APPLE_FAMILY_MAX": "1009"}},
    "expect": ["[shimbench-test-preload] Enabled for"],
    "probe": {"argv": ["$G/metal-capabilities"], "expect": {"supportsFamily.1009": true}}}],
 "llama_bench": {"args": ["-p", "16", "-n", "4", "-r", "2", "-t", "2"]}}
JSON
}
install_ok() { # install_ok TITLE PLAN
	rm -rf "$WORK/guest"
	expect_code 0 "$1: shim install" "$SHIMBENCH" shim install --probe "$WORK/shim/metal-capabilities" \
		"$2" shim "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
	check "$1: the dylib is in place" cmp -s "$G/LumeMetalCapabilities-arm64.dylib" "$LIB"
	check "$1: the probe is in place and executable" test -x "$G/metal-capabilities"
	check "$1: no .part left" test ! -e "$G/LumeMetalCapabilities-arm64.dylib.part"
	grep_in "$WORK/out" "SHA-256 $LIBSHA checked there" "$1: says the hash was checked on the target"
	grep_in "$WORK/out" "sha256 $ZERO -> $LIBSHA" "$1: pinned"
	check "$1: the plan pins the installed library" grep -q "\"sha256\": \"$LIBSHA\"" "$2"
}

plan '{"transport": "local"}' >"$WORK/local.json"
install_ok "local target" "$WORK/local.json"

if ! start_sshd; then
	skip "shim install over scp: needs sshd (openssh-server) and root to run it"
	test_done; exit $?
fi
ME=$(id -un)
export FAKE_LUME_VMS=macos-tahoe FAKE_LUME_STOPPED=off FAKE_TART_VMS=runner
plan "{\"transport\": \"lume\", \"vm\": \"macos-tahoe\", \"user\": \"$ME\", \"ssh_options\": [$SSH_OPTS]}" >"$WORK/lume.json"
install_ok "lume guest" "$WORK/lume.json"
grep_in "$WORK/out" "target 'guest' (lume)" "lume: names the target"
plan "{\"transport\": \"tart\", \"vm\": \"runner\", \"user\": \"$ME\", \"ssh_options\": [$SSH_OPTS]}" >"$WORK/tart.json"
install_ok "tart guest" "$WORK/tart.json"
plan "{\"transport\": \"ssh\", \"host\": \"127.0.0.1\", \"user\": \"$ME\", \"ssh_options\": [$SSH_OPTS]}" >"$WORK/ssh.json"
install_ok "ssh target" "$WORK/ssh.json"

# The installed, pinned shim is accepted by run and verified.
LB=$TOP/.llama/bin/llama-bench
if [ -x "$LB" ]; then
	expect_code 0 "synthesize the tiny model" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
	sed "s|\"vm\": \"macos-tahoe\",|\"vm\": \"macos-tahoe\", \"llama_bench\": \"$LB\",|" "$WORK/lume.json" >"$WORK/lume-run.json"
	rm -rf "$WORK/guest"
	expect_code 0 "install for the run" "$SHIMBENCH" shim install --probe "$WORK/shim/metal-capabilities" \
		"$WORK/lume-run.json" shim "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
	expect_code 0 "run accepts the pinned shim" "$SHIMBENCH" --db "$WORK/s.db" run --bundle "$WORK/b" "$WORK/lume-run.json"
	[ "$(sqlite3 "$WORK/s.db" "select verification from runs where variant='shim'")" = verified ] \
		&& ok "and the injection is verified" || not_ok "shim run not verified"
else
	skip "run with the installed shim: the real llama-bench is not provisioned"
fi

# Failures: a stopped VM, a path scp cannot carry, a variant without a probe.
sed 's/"vm": "macos-tahoe"/"vm": "off"/' "$WORK/lume.json" >"$WORK/off.json"
expect_code 3 "a stopped VM" "$SHIMBENCH" shim install "$WORK/off.json" shim "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
grep_in "$WORK/err" "VM 'off' has no IP address" "says why"
expect_code 3 "a path scp cannot carry" "$SHIMBENCH" shim install --library "$WORK/a b/x.dylib" \
	"$WORK/lume.json" shim "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
grep_in "$WORK/err" "to be copied with scp" "says why"
expect_code 2 "--probe for a variant without one" "$SHIMBENCH" shim install --probe "$WORK/shim/metal-capabilities" \
	--library "$G/x.dylib" "$WORK/lume.json" stock "$WORK/shim/LumeMetalCapabilities-arm64.dylib"
grep_in "$WORK/err" "has no probe" "says why"
test_done
