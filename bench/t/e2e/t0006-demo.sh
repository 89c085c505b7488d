#!/bin/bash
# The demo's first screen (issue 22 §2): the build says one line per step;
# the demo leads with one sentence of the headline computed from the rows
# (never a literal), the published rows in the study's order, a footnote
# for MLX-LM rows without bare metal, the local session's own warnings on
# screen. Runs bench/scripts/demo.sh in a copy of the tracked files, with
# the real llama-bench.
. "$(dirname "$0")/lib.sh"

# ---- step.sh: one line a step, the log's end when it fails ----------------
S=$TOP/bench/scripts/step.sh
(cd "$WORK" && BUILD="$WORK/b" sh "$S" build sh -c 'for i in $(seq 60); do echo "cc -c file$i.c"; done') >"$WORK/step.out" 2>&1
check "a step that works: one line" test "$(wc -l <"$WORK/step.out")" = 1
check "named, ok, timed, with its last word" grep -qE '^build: +ok \([0-9]+ s\) · cc -c file60\.c$' "$WORK/step.out"
check "its output kept in the log" test "$(wc -l <"$WORK/b/logs/build.log")" = 60
(cd "$WORK" && BUILD="$WORK/b" sh "$S" llama-bench sh -c 'echo fetching; echo "no network" >&2; exit 3') >"$WORK/step.out" 2>&1
check "a step that fails exits with its code" test $? = 3
grep_in "$WORK/step.out" "llama-bench:           FAILED (exit 3); the end of $WORK/b/logs/llama-bench.log:" "says so and where the log is"
grep_in "$WORK/step.out" "  no network" "and shows the log's end"
check "make demo: llama-bench and the build through step.sh" sh -c \
	"make -n -C '$TOP' demo 2>/dev/null | grep -q 'step.sh llama-bench' && make -n -C '$TOP' demo 2>/dev/null | grep -q 'step.sh build'"
check "the headline is no literal in the demo" sh -c "! grep -qE '11\\.08|16\\.36|7\\.20' '$TOP/bench/scripts/demo.sh'"

# ---- the demo itself ------------------------------------------------------------
if [ ! -x "$TOP/.llama/bin/llama-bench" ]; then
	skip "demo: the real llama-bench is not provisioned (make llama-bench)"
	test_done; exit $?
fi
CLONE=$WORK/clone
mkdir -p "$CLONE"
(cd "$TOP" && git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$CLONE") ||
	{ not_ok "copy the tracked files"; test_done; exit $?; }
ln -s "$TOP/.llama" "$CLONE/.llama"
# another llama process: a pre-flight warning of the local session, for sure
cp "$(command -v sleep)" "$WORK/llama-other"
"$WORK/llama-other" 600 &
other=$!
(cd "$CLONE" && LLAMA_BENCH=$TOP/.llama/bin/llama-bench SHIMBENCH=$SHIMBENCH sh bench/scripts/demo.sh) >"$WORK/demo.out" 2>"$WORK/demo.err"
rc=$?
kill "$other" 2>/dev/null; wait "$other" 2>/dev/null
check "the demo exits 0" test "$rc" = 0
check "the first line is the headline, from the data" python3 - "$WORK/demo.out" <<'PY'
import sys
lines = [l for l in open(sys.argv[1], encoding='utf-8').read().split('\n') if l.strip()]
h = lines[0]
assert h.startswith('== TinyLlama 1.1B Q4_K_M: 11.08× prompt, 16.36× generation with the shim; '), h
assert 'Gemma 4 12B IT QAT Q4_0 7.20× / 14.54×' in h, h
assert h.endswith('shim at 98.25–99.59 % of bare metal for prompts.'), h
PY
check "the first screen: the published rows in the study's order, within 20 lines" python3 - "$WORK/demo.out" <<'PY'
import sys
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')[:20]
rows = [l.split('|')[1].strip() + ' ' + l.split('|')[2].strip() for l in lines if l.startswith('| ') and '(llama.cpp)' in l]
assert rows == ['TinyLlama 1.1B Q4_K_M (llama.cpp) pp512', 'TinyLlama 1.1B Q4_K_M (llama.cpp) tg128',
                'Gemma 4 12B IT QAT Q4_0 (llama.cpp) pp512', 'Gemma 4 12B IT QAT Q4_0 (llama.cpp) tg128'], rows
PY
check "MLX-LM rows without bare metal: marked and explained in a footnote" python3 - "$WORK/demo.out" <<'PY'
import re, sys
t = open(sys.argv[1], encoding='utf-8').read()
assert re.search(r'^\| Llama-3\.2-3B-Instruct-4bit \(MLX-LM\) \| pp512 \| +–† \|', t, re.M), t[:2000]
assert '† No bare-metal run of Llama-3.2-3B-Instruct-4bit (MLX-LM) is among the sessions shown: session 1 measured it in the guest only (stock and shim)' in t
PY
check "no configuration block, no provenance on the first screen" sh -c "! head -40 '$WORK/demo.out' | grep -qE 'build_commit|n_ubatch|Provenance'"
check "the local session's own warning on screen" grep -qE '^  warning: session 3: [0-9]+ other llama process(es)? running$' "$WORK/demo.out"
grep_in "$WORK/demo.out" "figures: 26 pass, 0 fail, 0 missing" "the reproduction, in one line"
grep_in "$WORK/demo.out" "shimbench gate: FAIL, 2 regressions: calib pp128; calib tg32" "the gate's verdict"
check "no terminal table wider than 160" python3 -c "
w = max(len(l) for l in open('$WORK/demo.out', encoding='utf-8').read().split('\n') if l.startswith('|'))
assert w <= 160, w"
test_done
