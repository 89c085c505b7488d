#!/bin/bash
# Capability ablation for real on lavapipe (Mesa's Vulkan on the CPU,
# provisioned by make lavapipe): bench/plans/vulkan-ablation.json through
# bench/scripts/vulkan-study.sh (the tiny synthetic model, short counts),
# run by `shimbench run` with the real llama-bench, ggml's Vulkan backend
# and the real shim. The mechanism, not the speed (lavapipe
# emulates cooperative matrices): every generated variant verified; each
# one's marker, ggml line and probe differ from the shim variant's in
# exactly what it hides; the ablation table present in every format and
# computed from the stored samples (checked here against the store, by a
# computation of its own); what each row took away read from its runs'
# markers; each variant's capability facts beside its speed.
. "$(dirname "$0")/lib.sh"

VK=$TOP/.llama/vulkan
LVP=$VK/prefix/usr/share/vulkan/icd.d/lvp_icd.json
if [ "$(uname -s)" != Linux ]; then
	skip "lavapipe ablation: Linux only"
	test_done; exit $?
fi
if [ ! -f "$LVP" ] || [ ! -x "$VK/bin/llama-bench" ]; then
	skip "lavapipe ablation: the Vulkan prefix with lavapipe is not provisioned (make lavapipe)"
	test_done; exit $?
fi
if ! make -s -C "$TOP/shim/vulkan" >"$WORK/make" 2>&1; then
	not_ok "make -C shim/vulkan"
	sed 's/^/# /' "$WORK/make" | tail -10
	test_done; exit $?
fi
SO=$TOP/build/shim/vulkan/libVulkanCapabilities.so
SHA=$(sha256sum "$SO" | cut -d' ' -f1)
export MESA_SHADER_CACHE_DIR=$TOP/build/mesa-shader-cache VK_DRIVER_FILES=$LVP
OUT=$WORK/abl
# The study script with the ablation plan, as on a GPU (a warm-up session
# of one process per variant first, kept apart).
expect_code 0 "vulkan-study.sh with the ablation plan on lavapipe" env SHIMBENCH="$SHIMBENCH" \
	VULKAN_STUDY_PLAN=bench/plans/vulkan-ablation.json VULKAN_STUDY_ARGS="-p 16 -n 4 -r 2" \
	VULKAN_STUDY_PROCESSES=2 sh "$TOP/bench/scripts/vulkan-study.sh" "$OUT"
DB=$OUT/study.db
B=$OUT/bundle
grep_in "$OUT/summary.md" "22 runs verified, 0 unverified." "summary: every run verified"
grep_in "$OUT/summary.md" "## Capability ablation: cost in % of bare" "summary: the ablation table"
check "the plan run is the shipped one, its ablate object untouched" python3 -c "
import json, sys
a, b = (json.load(open(f)) for f in ('$TOP/bench/plans/vulkan-ablation.json', '$OUT/plan.json'))
assert a['ablate'] == b['ablate'] and [v['name'] for v in a['variants']] == [v['name'] for v in b['variants']]"
q() { sqlite3 "$DB" "$1"; }
[ "$(q "select count(*) from runs where verification='verified'")" = 22 ] &&
	ok "22 runs (11 variants x 2), every one verified" ||
	not_ok "runs: $(q "select variant, verification from runs")"
[ "$(sqlite3 "$OUT/warmup.db" "select count(*) from runs")" = 11 ] &&
	ok "the warm-up: one process per variant, apart" || not_ok "warm-up runs"
[ "$(q "select count(distinct variant) from runs where role='ablation'")" = 8 ] &&
	ok "8 generated variants of role ablation (7 capabilities and all)" ||
	not_ok "ablation variants: $(q "select distinct variant from runs where role='ablation'")"
check "the session records the expanded plan, without ablate" sh -c \
	"sqlite3 '$DB' 'select plan_json from sessions' | grep -q shim-hide-fp16 &&
	 ! sqlite3 '$DB' 'select plan_json from sessions' | grep -q '\"ablate\"'"

# Each variant's reported capabilities differ from the shim's as asked:
# its marker, ggml's device line and the probe, read from the bundle.
python3 - "$B" >"$WORK/mech" <<'PY'
import glob, re, sys
b = sys.argv[1]
caps = ["coopmat", "coopmat2", "int-dot", "fp16", "bf16",
        "subgroup-size-control", "dot2"]
