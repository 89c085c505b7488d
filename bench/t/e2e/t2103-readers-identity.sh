#!/bin/bash
# Readers, round three (issue 20): what the real tool keeps apart is
# never pooled (two models of one run, two GPU drivers of one target),
# one configuration in every format (a jsonl run and a csv run of one
# sweep share a row), tables in report --format csv, a fork's
# measurement fields are not configuration, and an output re-saved with
# other white space is the same evidence. Inputs: fixtures/readers20
# (real llama-bench output, two models in one run, every -o format; the
# numbers below are read off those files by hand, see its README).
. "$(dirname "$0")/lib.sh"

F=$FIXTURES/readers20
DB=$WORK/r.db
SB() { "$SHIMBENCH" --db "$DB" "$@"; }
imp() { # imp VARIANT FILE...
	v=$1
	shift
	SB import --no-checksums --set "target=guest,variant=$v,role=${ROLE:-$v}" "$@"
}
has() { # has FILE STRING...: one line of FILE holds every STRING
	python3 -c 'import sys; ss = sys.argv[2:]
sys.exit(0 if any(all(s in l for s in ss) for l in open(sys.argv[1])) else 1)' "$@"
}

# ---- 1. two models in one run: two workloads, in every format ----------------
expect_code 0 "import a jsonl run of two models" imp stock "$F/two.jsonl"
expect_code 0 "report" SB report
cp "$WORK/out" "$WORK/r1"
A="model not named: llama ?B F16 (a.gguf)"
B="model not named: llama ?B Q8_0 (b.gguf)"
check "F16 pp16: its own three samples (median 9262.39), not pooled with Q8_0" \
	has "$WORK/r1" "| $A (llama.cpp) " "| pp16 " "9262.39 (2817.62–9738.29, n=3)"
check "Q8_0 pp16: its own three (median 17500.10)" \
	has "$WORK/r1" "| $B (llama.cpp) " "| pp16 " "17500.10 (3219.46–18851.70, n=3)"
check "Q8_0 tg8: median 8944.96" \
	has "$WORK/r1" "| $B (llama.cpp) " "| tg8 " "8944.96 (1581.91–9208.00, n=3)"
check "never n=6" sh -c "! grep -q 'n=6' '$WORK/r1'"

# a csv shim run of the same sweep: the same configuration, the same rows
expect_code 0 "import a csv run of the same sweep as the shim" imp shim "$F/two.csv"
expect_code 0 "report" SB report
cp "$WORK/out" "$WORK/r2"
check "F16 pp16: stock samples and the csv's mean on one row" \
	has "$WORK/r2" "| $A (llama.cpp) " "| pp16 " "9262.39 (2817.62–9738.29, n=3)" "avg 3816.67 ± 3030.60 (table, no samples)"
check "Q8_0 pp16: likewise" \
	has "$WORK/r2" "| $B (llama.cpp) " "| pp16 " "17500.10 (3219.46–18851.70, n=3)" "avg 12277.51 ± 7932.67 (table, no samples)"
check "four workloads, not eight (0/1 and false/true are one configuration)" \
	test "$(grep -c '^| model not named' "$WORK/r2")" = 4
check "no column of flags that differ only in spelling" sh -c "! grep -q '| cpu_strict \\|| repack ' '$WORK/r2'"
grep_in "$WORK/r2" "a llama-bench table (md, csv or sql): the mean ± deviation it printed, no samples" \
	"the table's rows are said to be a table's"
check "and not blamed on -r 0" sh -c "! grep -q 'r 0 or less' '$WORK/r2'"

# ---- 5. tables in report --format csv ----------------------------------------
expect_code 0 "report --format csv" SB report --format csv
grep_in "$WORK/out" "host_table_avg,host_table_sd,stock_table_avg,stock_table_sd,shim_table_avg,shim_table_sd" \
	"csv: the table columns after the published ones"
check "csv: F16 pp16 has the stock median and the shim table's mean and sd" \
	grep -qF "llama ?B F16 (a.gguf) (llama.cpp),pp16,tokens/s,,9262.39,,,,,,,,3816.668418,3030.595638" "$WORK/out"

