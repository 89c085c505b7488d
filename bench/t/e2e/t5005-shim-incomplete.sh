#!/bin/bash
# An incomplete shim install, as `shimbench run` reports it: every case
# shim/README.md ("When the install is incomplete") describes, with the
# exit code, the message and what is stored, as the README says them.
#
# The real llama-bench runs on a synthetic model. What only a Mac can do
# is replayed, as in t5100: the injected library is the test library
# (LD_PRELOAD, silent here: it only carries the hash and the variable),
# and the target's llama-bench is a wrapper that adds the stderr the
# shim really prints (bench/t/fixtures/shim-{marker,refusal}.stderr,
# recorded from the shim), nothing (a library SIP or the hardened
# runtime pruned), or dyld's documented load failure and SIGABRT (an
# arm64e process and an arm64-only dylib). The probe replays our
# probe's recorded output (bench/t/fixtures/metal-probe).
. "$(dirname "$0")/lib.sh"
. "$TOP/bench/t/helpers/sshd.sh"

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "incomplete install: the real llama-bench is not provisioned"
	test_done; exit $?
fi
LIB=$T_BUILD/t/helpers/libmarker.so
LIBSHA=$(sha256sum "$LIB" | cut -d' ' -f1)
ZERO=$(printf '0%.0s' $(seq 64))
PF=$FIXTURES/metal-probe
expect_code 0 "synthesize a model" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"

# wrapper NAME: a llama-bench that first prints $WORK/NAME.stderr (and
# aborts, like dyld, when it is the dyld case).
wrapper() {
	cat >"$WORK/lb-$1" <<SH
#!/bin/sh
cat '$WORK/$1.stderr' >&2
if grep -q 'terminating because inserted dylib' '$WORK/$1.stderr'; then
	kill -ABRT \$\$
fi
exec '$LB' "\$@"
SH
	chmod +x "$WORK/lb-$1"
}
# probe_as FILE: a metal-capabilities that prints a recorded output.
probe_as() {
	printf '#!/bin/sh\nexec cat %s\n' "'$1'" >"$WORK/probe"
	chmod +x "$WORK/probe"
}
# plan NAME LIBRARY SHA256 PROBE [TARGET-JSON]
plan() {
	local target="{\"transport\": \"local\", \"llama_bench\": \"$WORK/lb-$1\"}"
	[ -n "${5:-}" ] && target=$5
	cat >"$WORK/$1.json" <<JSON
{"models": [{"name": "tiny", "path": "$WORK/tiny.gguf"}],
 "targets": {"guest": $target},
 "variants": [{"name": "shim", "target": "guest", "role": "shim",
   "inject": {"library": "$2", "sha256": "$3",
              "env": {"LUME_METAL_APPLE_FAMILY_MAX": "1009", "SHIMBENCH_TEST_MARKER_QUIET": "1"}},
   "expect": ["[LumeMetalCapabilities] Enabled for", "GPU family: MTLGPUFamilyApple9"],
   "probe": {"argv": ["$4", "1009"], "expect": {"supports_family": true}}}],
 "llama_bench": {"args": ["-p", "16", "-n", "4", "-r", "2", "-t", "2"]}, "processes": 1}
JSON
}
run_plan() { # run_plan CODE TITLE NAME
	expect_code "$1" "$2" "$SHIMBENCH" --db "$WORK/$3.db" run --bundle "$WORK/b-$3" "$WORK/$3.json"
}
q() { sqlite3 "$WORK/$1.db" "$2" 2>/dev/null; }
GOOD_GPU='ggml_metal_device_init: GPU family: MTLGPUFamilyApple9  (1009)'

# 0. Complete: the shim's marker, llama.cpp's family line, the probe.
{ cat "$FIXTURES/shim-marker.stderr"; echo "$GOOD_GPU"; } >"$WORK/good.stderr"
wrapper good
probe_as "$PF/ours-shim-1009.txt"
plan good "$LIB" "$LIBSHA" "$WORK/probe"
run_plan 0 "complete install: the run is verified" good
[ "$(q good "select verification from runs")" = verified ] && ok "stored verified" || not_ok "good: $(q good 'select verification, verification_detail from runs')"