key = {c: c.replace("-", "_") for c in caps}
field = {"fp16": "fp16", "bf16": "bf16", "int-dot": "int dot"}
def stderr(v):
    return open(glob.glob("%s/runs/*-%s-synth-tiny.stderr" % (b, v))[0]).read()
def ggml(v):
    line = [l for l in stderr(v).splitlines() if l.startswith("ggml_vulkan: 0 = ")][0]
    return dict(p.strip().split(": ", 1) for p in line.split("|")[1:])
def probe(v):
    return dict(l.split("=", 1) for l in open("%s/runs/probe-%s.out" % (b, v)).read().splitlines() if "=" in l)
shim_g, shim_p = ggml("shim"), probe("shim")
for c in caps + ["all"]:
    v = "shim-hide-" + c
    hidden = caps if c == "all" else [c]
    ok = True
    want = "profile=hide hide=%s)" % ",".join(hidden)
    marks = [l for l in stderr(v).splitlines() if l.startswith("[VulkanCapabilities]")]
    if len(marks) != 1 or not marks[0].endswith(want):
        print("not ok %s: marker %r" % (v, marks)); ok = False
    g, p = ggml(v), probe(v)
    for h in hidden:
        if h in field and g[field[h]] != "0":
            print("not ok %s: ggml %s=%s" % (v, field[h], g[field[h]])); ok = False
        if p[key[h]] != "false":
            print("not ok %s: probe %s=%s" % (v, key[h], p[key[h]])); ok = False
    if "coopmat" in hidden and g["matrix cores"] != "none":
        print("not ok %s: matrix cores %s" % (v, g["matrix cores"])); ok = False
    # nothing else: the other fields and keys are the shim variant's
    for f in ["fp16", "bf16", "int dot", "matrix cores", "shared memory", "warp size"]:
        mine = [h for h in hidden if field.get(h) == f or (f == "matrix cores" and h == "coopmat")]
        if not mine and g[f] != shim_g[f]:
            print("not ok %s: ggml %s=%s, shim has %s" % (v, f, g[f], shim_g[f])); ok = False
    for h in caps:
        if h not in hidden and p[key[h]] != shim_p[key[h]]:
            print("not ok %s: probe %s=%s, shim has %s" % (v, key[h], p[key[h]], shim_p[key[h]])); ok = False
    gate = "VK_ERROR_EXTENSION_NOT_PRESENT" if "coopmat" in hidden else "VK_SUCCESS"
    if p["create_device"] != gate:
        print("not ok %s: create_device=%s" % (v, p["create_device"])); ok = False
    if ok:
        print("ok %s: hides exactly %s (marker, ggml's line, probe, gate)" % (v, c))
PY
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok }" ;;
	*) not_ok "${line#not ok }" ;;
	esac
done <"$WORK/mech"

# The table, in every format, computed from the stored samples.
expect_code 0 "report --ablation --format csv" "$SHIMBENCH" --db "$DB" report --ablation --format csv
cp "$WORK/out" "$WORK/abl.csv"
python3 - "$DB" "$WORK/abl.csv" "$B" >"$WORK/calc" <<'PY'
import csv, glob, re, sqlite3, statistics, sys
db, path, b = sys.argv[1:]
con = sqlite3.connect(db)
def median(variant, test):
    return statistics.median(r[0] for r in con.execute(
        "select s.ts from samples s join results res on res.id = s.result_id"
        " join runs r on r.id = res.run_id where r.variant = ? and res.test = ?",
        (variant, test)))
rows = list(csv.DictReader(open(path)))
tests = sorted({r["test"] for r in rows})
print(("ok" if tests == ["pp16", "tg4"] else "not ok") + " rows for both tests: %s" % tests)
n = {t: sum(r["test"] == t for r in rows) for t in tests}
print(("ok" if all(v == 10 for v in n.values()) else "not ok") +
      " 10 rows a test: shim, 7 capabilities, all, stock (%s)" % n)
