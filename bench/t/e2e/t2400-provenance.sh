#!/bin/bash
# Every output says who and what was measured: the provenance section of
# report md, json and html and of a bundle's README, from the stored
# fingerprints and runs; measurement dates from the runs themselves; a
# tampered session, a session's warnings and runs excluded for unverified
# injection are never left out.
. "$(dirname "$0")/lib.sh"

SB() { "$SHIMBENCH" --db "$DB" "$@"; }
need_shared "provenance of the published evidence" || { test_done; exit $?; }
E1=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
E2=$EVIDENCE/cua-lume-2026-08-10-m1-ultra-gemma4
DB=$WORK/p.db
expect_code 0 "import the published evidence" SB import \
	--mapping "$E1/mapping.json" --mapping "$E2/mapping.json" "$E1" "$E2"
today=$(date -u +%Y-%m-%d)

# ---- md ---------------------------------------------------------------------
expect_code 0 "report md" SB report
cp "$WORK/out" "$WORK/r80.md"
# On a terminal the tables fit 160 columns: the targets' nine fields of up
# to 71 characters each become one list item per target; --wide keeps the
# tables whole (checked cell by cell below).
check "no line of a default report's table is wider than 160" python3 -c "
w = max(len(l) for l in open('$WORK/r80.md').read().split('\n') if l.startswith('|'))
assert w <= 160, w"
grep_in "$WORK/r80.md" "- **Target**: host" "the host as a list item"
grep_in "$WORK/r80.md" "  - Hardware: Mac13,2 · Apple M1 Ultra · 20 cores · 128 GiB" "its hardware, one line"
grep_in "$WORK/r80.md" "  - Shim SHA-256: 515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31" "the guest's shim hash"
expect_code 0 "report md --wide" SB report --wide
cp "$WORK/out" "$WORK/r.md"
grep_in "$WORK/r.md" "## Provenance: who and what was measured" "md has a provenance section"
grep_in "$WORK/r.md" "|       1 | cua-lume 2026-08-09 M1 Ultra: TinyLlama 1.1B Q4_K_M   | ok     | no " \
	"session 1 with label, status, not tampered"
grep_in "$WORK/r.md" "2026-08-09T18:13:03Z – 2026-08-09T19:41:47Z (2 of 6 runs without a date)" \
	"session 1 dated by its runs (the MLX-LM runs carry no date)"
grep_in "$WORK/r.md" "2026-08-10T12:47:31Z – 2026-08-10T12:56:53Z" "session 2 dated by its runs"
grep_in "$WORK/r.md" "Measured 2026-08-09T18:13:03Z – 2026-08-10T12:56:53Z (UTC, the dates of the runs themselves)" \
	"the whole measurement period"
grep_in "$WORK/r.md" "| $today" "the import date is shown apart, as stored"
grep_in "$WORK/r.md" "| host   | 1, 2     | Mac13,2 · Apple M1 Ultra · 20 cores · 128 GiB" "host hardware, both sessions"
grep_in "$WORK/r.md" "VirtualMac2,1 (VM) · Apple M1 Ultra (Virtual) · 8 cores · 16 GiB" "guest hardware"
grep_in "$WORK/r.md" "macOS 26.6.1 (build 25G76)" "host OS version and build"
grep_in "$WORK/r.md" "macOS 26.5.2 (build 25F84)" "guest OS version and build"
grep_in "$WORK/r.md" "image ghcr.io/trycua/macos-tahoe-cua:latest · lume 0.5.1 · SIP disabled" "VM image, lume, SIP"
grep_in "$WORK/r.md" "| b10167 (ee3d1b54c) | 28faa552714d0d8150b1daa4e991181d62084c88e25afe9d49d08351794f0da7 | 515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31 |" \
	"llama.cpp build, llama-bench and shim SHA-256 of the guest"
grep_in "$WORK/r.md" "| TinyLlama 1.1B Q4_K_M      | llama.cpp | tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf | 9fecc3b3cd76bba89d504f29b616eedf7da85b96540e490ca5824d3f7d2776a0 | 1 " \
	"TinyLlama file and SHA-256"
