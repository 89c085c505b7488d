#!/bin/bash
# The harness's injection verification recognises what the shim really
# prints. The shim library (GNU-runtime build) runs in a fake-device
# process named llama-bench; its stderr must equal the recorded fixtures
# bench/t/fixtures/shim-{marker,refusal}.stderr, and `shimbench import`
# of a run expecting the marker stores it verified with the good
# configuration and unverified with a malformed one.
. "$(dirname "$0")/lib.sh"

if [ "$(uname -s)" != Linux ]; then
	skip "shim marker: the recording host uses GNU libobjc (Linux)"
	test_done; exit $?
fi
if ! make -s -C "$TOP/shim" linux O="$T_BUILD/shim" >"$WORK/build" 2>&1; then
	not_ok "make -C shim linux"
	sed 's/^/# /' "$WORK/build" | tail -20
	test_done; exit $?
fi
host=$T_BUILD/shim/linux/fake-host
# run_as_llama_bench FAMILY THREADGROUP-LIMIT ARGS...
run_as_llama_bench() {
	env -u LUME_METAL_RECOMMENDED_WORKING_SET_SIZE \
		LUME_METAL_APPLE_FAMILY_MAX="$1" LUME_METAL_MAX_THREADGROUP_MEMORY="$2" \
		bash -c 'exec -a llama-bench "$0" "${@}"' "$host" "${@:3}"
}
run_as_llama_bench 1009 32768 >"$WORK/host.out" 2>"$WORK/shim.stderr"
check "fake host with the shim runs" grep -q 'apple family 1009, max threadgroup memory 32768' "$WORK/host.out"
check "shim stderr equals the recorded fixture" cmp "$WORK/shim.stderr" "$FIXTURES/shim-marker.stderr"
run_as_llama_bench 1009x '' >"$WORK/host2.out" 2>"$WORK/refused.stderr"
check "stock answers with a malformed configuration" grep -q 'apple family 1005, max threadgroup memory 32768' "$WORK/host2.out"
check "refusal stderr equals the recorded fixture" cmp "$WORK/refused.stderr" "$FIXTURES/shim-refusal.stderr"
run_as_llama_bench 1009 '' --probe >"$WORK/probe.json" 2>/dev/null
check "probe JSON parses and reports the shim installed" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["shim"] == {"loaded": True, "status": "installed"}, d["shim"]
assert d["highestFamily"]["apple"] == 1009 and d["highestFamily"]["metal"] is None
assert d["supportsFamily"]["5001"] is False and d["maxThreadgroupMemoryLength"] == 32768 and d["maxThreadgroupMemoryLimit"] is None
' "$WORK/probe.json"

# Import both recordings as runs of a shim variant that expects the
# marker; the llama-bench rows are a real JSONL fixture.
raw=$WORK/raw
mkdir -p "$raw"
# (two processes print two outputs: the same bytes twice would be
# refused as one process counted twice)
cp "$FIXTURES/llama-bench/gen-current.jsonl" "$raw/good.jsonl"
sed 's/"avg_ts": *\([0-9]\)/"avg_ts": 1\1/' "$FIXTURES/llama-bench/gen-current.jsonl" >"$raw/bad.jsonl"
cmp -s "$raw/good.jsonl" "$raw/bad.jsonl" && not_ok "bad.jsonl must differ from good.jsonl"
cp "$WORK/shim.stderr" "$raw/good.stderr"
cp "$WORK/refused.stderr" "$raw/bad.stderr"
(cd "$raw" && sha256sum good.jsonl bad.jsonl good.stderr bad.stderr >SHA256SUMS)
cat >"$WORK/mapping.json" <<'JSON'
{
  "shimbench_mapping": 1,
  "label": "shim marker e2e",
  "runs": [
    { "stdout": "good.jsonl", "stderr": "good.stderr", "variant": "shim",
      "role": "shim", "expect": ["[LumeMetalCapabilities] Enabled for"] },
    { "stdout": "bad.jsonl", "stderr": "bad.stderr", "variant": "shim-bad",
      "role": "shim", "expect": ["[LumeMetalCapabilities] Enabled for"] }
  ]
}
JSON
DB=$WORK/marker.db
expect_code 0 "import the recorded shim runs" \
	"$SHIMBENCH" --db "$DB" import --mapping "$WORK/mapping.json" "$raw"
grep_in "$WORK/out" "some runs unverified" "import reports the unverified run"
q() { sqlite3 "$DB" "select $1 from runs where variant='$2'"; }
[ "$(q verification shim)" = verified ] && ok "good configuration: run verified" ||
	not_ok "good configuration: verification '$(q verification shim)'"
[ "$(q verification shim-bad)" = unverified ] && ok "malformed configuration: run unverified" ||
	not_ok "malformed configuration: verification '$(q verification shim-bad)'"
caps=$(q capabilities_json shim)
case $caps in
*'"process":"llama-bench"'*'"appleFamilyMax":1009'*) ok "capabilities record the shim's process and family" ;;
*) not_ok "capabilities: $caps" ;;
esac
case $(q verification_detail shim-bad) in
*"missing marker"*) ok "unverified run says the marker is missing" ;;
*) not_ok "detail: $(q verification_detail shim-bad)" ;;
esac
test_done
