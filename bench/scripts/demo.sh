#!/bin/sh
# make demo: the main job on the built-in default, in under a minute.
#
#   1. the published evidence that ships in evidence/ (an M1 Ultra host and
#      its macOS guest, stock and with the shim) imported and reported:
#      speedups, percent of bare metal, MLX-LM beside llama.cpp, checked
#      against the published figures;
#   2. a real llama-bench session on this machine (the default plan: the
#      synthetic tiny model, -p 512 -n 128 -r 10, 3 processes);
#   3. the OS-update gate on a recorded, simulated pair of sessions;
#   4. the HTML page with its charts, and where to go next.
#
# Everything goes under reports/demo-STAMP/ (its own store, so the demo
# never touches shimbench.db); the files written are named at the end.
set -eu
bin=${SHIMBENCH:-build/shimbench}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=reports/demo-$stamp
db=$out/demo.db
model=models/synth-tiny.gguf
e1=evidence/cua-lume-2026-08-09-m1-ultra
e2=evidence/cua-lume-2026-08-10-m1-ultra-gemma4
osu=bench/t/fixtures/os-update
mkdir -p "$out"
sb() { "$bin" --db "$db" "$@"; }
say() { printf '\n== %s\n\n' "$*"; }

# table FILE: a report's headline table and its footnote, less the
# headline sentence and the notes (the provenance is in the file)
table() {
	sed -n '/^| Workload/,/^Values:/p' "$1" | grep -v '^Values:' |
		sed '/^Not shown (empty/,/^$/d'
}
# warnings FILE: what a report says its figures must not be read without
warnings() {
	{ sed -n '/^### Warnings/,/^$/p' "$1" | grep '^- ' || true
	  grep '^- \*\*Warning:\*\*' "$1" | sed 's/^- \*\*Warning:\*\* /- /' || true; } |
		sed 's/^- /  warning: /'
}

# (the Gemma set's SHA256SUMS also lists the publisher's notes, which the
# project does not copy: import names them in a warning, kept in the log)
sb --quiet import --mapping "$e1/mapping.json" --mapping "$e2/mapping.json" \
	"$e1" "$e2" >"$out/import.log" 2>&1
sb report --select kind=import --format md -o "$out/published.md" 2>/dev/null
# the first screen leads with the result itself, computed from the rows
say "$(sed -n 's/^\*\*Headline:\*\* //p' "$out/published.md")"
echo "1. The published evidence: an M1 Ultra host and its macOS guest, stock and with the shim"
echo
table "$out/published.md"
sb reproduce >"$out/reproduce.txt" || true
echo
tail -n 1 "$out/reproduce.txt"

say "2. A real llama-bench session on this machine"
[ -f "$model" ] || "$bin" --quiet models synth tiny -o "$model"
"$bin" --quiet models verify synth-tiny >/dev/null
rc=0
sb --quiet run --label "demo-$stamp" --bundle "$out/bundle" bench/plans/default.json \
	>"$out/local.md" || rc=$?
table "$out/local.md"
# this machine's own warnings (its load, a wide spread) on screen too
warnings "$out/local.md"

say "3. The macOS-update gate on a simulated pair (one machine; the 'update' is a model 15 % larger, about 14 % slower)"
sb --quiet import --mapping "$osu/base.mapping.json" --mapping "$osu/slow.mapping.json" \
	"$osu/base" "$osu/slow" >>"$out/import.log" 2>&1
grc=0
sb gate --baseline session=latest~1 --candidate session=latest \
	--json "$out/gate.json" >"$out/gate.md" 2>"$out/gate.err" || grc=$?
# the verdict and each check's words: the gate's Markdown goes on with
# its warnings and the provenance of both sides (in the file)
sed -n '1s/^### //p' "$out/gate.md"
sed -n '/^| check /,/^$/p' "$out/gate.md"
awk '/^  - workload: / { w = substr($0, 15) }
     /^  - detail: / { print "  " w ": " substr($0, 13) }' "$out/gate.md"
echo "gate exit code: $grc (0 pass, 1 regression, 4 inconclusive)"

say "4. Report and charts"
sb --quiet report --format html -o "$out/report.html" --plot "$out/charts" 2>/dev/null
sb --quiet report --format md -o "$out/report.md" 2>/dev/null
echo "wrote:"
for f in "$out/published.md" "$out/reproduce.txt" "$out/local.md" "$out/gate.md" \
	"$out/gate.json" "$out/report.md" "$out/report.html" "$out/charts"/* \
	"$out/bundle/SHA256SUMS" "$db"; do
	[ -e "$f" ] && echo "  $f"
done
cat <<EOF

Next:
  the page with every chart:     $out/report.html
  what is stored:                $bin --db $db sessions
  a workload across sessions:    $bin --db $db history
  the gate in CI (one Mac, a fleet): docs/ci/README.md
  the shim on a real Mac guest:  shim/README.md
EOF
exit "$rc"