grep_in "$WORK/r.md" "93567e57a8fe10b23569b9d9ec38cd005deedf71e29477c421a4b83f418a538b" "Gemma SHA-256"
grep_in "$WORK/r.md" "| Llama-3.2-3B-Instruct-4bit | MLX-LM    | not recorded" "an MLX-LM model without a hash says so"
grep_in "$WORK/r.md" "- **Warning:** session 2: '" "session 2's import warning is shown"
check "no tampered warning for untampered evidence" sh -c "! grep -q TAMPERED '$WORK/r.md'"

# A selection narrows the provenance to what the numbers stand on.
expect_code 0 "report of session 2 only" SB report --wide --select session=2
check "provenance of session 2 names no session 1" sh -c "! grep -q 'TinyLlama 1.1B Q4_K_M' '$WORK/out' && ! grep -q '| 1, 2 ' '$WORK/out'"
grep_in "$WORK/out" "| host   | 2        |" "host of session 2 only"

# ---- json --------------------------------------------------------------------
expect_code 0 "report json" SB report --format json -o "$WORK/r.json"
check "json provenance: sessions, dates, fingerprints, hashes" python3 - "$WORK/r.json" "$today" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["provenance"]
assert [s["id"] for s in p["sessions"]] == [1, 2], p["sessions"]
s1 = p["sessions"][0]
assert s1["status"] == "ok" and s1["tampered"] is False
# where the evidence came from on this machine (kind, path) is not
# provenance: an export imported elsewhere must give the same report
assert "kind" not in s1 and "source" not in s1
assert s1["measured_from"] == "2026-08-09T18:13:03Z" and s1["measured_to"] == "2026-08-09T19:41:47Z"
assert s1["started_at"].startswith(sys.argv[2]), s1["started_at"]
# the superseded broad-profile run shows MTLGPUFamilyApple21: a suspect
# profile, so unverified and excluded
assert s1["runs"] == 6 and s1["undated_runs"] == 2 and s1["excluded_runs"] == 1
assert p["measured_from"] == "2026-08-09T18:13:03Z" and p["measured_to"] == "2026-08-10T12:56:53Z"
envs = {(e["session"], e["target"]): e for e in p["environments"]}
assert set(envs) == {(1, "host"), (1, "guest"), (2, "host"), (2, "guest")}
g = envs[(1, "guest")]
assert g["fingerprint"]["os_build"] == "25F84" and g["fingerprint"]["is_vm"] == 1
assert g["shim_sha256"] == "515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31"
assert envs[(1, "host")]["shim_sha256"] is None
assert envs[(2, "host")]["llama_bench_sha256"] == "28faa552714d0d8150b1daa4e991181d62084c88e25afe9d49d08351794f0da7"
m = {x["name"]: x for x in p["models"]}
assert m["tinyllama-1.1b-q4_k_m"]["sha256"] == "9fecc3b3cd76bba89d504f29b616eedf7da85b96540e490ca5824d3f7d2776a0"
assert m["gemma-4-12b-q4_0"]["sessions"] == [2]
assert m["llama-3.2-3b-instruct-4bit"]["runtime"] == "mlx-lm" and m["llama-3.2-3b-instruct-4bit"]["sha256"] is None
assert len(p["warnings"]) == 2, p["warnings"]
assert p["warnings"][0] == "session 1: 1 run excluded: injection not verified", p["warnings"]
assert p["warnings"][1].startswith("session 2: "), p["warnings"]
assert d["workloads"], "the tables are still there"
PY

# ---- html --------------------------------------------------------------------
expect_code 0 "report html" SB report --format html -o "$WORK/r.html"
grep_in "$WORK/r.html" '<section class="provenance" id="provenance">' "html has a provenance section"
grep_in "$WORK/r.html" "<td>macOS 26.5.2 (build 25F84)</td>" "html names the guest OS build"
check "html: the warnings come before the first table" python3 -c "
t = open('$WORK/r.html').read()
assert t.index('id=\"warnings\"') < t.index('<table>')"

