#!/bin/bash
# The real llama-bench provisioned by `make llama-bench` (Debian sid in
# .llama/prefix): it runs, lists devices, benchmarks a synthetic model from
# any working directory with arguments passed byte-exact, llama-quantize
# works, and provisioning a second time does nothing.
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
LQ=$TOP/.llama/bin/llama-quantize

if [ "$(uname -s)" != Linux ] || [ ! -x "$LB" ]; then
	skip "real llama-bench: $LB is absent (run: make llama-bench; Linux only)"
	test_done
	exit $?
fi

expect_code 0 "llama-bench --help" "$LB" --help
grep_in "$WORK/out" "usage: " "usage printed"
grep_in "$WORK/out" "--list-devices" "options listed"
expect_code 0 "llama-bench --list-devices" "$LB" --list-devices
grep_in "$WORK/out" "Available devices:" "device list printed"
grep_in "$WORK/err" "loaded CPU backend from $TOP/.llama/prefix/" "CPU backend loaded from the prefix"
expect_code 0 "llama-bench --version" "$LB" --version
grep_in "$WORK/err" "(build " "build number printed"

# The library path ends with $SHIMBENCH_EXTRA_LIBRARY_PATH (the loader
# reports its search path under LD_DEBUG=libs).
expect_code 0 "extra library path" env SHIMBENCH_EXTRA_LIBRARY_PATH="$WORK/extra lib" LD_DEBUG=libs "$LB" --version
grep_in "$WORK/err" ":$WORK/extra lib		(--library-path)" "extra directory appended to --library-path"

# Provisioning again with everything present: nothing to do, fast.
start=$(date +%s)
expect_code 0 "provision again" sh "$TOP/bench/scripts/llama-bench.sh"
grep_in "$WORK/out" "up to date" "second provisioning does nothing"
check "second provisioning is fast" [ $(( $(date +%s) - start )) -le 5 ]

# A synthetic model in a directory whose name needs quoting.
odd="$WORK/dir with space/it's \$(not run) \`x\`"
mkdir -p "$odd"
if ! "$SHIMBENCH" models synth tiny -o "$odd/tiny.gguf" >"$WORK/out" 2>"$WORK/err"; then
	skip "benchmark: 'shimbench models synth tiny' failed: $(head -1 "$WORK/err")"
	test_done
	exit $?
fi
ok "synthetic tiny model written"

expect_code 0 "benchmark with an absolute odd path" \
	"$LB" -m "$odd/tiny.gguf" -p 16 -n 4 -r 2 -t 2 -o json
py_check() { # py_check TITLE EXPR: EXPR over rows (the parsed JSON array); sys.argv[3] is the model path
	if python3 -c 'import json,sys; rows=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$WORK/out" "$2" "$odd/tiny.gguf" 2>>"$WORK/err"; then
		ok "$1"
	else
		not_ok "$1"
		sed 's/^/# /' "$WORK/out" | head -20
	fi
}
py_check "two rows: pp16 and tg4" "[(r['n_prompt'], r['n_gen']) for r in rows] == [(16, 0), (0, 4)]"
py_check "model path passed byte-exact" "all(r['model_filename'] == sys.argv[3] for r in rows)"
py_check "two samples per row, all positive" "all(len(r['samples_ts']) == 2 and min(r['samples_ts']) > 0 for r in rows)"
py_check "CPU backend, 2 threads" "all(r['backends'] == 'CPU' and r['n_threads'] == 2 for r in rows)"
py_check "build number is an integer" "all(isinstance(r['build_number'], int) and r['build_number'] > 0 for r in rows)"
py_check "model size as synthesised" "all(r['model_n_params'] == 2622720 for r in rows)"

# Relative model path from another working directory: no cwd rule.
expect_code 0 "benchmark with a relative path" \
	bash -c 'cd "$1" && exec "$2" -m "./tiny.gguf" -p 8 -n 0 -r 1 -o jsonl' _ "$odd" "$LB"
grep_in "$WORK/out" '"model_filename": "./tiny.gguf"' "relative path kept as given"
grep_in "$WORK/out" '"n_prompt": 8' "ran the prompt test"

# llama-quantize through its wrapper, then benchmark the result.
expect_code 0 "llama-quantize to Q8_0" "$LQ" "$odd/tiny.gguf" "$odd/tiny-q8.gguf" Q8_0
check "quantized file written" [ -s "$odd/tiny-q8.gguf" ]
expect_code 0 "benchmark the quantized model" "$LB" -m "$odd/tiny-q8.gguf" -p 8 -n 0 -r 1 -o json
grep_in "$WORK/out" "Q8_0" "model type says Q8_0"

# A missing model is a clean failure, not a crash.
expect_code 1 "missing model" "$LB" -m "$WORK/none.gguf" -p 8 -n 0 -r 1
test_done
