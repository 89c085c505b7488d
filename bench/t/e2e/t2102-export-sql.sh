#!/bin/bash
# export --format llama-bench-sql: the table of the real llama-bench's
# -o sql, column for column; one row per result; stock and shim two
# builds that compare-llama-bench.py's queries join and never fold.
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
LBF=$FIXTURES/llama-bench
DB=$WORK/x.db
if [ "$(uname -s)" != Linux ] || [ ! -x "$LB" ]; then
	skip "export vs the real llama-bench: $LB is absent (run: make llama-bench)"
	test_done
	exit $?
fi
"$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf" >/dev/null || not_ok "synth"

# The real llama-bench's own -o sql (its CREATE TABLE and columns)
(cd "$WORK" && "$LB" -m tiny.gguf -p 8 -n 4 -r 2 -o sql >"$WORK/real.sql" 2>/dev/null) ||
	not_ok "real llama-bench -o sql"
E=$WORK/ev
mkdir -p "$E"
(cd "$WORK" && "$LB" -m tiny.gguf -p 8 -n 4 -r 2 -o jsonl >"$E/stock.jsonl" 2>"$E/stock.stderr" &&
	"$LB" -m tiny.gguf -p 8 -n 4 -r 2 -o jsonl >"$E/shim.jsonl" 2>"$E/shim.stderr") ||
	not_ok "real llama-bench -o jsonl"
cp "$LBF/gen-current.md" "$E/table.md"
(cd "$E" && sha256sum * >SHA256SUMS)
cat >"$WORK/map.json" <<'JSON'
{"shimbench_mapping": 1, "runs": [
 {"stdout": "stock.jsonl", "stderr": "stock.stderr", "target": "guest", "variant": "stock", "role": "stock"},
 {"stdout": "shim.jsonl", "stderr": "shim.stderr", "target": "guest", "variant": "shim", "role": "shim"},
 {"stdout": "table.md", "target": "host", "variant": "bare-metal", "role": "bare-metal"}]}
JSON
expect_code 0 "import stock, shim and a table" "$SHIMBENCH" --db "$DB" import --mapping "$WORK/map.json" "$E"
expect_code 0 "export --format llama-bench-sql" "$SHIMBENCH" --db "$DB" export --format llama-bench-sql 1 "$WORK/x.sql"
grep_in "$WORK/out" "wrote 8 results of session 1" "one row per result"
grep_in "$WORK/out" "'stock_____-Debian': variant stock, build Debian" "the names are printed"

create() { sed -n '1,/^);$/p' "$1"; }
cols() { grep -m1 '^INSERT INTO' "$1" | sed 's/) VALUES (.*//'; }
if cmp -s <(create "$WORK/real.sql") <(create "$WORK/x.sql"); then
	ok "CREATE TABLE byte for byte as the real llama-bench -o sql ($(create "$WORK/real.sql" | grep -c '^  ') columns)"
else
	not_ok "CREATE TABLE differs from the real llama-bench's"
	diff <(create "$WORK/real.sql") <(create "$WORK/x.sql") | sed 's/^/# /' | head -20
fi
if [ -n "$(cols "$WORK/x.sql")" ] && [ "$(cols "$WORK/real.sql")" = "$(cols "$WORK/x.sql")" ]; then
	ok "INSERT column list as the real llama-bench's"
else
	not_ok "INSERT column list differs"
fi
[ "$(head -c 1 "$WORK/x.sql")" = C ] && [ "$(grep -c '^INSERT INTO llama_bench (' "$WORK/x.sql")" = 8 ] &&
	ok "8 INSERTs into llama_bench" || not_ok "INSERT count"

# Loaded by sqlite3 as compare-llama-bench.py loads it, with the real
# llama-bench's own rows in the same table
S=$WORK/llama-bench.sqlite
check "sqlite3 reads the export" sqlite3 "$S" ".read $WORK/x.sql"
check "and the real llama-bench's -o sql into the same table" sqlite3 "$S" ".read $WORK/real.sql"
q() { sqlite3 "$S" "$1"; }
[ "$(q "select count(distinct build_commit) from llama_bench where build_commit like 'stock%' or build_commit like 'shim%'")" = 2 ] &&
	ok "stock and shim are two builds" || not_ok "builds: $(q 'select distinct build_commit from llama_bench')"
[ "$(q "select count(distinct length(build_commit)) from llama_bench where build_commit like '%-Debian'")" = 1 ] &&
	ok "one length: compare-llama-bench.py's truncation keeps the names" || not_ok "lengths differ"
