#!/bin/sh
# CI step: the macOS-update gate on the kept store, as a CI verdict.
#
#   sh bench/scripts/ci/gate.sh [CANDIDATE]     (default session=latest)
#
#   SHIMBENCH_GATE_ARGS      more gate options (--threshold tg=10, --mode
#                            prove, --shim-floor 5, ...)
#   SHIMBENCH_GATE_FALLBACK  the baseline when no session of the same base
#                            fingerprint has another OS build (no macOS
#                            update since the last one): a selection
#                            (default session=latest~1, the previous run),
#                            or "none"
#   SHIMBENCH_GATE_OUT       where junit.xml, gate.json and gate.md go
#                            (default $SHIMBENCH_STATE/gate)
#   SHIMBENCH_NEUTRAL_CHECK  1: post an inconclusive gate as a check run
#                            with conclusion "neutral" (gh api; GH_TOKEN
#                            with checks: write)
#
# `shimbench gate --baseline auto --candidate CANDIDATE` decides; its
# Markdown goes to the step summary and JUnit to junit.xml. The job's
# verdict: exit 0 pass; exit 1 regression (an error annotation: a red
# build); inconclusive (gate's exit 4) is NEUTRAL: a warning annotation
# with the reason, "neutral" in the summary and the outputs, exit 0, so
# noise never turns a build red; the first run of a store (nothing to
# compare) is neutral too. Outputs: verdict (pass, regression,
# inconclusive, no-baseline), baseline, exit-code.
. "$(dirname "$0")/lib.sh"
cand=${1:-session=latest}
out=${SHIMBENCH_GATE_OUT:-$STATE/gate}
fallback=${SHIMBENCH_GATE_FALLBACK:-session=latest~1}
mkdir -p "$out" || exit 3

# gate BASELINE: runs the gate; $rc, and its stderr in $out/gate.err.
gate() {
	# shellcheck disable=SC2086 # SHIMBENCH_GATE_ARGS: options, split on purpose
	"$SHIMBENCH" --db "$DB" gate --baseline "$1" --candidate "$cand" \
		--junit "$out/junit.xml" --json "$out/gate.json" --summary "$out/gate.md" \
		${SHIMBENCH_GATE_ARGS:-} >"$out/gate.out" 2>"$out/gate.err"
	rc=$?
	cat "$out/gate.out"
	cat "$out/gate.err" >&2
}

# neutral REASON: the verdict that is neither red nor green.
neutral() {
	ci_annotate warning "shimbench gate: neutral" "$1"
	printf '**Neutral** (not a failure): %s\n\n' "$1" | ci_summary
	if [ "${SHIMBENCH_NEUTRAL_CHECK:-0}" = 1 ] && command -v gh >/dev/null 2>&1 &&
	   [ -n "${GITHUB_REPOSITORY:-}" ] && [ -n "${GITHUB_SHA:-}" ]; then
		summary=$(cat "$out/gate.md" 2>/dev/null)
		gh api -X POST "repos/$GITHUB_REPOSITORY/check-runs" \
			-f name="shimbench gate" -f head_sha="$GITHUB_SHA" \
			-f status=completed -f conclusion=neutral \
			-f "output[title]=$1" -f "output[summary]=${summary:-$1}" >/dev/null ||
			ci_annotate warning "shimbench gate" "the neutral check run could not be posted"
	fi
}

# json_word KEY: the value of a top-level string KEY of gate.json, one
# word of [a-z-] (gate writes one key a line; no JSON parser needed).
json_word() {
	sed -n "s/^  \"$1\": \"\([a-z-]*\)\",\{0,1\}\$/\1/p" "$out/gate.json" 2>/dev/null | head -n 1
}

rm -f "$out/junit.xml" "$out/gate.json" "$out/gate.md"
baseline=auto
gate auto
# gate says "no macOS update since the last baseline" in its JSON
# (no_baseline: no-other-os-build), never only in words
if [ "$rc" -eq 3 ] && [ "$(json_word no_baseline)" = no-other-os-build ]; then
	sessions=$("$SHIMBENCH" --db "$DB" sessions --format csv 2>/dev/null | tail -n +2 | grep -c .)
	if [ "$cand" = session=latest ] && [ "${sessions:-0}" -le 1 ]; then
		ci_output verdict no-baseline
		ci_output exit-code 0
		neutral "first session in this store: nothing to compare yet; it is the baseline of the next run"
		exit 0
	fi
	if [ "$fallback" = none ]; then
		ci_output verdict no-baseline
		ci_output exit-code 0
		neutral "no session of this fingerprint has another OS build: no macOS update to gate since the last one"
		exit 0
	fi
	say "no macOS update since the last baseline; gating against $fallback"
	printf 'No session of this fingerprint has another OS build (no macOS update since the last one): gating against `%s`.\n\n' \
		"$fallback" | ci_summary
	baseline=$fallback
	gate "$fallback"
elif [ "$rc" -eq 3 ] && [ -n "$(json_word no_baseline)" ]; then
	# an OS update, but no earlier session shares a workload (or the
	# candidate has no fingerprint): nothing to gate, said, never green
	ci_output verdict no-baseline
	ci_output exit-code "$rc"
	neutral "no baseline to gate against ($(json_word no_baseline)): $(tail -n 1 "$out/gate.err")"
	exit 0
fi
ci_output baseline "$baseline"
ci_output exit-code "$rc"
head=$(sed -n 's/^### shimbench gate: //p' "$out/gate.md" 2>/dev/null | head -n 1)
case "$rc" in
0)
	ci_output verdict pass
	ci_annotate notice "shimbench gate" "${head:-PASS}"
	exit 0 ;;
1)
	ci_output verdict regression
	ci_annotate error "shimbench gate: regression" "${head:-FAIL}"
	exit 1 ;;
4)
	ci_output verdict inconclusive
	neutral "${head:-INCONCLUSIVE}"
	exit 0 ;;
*)
	ci_output verdict error
	ci_annotate error "shimbench gate" "gate exited $rc: $(tail -n 1 "$out/gate.err")"
	exit "$rc" ;;
esac