# md and sql tables of the same two models: four workloads each, values shown
DB=$WORK/t.db
expect_code 0 "import the md table of two models" imp stock "$F/two.md"
expect_code 0 "import the sql of two models" imp shim "$F/two.sql"
expect_code 0 "report of the tables" SB report
cp "$WORK/out" "$WORK/r3"
check "md: F16 pp16 shows its mean (avg 2740.26 ± 590.20), not '–'" \
	has "$WORK/r3" "| model not named: llama ?B F16 (llama.cpp) " "| pp16 " "avg 2740.26 ± 590.20 (table, no samples)"
check "md: Q8_0 pp16 avg 8506.72 ± 4856.24" \
	has "$WORK/r3" "| model not named: llama ?B Q8_0 (llama.cpp) " "| pp16 " "avg 8506.72 ± 4856.24 (table, no samples)"
check "sql: F16 pp16 avg 8878.19 ± 23.76" \
	has "$WORK/r3" "| $A (llama.cpp) " "| pp16 " "avg 8878.19 ± 23.76"
check "sql: Q8_0 pp16 avg 17555.44 ± 651.56" \
	has "$WORK/r3" "| $B (llama.cpp) " "| pp16 " "avg 17555.44 ± 651.56"
check "eight workloads of the tables (md rows show no file, sql rows do)" \
	test "$(grep -c '^| model not named' "$WORK/r3")" = 8

# a run that names one model but holds two is refused, naming both
DB=$WORK/n.db
expect_code 1 "model= for a file of two models is refused" \
	SB import --no-checksums --set target=guest,variant=stock,model=tiny "$F/two.jsonl"
grep_in "$WORK/err" "holds rows of more than one model ('llama ?B F16' a.gguf, line 1; 'llama ?B Q8_0' b.gguf, line 3) but names one model, 'tiny'" \
	"the refusal names the two models and their lines"
check "nothing stored" test "$(sqlite3 "$DB" 'select count(*) from runs' 2>/dev/null || echo 0)" = 0

# compare, gate calibration and history keep the models apart too
DB=$WORK/c.db
expect_code 0 "stock: the jsonl run" imp stock "$F/two.jsonl"
expect_code 0 "shim: the json run" imp shim "$F/two.json"
expect_code 0 "compare stock and shim" SB compare variant=stock variant=shim
check "compare: F16 pp16 against F16 pp16" has "$WORK/out" "| $A pp16 " "|  9262.39 |  4994.96 |"
check "compare: Q8_0 pp16 against Q8_0 pp16" has "$WORK/out" "| $B pp16 " "|  17500.1 |    17009 |"
expect_code 0 "history" SB history
check "history: a series per model and test (8)" test "$(grep -c '^| guest/' "$WORK/out")" = 8

# ---- 7. a whitespace-only re-save is the same evidence ------------------------
sed 's/, /,/g; s/$/\r/' "$F/two.jsonl" >"$WORK/resaved.jsonl"
check "the re-save differs in its bytes" sh -c "! cmp -s '$F/two.jsonl' '$WORK/resaved.jsonl'"
expect_code 1 "importing it again is refused" imp stock "$WORK/resaved.jsonl"
grep_in "$WORK/err" "'resaved.jsonl' measures what run 1 of session 1 already holds (the same 4 rows, test times and samples in other bytes" \
	"naming the run that holds it"
expect_code 0 "report" SB report --select variant=stock
check "the samples are counted once (n=3, never n=6)" \
	has "$WORK/out" "| $A (llama.cpp) " "| pp16 " "9262.39 (2817.62–9738.29, n=3)"

# ---- 3. a fork's measurement fields are not configuration ---------------------
# two.json with the two fields a fork adds to every row (constructed here
# from the real output: a fork prints them beside llama-bench's own)
python3 - "$F/two.json" "$WORK/fork.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
for i, r in enumerate(rows):
    r['avg_ttft_ms'] = 12.5 + i
    r['avg_e2e_ms'] = 80.25 + i
    r['fork_mode'] = 'fast'