# ---- tampered, warned, not ok, excluded: never silent ----------------------------
T=$WORK/tampered
cp -r "$E1" "$T"; chmod -R u+w "$T"
python3 - "$T/tiny-stock-minimal.json" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read())
i = b.index(b'431'); b[i + 2] ^= 0x01
open(p, 'wb').write(bytes(b))
PY
DB=$WORK/t.db
expect_code 0 "--allow-tampered imports" SB import --allow-tampered --mapping "$E1/mapping.json" "$T"
# A tampered session counts only when the selection includes it (issue 11
# §3: this test used to report it by default); then every output says so.
expect_code 3 "a tampered session is left out by default" SB report
grep_in "$WORK/err" "session 1 (imported as tampered)" "and says why"
for f in md json html; do
	expect_code 0 "report $f of a tampered session" SB report --select include=tampered --format $f -o "$WORK/t.$f"
	grep_in "$WORK/t.$f" "session 1: TAMPERED: imported although its files failed their checksums" \
		"$f says the session is tampered"
	grep_in "$WORK/t.$f" "imported because of --allow-tampered" "$f shows the session's own warning"
done
grep_in "$WORK/t.md" "  - Tampered: YES: not verified evidence" "md sessions list flags it"
expect_code 0 "report csv of a tampered session" SB report --select include=tampered --format csv
grep_in "$WORK/err" "warning: session 1: TAMPERED" "csv has no room for it: the warning goes to stderr"
check "json: tampered true" python3 -c "
import json; p = json.load(open('$WORK/t.json'))['provenance']
assert p['sessions'][0]['tampered'] is True and any('TAMPERED' in w for w in p['warnings'])"

# A run expecting the shim's marker that lacks it is excluded and said so.
RAW=$WORK/raw
mkdir -p "$RAW"
cp "$FIXTURES/llama-bench/gen2026-evidence.json" "$RAW/stock.json"
sed 's/"avg_ts": \([0-9]*\)\./"avg_ts": 1\1./' "$FIXTURES/llama-bench/gen2026-evidence.json" >"$RAW/shim.json"
cp "$FIXTURES/shim-refusal.stderr" "$RAW/shim.stderr"
(cd "$RAW" && sha256sum stock.json shim.json shim.stderr >SHA256SUMS)
cat >"$WORK/map.json" <<'JSON'
{"shimbench_mapping": 1, "label": "refused shim",
 "environments": {"guest": {"os_name": "macOS", "os_version": "26.5.2", "os_build": "25F84"}},
 "runs": [
  {"stdout": "stock.json", "target": "guest", "variant": "stock", "role": "stock", "model": "m"},
  {"stdout": "shim.json", "stderr": "shim.stderr", "target": "guest", "variant": "shim",
   "role": "shim", "model": "m", "expect": ["[LumeMetalCapabilities] Enabled for"]}]}
JSON
DB=$WORK/u.db
SB import --mapping "$WORK/map.json" "$RAW" >"$WORK/out" 2>"$WORK/err"
expect_code 0 "report md with an unverified run" SB report --wide
grep_in "$WORK/out" "- **Warning:** session 1: 1 run excluded: injection not verified" "excluded run named in the provenance"
grep_in "$WORK/out" "|    2 |        1 |" "runs and excluded counted"
grep_in "$WORK/out" "| guest  | 1        | not recorded | not recorded | macOS 26.5.2 (build 25F84) | –       | ee3d1b54c (from llama-bench output) | not recorded        | not recorded |" \
	"a shim ran without a recorded hash: 'not recorded', never a dash; the build from llama-bench's own output"

# ---- a bundle's README -------------------------------------------------------------
DB=$WORK/p.db
expect_code 0 "export session 1" SB export 1 "$WORK/b1"
grep_in "$WORK/b1/README.md" "## Provenance: who and what was measured" "bundle README has the provenance"
grep_in "$WORK/b1/README.md" "2026-08-09T18:13:03Z – 2026-08-09T19:41:47Z" "with the measurement dates"
# Imported again, the session keeps its measurement dates.
DB=$WORK/p2.db
expect_code 0 "import the exported bundle" SB import "$WORK/b1"
expect_code 0 "report of the re-imported bundle" SB report
grep_in "$WORK/out" "2026-08-09T18:13:03Z – 2026-08-09T19:41:47Z (2 of 6 runs without a date)" \
	"an imported bundle keeps its runs' dates"
test_done