bad = 0
for r in rows:
    v, t = r["variant"], r["test"]
    m, bare = median(v, t), median("bare", t)
    pct = 100 * m / bare
    lo, hi = float(r["percent_lo"]), float(r["percent_hi"])
    if abs(float(r["median_ts"]) - m) > 1e-3 * m or abs(float(r["percent_of_bare"]) - pct) > 0.01:
        print("not ok %s %s: %s %% of bare, computed %.4f" % (v, t, r["percent_of_bare"], pct)); bad += 1
    if not (lo <= float(r["percent_of_bare"]) <= hi and lo > 0):
        print("not ok %s %s: interval %s-%s" % (v, t, lo, hi)); bad += 1
    if abs(float(r["cost_percent"]) - (100 - pct)) > 0.01 or \
       abs(float(r["cost_lo"]) - (100 - hi)) > 0.01 or abs(float(r["cost_hi"]) - (100 - lo)) > 0.01:
        print("not ok %s %s: cost %s (%s-%s)" % (v, t, r["cost_percent"], r["cost_lo"], r["cost_hi"])); bad += 1
    # what was taken away: the run's own marker, as the stderr says
    err = open(glob.glob("%s/runs/*-%s-synth-tiny.stderr" % (b, v))[0]).read()
    mark = re.search(r"\[VulkanCapabilities\] Enabled for llama-bench \(profile=(\S+) hide=(\S+)\)", err)
    want = {"shim": "nothing (shim)", "stock": "everything (stock)"}.get(v, mark.group(2))
    if r["taken_away"] != want:
        print("not ok %s: taken away %r, its marker says %r" % (v, r["taken_away"], want)); bad += 1
    # the capability facts: ggml's own line of that run
    line = [l for l in err.splitlines() if l.startswith("ggml_vulkan: 0 = ")][0]
    g = dict(p.strip().split(": ", 1) for p in line.split("|")[1:])
    facts = "vulkan: fp16 %s, bf16 %s, int dot %s, matrix cores %s" % (g["fp16"], g["bf16"], g["int dot"], g["matrix cores"])
    if not r["capabilities"].startswith(facts):
        print("not ok %s: capabilities %r, ggml said %r" % (v, r["capabilities"], facts)); bad += 1
if not bad:
    print("ok every row: median, % of bare, its interval and cost from the stored samples; taken away from the marker; capabilities from ggml's line")
PY
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok }" ;;
	*) not_ok "${line#not ok }" ;;
	esac
done <"$WORK/calc"
expect_code 0 "report --ablation --format json" "$SHIMBENCH" --db "$DB" report --ablation --format json
check "the json table has the same 20 rows" python3 -c "
import json, sys; t = json.load(open('$WORK/out'))
assert len(t) == 20 and all(isinstance(r['percent_of_bare'], float) for r in t), t[:1]"
expect_code 0 "report --ablation (md, the terminal's)" "$SHIMBENCH" --db "$DB" report --ablation
grep_in "$WORK/out" "## Capability ablation: cost in % of bare" "md: the heading"
check "md: no table line wider than a terminal's 160 (issue 22)" python3 -c "
w = [len(l) for l in open('$WORK/out', encoding='utf-8').read().split('\n') if l.startswith('|')]
assert max(w or [0]) <= 160, max(w)"
# the table whole (issue 22: --wide), as a file or a wide terminal shows it
expect_code 0 "report --ablation --wide (md)" "$SHIMBENCH" --db "$DB" report --ablation --wide
grep_in "$WORK/out" "| Taken away" "md: the capability column"
grep -q "| fp16 .* | shim-hide-fp16 .* % (" "$WORK/out" && ok "md: fp16's row with its interval" ||
	not_ok "md: no fp16 row with an interval"
expect_code 0 "the whole report (md, every column)" "$SHIMBENCH" --db "$DB" report --wide
cp "$WORK/out" "$WORK/report.md"
grep_in "$WORK/report.md" "### Capability ablation: cost in % of bare" "the report holds the ablation table"
grep_in "$WORK/report.md" "### Capabilities each variant reported" "and each variant's capability facts"
grep -q "^| shim-hide-fp16 .*| ablation .*| pp16 [0-9.]*; tg4 [0-9.]* .*| vulkan: fp16 0, " "$WORK/report.md" &&
	ok "a variant's speed beside its capabilities" || not_ok "no speed beside capabilities"
# bare, stock and shim on one machine: no host or guest in the headline
grep -Eq '^\| Workload +\| Test +\| +Bare +\| +Stock +\| +Shim +\| +Shim ÷ stock +\|' "$WORK/report.md" &&
	ok "the headline says Bare, Stock, Shim" || not_ok "headline: $(grep -m1 '^| Workload' "$WORK/report.md")"
