#!/bin/bash
# Outlier warnings as hyperfine gives them (issue 10 §5): a first sample
# far below the rest of its process, a process whose median sits far from
# its siblings', a difference smaller than the spread of the samples; in
# run's output after its table, in report (md list, json array) and in
# compare. A double stands in for llama-bench: the warnings are about the
# numbers, whoever printed them.
. "$(dirname "$0")/lib.sh"

DB=$WORK/o.db
SB() { "$SHIMBENCH" --db "$DB" "$@"; }
MODEL=$WORK/tiny.gguf
expect_code 0 "synthesize the tiny model" "$SHIMBENCH" models synth tiny -o "$MODEL"

# The double: llama-bench -o jsonl rows of pp64 and tg16, 10 samples each,
# level from FAKE_LEVEL; every process's first pp sample at 40 % (shader
# compilation); the second process of a variant 30 % slower throughout;
# +-3 % spread within a process.
cat >"$WORK/lb.sh" <<'SH'
#!/bin/sh
n=$(cat "$FAKE_COUNTER.$FAKE_LEVEL" 2>/dev/null || echo 0)
n=$((n + 1)); echo "$n" >"$FAKE_COUNTER.$FAKE_LEVEL"
python3 - "$n" "$FAKE_LEVEL" <<'PY'
import json, sys
n, level = int(sys.argv[1]), float(sys.argv[2])
f = 0.7 if n == 2 else 1.0
wiggle = [1.00, 1.03, 0.97, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.00]
for np_, ng, base in ((64, 0, level), (0, 16, level / 4)):
    ts = [round(base * f * w, 3) for w in wiggle]
    if np_:
        ts[0] = round(ts[0] * 0.4, 3)
    print(json.dumps({"build_commit": "fake", "build_number": 1, "cpu_info": "cpu",
        "gpu_info": "", "backends": "CPU", "model_filename": "tiny.gguf",
        "model_type": "llama ?B F16", "model_size": 1, "model_n_params": 1,
        "n_batch": 2048, "n_ubatch": 512, "n_threads": 2, "type_k": "f16",
        "type_v": "f16", "n_gpu_layers": 99, "split_mode": "layer",
        "main_gpu": 0, "flash_attn": -1, "devices": "auto", "n_prompt": np_,
        "n_gen": ng, "n_depth": 0, "test_time": "2026-12-01T00:00:0%dZ" % n,
        "avg_ts": sum(ts) / len(ts), "stddev_ts": 0, "samples_ts": ts}))
PY
SH
chmod +x "$WORK/lb.sh"
export FAKE_COUNTER=$WORK/counter
cat >"$WORK/plan.json" <<JSON
{"name":"outliers", "models":[{"name":"tiny","path":"$MODEL"}],
 "targets":{"here":{"llama_bench":"$WORK/lb.sh"}},
 "variants":[{"name":"stock","target":"here","role":"stock","env":{"FAKE_LEVEL":"1000"}},
             {"name":"shim","target":"here","role":"shim","env":{"FAKE_LEVEL":"1010"}}],
 "llama_bench":{"args":["-p","64","-n","16","-r","10"]}, "processes":3, "order":"grouped", "seed":1}
JSON
expect_code 0 "run the plan (the double)" SB run --bundle "$WORK/b" "$WORK/plan.json"
check "run: the warnings come after its table" python3 -c "
t = open('$WORK/out').read()
assert t.index('| tiny (llama.cpp)') < t.index('### Warnings') < t.index('## Provenance')"
grep_in "$WORK/out" "the first sample of 3 of 3 processes is far below the rest of its process" \
	"a first sample far below the rest (shader compilation)"
grep_in "$WORK/out" "process 2 of 3 has a median of" "a process far from its siblings"
grep_in "$WORK/out" "shim vs stock: the difference (1.00 %) is smaller than the spread of the samples" \
	"stock and shim differ by less than their spread"
expect_code 0 "run --quiet prints the table and its warnings" \
	SB --quiet run --bundle "$WORK/b2" "$WORK/plan.json"
grep_in "$WORK/out" "### Warnings" "--quiet keeps them"

expect_code 0 "report json" SB report --select session=1 --format json
check "json: an array of warnings" python3 -c "
import json; d = json.load(open('$WORK/out'))
w = d['warnings']
assert any('first sample' in x for x in w) and any('process 2 of 3' in x for x in w)
assert any('smaller than the spread' in x for x in w)"
expect_code 0 "compare stock with shim (md)" SB compare session=1,variant=stock session=1,variant=shim
grep_in "$WORK/out" "Warnings:" "compare lists warnings"
grep_in "$WORK/out" "is smaller than the spread of the samples" "the spread is larger than the effect"
grep_in "$WORK/out" "(A): process 2 of 3 has a median" "the disturbed process is named"
expect_code 0 "compare json" SB compare session=1,variant=stock session=1,variant=shim --format json
check "json: a warnings field per workload" python3 -c "
import json; d = json.load(open('$WORK/out'))
assert all('smaller than the spread' in r['warnings'] for r in d)"
expect_code 4 "gate: the difference is within the noise" \
	SB gate --baseline session=1,variant=stock --candidate session=1,variant=shim --mode prove --threshold 0.5
grep_in "$WORK/out" "first sample of 3 of 3 processes" "the gate's Markdown lists them too"

# Clean data: no warning at all.
cat >"$WORK/clean.sh" <<'SH'
#!/bin/sh
python3 -c "
import json, os
level = float(os.environ['FAKE_LEVEL'])
for np_, ng, base in ((64, 0, level), (0, 16, level / 4)):
    ts = [round(base * w, 3) for w in (1.0, 1.01, 0.99, 1.0, 1.01, 0.99, 1.0, 1.01, 0.99, 1.0)]
    print(json.dumps({'build_commit': 'fake', 'backends': 'CPU', 'model_filename': 'tiny.gguf',
        'n_prompt': np_, 'n_gen': ng, 'n_depth': 0, 'n_threads': 2, 'test_time': '2026-12-01T00:00:00Z',
        'avg_ts': base, 'stddev_ts': 0, 'samples_ts': ts}))"
SH
chmod +x "$WORK/clean.sh"
sed -e "s|$WORK/lb.sh|$WORK/clean.sh|" -e 's/"FAKE_LEVEL":"1010"/"FAKE_LEVEL":"2000"/' "$WORK/plan.json" >"$WORK/clean.json"
DB=$WORK/c.db
expect_code 0 "a run without outliers" SB run --bundle "$WORK/c" "$WORK/clean.json"
check "no outlier warning" sh -c "! grep -q '### Warnings' '$WORK/out'"
test_done