json.dump(rows, open(sys.argv[2], 'w'), indent=1)
PY
DB=$WORK/f.db
expect_code 0 "stock: the jsonl run" imp stock "$F/two.jsonl"
expect_code 0 "a fork's output as the shim" imp shim "$WORK/fork.json"
grep_in "$WORK/err" "'fork.json': fields no llama-bench version has, taken as measurements (kept, not configuration): avg_ttft_ms, avg_e2e_ms" \
	"import says which fields it took as measurements"
expect_code 3 "the text field fork_mode stays configuration" SB compare variant=stock variant=shim
grep_in "$WORK/err" "fork_mode" "and is named as what differs"
python3 - "$WORK/fork.json" "$WORK/fork2.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
for r in rows:
    del r['fork_mode']
json.dump(rows, open(sys.argv[2], 'w'), indent=1)
PY
DB=$WORK/f2.db
expect_code 0 "stock: the jsonl run" imp stock "$F/two.jsonl"
expect_code 0 "the fork's output without its text field" imp shim "$WORK/fork2.json"
expect_code 0 "compare: comparable despite avg_ttft_ms and avg_e2e_ms" SB compare variant=stock variant=shim
check "the fork's F16 pp16 against stock's" has "$WORK/out" "| $A pp16 " "|  9262.39 |  4994.96 |"
expect_code 0 "inspect the fork's output" "$SHIMBENCH" inspect "$WORK/fork2.json"
grep_in "$WORK/out" "of them measurements, not configuration" "inspect names them"
grep_in "$WORK/out" "avg_ttft_ms, avg_e2e_ms" "both"

# ---- 2. GPU drivers of one target are two configurations ---------------------
# the F16 rows of two.jsonl as a RADV and an AMDVLK row set of one GPU (the
# gpu_info llama-bench prints for each driver; constructed from the real rows)
python3 - "$F/two.jsonl" "$WORK" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()[:2]
radv = [l.replace('"gpu_info": ""', '"gpu_info": "AMD Radeon 8060S Graphics (RADV GFX1151)"') for l in lines]
amd = [l.replace('"gpu_info": ""', '"gpu_info": "AMD Radeon(TM) 8060S Graphics"') for l in lines]
open(sys.argv[2] + '/drivers.jsonl', 'w').write('\n'.join(radv + amd) + '\n')
open(sys.argv[2] + '/host.jsonl', 'w').write('\n'.join(l.replace('"gpu_info": ""', '"gpu_info": "Apple M2 Max"') for l in lines) + '\n')
open(sys.argv[2] + '/guest.jsonl', 'w').write('\n'.join(l.replace('"gpu_info": ""', '"gpu_info": "Apple Paravirtual device"') for l in lines) + '\n')
PY
DB=$WORK/g.db
expect_code 0 "import RADV and AMDVLK rows of one target" imp stock "$WORK/drivers.jsonl"
expect_code 0 "report" SB report
check "four workloads: two drivers x two tests" test "$(grep -c '^| model not named' "$WORK/out")" = 4
grep_in "$WORK/out" "gpu_info" "the report names gpu_info as what differs"
check "every cell holds its own three samples" sh -c "! grep -q 'n=6' '$WORK/out'"
expect_code 0 "inspect counts the same: 2 configurations" "$SHIMBENCH" inspect "$WORK/drivers.jsonl"
grep_in "$WORK/out" "rows: 4 in 1 block; 2 configurations" "inspect: 2 configurations"
# a host and its guest name their GPU differently: paired all the same
DB=$WORK/h.db
expect_code 0 "host rows" env ROLE=bare-metal "$SHIMBENCH" --db "$DB" import --no-checksums \
	--set target=host,variant=bare,role=bare-metal "$WORK/host.jsonl"
