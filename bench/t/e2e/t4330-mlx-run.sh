#!/bin/bash
# MLX-LM runs from a plan: a model (or a variant) with "runtime": "mlx-lm"
# runs MLX-LM's benchmark (-p/-g/-n from llama-bench's -p/-n/-r) with and
# without the injected library, on the host and through lume; the rates
# are stored through the MLX-LM reader and reported beside the llama.cpp
# rows. MLX cannot run here: a double prints what `mlx_lm.benchmark`
# documents (bench/t/fixtures/doubles/mlx_lm.benchmark).
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "mlx-lm runs: the real llama-bench is not provisioned"
	test_done; exit $?
fi
LIB=$T_BUILD/t/helpers/libmarker.so
LIBSHA=$(sha256sum "$LIB" | cut -d' ' -f1)
export PATH="$FIXTURES/doubles:$PATH" FAKE_LUME_VMS="macos-tahoe"
expect_code 0 "synthesize the tiny model" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
MARK="[shimbench-test-preload] Enabled for"
plan() { # plan EXTRA-VARIANTS LLAMA-ARGS
	cat <<JSON
{"name": "mlx beside llama.cpp",
 "models": [{"name": "tiny", "path": "$WORK/tiny.gguf"},
            {"name": "llama-3.2-3b-4bit", "runtime": "mlx-lm",
             "path": "mlx-community/Llama-3.2-3B-Instruct-4bit",
             "label": "Llama-3.2-3B-Instruct-4bit"}],
 "targets": {"host": {"transport": "local", "llama_bench": "$LB"},
             "guest": {"transport": "lume", "vm": "macos-tahoe", "llama_bench": "$LB"}},
 "variants": [
   {"name": "bare-metal", "target": "host", "role": "bare-metal"},
   {"name": "stock", "target": "guest", "role": "stock"},
   {"name": "shim", "target": "guest", "role": "shim",
    "inject": {"library": "$LIB", "sha256": "$LIBSHA"},
    "expect": {"llama.cpp": ["$MARK"], "mlx-lm": ["$MARK"]}}$1],
 "llama_bench": {"args": [$2]}, "order": "grouped"}
JSON
}
plan ',
   {"name": "mlx-only", "target": "host", "runtime": "mlx-lm"}' \
	'"-p", "32", "-n", "8", "-r", "3", "-t", "2"' >"$WORK/p.json"
expect_code 0 "run a plan with an MLX-LM model" "$SHIMBENCH" --db "$WORK/s.db" run \
	--bundle "$WORK/b" "$WORK/p.json"
q() { sqlite3 "$WORK/s.db" "$1"; }
[ "$(q "select count(*) from runs")" = 7 ] && ok "7 processes: 3 variants x 2 models + the MLX-only variant" \
	|| not_ok "runs: $(q 'select variant, model from runs')"
[ "$(q "select count(*) from runs where runtime='mlx-lm' and status='ok'")" = 4 ] \
	&& ok "4 MLX-LM runs, all ok" || not_ok "mlx runs: $(q "select variant, status, error from runs where runtime='mlx-lm'")"
[ "$(q "select group_concat(model) from runs where variant='mlx-only'")" = llama-3.2-3b-4bit ] \
	&& ok "the mlx-lm variant ran only the MLX model" || not_ok "mlx-only ran: $(q "select model from runs where variant='mlx-only'")"
[ "$(q "select argv_json from runs where runtime='mlx-lm' and variant='stock'")" = \
	'["mlx_lm.benchmark","--model","mlx-community/Llama-3.2-3B-Instruct-4bit","-p","32","-g","8","-n","3"]' ] \
	&& ok "MLX-LM got the plan's prompt, generation and repetitions" \
	|| not_ok "argv: $(q "select argv_json from runs where runtime='mlx-lm' and variant='stock'")"
[ "$(q "select group_concat(x.test || ':' || (select count(*) from samples s where s.result_id=x.id), ' ') from results x join runs r on r.id=x.run_id where r.variant='shim' and r.runtime='mlx-lm'")" = "pp32:3 tg8:3" ] \
	&& ok "rates stored as pp32 and tg8 rows, one sample per trial" \
	|| not_ok "mlx results: $(q "select x.test from results x join runs r on r.id=x.run_id where r.runtime='mlx-lm'")"
[ "$(q "select verification from runs where variant='shim' and runtime='mlx-lm'")" = verified ] \
	&& ok "the injection is verified for the MLX-LM run too" || not_ok "mlx shim run not verified"
