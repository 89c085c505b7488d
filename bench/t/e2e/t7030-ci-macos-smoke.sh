#!/bin/bash
# The macOS CI workflow's smoke study (bench/scripts/ci/macos-smoke.sh),
# run here as the workflow runs it: a plan with stock and shim variants
# on a synthetic model, the shim pinned by `shimbench shim pin`, run,
# report in Markdown and HTML, the bundle kept. On Linux the test library
# libmarker.so stands in for make shim's dylib (LD_PRELOAD instead of
# DYLD_INSERT_LIBRARIES); the workflow's own run needs a Mac.
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "smoke study: the real llama-bench is not provisioned"
	test_done; exit $?
fi
LIB=$T_BUILD/t/helpers/libmarker.so
export GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$WORK/summary.md SHIMBENCH LLAMA_BENCH=$LB
export SHIMBENCH_SMOKE_LIB=$LIB SHIMBENCH_SMOKE_MARKER="[shimbench-test-preload] Enabled for"
export SHIMBENCH_SMOKE_ARGS="-p 16 -n 4 -r 2 -t 2"
CI=$TOP/bench/scripts/ci

expect_code 0 "macos-smoke.sh" sh "$CI/macos-smoke.sh" "$WORK/smoke"
S=$WORK/smoke
check "the plan pins the injected library by its hash" grep -q "\"sha256\": \"$(sha256sum "$LIB" | cut -d' ' -f1)\"" "$S/plan.json"
check "the bundle" test -f "$S/bundle/bundle.json" -a -f "$S/bundle/SHA256SUMS"
check "the report, md and html" test -s "$S/report.md" -a -s "$S/report.html"
q() { sqlite3 "$S/store.db" "$1"; }
[ "$(q "select count(*) from runs where status='ok'")" = 4 ] && ok "2 processes of each variant, ok" \
	|| not_ok "runs: $(q 'select variant, status from runs')"
[ "$(q "select verification from runs where variant='shim' group by verification")" = verified ] \
	&& ok "the shim verified in every shim run" || not_ok "shim runs not verified"
grep_in "$S/report.md" "Guest speedup" "stock against shim in the table"
grep_in "$GITHUB_STEP_SUMMARY" "### shimbench smoke study" "the report in the step summary"
expect_code 0 "the bundle imports elsewhere" "$SHIMBENCH" --db "$WORK/i.db" import "$S/bundle"

SHIMBENCH_SMOKE_MARKER="[LumeMetalCapabilities] Enabled for" \
	expect_code 1 "a shim that does not take effect fails the study" sh "$CI/macos-smoke.sh" "$WORK/smoke2"
grep_in "$WORK/out" "::error title=smoke::" "with an error annotation"
SHIMBENCH_SMOKE_LIB=$WORK/none.dylib expect_code 3 "no make shim output" sh "$CI/macos-smoke.sh" "$WORK/smoke3"
grep_in "$WORK/out" "no library to inject" "says so"
test_done
