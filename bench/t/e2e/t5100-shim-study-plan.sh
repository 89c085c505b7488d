#!/bin/bash
# bench/plans/shim-study.json verifies shim runs of the published dylib
# and probe as Cua's guide installs them, and of ours. The plan runs as
# shipped, with only what cannot exist here replaced: the model (a
# synthetic one), the llama-bench of each target, the injected library
# (a test library with its own hash) and the probe program (the argument
# stays). The guest is reached through the lume test double. Each
# target's llama-bench is the real one behind a wrapper that adds a
# recorded stderr: the published evidence's (the shim run's when the
# injected library reached the process, the stock run's when it did
# not); the probe replays a recorded probe output in the same way
# (bench/t/fixtures/metal-probe: ours recorded, the published probe's
# written from its documented output). The variants' expect and probe
# expectations are the plan's own, unchanged.
. "$(dirname "$0")/lib.sh"
need_shared "shim study plan" || { test_done; exit $?; }

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "shim study plan: the real llama-bench is not provisioned"
	test_done; exit $?
fi
PLAN=$TOP/bench/plans/shim-study.json
E=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
PF=$FIXTURES/metal-probe
LIB=$T_BUILD/t/helpers/libmarker.so
LIBSHA=$(sha256sum "$LIB" | cut -d' ' -f1)
MODEL=$WORK/tiny.gguf
expect_code 0 "synthesize a model" "$SHIMBENCH" models synth tiny -o "$MODEL"
export PATH="$FIXTURES/doubles:$PATH" FAKE_LUME_VMS=macos-tahoe

# wrapper NAME SHIM_STDERR STOCK_STDERR: a llama-bench for one target.
# "Injected" means the plan's library reached the process (LD_PRELOAD on
# this Linux guest); $WORK/prune makes it never arrive, as SIP would.
wrapper() {
	cat >"$WORK/$1" <<SH
#!/bin/sh
if [ ! -e '$WORK/prune' ] && case "\${LD_PRELOAD:-}" in *libmarker.so*) true ;; *) false ;; esac; then
	cat '$2' >&2
else
	cat '$3' >&2
fi
unset LD_PRELOAD
exec '$LB' "\$@"
SH
	chmod +x "$WORK/$1"
}
wrapper lb-host "$E/tiny-host-minimal.stderr" "$E/tiny-host-minimal.stderr"
# probe SHIM_OUTPUT STOCK_OUTPUT: the guest's metal-capabilities.
probe_as() {
	cat >"$WORK/metal-capabilities" <<SH
#!/bin/sh
[ "\${1:-}" = 1009 ] || { echo "invalid family: \${1:-}" >&2; exit 2; }
if [ ! -e '$WORK/prune' ] && case "\${LD_PRELOAD:-}" in *libmarker.so*) true ;; *) false ;; esac; then
	exec cat '$1'
fi
exec cat '$2'
SH
	chmod +x "$WORK/metal-capabilities"
}

# The shipped plan with the replacements above; processes, when given,
# replaces the plan's count (the shortest runs for the negative cases).
plan_for() {
	python3 - "$PLAN" "$MODEL" "$WORK" "$LIB" "$LIBSHA" "${1:-}" >"$WORK/plan.json" <<'PY'
import json, sys
plan, model, work, lib, libsha, procs = sys.argv[1:]
p = json.load(open(plan))
p["models"] = [{"name": "tiny", "path": model}]
p["targets"]["host"]["llama_bench"] = work + "/lb-host"
p["targets"]["guest"]["llama_bench"] = work + "/lb-guest"
p["llama_bench"]["args"] = ["-p", "32", "-n", "8", "-r", "2", "-t", "2"]
if procs:
    p["processes"] = int(procs)
for v in p["variants"]:
    if "inject" in v:
        v["inject"]["library"] = lib
        v["inject"]["sha256"] = libsha
    if "probe" in v:
        v["probe"]["argv"][0] = work + "/metal-capabilities"
json.dump(p, sys.stdout)
PY
}
check "the shipped plan runs the probe in the published form (metal-capabilities 1009)" python3 -c '
import json, sys
v = [v for v in json.load(open(sys.argv[1]))["variants"] if v["role"] == "shim"][0]
assert v["probe"]["argv"][1:] == ["1009"], v["probe"]["argv"]
assert "shim.status" not in v["probe"]["expect"], v["probe"]["expect"]
' "$PLAN"

