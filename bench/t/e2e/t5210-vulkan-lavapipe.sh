#!/bin/bash
# The Vulkan capability study for real on lavapipe (Mesa's Vulkan on the
# CPU, Debian sid's, provisioned by make lavapipe): the real llama-bench
# with ggml's Vulkan backend under the real shim, through
# bench/scripts/vulkan-study.sh and `shimbench run`. The mechanism, not the
# speed: marker lines, probe output, verified and unverified runs, the
# device-creation gate, and the loader's self-reference trap on the real
# Vulkan loader.
. "$(dirname "$0")/lib.sh"

VK=$TOP/.llama/vulkan
LVP=$VK/prefix/usr/share/vulkan/icd.d/lvp_icd.json
if [ "$(uname -s)" != Linux ]; then
	skip "lavapipe study: Linux only"
	test_done; exit $?
fi
if [ ! -f "$LVP" ] || [ ! -x "$VK/bin/llama-bench" ]; then
	skip "lavapipe study: the Vulkan prefix with lavapipe is not provisioned (make lavapipe)"
	test_done; exit $?
fi
# The plan names the shim where `make shim` puts it (build/shim/vulkan).
if ! make -s -C "$TOP/shim/vulkan" >"$WORK/make" 2>&1; then
	not_ok "make -C shim/vulkan"
	sed 's/^/# /' "$WORK/make" | tail -10
	test_done; exit $?
fi
SO=$TOP/build/shim/vulkan/libVulkanCapabilities.so
# Mesa's compiled shaders persist between runs of the suite: only a first
# run compiles them.
export MESA_SHADER_CACHE_DIR=$TOP/build/mesa-shader-cache
OUT=$WORK/study

# 1. The study script: bare, stock, shim and ggml's switches, all verified.
expect_code 0 "vulkan-study.sh on lavapipe" env SHIMBENCH="$SHIMBENCH" \
	VULKAN_STUDY_ARGS="-p 16 -n 4 -r 2" VULKAN_STUDY_PROCESSES=1 \
	sh "$TOP/bench/scripts/vulkan-study.sh" "$OUT"
