#!/bin/bash
# sessions --show N: per run its status, verification and detail, and the
# capability facts stored from its stderr; the broad profile's run of the
# published evidence is shown unverified as a suspect profile.
. "$(dirname "$0")/lib.sh"
need_shared "sessions --show over the published evidence" || { test_done; exit $?; }

DB=$WORK/s.db
E1=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
E2=$EVIDENCE/cua-lume-2026-08-10-m1-ultra-gemma4
expect_code 0 "import the TinyLlama set" "$SHIMBENCH" --db "$DB" import --mapping "$E1/mapping.json" "$E1"
grep_in "$WORK/out" "some runs unverified" "the import says a run is unverified"
expect_code 0 "import the Gemma set" "$SHIMBENCH" --db "$DB" import --mapping "$E2/mapping.json" "$E2"

expect_code 0 "sessions --show 1 (a terminal: fits 160 columns)" "$SHIMBENCH" --db "$DB" sessions --show 1
check "no line of a table wider than 160; runs as list items" python3 -c "
t = open('$WORK/out').read().split('\n')
assert max([len(l) for l in t if l.startswith('|')] or [0]) <= 160
assert sum(1 for l in t if l.startswith('- **run**: ')) == 6, t"
expect_code 0 "sessions --show 1 --wide" "$SHIMBENCH" --db "$DB" sessions --show 1 --wide
grep_in "$WORK/out" "session 1: import, ok, cua-lume 2026-08-09 M1 Ultra" "a heading names the session"
row() { grep -E "^\| +$1 \|" "$WORK/out"; }
case $(row 3) in
*"| shim "*"| verified "*"found '[LumeMetalCapabilities] Enabled for'"*"MTLGPUFamilyApple9; simdgroup reduction yes"*"shim enabled for llama-bench (appleFamilyMax=1009)"*)
	ok "the shim run: verified, with its markers and facts" ;;
*) not_ok "shim row: $(row 3)" ;;
esac
case $(row 4) in
*"| unverified "*"suspect profile: MTLGPUFamilyApple21 is beyond any Apple GPU (highest: Apple10)"*"SUSPECT PROFILE"*)
	ok "the broad profile's run: unverified, a suspect profile" ;;
*) not_ok "hooked row: $(row 4)" ;;
esac
case $(row 2) in
*"| not-required "*"Apple Paravirtual device (paravirtual); MTLGPUFamilyApple5; simdgroup reduction no"*"no shim marker"*)
	ok "the stock run: the paravirtual device's Apple5" ;;
*) not_ok "stock row: $(row 2)" ;;
esac
case $(row 1) in
*"| not-required "*"metal; Apple M1 Ultra; MTLGPUFamilyApple7"*) ok "the host run: bare metal, Apple7" ;;
*) not_ok "host row: $(row 1)" ;;
esac
case $(row 5) in
*"(no stderr recorded)"*) ok "an MLX-LM run without stderr says so" ;;
*) not_ok "mlx row: $(row 5)" ;;
esac

expect_code 0 "sessions --show latest --format json" "$SHIMBENCH" --db "$DB" sessions --show latest --format json
check "json: the Gemma session's runs with their facts whole" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["session"] == 2 and d["kind"] == "import", d
runs = {r["variant"]: r for r in d["runs"]}
shim = runs["shim"]
assert shim["verification"] == "verified", shim
c = shim["capabilities"]
assert c["gpu_family"] == "MTLGPUFamilyApple9" and c["shim_marker"] is True, c
assert c["shim"]["appleFamilyMax"] == 1009 and c["metal"]["apple_family"] == 1009, c
assert runs["bare-metal"]["capabilities"]["devices"] == ["Apple M1 Ultra"]
' "$WORK/out"
expect_code 0 "sessions --show latest~1 --format csv" "$SHIMBENCH" --db "$DB" sessions --show latest~1 --format csv
check "csv: a header and six runs" sh -c "head -1 '$WORK/out' | grep -qx 'run,variant,role,target,model,status,verification,detail,capabilities' && [ \$(wc -l <'$WORK/out') = 7 ]"

# No such session: exit 3 (nothing matched) and the same words in every
# command (issue 22 §6; --show was exit 2, export exit 3).
expect_code 3 "--show of a session that does not exist" "$SHIMBENCH" --db "$DB" sessions --show 9
grep_in "$WORK/err" "the store has no session 9" "names it"
expect_code 3 "--show latest~9 of a store of fewer sessions" "$SHIMBENCH" --db "$DB" sessions --show latest~9
grep_in "$WORK/err" "the store has no session 'latest~9'" "names it"
expect_code 3 "export of a session that does not exist" "$SHIMBENCH" --db "$DB" export 9 "$WORK/x9"
grep_in "$WORK/err" "the store has no session 9" "in the same words"
check "and writes no bundle" test ! -e "$WORK/x9"
expect_code 3 "sessions rm of a session that does not exist" "$SHIMBENCH" --db "$DB" sessions rm 9
grep_in "$WORK/err" "the store has no session 9" "in the same words"
expect_code 3 "report of a session that does not exist" "$SHIMBENCH" --db "$DB" report --select session=9
expect_code 3 "compare with a session that does not exist" "$SHIMBENCH" --db "$DB" compare session=9 session=1
expect_code 3 "history of a session that does not exist" "$SHIMBENCH" --db "$DB" history --select session=9
expect_code 2 "--show of a non-number" "$SHIMBENCH" --db "$DB" sessions --show two
expect_code 2 "--show with --last" "$SHIMBENCH" --db "$DB" sessions --show 1 --last
expect_code 0 "the list is unchanged without --show" "$SHIMBENCH" --db "$DB" sessions --format csv
check "two sessions listed" sh -c "[ \$(wc -l <'$WORK/out') = 3 ]"
test_done