# 1. The library is not where the plan injects it.
plan missing "$WORK/nowhere/LumeMetalCapabilities.dylib" "$LIBSHA" "$WORK/probe"
sed -i "s|lb-missing|lb-good|" "$WORK/missing.json"
run_plan 3 "library missing: exit 3" missing
grep_in "$WORK/err" "error: cannot open '$WORK/nowhere/LumeMetalCapabilities.dylib': No such file or directory" "names the path"
[ "$(q missing 'select count(*) from runs')" = "" ] || [ "$(q missing 'select count(*) from runs')" = 0 ] &&
	ok "no run stored" || not_ok "runs stored: $(q missing 'select count(*) from runs')"
check "no bundle" test ! -e "$WORK/b-missing"

# 2. A library other than the one pinned.
plan hash "$LIB" "$ZERO" "$WORK/probe"
sed -i "s|lb-hash|lb-good|" "$WORK/hash.json"
run_plan 1 "hash mismatch: exit 1" hash
grep_in "$WORK/err" "error: variant 'shim': library '$LIB' has SHA-256 $LIBSHA, the plan expects $ZERO; refusing to run" "names both hashes and refuses"
[ "$(q hash 'select count(*) from runs')" = "" ] || [ "$(q hash 'select count(*) from runs')" = 0 ] &&
	ok "no process started" || not_ok "runs stored"
check "no bundle" test ! -e "$WORK/b-hash"

# 3. The probe is not installed: the runs go on, unverified.
plan noprobe "$LIB" "$LIBSHA" "$WORK/no-probe"
sed -i "s|lb-noprobe|lb-good|" "$WORK/noprobe.json"
run_plan 1 "probe missing: exit 1" noprobe
grep_in "$WORK/err" "variant shim: PROBE FAILED: probe '$WORK/no-probe' failed: cannot exec: No such file or directory" "says the probe could not run"
case $(q noprobe "select verification || '|' || verification_detail from runs") in
"unverified|"*"probe: no probe output recorded") ok "run stored unverified: no probe output recorded" ;;
*) not_ok "noprobe: $(q noprobe 'select verification, verification_detail from runs')" ;;
esac

# 4. Pruned: SIP or the hardened runtime dropped DYLD_INSERT_LIBRARIES,
#    so neither llama-bench nor the probe loaded the shim.
: >"$WORK/pruned.stderr"
echo 'ggml_metal_device_init: GPU family: MTLGPUFamilyApple5  (1005)' >"$WORK/pruned.stderr"
wrapper pruned
probe_as "$PF/ours-stock-1009.txt"
plan pruned "$LIB" "$LIBSHA" "$WORK/probe"
run_plan 1 "pruned library: exit 1" pruned
grep_in "$WORK/err" "variant shim: PROBE FAILED: probe: supports_family is false, expected true" "the probe says the family is not raised"
grep_in "$WORK/err" "injection not verified: missing markers '[LumeMetalCapabilities] Enabled for'; 'GPU family: MTLGPUFamilyApple9'; likely causes: DYLD_INSERT_LIBRARIES pruned by SIP or the hardened runtime, a library without this process's architecture slice (arm64 vs arm64e), or a bad shim configuration (LUME_METAL_APPLE_FAMILY_MAX)" "names the missing markers and the likely causes"
[ "$(q pruned "select status || '|' || verification from runs")" = "ok|unverified" ] &&
	ok "stored: the run completed, unverified" || not_ok "pruned: $(q pruned 'select status, verification from runs')"

