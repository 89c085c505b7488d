#!/bin/bash
# shimbench inspect: every real output understood, garbage named (exit 2),
# --json for scripts, nothing stored, hostile files handled.
. "$(dirname "$0")/lib.sh"

REAL=$FIXTURES/real
LB=$FIXTURES/llama-bench
export SHIMBENCH_DB=$WORK/never.db

files=$(ls "$REAL" | grep -v -e '\.expect\.json$' -e '^README.md$' -e '^SOURCES.tsv$')
n=$(echo "$files" | wc -l)
(cd "$REAL" && expect_code 0 "inspect understands all $n corpus files" "$SHIMBENCH" inspect $files)
[ "$(grep -c '^[^ ].*: llama' "$WORK/out")" -eq "$n" ] && ok "one report per file" ||
	not_ok "reports: $(grep -c '^[^ ].*: llama' "$WORK/out") of $n"
[ ! -e "$WORK/never.db" ] && ok "inspect stores nothing (no store created)" || not_ok "a store was created"

expect_code 0 "inspect a table" "$SHIMBENCH" inspect "$REAL/ik-disc399-gtx1650-ik-and-mainline.txt"
grep_in "$WORK/out" "llama-bench -o md output among other lines, complete" "format and completeness"
grep_in "$WORK/out" "rows: 20 in 3 blocks; 6 configurations" "rows and configurations"
grep_in "$WORK/out" "from the table only (avg ± stddev as printed; no samples)" "spread source said"
grep_in "$WORK/out" "cuda.devices[0].compute_capability = 75" "capability facts from the log lines"
grep_in "$WORK/out" "ignored: 3 lines: shell prompt or command line" "ignored lines and why"
grep_in "$WORK/out" "fields no llama-bench version has (kept, not read): amb, fmoe" "fork columns named"

expect_code 0 "inspect a crashed run" "$SHIMBENCH" inspect "$REAL/kyuz0-strix-rpc-rocm71-hsa-abort.log"
grep_in "$WORK/out" "INCOMPLETE" "a crash marks it incomplete"
expect_code 0 "inspect a Metal log" "$SHIMBENCH" inspect "$REAL/llamacpp-issue22800-m1max-metal-device-init.stderr"
grep_in "$WORK/out" "metal.apple_family = 1007" "Metal GPU family"
grep_in "$WORK/out" "shim marker: none" "shim marker reported"
expect_code 0 "inspect the shim marker" "$SHIMBENCH" inspect "$FIXTURES/shim-marker.stderr"
grep_in "$WORK/out" "shim marker: found" "shim marker found"

# garbage: exit 2, the file named, the others still reported
expect_code 2 "garbage is not llama-bench output" "$SHIMBENCH" inspect "$LB/garbage.txt" "$LB/gen-current.md"
grep_in "$WORK/err" "'$LB/garbage.txt': not llama-bench output" "the file is named"
grep_in "$WORK/out" "gen-current.md: llama-bench -o md output" "the good file still reported"

# --json
expect_code 2 "inspect --json" "$SHIMBENCH" inspect --json "$LB/gen-current.md" "$LB/gen2024.json" "$LB/garbage.txt"
check "json parses and says what it understood" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"]
assert d["files_not_understood"] == 1
assert f[0]["format"] == "md" and f[0]["complete"] and len(f[0]["rows"]) == 4
assert all(r["spread_source"] == "table" and r["n_samples"] == 0 and r["median_ts"] is None for r in f[0]["rows"])
assert f[0]["rows"][3]["test"] == "tg4 @ d16" and f[0]["rows"][0]["build_commit"] == "Debian"
assert f[1]["format"] == "json" and f[1]["rows"][0]["spread_source"] == "samples" and f[1]["rows"][0]["n_samples"] == 5
assert f[2]["understood"] is False and "not llama-bench output" in f[2]["error"]
' "$WORK/out"

# stdin, a FIFO, NUL bytes, terminal escapes
expect_code 0 "inspect - reads stdin" sh -c "'$SHIMBENCH' inspect - < '$LB/gen-current.csv'"
grep_in "$WORK/out" "llama-bench -o csv output, complete" "csv from stdin"
mkfifo "$WORK/fifo"
expect_code 2 "a FIFO is refused, not waited on" timeout 10 "$SHIMBENCH" inspect "$WORK/fifo"
grep_in "$WORK/err" "is not a regular file" "FIFO named"
printf '| model | test | t/s |\n| - | - | - |\n| \033]0;pwned\007m | pp512 | 1.00 \302\261 0.10 |\n' >"$WORK/esc.md"
expect_code 0 "a model name with terminal escapes" "$SHIMBENCH" inspect "$WORK/esc.md"
if grep -q "$(printf '\007')" "$WORK/out"; then not_ok "raw control bytes printed"; else ok "control bytes printed escaped"; fi
printf '| model | test | t/s |\n| - | - | - |\n| m\000x | pp512 | 1.00 \302\261 0.10 |\n' >"$WORK/nul.md"
expect_code 2 "a NUL byte inside a table row" "$SHIMBENCH" inspect "$WORK/nul.md"
grep_in "$WORK/err" "line 3: a NUL byte" "NUL byte's line named"
printf 'a,b\r\n' >"$WORK/crlf.txt"
expect_code 2 "CRLF text that is not output" "$SHIMBENCH" inspect "$WORK/crlf.txt"
test_done
