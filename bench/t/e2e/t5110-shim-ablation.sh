#!/bin/bash
# Capability ablation of the Metal shim's knobs (Apple family and
# threadgroup memory) through the test doubles: the study plan's shape
# (bare metal on the host, stock and shim in the guest through the lume
# double) with "ablate" lowering LUME_METAL_APPLE_FAMILY_MAX to 1006,
# 1007 and 1008 and LUME_METAL_MAX_THREADGROUP_MEMORY to 16384. Metal
# cannot run here, so the guest's llama-bench is the real one behind a
# wrapper that first runs shim/t/fake-host: the real Metal shim, built
# for the GNU Objective-C runtime, on a fake paravirtual device (the shim
# stays out of the process when the plan's library did not reach it, as
# with SIP). The wrapper prints the shim's own stderr, then ggml's Metal
# device lines of the published shim run with the family fake-host
# reports, and the flags ggml derives from it (ggml-metal-device.m:
# simdgroup reduction and matrix multiplication from Apple7, bfloat from
# Apple6); the probe is fake-host running the probe's own main.
. "$(dirname "$0")/lib.sh"
need_shared "Metal ablation" || { test_done; exit $?; }

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "Metal ablation: the real llama-bench is not provisioned"
	test_done; exit $?
fi
if [ "$(uname -s)" != Linux ]; then
	skip "Metal ablation: the doubles use GNU libobjc (Linux)"
	test_done; exit $?
fi
if ! make -s -C "$TOP/shim" linux O="$T_BUILD/shim" >"$WORK/make" 2>&1; then
	not_ok "make -C shim linux"
	sed 's/^/# /' "$WORK/make" | tail -10
	test_done; exit $?
fi
HOSTBIN=$T_BUILD/shim/linux/fake-host
E=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
LIB=$T_BUILD/t/helpers/libmarker.so
LIBSHA=$(sha256sum "$LIB" | cut -d' ' -f1)
MODEL=$WORK/tiny.gguf
expect_code 0 "synthesize a model" "$SHIMBENCH" models synth tiny -o "$MODEL"
export PATH="$FIXTURES/doubles:$PATH" FAKE_LUME_VMS=macos-tahoe

cat >"$WORK/lb-host" <<SH
#!/bin/sh
cat '$E/tiny-host-minimal.stderr' >&2
exec '$LB' "\$@"
SH
# "Injected" means the plan's library reached the process (LD_PRELOAD
# here); \$WORK/prune makes it never arrive, as SIP would: then the
# process is the published stock run.
cat >"$WORK/lb-guest" <<SH
#!/bin/bash
if [ -e '$WORK/prune' ] || case "\${LD_PRELOAD:-}" in *libmarker.so*) false ;; *) true ;; esac; then
	cat '$E/tiny-stock-minimal.stderr' >&2
	unset LD_PRELOAD
	exec '$LB' "\$@"
fi
unset LD_PRELOAD
out=\$(bash -c 'exec -a llama-bench "\$0"' '$HOSTBIN' 2>'$WORK/shim.err') || exit 3
cat '$WORK/shim.err' >&2
fam=\$(printf '%s\n' "\$out" | sed -n 's/^apple family \([0-9]*\),.*/\1/p')
[ -n "\$fam" ] || exit 3
n=\$((fam - 1000))
r=false; m=false; bf=false
[ "\$n" -ge 7 ] && r=true && m=true
[ "\$n" -ge 6 ] && bf=true
sed -e '/LumeMetalCapabilities/d' \
    -e "s/GPU family: MTLGPUFamilyApple9  (1009)/GPU family: MTLGPUFamilyApple\$n  (\$fam)/" \
    -e "s/simdgroup reduction   = true/simdgroup reduction   = \$r/" \
    -e "s/simdgroup matrix mul. = true/simdgroup matrix mul. = \$m/" \
    -e "s/has bfloat            = true/has bfloat            = \$bf/" \
    '$E/tiny-safe-shim-10x-final.stderr' >&2
exec '$LB' "\$@"
SH
cat >"$WORK/metal-capabilities" <<SH
#!/bin/sh
if [ -e '$WORK/prune' ] || case "\${LD_PRELOAD:-}" in *libmarker.so*) false ;; *) true ;; esac; then
	unset LUME_METAL_APPLE_FAMILY_MAX LUME_METAL_MAX_THREADGROUP_MEMORY
fi
unset LD_PRELOAD
exec '$HOSTBIN' --probe-main "\$@" 2>/dev/null
SH
chmod +x "$WORK/lb-host" "$WORK/lb-guest" "$WORK/metal-capabilities"

python3 - "$TOP/bench/plans/shim-study.json" "$MODEL" "$WORK" "$LIB" "$LIBSHA" >"$WORK/plan.json" <<'PY'
import json, sys
plan, model, work, lib, libsha = sys.argv[1:]
p = json.load(open(plan))
p["models"] = [{"name": "tiny", "path": model}]
p["targets"]["host"]["llama_bench"] = work + "/lb-host"
p["targets"]["guest"]["llama_bench"] = work + "/lb-guest"
p["llama_bench"]["args"] = ["-p", "16", "-n", "4", "-r", "2", "-t", "2"]
p["processes"] = 2
for v in p["variants"]:
    if "inject" in v:
        v["inject"]["library"] = lib
        v["inject"]["sha256"] = libsha
    if "probe" in v:
        v["probe"]["argv"][0] = work + "/metal-capabilities"
p["ablate"] = {"from": "shim", "shim": "metal", "family": [1006, 1007, 1008],
               "threadgroup_memory": [16384]}
