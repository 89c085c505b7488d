#!/bin/bash
# Our metal-capabilities probe takes the published probe's command line
# (`metal-capabilities 1009`) and prints its key=value lines by default,
# our JSON with --json. The probe's real main() runs in the GNU-runtime
# fake host (shim/t/fake-host --probe-main) with the real shim loaded; its
# output must equal the recordings in bench/t/fixtures/metal-probe, and
# the harness's probe check must read both forms.
. "$(dirname "$0")/lib.sh"

if [ "$(uname -s)" != Linux ]; then
	skip "probe forms: the fake host uses GNU libobjc (Linux)"
	test_done; exit $?
fi
if ! make -s -C "$TOP/shim" linux O="$T_BUILD/shim" >"$WORK/build" 2>&1; then
	not_ok "make -C shim linux"
	sed 's/^/# /' "$WORK/build" | tail -20
	test_done; exit $?
fi
host=$T_BUILD/shim/linux/fake-host
PF=$FIXTURES/metal-probe
probe() {
	# probe FAMILY_MAX|- ARGS...: the probe as a guest would run it
	local fm=$1
	shift
	if [ "$fm" = - ]; then
		env -u LUME_METAL_APPLE_FAMILY_MAX -u LUME_METAL_MAX_THREADGROUP_MEMORY \
			-u LUME_METAL_RECOMMENDED_WORKING_SET_SIZE "$host" --probe-main "$@"
	else
		env -u LUME_METAL_MAX_THREADGROUP_MEMORY -u LUME_METAL_RECOMMENDED_WORKING_SET_SIZE \
			LUME_METAL_APPLE_FAMILY_MAX="$fm" "$host" --probe-main "$@"
	fi
}

expect_code 0 "metal-capabilities 1009 (the published form)" probe 1009 1009
check "key=value output equals the recording" cmp "$WORK/out" "$PF/ours-shim-1009.txt"
check "its first four lines are the published probe's keys, in order" \
	sh -c "head -4 '$WORK/out' | cut -d= -f1 | tr '\n' ' ' | grep -qx 'device family supports_family max_threadgroup_memory '"
expect_code 0 "metal-capabilities --json 1009" probe 1009 --json 1009
check "JSON output equals the recording" cmp "$WORK/out" "$PF/ours-shim-1009.json"
check "the JSON parses, answering the asked family first" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d)[:3] == ["device", "family", "supports_family"], list(d)
assert d["family"] == 1009 and d["supports_family"] is True
assert d["shim"] == {"loaded": True, "status": "installed"}
' "$WORK/out"
expect_code 0 "without a configuration: stock answers" probe - 1009
check "stock output equals the recording" cmp "$WORK/out" "$PF/ours-stock-1009.txt"
expect_code 0 "no argument: key=value for family 1009" probe 1009
check "the default family is 1009" cmp "$WORK/out" "$PF/ours-shim-1009.txt"
expect_code 0 "--json alone: the JSON object of earlier versions" probe 1009 --json
check "without a family, no family keys" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "family" not in d and d["supportsFamily"]["1009"] is True
' "$WORK/out"
expect_code 0 "a family beyond the configured maximum" probe 1009 1010
grep_in "$WORK/out" "supports_family=false" "1010 is not claimed by a 1009 shim"
expect_code 2 "a malformed family is refused" probe 1009 1009x
grep_in "$WORK/err" "invalid family: 1009x" "as the published probe says it"
expect_code 2 "two families are refused" probe 1009 1009 1010
grep_in "$WORK/err" "unexpected argument '1010'" "names the extra argument"
expect_code 0 "--help" probe 1009 --help
grep_in "$WORK/out" "usage: metal-capabilities [--json] [FAMILY]" "prints the usage"

# The harness reads every recording with the expectations of the plan
# (bench/plans/shim-study.json) and of our JSON.
DB=$WORK/p.db
raw=$WORK/raw
mkdir -p "$raw"
cp "$FIXTURES/llama-bench/gen-current.jsonl" "$raw/a.jsonl"
sed 's/"avg_ts": *\([0-9]\)/"avg_ts": 1\1/' "$FIXTURES/llama-bench/gen-current.jsonl" >"$raw/b.jsonl"
sed 's/"avg_ts": *\([0-9]\)/"avg_ts": 2\1/' "$FIXTURES/llama-bench/gen-current.jsonl" >"$raw/c.jsonl"
cp "$PF/ours-shim-1009.txt" "$raw/kv.probe"
cp "$PF/ours-shim-1009.json" "$raw/json.probe"
cp "$PF/ours-stock-1009.txt" "$raw/stock.probe"
(cd "$raw" && sha256sum ./* >SHA256SUMS)
cat >"$WORK/mapping.json" <<'JSON'
{
  "shimbench_mapping": 1,
  "label": "probe forms",
  "runs": [
    { "stdout": "a.jsonl", "probe": "kv.probe", "variant": "kv", "role": "shim",
      "probe_expect": { "supports_family": true, "family": 1009, "shim_status": "installed" } },
    { "stdout": "b.jsonl", "probe": "json.probe", "variant": "json", "role": "shim",
      "probe_expect": { "supportsFamily.1009": true, "shim.status": "installed", "supports_family": true } },
    { "stdout": "c.jsonl", "probe": "stock.probe", "variant": "stock", "role": "shim",
      "probe_expect": { "supports_family": true } }
  ]
}
JSON
expect_code 0 "import the recordings as runs with probe expectations" \
	"$SHIMBENCH" --db "$DB" import --mapping "$WORK/mapping.json" "$raw"
q() { sqlite3 "$DB" "select $1 from runs where variant='$2'"; }
[ "$(q verification kv)" = verified ] && ok "key=value probe output verified" ||
	not_ok "kv: $(q verification kv) $(q verification_detail kv)"
[ "$(q verification json)" = verified ] && ok "JSON probe output verified by dotted paths and keys" ||
	not_ok "json: $(q verification json) $(q verification_detail json)"
[ "$(q verification stock)" = unverified ] && ok "stock probe output unverified" ||
	not_ok "stock: $(q verification stock)"
case $(q verification_detail stock) in
*"supports_family is false, expected true"*) ok "the detail says what the probe answered" ;;
*) not_ok "detail: $(q verification_detail stock)" ;;
esac
case $(q capabilities_json kv) in
*'"probe":{"device":"Apple Paravirtual device","family":1009,"supports_family":true'*) ok "the key=value output is stored typed" ;;
*) not_ok "capabilities: $(q capabilities_json kv)" ;;
esac
test_done