grep_in "$OUT/summary.md" "4 runs verified, 0 unverified." "every run verified"
# The goal line is computed from the report's own figures (the study's
# csv, columns by name): shim / stock and shim / bare as printed there.
want=$("$SHIMBENCH" --db "$OUT/study.db" report --format csv | python3 -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    if r["metric"] == "pp16":
        print("- pp16: shim / stock = %.2fx" % float(r["guest_ratio"]),
              "shim = %.1f %% of bare" % float(r["shim_to_host_percent"]))')
grep_in "$OUT/summary.md" "${want%% shim = *}" "the goal line gives the report's shim / stock"
grep_in "$OUT/summary.md" "; shim = ${want##* shim = }" "and its shim / bare"
grep_in "$OUT/devices.txt" "llvmpipe" "the device is lavapipe"
count() { sqlite3 "$OUT/study.db" "$1"; }
[ "$(count 'select count(*) from runs')" = 4 ] && ok "4 runs in the study" ||
	not_ok "study runs: $(count 'select count(*) from runs')"
[ "$(sqlite3 "$OUT/warmup.db" 'select count(*) from runs')" = 4 ] &&
	ok "the warm-up processes are stored apart (warmup.db)" || not_ok "warm-up runs"
r() { ls "$OUT"/bundle/runs/*-"$1"-synth-tiny.stderr | head -n 1; }
grep_in "$(r stock)" "[VulkanCapabilities] Enabled for llama-bench (profile=stock hide=coopmat,coopmat2,int-dot,fp16,bf16,subgroup-size-control,dot2)" \
	"stock: the marker names the process and the profile"
[ "$(grep -c '^\[VulkanCapabilities\]' "$(r stock)")" = 1 ] && ok "stock: one shim line (none from the /bin/sh wrapper)" ||
	not_ok "stock: $(grep -c '^\[VulkanCapabilities\]' "$(r stock)") shim lines"
grep_in "$(r stock)" "| fp16: 0 |" "stock: ggml sees no fp16"
grep_in "$(r stock)" "matrix cores: none" "stock: ggml sees no matrix cores"
grep_in "$(r shim)" "[VulkanCapabilities] Enabled for llama-bench (profile=shim hide=none)" "shim: its marker"
grep_in "$(r shim)" "matrix cores: KHR_coopmat" "shim: the driver's coopmat, as bare"
grep_in "$(r bare)" "matrix cores: KHR_coopmat" "bare: lavapipe (sid) reports coopmat"
grep -q VulkanCapabilities "$(r bare)" && not_ok "bare has a shim line" || ok "bare: no shim"
grep_in "$(r ggml-switches)" "matrix cores: none" "ggml's switches: no matrix cores either"
P=$OUT/bundle/probes
[ -d "$P" ] || P=$OUT/bundle/runs
grep_in "$P/probe-stock.out" "create_device=VK_ERROR_EXTENSION_NOT_PRESENT" "the gate refuses a hidden extension on lavapipe"
grep_in "$P/probe-stock.out" "coopmat=false" "stock probe: coopmat hidden"
grep_in "$P/probe-shim.out" "create_device=VK_SUCCESS" "the shim profile lets lavapipe create it"
grep_in "$P/probe-shim.out" "consistent=true" "the same answers to both queries"
grep_in "$P/probe-bare.out" "shim_loaded=false" "bare probe: no shim in the process"
check "bundle SHA256SUMS verifies" sh -c "cd '$OUT/bundle' && sha256sum -c --quiet SHA256SUMS"
expect_code 0 "the bundle imports into an empty store" "$SHIMBENCH" --db "$WORK/import.db" import "$OUT/bundle"
[ "$(sqlite3 "$WORK/import.db" "select count(*) from runs where verification='verified'")" = 4 ] &&
	ok "imported runs verified again from their files" || not_ok "import verification"

# 2. Unverified runs: a malformed configuration answers as the driver and
#    says so; the hint is about LD_PRELOAD and the shim, never SIP.
SHA=$(sha256sum "$SO" | cut -d' ' -f1)
LB=$VK/bin/llama-bench
cat >"$WORK/bad.json" <<JSON
{"models":[{"name":"synth-tiny","path":"$TOP/models/synth-tiny.gguf"}],
 "targets":{"here":{"transport":"local","llama_bench":"$LB"}},
 "variants":[
   {"name":"typo","target":"here","role":"stock","env":{"GGML_VK_VISIBLE_DEVICES":"0"},
    "inject":{"library":"$SO","sha256":"$SHA","env":{"VULKAN_CAPS_PROFILE":"stok"}},
    "expect":["[VulkanCapabilities] Enabled for llama-bench (profile=stock","matrix cores: none"]},
   {"name":"hide-coopmat","target":"here","role":"stock","env":{"GGML_VK_VISIBLE_DEVICES":"0"},
    "inject":{"library":"$SO","sha256":"$SHA","env":{"VULKAN_CAPS_HIDE":"coopmat"}},
    "expect":["[VulkanCapabilities] Enabled for llama-bench (profile=hide hide=coopmat)","| fp16: 1 |","matrix cores: none"]}],
 "llama_bench":{"args":["-p","16","-n","4","-r","2"]}, "order":"grouped"}
JSON
export VK_DRIVER_FILES=$LVP
expect_code 1 "a malformed configuration fails the session" \
	"$SHIMBENCH" --db "$WORK/bad.db" run --bundle "$WORK/bad" "$WORK/bad.json"
v() { sqlite3 "$WORK/bad.db" "select $1 from runs where variant='$2'"; }
[ "$(v verification typo)" = unverified ] && ok "the typo's run is unverified" || not_ok "typo: $(v verification typo)"
[ "$(v verification hide-coopmat)" = verified ] && ok "a hide list is verified" || not_ok "hide-coopmat: $(v verification hide-coopmat)"
grep_in "$WORK/err" "the shim disabled itself: [VulkanCapabilities] Disabled for llama-bench: VULKAN_CAPS_PROFILE='stok' is not a profile (stock, shim)" \
	"the hint quotes the shim's own line"
grep_in "$WORK/err" "likely causes: LD_PRELOAD ignored" "the hint is about LD_PRELOAD"
grep -q "SIP\|DYLD\|arm64e" "$WORK/err" && not_ok "a Linux hint talks of SIP, DYLD or arm64e" ||
	ok "no SIP, DYLD or arm64e in a Linux run's hint"
grep_in "$WORK/bad/runs/001-typo-synth-tiny.stderr" "matrix cores: KHR_coopmat" "the typo leaves the driver's answers"
grep_in "$WORK/bad/runs/002-hide-coopmat-synth-tiny.stderr" "| fp16: 1 |" "a hide list hides only what it names"

# 3. The real Vulkan loader (sid's) hands out the preloaded library's
#    functions for its own exported names: the trap, avoided.
CL=$TOP/build/shim/vulkan/t/vk-client
make -s -C "$TOP/shim/vulkan" "$CL" >/dev/null 2>&1
"$VK/bin/run-in-prefix" "$CL" real >"$WORK/plain" 2>&1
LD_PRELOAD=$SO VULKAN_CAPS_PROFILE=stock "$VK/bin/run-in-prefix" "$CL" real >"$WORK/trap" 2>&1
grep_in "$WORK/plain" "loader_hands_out=its own" "without the shim the loader hands out its own"
grep_in "$WORK/trap" "loader_hands_out=the preloaded one" "with it, the real loader hands out the shim's functions"
grep_in "$WORK/trap" "features_import=storage16:1 fp16:0" "and the shim still answers once, with 16-bit storage kept"
grep_in "$WORK/trap" "create_hidden_ext=-7 gipa:-7" "the gate on the real driver, both ways in"
test_done
