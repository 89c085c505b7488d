#!/bin/bash
# Progress of long steps (issue 22 §7), hyperfine-style: what, how far,
# time left, on one line redrawn in place on a terminal (a pty from
# script(1)), silent when stderr is not a terminal or with --quiet.
# `import` of a large directory (checking its files, parsing, storing)
# and `models synth --quantize` (llama-quantize's tensor counter).
. "$(dirname "$0")/lib.sh"

if ! command -v script >/dev/null 2>&1; then
	skip "progress: script(1) is not installed (util-linux / bsdutils)"
	test_done; exit $?
fi
cd "$WORK" || exit 1
# pty CMD...: runs CMD on a pseudo-terminal; everything it wrote, raw
pty() { script -qec "$*" /dev/null; }

# A directory of 400 real llama-bench outputs (the os-update series,
# each file a distinct measurement time) with its mapping and sums.
python3 - "$FIXTURES/os-update/base" <<'PY'
import hashlib, json, os, sys
src = sys.argv[1]
m = json.load(open(src + '.mapping.json'))
os.makedirs('big')
runs, sums = [], []
for i in range(400):
    rows = json.load(open('%s/run%d.json' % (src, 1 + i % 10)))
    for r in rows:
        r['test_time'] = '2026-08-%02dT%02d:%02d:00Z' % (1 + i // 60, i % 24, i % 60)
    t = json.dumps(rows)
    n = 'run%04d.json' % i
    open('big/' + n, 'w').write(t)
    sums.append('%s  %s\n' % (hashlib.sha256(t.encode()).hexdigest(), n))
    r0 = dict(m['runs'][0]); r0['stdout'] = n; runs.append(r0)
open('big/SHA256SUMS', 'w').write(''.join(sums))
m['runs'] = runs
json.dump(m, open('big.mapping.json', 'w'))
PY

# On a terminal (every step drawn from its start: SHIMBENCH_PROGRESS_AFTER=0)
SHIMBENCH_PROGRESS_AFTER=0 pty "'$SHIMBENCH' --db a.db import --mapping big.mapping.json big" >tty.log 2>&1
check "import on a terminal: stored" test "$(sqlite3 a.db 'select count(*) from runs')" = 400
check "what, how far and time left, for each step" python3 - tty.log <<'PY'
import re, sys
t = open(sys.argv[1], encoding='utf-8', newline='').read()
frames = [f for f in re.split('\r\x1b\\[K', t) if f]
def steps(what, unit):
    return [f for f in frames if re.match(r"%s: \d+/\d+ %s \(\d+ %%\) · \d+:\d\d elapsed" % (what, unit), f)]
drawn = []
for what, unit in (("checking 'big'", 'files'), ("parsing 'big'", 'runs'), ('storing', 'runs')):
    s = steps(what, unit)
    assert s, (what, frames[:5])
    assert all('/400 ' in f for f in s), s[:3]
    drawn += s
# a step that took a tenth of a second or more drew again, with the time left
assert any(re.search(r'[1-9]\d*/400 .* · ~\d+:\d\d left$', f) for f in drawn), drawn
done = [int(re.search(r': (\d+)/', f).group(1)) for f in steps("parsing 'big'", 'runs')]
assert done == sorted(done), 'counts only go up'
last = frames[-1]
assert last.startswith("imported 'big' as session 1: 400 runs"), repr(last)
PY
# not a terminal: not one progress byte
SHIMBENCH_PROGRESS_AFTER=0 "$SHIMBENCH" --db b.db import --mapping big.mapping.json big >out.log 2>err.log
check "import to a file: stored" test "$(sqlite3 b.db 'select count(*) from runs')" = 400
check "not a terminal: no progress, no escape, no carriage return" sh -c "! grep -q \"files (\\|runs (\" err.log && ! grep -q \$'\\r' err.log && ! grep -q \$'\\033' err.log"
grep_in out.log "imported 'big' as session 1: 400 runs" "the result line alone"
SHIMBENCH_PROGRESS_AFTER=0 pty "'$SHIMBENCH' --quiet --db c.db import --mapping big.mapping.json big" >quiet.log 2>&1
check "--quiet on a terminal: no progress" sh -c "! grep -q 'runs (' quiet.log"

# models synth --quantize: the real llama-quantize on TinyLlama 1.1B's
# tensor set (201 tensors, about 7 s of quantizing here)
if [ -x "$TOP/.llama/bin/llama-quantize" ] || command -v llama-quantize >/dev/null 2>&1; then
	export LLAMA_QUANTIZE=${LLAMA_QUANTIZE:-$TOP/.llama/bin/llama-quantize}
	pty "'$SHIMBENCH' models synth tinyllama-1.1b -o tq.gguf --quantize Q4_0" >q.log 2>&1
	check "quantized" test -s tq.gguf
	check "quantize on a terminal: type, tensor i/201, time left" python3 - q.log <<'PY'
import re, sys
t = open(sys.argv[1], encoding='utf-8', newline='').read()
frames = re.split('\r\x1b\\[K', t)
q = [f for f in frames if re.match(r'synth: quantizing to Q4_0: \d+/201 tensors \(\d+ %\) · \d+:\d\d elapsed', f)]
assert q, frames[:6]
assert any(re.search(r' · ~\d+:\d\d left · \d+ MB written$', f) for f in q), q
n = [int(re.search(r': (\d+)/201', f).group(1)) for f in q]
assert n == sorted(n) and n[-1] > n[0], n
PY
	rm -f tq.gguf
	"$SHIMBENCH" models synth tinyllama-1.1b -o tq.gguf --quantize Q4_0 >qout.log 2>qerr.log
	check "quantize to a file: no progress line" sh -c "! grep -q 'tensors (' qerr.log && ! grep -q \$'\\033' qerr.log"
	grep_in qerr.log "synth: quantized to Q4_0 in" "the one line that says it is done"
	rm -f tq.gguf
else
	skip "quantize progress: no llama-quantize (make llama-bench)"
fi
test_done
