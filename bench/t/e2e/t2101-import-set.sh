#!/bin/bash
# import --set: raw files without a mapping, paired by name, checked
# against SHA256SUMS (or marked unverified with --no-checksums); tables
# stored with their spread source.
. "$(dirname "$0")/lib.sh"

REAL=$FIXTURES/real
LB=$FIXTURES/llama-bench
DB=$WORK/set.db
q() { sqlite3 "$DB" "$1"; }
E=$WORK/ev
mkdir -p "$E"
cp "$LB/gen-current.md" "$E/stock.md"
cp "$REAL/kyuz0-halo-rocm724-qwen35-prefill.jsonl" "$E/prefill.jsonl"
cp "$REAL/kyuz0-halo-rocm724-qwen35-prefill.stderr" "$E/prefill.stderr"
cp "$LB/gen-current-2to1.txt" "$E/combined.log"
(cd "$E" && sha256sum stock.md prefill.jsonl prefill.stderr combined.log >SHA256SUMS)

expect_code 0 "import --set three outputs" "$SHIMBENCH" --db "$DB" import \
	--set target=guest,variant=stock,model=tiny "$E/stock.md" "$E/prefill.jsonl" "$E/combined.log"
grep_in "$WORK/out" "imported 3 files as session 1: 3 runs, 15 results" "three runs stored"
[ "$(q "select stderr_path from runs where stdout_path='prefill.jsonl'")" = prefill.stderr ] &&
	ok "X.jsonl paired with X.stderr found beside it" || not_ok "stderr not paired"
[ "$(q "select count(*) from runs where stdout_path='combined.log' and stderr_path is null")" = 1 ] &&
	ok "a lone X.log is an output captured with 2>&1" || not_ok "combined.log"
[ "$(q "select group_concat(distinct role||'/'||variant||'/'||target||'/'||model) from runs")" = stock/stock/guest/tiny ] &&
	ok "role defaults to the variant; the meaning of --set on every run" || not_ok "meaning: $(q 'select role, variant, target, model from runs')"
[ "$(q "select count(*) from results r join runs u on u.id=r.run_id where u.stdout_path='stock.md' and spread_source='table' and stddev_ts is not null")" = 4 ] &&
	ok "table rows: spread_source table, stddev_ts kept" || not_ok "table rows stored as $(q 'select spread_source, stddev_ts from results')"
[ "$(q "select count(*) from samples s join results r on r.id=s.result_id join runs u on u.id=r.run_id where u.stdout_path='stock.md'")" = 0 ] &&
	ok "no samples invented for table rows" || not_ok "samples for a table"
[ "$(q "select count(*) from results where spread_source='samples'")" = 11 ] &&
	ok "json rows: spread_source samples" || not_ok "samples rows"
[ "$(q "select capabilities_json like '%ROCm%' or capabilities_json like '%cuda%' from runs where stdout_path='prefill.jsonl'")" = 1 ] &&
	ok "stderr parsed for capability facts" || not_ok "caps: $(q "select capabilities_json from runs where stdout_path='prefill.jsonl'")"
[ "$(q "select warnings_json is null from sessions where id=1")" = 1 ] && ok "checked files: no provenance warning" || not_ok "warning on a verified import"
expect_code 0 "the same files again" "$SHIMBENCH" --db "$DB" import --set target=guest,variant=stock,model=tiny \
	"$E/stock.md" "$E/prefill.jsonl" "$E/combined.log"
grep_in "$WORK/out" "already imported as session 1; nothing stored" "re-import stores nothing"

# without SHA256SUMS: refused, then accepted with --no-checksums and marked
N=$WORK/nosums
mkdir -p "$N"
cp "$LB/gen-current.csv" "$N/run.csv"
DB2=$WORK/nosums.db
expect_code 2 "no SHA256SUMS: refused" "$SHIMBENCH" --db "$DB2" import --set target=guest,variant=shim "$N/run.csv"
grep_in "$WORK/err" "has no SHA256SUMS" "the reason named"
grep_in "$WORK/err" "--no-checksums" "the way out named"
[ "$(sqlite3 "$DB2" 'select count(*) from sessions' 2>/dev/null || echo 0)" = 0 ] && ok "nothing stored" || not_ok "stored without checksums"
expect_code 0 "--no-checksums imports" "$SHIMBENCH" --db "$DB2" import --set target=guest,variant=shim --no-checksums "$N/run.csv"
grep_in "$WORK/out" "provenance unverified" "said on import"
grep_in "$WORK/err" "imported without checksums: provenance unverified" "warned"
[ "$(sqlite3 "$DB2" "select warnings_json like '%imported without checksums: provenance unverified%' from sessions")" = 1 ] &&
	ok "the session records unverified provenance" || not_ok "no session warning"

