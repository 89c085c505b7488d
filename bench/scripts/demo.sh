#!/bin/sh
# make demo: the main job on the built-in default. Synthesizes the tiny
# model (deterministic, checked against the manifest), runs the default
# plan with the real llama-bench on this machine, writes the evidence
# bundle under evidence/ and the report under reports/, prints the table.
set -eu
bin=${SHIMBENCH:-build/shimbench}
model=models/synth-tiny.gguf
stamp=$(date -u +%Y%m%dT%H%M%SZ)
bundle=evidence/demo-$stamp
report=reports/demo-$stamp.md

if [ ! -f "$model" ]; then
	echo "demo: synthesizing $model"
	"$bin" models synth tiny -o "$model"
fi
echo "demo: verifying models against models/manifest.json"
"$bin" models verify synth-tiny
echo "demo: running bench/plans/default.json (llama-bench -p 512 -n 128 -r 10, 3 processes)"
rc=0
"$bin" run --label "demo-$stamp" --bundle "$bundle" bench/plans/default.json \
	>/dev/null || rc=$?
"$bin" --quiet report --select "label=demo-$stamp" --format md -o "$report"
"$bin" --quiet report --select "label=demo-$stamp" --format html -o "${report%.md}.html"
echo
cat "$report"
echo
echo "demo: evidence bundle in $bundle, report in $report (and ${report%.md}.html), store in ${SHIMBENCH_DB:-shimbench.db}"
exit "$rc"
