#!/bin/bash
# Synthetic models load and run in the real llama-bench, and `models info`
# agrees with llama-bench's model_size and model_n_params: tiny in F16,
# F32 and Q8_0, the gemma3 structure, and tiny quantized to Q4_K_M through
# `models synth --quantize` (llama-quantize).
. "$(dirname "$0")/lib.sh"

LB=${LLAMA_BENCH:-$TOP/.llama/bin/llama-bench}
if [ ! -x "$LB" ] && ! LB=$(command -v llama-bench); then
	skip "llama-bench is absent (run: make llama-bench)"
	test_done
	exit $?
fi

# jfield FILE KEY: the integer value of KEY in the first JSON line of FILE.
jfield() {
	sed -n "s/.*\"$2\": *\([0-9][0-9]*\).*/\1/p" "$1" | head -1
}
# info_field FILE KEY: a "key: value" line of `models info`.
info_field() {
	sed -n "s/^$2: //p" "$1" | head -1
}

check_model() {
	local f=$1 what=$2
	expect_code 0 "info $what" "$SHIMBENCH" models info "$f" || return
	cp "$WORK/out" "$WORK/info"
	expect_code 0 "llama-bench runs $what" "$LB" -m "$f" -p 16 -n 4 -r 1 -o jsonl || return
	cp "$WORK/out" "$WORK/lb"
	[ "$(wc -l <"$WORK/lb")" -eq 2 ] && ok "$what: two result rows" || not_ok "$what: rows: $(cat "$WORK/lb")"
	local p s
	p=$(jfield "$WORK/lb" model_n_params)
	s=$(jfield "$WORK/lb" model_size)
	[ -n "$p" ] && [ "$p" = "$(info_field "$WORK/info" model_n_params)" ] &&
		ok "$what: model_n_params $p agrees" ||
		not_ok "$what: llama-bench $p, info $(info_field "$WORK/info" model_n_params)"
	[ -n "$s" ] && [ "$s" = "$(info_field "$WORK/info" model_size)" ] &&
		ok "$what: model_size $s agrees" ||
		not_ok "$what: llama-bench $s, info $(info_field "$WORK/info" model_size)"
}

for t in f16 f32 q8_0; do
	expect_code 0 "synth tiny $t" "$SHIMBENCH" models synth tiny --type "$t" -o "$WORK/tiny-$t.gguf" &&
		check_model "$WORK/tiny-$t.gguf" "tiny $t"
done
expect_code 0 "synth tiny-gemma3" "$SHIMBENCH" models synth tiny-gemma3 -o "$WORK/tg3.gguf" &&
	check_model "$WORK/tg3.gguf" "tiny-gemma3"
grep_in "$WORK/lb" '"model_type": "gemma3 ' "llama-bench loaded it as gemma3"

LQ=${LLAMA_QUANTIZE:-$TOP/.llama/bin/llama-quantize}
if [ -x "$LQ" ] || command -v llama-quantize >/dev/null; then
	expect_code 0 "synth tiny --quantize Q4_K_M" "$SHIMBENCH" models synth tiny --quantize Q4_K_M -o "$WORK/tiny-q4km.gguf" &&
		check_model "$WORK/tiny-q4km.gguf" "tiny Q4_K_M"
	grep_in "$WORK/info" "file type: Q4_K_M (15)" "info names the file type"
	grep_in "$WORK/lb" '"model_type": "llama ?B Q4_K - Medium"' "llama-bench agrees on the type"
	ls "$WORK" | grep -q '\.tmp' && not_ok "temporary file left behind" || ok "no temporary file left"
	expect_code 3 "quantize to an unknown type" "$SHIMBENCH" models synth tiny --quantize Q9_Z -o "$WORK/bad.gguf"
	grep_in "$WORK/err" "llama-quantize' failed" "failure of llama-quantize reported"
else
	skip "llama-quantize is absent (run: make llama-bench)"
fi
test_done