expect_code 0 "guest rows" imp stock "$WORK/guest.jsonl"
expect_code 0 "report host and guest" SB report
check "one row per test: host and guest cells side by side" python3 -c '
import sys
rows = [l for l in open(sys.argv[1]) if l.startswith("| model not named")]
pp = [l for l in rows if "| pp16 " in l]
sys.exit(0 if len(rows) == 2 and len(pp) == 1 and
         pp[0].count("9262.39 (2817.62–9738.29, n=3)") == 2 else 1)' "$WORK/out"
grep_in "$WORK/out" '`gpu_info=(per target)`' "and the report does not claim one GPU name for both"
check "neither name is given as every row's" sh -c "! grep -q 'gpu_info=Apple M2 Max' '$WORK/out'"

# ---- an old store: schema 5, written by the shimbench before issue 20 ------
# (fixtures/readers20/store-v5.sqlite3: two.jsonl as stock and two.csv as
# shim, imported by that shimbench; its configurations then told json
# false from csv 0, and pooled the two models)
cp "$F/store-v5.sqlite3" "$WORK/old.db"
expect_code 3 "a reading command leaves an old store alone" "$SHIMBENCH" --db "$WORK/old.db" report
grep_in "$WORK/err" "schema version 5; this shimbench reads 9" "and says a writing command upgrades it"
check "two configurations before the upgrade" test "$(sqlite3 "$WORK/old.db" 'select count(*) from configs')" = 2
expect_code 0 "a writing command upgrades it (schema 9)" "$SHIMBENCH" --db "$WORK/old.db" import \
	--no-checksums --set target=guest,variant=other,role=free "$F/two.json"
check "schema 9" test "$(sqlite3 "$WORK/old.db" 'pragma user_version')" = 9
check "one configuration now: json false and csv 0 are one" \
	test "$(sqlite3 "$WORK/old.db" 'select count(distinct config_id) from result_configs')" = 1
expect_code 0 "report of the upgraded store" "$SHIMBENCH" --db "$WORK/old.db" report
check "the old rows: stock samples and the csv's mean on one row, per model" \
	has "$WORK/out" "| $A (llama.cpp) " "| pp16 " "9262.39 (2817.62–9738.29, n=3)" "avg 3816.67 ± 3030.60 (table, no samples)"
check "and the other model apart" \
	has "$WORK/out" "| $B (llama.cpp) " "| pp16 " "17500.10 (3219.46–18851.70, n=3)"

# ---- 8. a wrapper's own summary CSV is not llama-bench output ----------------
# the header a public wrapper script writes for its summary (vb-hw-results.csv:
# config,build_commit,cpu_info,backends,model_filename,n_prompt,n_gen,avg_ts),
# with a row in the form its loop writes (values unquoted)
printf 'config,build_commit,cpu_info,backends,model_filename,n_prompt,n_gen,avg_ts\nbase,Debian,AMD EPYC,CPU,a.gguf,16,0,9262.39\n' >"$WORK/summary.csv"
expect_code 2 "inspect refuses the wrapper's summary CSV" "$SHIMBENCH" inspect "$WORK/summary.csv"
grep_in "$WORK/err" "summary.csv' line 1: a CSV with n_prompt, n_gen and avg_ts but no test_time column: not llama-bench -o csv" \
	"and says why"
DB=$WORK/w.db
expect_code 2 "import refuses it too (a file it cannot read: exit 2)" imp stock "$WORK/summary.csv"
grep_in "$WORK/err" "no test_time column: not llama-bench -o csv" "naming the reason"
check "nothing stored" test "$(sqlite3 "$DB" 'select count(*) from runs' 2>/dev/null || echo 0)" = 0
# llama-bench's own csv with its quotes stripped (a spreadsheet re-save)
{ head -1 "$F/two.csv"; tail -n +2 "$F/two.csv" | tr -d '"'; } >"$WORK/unquoted.csv"
expect_code 2 "a llama-bench csv without its quotes is refused" "$SHIMBENCH" inspect "$WORK/unquoted.csv"
grep_in "$WORK/err" "unquoted.csv' line 2: a CSV row whose values are not quoted" "naming the line"

test_done