json.dump(p, sys.stdout)
PY
DB=$WORK/m.db
expect_code 0 "the Metal ablation runs through the doubles" "$SHIMBENCH" --db "$DB" run --bundle "$WORK/b" "$WORK/plan.json"
q() { sqlite3 "$DB" "$1"; }
[ "$(q "select count(*) from runs where verification='verified'")" = 12 ] &&
	ok "the shim and its 5 ablation variants: 12 runs verified" ||
	not_ok "runs: $(q "select variant, verification, verification_detail from runs")"
for v in shim-family-1006 shim-family-1007 shim-family-1008 shim-tgmem-16384 shim-lowest; do
	[ "$(q "select count(*) from runs where variant='$v' and role='ablation' and verification='verified'")" = 2 ] &&
		ok "$v: 2 runs, verified" || not_ok "$v: $(q "select verification_detail from runs where variant='$v'")"
done
r() { ls "$WORK"/b/runs/*-"$1"-tiny.stderr | head -n 1; }
grep_in "$(r shim-family-1006)" "[LumeMetalCapabilities] Enabled for llama-bench (appleFamilyMax=1006)" "family 1006: the real shim's marker"
grep_in "$(r shim-family-1006)" "GPU family: MTLGPUFamilyApple6  (1006)" "family 1006: ggml's family follows"
grep_in "$(r shim-family-1006)" "simdgroup matrix mul. = false" "family 1006: no simdgroup matrix multiplication"
grep_in "$(r shim-family-1007)" "simdgroup matrix mul. = true" "family 1007: simdgroup matrix multiplication"
grep_in "$(r shim-tgmem-16384)" "(appleFamilyMax=1009 maxThreadgroupMemory=16384)" "the threadgroup limit in the marker"
grep_in "$(r shim-lowest)" "(appleFamilyMax=1006 maxThreadgroupMemory=16384)" "lowest: both at once"
grep_in "$WORK/b/runs/probe-shim-family-1006.out" "family=1006" "the probe asks about the lowered family"
grep_in "$WORK/b/runs/probe-shim-tgmem-16384.out" "max_threadgroup_memory_limit=16384" "the probe reads the limit"

expect_code 0 "report --ablation --format csv" "$SHIMBENCH" --db "$DB" report --ablation --format csv
python3 - "$DB" "$WORK/out" >"$WORK/calc" <<'PY'
import csv, sqlite3, statistics, sys
con = sqlite3.connect(sys.argv[1])
def median(variant, test):
    return statistics.median(r[0] for r in con.execute(
        "select s.ts from samples s join results res on res.id = s.result_id"
        " join runs r on r.id = res.run_id where r.variant = ? and res.test = ?",
        (variant, test)))
rows = list(csv.DictReader(open(sys.argv[2])))
want = {"shim": "nothing (shim)", "stock": "everything (stock)",
        "shim-family-1006": "appleFamilyMax=1006", "shim-family-1007": "appleFamilyMax=1007",
        "shim-family-1008": "appleFamilyMax=1008", "shim-tgmem-16384": "maxThreadgroupMemory=16384",
        "shim-lowest": "appleFamilyMax=1006 maxThreadgroupMemory=16384"}
facts = {"shim-family-1006": "metal: MTLGPUFamilyApple6, simdgroup reduction no, simdgroup matrix mul. no, bfloat yes",
         "shim-family-1007": "metal: MTLGPUFamilyApple7, simdgroup reduction yes, simdgroup matrix mul. yes",
         "shim-tgmem-16384": "metal: MTLGPUFamilyApple9, simdgroup reduction yes",
         "stock": "metal: MTLGPUFamilyApple5, simdgroup reduction no"}
print(("ok" if len(rows) == 14 else "not ok") + " 7 rows a test, 2 tests (%d)" % len(rows))
bad = 0
for r in rows:
    v = r["variant"]
    if r["taken_away"] != want.get(v):
        print("not ok %s: taken away %r" % (v, r["taken_away"])); bad += 1
    pct = 100 * median(v, r["test"]) / median("bare-metal", r["test"])
    if abs(float(r["percent_of_bare"]) - pct) > 0.01 or not float(r["percent_lo"]) <= pct <= float(r["percent_hi"]):
        print("not ok %s: %s %% (%s-%s), computed %.4f" % (v, r["percent_of_bare"], r["percent_lo"], r["percent_hi"], pct)); bad += 1
    if v in facts and not r["capabilities"].startswith(facts[v]):
        print("not ok %s: capabilities %r" % (v, r["capabilities"])); bad += 1
if not bad:
    print("ok every row: what its marker took away, % of bare from the stored samples, the family and flags ggml reported")
PY
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok }" ;;
	*) not_ok "${line#not ok }" ;;
	esac
done <"$WORK/calc"

# The injection pruned (as SIP does): no marker, so no ablation figure.
python3 - "$WORK/plan.json" >"$WORK/pruned.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["processes"] = 1
p["ablate"]["family"] = [1006]
del p["ablate"]["threadgroup_memory"]
json.dump(p, sys.stdout)
PY
touch "$WORK/prune"
expect_code 1 "a pruned injection fails the session" "$SHIMBENCH" --db "$WORK/p.db" run --bundle "$WORK/bp" "$WORK/pruned.json"
[ "$(sqlite3 "$WORK/p.db" "select verification from runs where variant='shim-family-1006'")" = unverified ] &&
	ok "the ablation run without the shim's marker is unverified" || not_ok "pruned ablation run verified"
grep_in "$WORK/err" "DYLD_INSERT_LIBRARIES pruned by SIP" "a Metal run's hint names SIP"
expect_code 3 "so there is no ablation figure" "$SHIMBENCH" --db "$WORK/p.db" report --ablation
test_done