grep -q "Bare-metal host\|Stock guest\|Guest speedup" "$WORK/report.md" &&
	not_ok "host/guest wording for a run on one machine" || ok "no host/guest wording without a VM guest"
expect_code 0 "report --format html" "$SHIMBENCH" --db "$DB" report --format html -o "$WORK/r.html"
grep_in "$WORK/r.html" "<h2 id=\"ablation\">Capability ablation: cost in % of bare</h2>" "html: the ablation section"
grep_in "$WORK/r.html" "<h2>Capabilities each variant reported</h2>" "html: the capabilities"
grep -q "stock guest\|bare-metal host\|Guest speedup" "$WORK/r.html" &&
	not_ok "html: host/guest wording (tables or chart legends)" || ok "html: no host/guest wording"
expect_code 0 "report --format json" "$SHIMBENCH" --db "$DB" report --format json
check "json: the ablation rows and each cell's capabilities" python3 -c "
import json; r = json.load(open('$WORK/out'))
assert len(r['ablation']) == 20
w = r['workloads'][0]
assert w['shim']['capabilities'].startswith('vulkan: fp16 1'), w['shim']
assert w['shim']['shim_config'] == 'profile=shim hide=none', w['shim']"
expect_code 0 "report --ablation --format html" "$SHIMBENCH" --db "$DB" report --ablation --format html
grep_in "$WORK/out" "<table>" "html table alone"
expect_code 2 "report --ablation --format xml" "$SHIMBENCH" --db "$DB" report --ablation --format xml
check "bundle SHA256SUMS verifies" sh -c "cd '$B' && sha256sum -c --quiet SHA256SUMS"
expect_code 0 "the bundle imports into an empty store" "$SHIMBENCH" --db "$WORK/i.db" import "$B"
expect_code 0 "the imported store gives the same table" "$SHIMBENCH" --db "$WORK/i.db" report --ablation --format csv
cmp -s "$WORK/out" "$WORK/abl.csv" && ok "the same table from the import" || not_ok "the import's table differs"

# Without bare: no percentages, and the reason (a plan without it, one
# capability, no "all").
cd "$TOP"   # the plan's paths are the repository's
python3 - "$OUT/plan.json" >"$WORK/nobare.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["variants"] = [v for v in p["variants"] if v["name"] != "bare"]
p["ablate"]["hide"] = ["fp16"]
p["ablate"]["all"] = False
p["processes"] = 1
print(json.dumps(p))
PY
expect_code 0 "a plan without bare runs" "$SHIMBENCH" --db "$WORK/nobare.db" run "$WORK/nobare.json"
[ "$(sqlite3 "$WORK/nobare.db" "select group_concat(variant) from (select variant from runs order by variant)")" = "shim,shim-hide-fp16,stock" ] &&
	ok "one generated variant, no all" || not_ok "variants: $(sqlite3 "$WORK/nobare.db" "select variant from runs")"
expect_code 0 "its ablation table" "$SHIMBENCH" --db "$WORK/nobare.db" report --ablation --wide
grep_in "$WORK/out" "has no bare-metal run: no percentages" "says why there is no cost"
grep -q "| fp16 .*| shim-hide-fp16 .*| *– | *– |" "$WORK/out" && ok "and shows none" || not_ok "a cost without bare"
# A store without ablation runs.
expect_code 0 "a plain run" "$SHIMBENCH" --db "$WORK/plain.db" import "$TOP/bench/t/fixtures/os-update/base" --mapping "$TOP/bench/t/fixtures/os-update/base.mapping.json"
expect_code 3 "report --ablation without ablation runs" "$SHIMBENCH" --db "$WORK/plain.db" report --ablation
grep_in "$WORK/err" "no ablation runs in the selection" "says so"

# A bad ablate object: refused before anything runs, naming the key.
python3 - "$OUT/plan.json" >"$WORK/bad.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["ablate"]["hide"] = ["fp16", "16bit-storage"]
print(json.dumps(p))
PY
expect_code 2 "a plan that would hide 16-bit storage" "$SHIMBENCH" --db "$WORK/bad.db" run "$WORK/bad.json"
grep_in "$WORK/err" "'ablate.hide[1]' is '16bit-storage', which the shim never hides" "names the bad item"
[ ! -e "$WORK/bad.db" ] || [ "$(sqlite3 "$WORK/bad.db" 'select count(*) from sessions')" = 0 ] &&
	ok "nothing stored" || not_ok "a session was stored"
test_done