q() { sqlite3 "$DB" "$1"; }
shim_runs() { q "select verification from runs where variant='shim' and session_id=(select max(id) from sessions) group by verification"; }

# 1. The published dylib's run (the evidence stderr) and the published
#    probe's answer: every shim run verified, the whole plan as shipped.
DB=$WORK/s.db
wrapper lb-guest "$E/tiny-safe-shim-10x-final.stderr" "$E/tiny-stock-minimal.stderr"
probe_as "$PF/cua-shim-1009.txt" "$PF/cua-stock-1009.txt"
plan_for
expect_code 0 "the plan with the published dylib and probe" \
	"$SHIMBENCH" --db "$DB" run --bundle "$WORK/b1" "$WORK/plan.json"
grep_in "$WORK/err" "variant shim: probe ok: probe: family = 1009, supports_family = true" "the published probe's answer passes"
[ "$(q "select count(*) from runs where variant='shim' and verification='verified'")" = 3 ] &&
	ok "3 shim runs verified" || not_ok "shim runs: $(q "select verification, verification_detail from runs where variant='shim'")"
[ "$(q "select count(*) from runs where variant!='shim' and verification='not-required'")" = 6 ] &&
	ok "bare-metal and stock runs need no verification" || not_ok "others: $(q 'select variant, verification from runs')"
case $(q "select capabilities_json from runs where variant='shim' limit 1") in
*'"gpu_family":"MTLGPUFamilyApple9"'*'"shim_marker":true'*'"probe":{"device":"Apple Paravirtual device","family":1009,"supports_family":true'*)
	ok "the run's capability facts hold the family, the marker and the probe" ;;
*) not_ok "capabilities: $(q "select capabilities_json from runs where variant='shim' limit 1")" ;;
esac
expect_code 0 "sessions --show lists the verified runs" "$SHIMBENCH" --db "$DB" sessions --show 1
grep_in "$WORK/out" "verified" "--show says verified"

# 2. Our probe, both forms, with the same plan.
for rec in ours-shim-1009.txt ours-shim-1009.json; do
	probe_as "$PF/$rec" "$PF/ours-stock-1009.txt"
	plan_for 1
	expect_code 0 "the plan with our probe ($rec)" \
		"$SHIMBENCH" --db "$DB" run --bundle "$WORK/b-$rec" "$WORK/plan.json"
	[ "$(shim_runs)" = verified ] && ok "shim run verified with $rec" ||
		not_ok "$rec: $(q "select verification_detail from runs where variant='shim' order by id desc limit 1")"
done

# 3. The injection pruned (SIP, hardened runtime): neither the marker
#    nor the probe's answer arrives; never a shim result.
touch "$WORK/prune"
probe_as "$PF/cua-shim-1009.txt" "$PF/cua-stock-1009.txt"
plan_for 1
expect_code 1 "a pruned injection fails the session" \
	"$SHIMBENCH" --db "$DB" run --bundle "$WORK/b3" "$WORK/plan.json"
[ "$(shim_runs)" = unverified ] && ok "shim run unverified" || not_ok "pruned: $(shim_runs)"
detail=$(q "select verification_detail from runs where variant='shim' order by id desc limit 1")
case $detail in
*"missing markers"*"supports_family is false, expected true"*) ok "the detail names the markers and the probe's answer" ;;
*) not_ok "detail: $detail" ;;
esac
rm -f "$WORK/prune"

# 4. The superseded broad profile: marker and probe answer are there,
#    but llama.cpp saw MTLGPUFamilyApple21.
wrapper lb-guest "$E/tiny-hooked-minimal.stderr" "$E/tiny-stock-minimal.stderr"
plan_for 1
expect_code 1 "a suspect profile fails the session" \
	"$SHIMBENCH" --db "$DB" run --bundle "$WORK/b4" "$WORK/plan.json"
[ "$(shim_runs)" = unverified ] && ok "broad-profile run unverified" || not_ok "broad: $(shim_runs)"
detail=$(q "select verification_detail from runs where variant='shim' order by id desc limit 1")
case $detail in
"suspect profile: MTLGPUFamilyApple21 is beyond any Apple GPU (highest: Apple10)"*) ok "the detail says why: a suspect profile" ;;
*) not_ok "detail: $detail" ;;
esac
test_done
