#!/bin/sh
# CI step (GitHub-hosted Apple-silicon macOS runners, themselves VMs with
# a paravirtual GPU): a smoke study, stock against the shim, on a small
# synthetic model through `shimbench run`.
#
#   sh bench/scripts/ci/macos-smoke.sh OUT
#
#   SHIMBENCH_SMOKE_LIB     the library to inject (default make shim's
#                           build/shim/LumeMetalCapabilities-arm64.dylib)
#   SHIMBENCH_SMOKE_MARKER  the stderr line that proves it took effect
#                           (default "[LumeMetalCapabilities] Enabled for")
#   SHIMBENCH_SMOKE_ARGS    llama-bench's arguments (default -p 128 -n 32 -r 3)
#
# Writes OUT/plan.json (its shim pinned by `shimbench shim pin`, never by
# hand), OUT/models/synth-tiny.gguf, OUT/store.db, the evidence bundle
# OUT/bundle and the report OUT/report.md and OUT/report.html; the report
# goes to the step summary. Exit: run's (1 when the shim was not verified).
. "$(dirname "$0")/lib.sh"
out=${1:?usage: macos-smoke.sh OUT}
lib=${SHIMBENCH_SMOKE_LIB:-$ci_top/build/shim/LumeMetalCapabilities-arm64.dylib}
marker=${SHIMBENCH_SMOKE_MARKER:-[LumeMetalCapabilities] Enabled for}
args=${SHIMBENCH_SMOKE_ARGS:--p 128 -n 32 -r 3}
mkdir -p "$out/models" || exit 3
[ -f "$lib" ] || { ci_annotate error "smoke" "no library to inject at '$lib' (make shim)"; exit 3; }

json() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
argv=
for a in $args; do argv="$argv${argv:+, }$(json "$a")"; done
model=$out/models/synth-tiny.gguf
[ -f "$model" ] || "$SHIMBENCH" models synth tiny -o "$model" || exit 3
cat >"$out/plan.json" <<JSON
{"name": "smoke: stock and shim on a synthetic model",
 "models": [{"name": "synth-tiny", "path": $(json "$model")}],
 "targets": {"here": {"transport": "local"}},
 "variants": [
   {"name": "stock", "target": "here", "role": "stock"},
   {"name": "shim", "target": "here", "role": "shim",
    "inject": {"library": $(json "$lib"),
               "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
               "env": {"LUME_METAL_APPLE_FAMILY_MAX": "1009"}},
    "expect": [$(json "$marker")]}],
 "llama_bench": {"args": [$argv]},
 "processes": 2, "order": "interleaved"}
JSON
"$SHIMBENCH" shim pin "$out/plan.json" shim "$lib" || exit 3
rm -rf "$out/bundle"
"$SHIMBENCH" --db "$out/store.db" run --label smoke --bundle "$out/bundle" "$out/plan.json"
rc=$?
"$SHIMBENCH" --db "$out/store.db" --quiet report -o "$out/report.md" &&
"$SHIMBENCH" --db "$out/store.db" --quiet report --format html -o "$out/report.html" ||
	ci_annotate warning "smoke" "the report could not be written"
{
	echo "### shimbench smoke study ($(uname -sm))"
	echo
	cat "$out/report.md" 2>/dev/null
} | ci_summary
[ "$rc" -eq 0 ] || ci_annotate error "smoke" "'shimbench run' exited $rc: a run failed or the shim was not verified"
exit "$rc"