# 5. Loaded, but the configuration is malformed: the shim's own line.
{ cat "$FIXTURES/shim-refusal.stderr"; echo 'ggml_metal_device_init: GPU family: MTLGPUFamilyApple5  (1005)'; } >"$WORK/badcfg.stderr"
wrapper badcfg
plan badcfg "$LIB" "$LIBSHA" "$WORK/probe"
run_plan 1 "malformed configuration: exit 1" badcfg
grep_in "$WORK/err" "injection not verified: missing markers '[LumeMetalCapabilities] Enabled for'" "missing marker"
case $(q badcfg "select capabilities_json from runs") in
*'"shim_messages":["Disabled for llama-bench: LUME_METAL_APPLE_FAMILY_MAX='"'1009x'"' is not an unsigned number; leaving stock capabilities unchanged"]'*)
	ok "the shim's Disabled line is kept in the run's capabilities (shim_messages)" ;;
*) not_ok "badcfg caps: $(q badcfg 'select capabilities_json from runs')" ;;
esac

# 6. An arm64e process and an arm64-only dylib: dyld's load failure.
echo "dyld[4185]: terminating because inserted dylib '/Users/lume/lmc/LumeMetalCapabilities-arm64.dylib' could not be loaded: tried: '/Users/lume/lmc/LumeMetalCapabilities-arm64.dylib' (mach-o file, but is an incompatible architecture (have 'arm64', need 'arm64e'))" >"$WORK/dyld.stderr"
wrapper dyld
probe_as "$PF/ours-shim-1009.txt"
plan dyld "$LIB" "$LIBSHA" "$WORK/probe"
run_plan 1 "arm64e process, arm64-only dylib: exit 1" dyld
grep_in "$WORK/err" "run 1/1: variant shim, model tiny: crashed, unverified" "the run crashed"
grep_in "$WORK/err" "injection not verified: dyld refused the inserted library: dyld[4185]: terminating because inserted dylib '/Users/lume/lmc/LumeMetalCapabilities-arm64.dylib' could not be loaded" "quotes dyld's line"
grep_in "$WORK/err" "crashed: killed by signal 6 (Aborted)" "and the signal"
[ "$(q dyld "select status || '|' || signal || '|' || verification from runs")" = "crashed|6|unverified" ] &&
	ok "stored: crashed, signal 6, unverified" || not_ok "dyld: $(q dyld 'select status, signal, verification from runs')"
case $(q dyld "select capabilities_json from runs") in
*'"dyld_insert_failure":{'*"need 'arm64e'"*) ok "the dyld failure is kept in the run's capabilities" ;;
*) not_ok "dyld caps: $(q dyld 'select capabilities_json from runs')" ;;
esac

# 7. The library missing on a guest reached over ssh (the lume double).
if start_sshd; then
	export PATH="$FIXTURES/doubles:$PATH" FAKE_LUME_VMS=macos-tahoe FAKE_LUME_STOPPED=off
	probe_as "$PF/ours-shim-1009.txt"
	plan remote "$WORK/nowhere/LumeMetalCapabilities.dylib" "$LIBSHA" "$WORK/probe" \
		"{\"transport\": \"lume\", \"vm\": \"macos-tahoe\", \"user\": \"$(id -un)\", \"llama_bench\": \"$WORK/lb-good\", \"ssh_options\": [$SSH_OPTS]}"
	run_plan 3 "library missing on a lume guest: exit 3" remote
	# (lume merges the guest's stderr into stdout, so the shell's own
	# "cannot open" does not reach the message; it names no path. The file
	# is read on sha256sum's stdin, so a missing one is the shell's
	# redirection failing: exit 2.)
	grep_in "$WORK/err" "error: hashing on target 'guest' failed: exit 2" "says hashing on the target failed"
	[ "$(q remote 'select count(*) from runs')" = "" ] || [ "$(q remote 'select count(*) from runs')" = 0 ] &&
		ok "no run stored" || not_ok "runs stored"
else
	skip "library missing on a remote guest: needs sshd (openssh-server) and root"
fi
test_done