# what is refused, with nothing stored
cp "$LB/gen-current.md" "$E/both.md"; cp "$LB/gen-current.csv" "$E/both.csv"
touch "$E/amb.log" "$E/amb.stderr"; cp "$LB/gen-current.md" "$E/amb.md"
mkdir -p "$WORK/other"; cp "$LB/gen-current.md" "$WORK/other/o.md"
ln -s /etc/passwd "$E/link.md"
cp "$LB/garbage.txt" "$E/garbage.txt"
(cd "$E" && sha256sum both.md both.csv amb.md amb.log amb.stderr garbage.txt >>SHA256SUMS)
before=$(q 'select count(*) from runs')
expect_code 2 "two outputs of one name" "$SHIMBENCH" --db "$DB" import --set target=g,variant=stock "$E/both.md" "$E/both.csv"
grep_in "$WORK/err" "would both be the output of run 'both'" "ambiguity named"
expect_code 2 "two stderr files for one output" "$SHIMBENCH" --db "$DB" import --set target=g,variant=stock "$E/amb.md"
grep_in "$WORK/err" "could be the stderr of 'amb.md'" "stderr ambiguity named"
expect_code 2 "files of two directories" "$SHIMBENCH" --db "$DB" import --set target=g,variant=stock "$E/stock.md" "$WORK/other/o.md"
expect_code 2 "a file named twice" "$SHIMBENCH" --db "$DB" import --set target=g,variant=stock "$E/stock.md" "$E/stock.md"
expect_code 2 "a symbolic link out of the directory" "$SHIMBENCH" --db "$DB" import --set target=g,variant=stock --no-checksums "$E/link.md"
grep_in "$WORK/err" "is a symbolic link" "link refused"
expect_code 2 "not llama-bench output" "$SHIMBENCH" --db "$DB" import --set target=g,variant=stock "$E/garbage.txt"
grep_in "$WORK/err" "garbage.txt': not llama-bench output" "garbage named"
printf 'x' >>"$E/stock.md"
expect_code 1 "a file that does not match SHA256SUMS" "$SHIMBENCH" --db "$DB" import --set target=g,variant=x,role=stock "$E/stock.md"
grep_in "$WORK/err" "SHA-256 mismatch" "mismatch named"
expect_code 2 "--set without target" "$SHIMBENCH" --db "$DB" import --set variant=stock "$E/prefill.jsonl"
expect_code 2 "--set with an unknown key" "$SHIMBENCH" --db "$DB" import --set target=g,variant=stock,colour=red "$E/prefill.jsonl"
expect_code 2 "--set: a free variant needs a role" "$SHIMBENCH" --db "$DB" import --set target=g,variant=mine "$E/prefill.jsonl"
expect_code 2 "--set with --mapping" "$SHIMBENCH" --db "$DB" import --set target=g,variant=stock --mapping "$E/x.json" "$E/prefill.jsonl"
expect_code 2 "--no-checksums without --set" "$SHIMBENCH" --db "$DB" import --no-checksums "$E"
[ "$(q 'select count(*) from runs')" = "$before" ] && ok "nothing stored by the refused imports" || not_ok "runs stored"

# a crashed md run: complete rows kept, the run incomplete
C=$WORK/crash
mkdir -p "$C"
cp "$REAL/kyuz0-strix-rpc-rocm644-glm46.log" "$C/glm.txt"
printf '/lib64/libggml-base.so.0(ggml_abort+0x11f) [0x7f30]\n' >>"$C/glm.txt"
(cd "$C" && sha256sum glm.txt >SHA256SUMS)
expect_code 0 "a run that crashed after its rows" "$SHIMBENCH" --db "$WORK/c.db" import --set target=g,variant=stock "$C/glm.txt"
[ "$(sqlite3 "$WORK/c.db" "select status from runs")" = incomplete ] && ok "stored as incomplete" ||
	not_ok "status $(sqlite3 "$WORK/c.db" 'select status from runs')"
# A table's results carry llama-bench's mean and spread, never samples:
# the report shows them as such and computes no ratio from them.
TB=$WORK/table
mkdir -p "$TB"
cp "$FIXTURES/real/geerlingguy-ai-benchmarks-20-rx580-table-no-build.md" "$TB/rx.md"
(cd "$TB" && sha256sum rx.md >SHA256SUMS)
expect_code 0 "import a md table" "$SHIMBENCH" --db "$WORK/table.db" import --set target=host,variant=stock,role=stock "$TB/rx.md"
expect_code 0 "report of table results" "$SHIMBENCH" --db "$WORK/table.db" report
grep_in "$WORK/out" "avg 346.76 ± 0.45 (table, no samples)" "the table's mean and spread, named as such"
grep_in "$WORK/out" "| model not named: llama 3B Q4_K - Medium (llama.cpp) | pp512" "a quick import without model= says so, and names the rows' model"
expect_code 0 "report json of table results" "$SHIMBENCH" --db "$WORK/table.db" report --format json
check "json: spread_source table, no median" python3 -c "
import json,sys; d=json.load(open('$WORK/out'))
c=[w['stock'] for w in d['workloads'] if w['test']=='pp512'][0]
assert c['spread_source']=='table' and c['table_avg']==346.76 and 'median' not in c, c"
test_done