check "the MLX-LM output is kept as text" sh -c "ls '$WORK'/b/runs/*llama-3.2-3b-4bit*.txt >/dev/null"
grep_in "$WORK/err" "runs on mlx-lm" "says the MLX model is not hashed"

expect_code 0 "report" "$SHIMBENCH" --db "$WORK/s.db" report
grep_in "$WORK/out" "Llama-3.2-3B-Instruct-4bit (MLX-LM) | pp32" "MLX-LM rows in the table"
grep_in "$WORK/out" "tiny (llama.cpp)                    | pp32" "beside the llama.cpp rows"
python3 - "$WORK/out" <<'EOF' && ok "MLX rows have bare-metal, stock and shim columns" || not_ok "MLX row incomplete"
import sys
rows = [l for l in open(sys.argv[1]) if "(MLX-LM) | tg8" in l]
cells = [c.strip() for c in rows[0].split("|")[1:-1]]
assert all(c and c != "–" for c in cells[2:5]), cells
EOF

# The bundle carries the runtime: imported elsewhere, the same rows.
expect_code 0 "import the bundle into a fresh store" "$SHIMBENCH" --db "$WORK/i.db" import "$WORK/b"
[ "$(sqlite3 "$WORK/i.db" "select count(*) from runs where runtime='mlx-lm'")" = 4 ] \
	&& ok "imported with their runtime" || not_ok "import lost the runtime"
[ "$(sqlite3 "$WORK/i.db" "select count(*) from samples")" = "$(q "select count(*) from samples")" ] \
	&& ok "same samples after the import" || not_ok "sample counts differ"

# Failures and plan errors.
plan '' '"-p", "32", "-n", "8", "-r", "2", "-t", "2"' >"$WORK/f.json"
expect_code 1 "an MLX-LM failure fails the session" env FAKE_MLX_FAIL=1 "$SHIMBENCH" \
	--db "$WORK/f.db" run --bundle "$WORK/bf" "$WORK/f.json"
grep_in "$WORK/err" "llama-3.2-3b-4bit" "names the model"
expect_code 3 "mlx_lm.benchmark missing here" env PATH=/usr/bin:/bin "$SHIMBENCH" \
	--db "$WORK/f.db" run "$WORK/f.json"
grep_in "$WORK/err" "mlx_lm.benchmark" "names the program"
bad() { # bad TITLE MESSAGE JSON
	echo "$3" >"$WORK/bad.json"
	expect_code 2 "$1" "$SHIMBENCH" run "$WORK/bad.json"
	grep_in "$WORK/err" "$2" "$1: says why"
}
T='"targets":{"h":{"transport":"local"}}'
bad "an mlx-lm variant without an MLX model" "runs only mlx-lm models and the plan has none" \
	"{\"models\":[{\"name\":\"t\",\"path\":\"/x\"}],$T,\"variants\":[{\"name\":\"v\",\"target\":\"h\",\"runtime\":\"mlx-lm\"}]}"
bad "an unknown runtime" "expected \"llama.cpp\" or \"mlx-lm\"" \
	"{\"models\":[{\"name\":\"t\",\"path\":\"/x\",\"runtime\":\"vllm\"}],$T,\"variants\":[{\"name\":\"v\",\"target\":\"h\"}]}"
bad "a SHA-256 for an MLX model" "without a sha256" \
	"{\"models\":[{\"name\":\"m\",\"runtime\":\"mlx-lm\",\"sha256\":\"$LIBSHA\"}],$T,\"variants\":[{\"name\":\"v\",\"target\":\"h\"}]}"
bad "a list of prompt lengths for MLX-LM" "take one count from llama-bench's '-p'" \
	"{\"models\":[{\"name\":\"m\",\"runtime\":\"mlx-lm\"}],$T,\"variants\":[{\"name\":\"v\",\"target\":\"h\"}],\"llama_bench\":{\"args\":[\"-p\",\"128,512\"]}}"
bad "a model no variant runs" "no variant runs model 'm'" \
	"{\"models\":[{\"name\":\"t\",\"path\":\"/x\"},{\"name\":\"m\",\"runtime\":\"mlx-lm\"}],$T,\"variants\":[{\"name\":\"v\",\"target\":\"h\",\"runtime\":\"llama.cpp\"}]}"
bad "expect keyed by an unknown runtime" "unknown key 'variants[0].expect.vllm'" \
	"{\"models\":[{\"name\":\"t\",\"path\":\"/x\"}],$T,\"variants\":[{\"name\":\"v\",\"target\":\"h\",\"expect\":{\"vllm\":[\"x\"]}}]}"
test_done