# compare-llama-bench.py's join: every key property equal, the two builds
keys="cpu_info gpu_info backends n_gpu_layers tensor_buft_overrides model_filename model_type n_batch n_ubatch embeddings cpu_mask cpu_strict poll n_threads type_k type_v use_mmap no_kv_offload split_mode main_gpu tensor_split flash_attn n_prompt n_gen n_depth"
have=$(q "select name from pragma_table_info('llama_bench')")
eq=""
for k in $keys; do echo "$have" | grep -qx "$k" && eq="$eq tb.$k = tc.$k AND"; done
pairs=$(q "select tb.n_prompt, tb.n_gen, round(avg(tc.avg_ts)/avg(tb.avg_ts), 6) from llama_bench tb join llama_bench tc on $eq tb.build_commit = 'stock_____-Debian' and tc.build_commit = 'shim______-Debian' group by tb.n_gen, tb.n_prompt, tb.n_depth")
[ "$(echo "$pairs" | wc -l)" = 2 ] && ok "compare-llama-bench.py's join pairs pp8 and tg4 of stock and shim" ||
	not_ok "join: $pairs"
[ "$(q "select count(*) from llama_bench where build_commit = 'stock_____-Debian'")" = 2 ] &&
	ok "stock rows not folded with shim" || not_ok "stock rows"

# compare-llama-bench.py's own query (ggml-org/llama.cpp scripts/, 2025-26:
# LLAMA_BENCH_KEY_PROPERTIES as it names them, use_mmap included) fails on
# the real tool's -o sql and on the export alike; with the column added
# (docs/formats.md) it pairs stock and shim
script_q() { # script_q DB: the script's _get_rows_llama_bench for stock vs shim
	eqs=""
	for k in $keys; do eqs="$eqs tb.$k = tc.$k AND"; done
	sqlite3 "$1" "SELECT tb.model_type, tb.n_prompt, tb.n_gen, tb.n_depth, AVG(tb.avg_ts), AVG(tc.avg_ts) FROM llama_bench tb JOIN llama_bench tc ON $eqs tb.build_commit = '$2' AND tc.build_commit = '$3' GROUP BY tb.model_type, tb.n_gen, tb.n_prompt, tb.n_depth ORDER BY tb.model_type, tb.n_gen, tb.n_prompt, tb.n_depth;"
}
sqlite3 "$WORK/real-only.sqlite" ".read $WORK/real.sql"
sqlite3 "$WORK/export-only.sqlite" ".read $WORK/x.sql"
rb=$(sqlite3 "$WORK/real-only.sqlite" "select build_commit from llama_bench limit 1")
if ! script_q "$WORK/real-only.sqlite" "$rb" "$rb" >/dev/null 2>"$WORK/e1" && grep -q "no such column: tb.use_mmap" "$WORK/e1"; then
	ok "the script's query fails on the real llama-bench's own -o sql (no such column: tb.use_mmap)"
else
	not_ok "the script's query on the real -o sql: $(cat "$WORK/e1")"
fi
if ! script_q "$WORK/export-only.sqlite" stock_____-Debian shim______-Debian >/dev/null 2>"$WORK/e2" &&
	grep -q "no such column: tb.use_mmap" "$WORK/e2"; then
	ok "and on the export, with the same message"
else
	not_ok "the script's query on the export: $(cat "$WORK/e2")"
fi
sqlite3 "$WORK/export-only.sqlite" "ALTER TABLE llama_bench ADD COLUMN use_mmap INTEGER DEFAULT 1"
sqlite3 "$WORK/real-only.sqlite" "ALTER TABLE llama_bench ADD COLUMN use_mmap INTEGER DEFAULT 1"
out=$(script_q "$WORK/export-only.sqlite" stock_____-Debian shim______-Debian)
[ "$(echo "$out" | wc -l)" = 2 ] && echo "$out" | grep -q '^llama ?B F16|0|4|0|' && echo "$out" | grep -q '^llama ?B F16|8|0|0|' &&
	ok "with use_mmap added, the script's query pairs the export's stock and shim: pp8 and tg4" ||
	not_ok "script query after ALTER: $out"
[ -n "$(script_q "$WORK/real-only.sqlite" "$rb" "$rb")" ] &&
	ok "and runs on the real tool's -o sql too" || not_ok "real -o sql after ALTER"
# its averages are the rows' avg_ts as exported (stock pp8 from the stock jsonl)
want=$(python3 -c 'import json,sys; print(round([r for r in map(json.loads, open(sys.argv[1])) if r["n_gen"] == 0][0]["avg_ts"], 6))' "$E/stock.jsonl")
got=$(echo "$out" | awk -F'|' '$2 == 8 {print $5}')
python3 -c "import sys; sys.exit(0 if abs(float('$got') - float('$want')) < 1e-6 else 1)" &&
	ok "the script's baseline t/s is the stock run's avg_ts ($want), not a median" || not_ok "avg $got vs $want"

# values: json rows from their samples' fields, table rows what the table says
[ "$(q "select avg_ts, stddev_ts, n_prompt, n_depth from llama_bench where build_commit like 'bare-metal-Debian' and n_gen = 4 and n_depth = 16")" = "7191.48|562.04|0|16" ] &&
	ok "a table row: avg ± stddev as printed" || not_ok "table row: $(q "select * from llama_bench where build_commit like 'bare%'" | head -2)"
[ "$(q "select count(*) from llama_bench where build_commit like 'bare%' and avg_ns is null and model_size is null")" = 4 ] &&
	ok "what a table does not show is NULL, not invented" || not_ok "table NULLs"
python3 - "$E/stock.jsonl" "$S" <<'PY' && ok "json rows: llama-bench's own fields" || not_ok "json row values"
import json, sqlite3, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
db = sqlite3.connect(sys.argv[2])
for r in rows:
    got = db.execute("select model_size, n_threads, flash_attn, load_mode, avg_ts, avg_ns, test_time from llama_bench "
                     "where build_commit = 'stock_____-Debian' and n_prompt = ? and n_gen = ?", (r["n_prompt"], r["n_gen"])).fetchone()
    want = (r["model_size"], r["n_threads"], r["flash_attn"], r["load_mode"], round(r["avg_ts"], 6), r["avg_ns"], r["test_time"])
    assert got[:4] == want[:4] and abs(got[4] - want[4]) < 1e-6 and abs(got[5] - want[5]) <= 1 and got[6] == want[6], (got, want)
PY

expect_code 0 "export to stdout" "$SHIMBENCH" --db "$DB" export --format llama-bench-sql 1 -
grep_in "$WORK/out" "CREATE TABLE IF NOT EXISTS llama_bench (" "SQL on stdout"
grep_in "$WORK/err" "wrote 8 results" "summary on stderr"
expect_code 2 "an unknown format" "$SHIMBENCH" --db "$DB" export --format xml 1 "$WORK/y"
expect_code 3 "no such session" "$SHIMBENCH" --db "$DB" export --format llama-bench-sql 9 "$WORK/y.sql"
[ ! -e "$WORK/y.sql" ] && ok "nothing written for a missing session" || not_ok "file written"

# a shim run whose injection was not verified is never a "shim" build
U=$WORK/unv
mkdir -p "$U"
cp "$LBF/gen-current.jsonl" "$U/shim.jsonl"
printf 'ggml_metal_device_init: GPU family: MTLGPUFamilyApple5  (1005)\n' >"$U/shim.stderr"
(cd "$U" && sha256sum * >SHA256SUMS)
cat >"$WORK/umap.json" <<'JSON'
{"shimbench_mapping": 1, "runs": [{"stdout": "shim.jsonl", "stderr": "shim.stderr", "target": "guest",
 "variant": "shim", "role": "shim", "expect": ["[LumeMetalCapabilities] Enabled"]}]}
JSON
"$SHIMBENCH" --db "$WORK/u.db" import --mapping "$WORK/umap.json" "$U" >/dev/null 2>&1
expect_code 0 "export of an unverified shim run" "$SHIMBENCH" --db "$WORK/u.db" export --format llama-bench-sql 1 "$WORK/u.sql"
grep_in "$WORK/out" "variant shim-unverified" "named shim-unverified"
[ "$(grep -c "'shim-unverified-" "$WORK/u.sql")" = 3 ] && ok "its rows are shim-unverified builds" || not_ok "unverified rows"

# a session of unverified provenance says so on export too
N=$WORK/nosums
mkdir -p "$N"
cp "$LBF/gen-current.csv" "$N/run.csv"
"$SHIMBENCH" --db "$WORK/n.db" import --set target=g,variant=shim --no-checksums "$N/run.csv" >/dev/null 2>&1
expect_code 0 "export of an import without checksums" "$SHIMBENCH" --db "$WORK/n.db" export --format llama-bench-sql 1 "$WORK/n.sql"
grep_in "$WORK/err" "provenance unverified" "the export warns"
test_done
