#!/bin/sh
# CI step: run the study plan into the kept store, write its bundle and
# report, and hand the session on to the gate.
#
#   sh bench/scripts/ci/run-study.sh PLAN
#
#   SHIMBENCH_LABEL  the session's label (default HOST-RUNID-ATTEMPT, HOST
#                    from SHIMBENCH_HOST or the machine's name)
#
# Writes $SHIMBENCH_STATE/bundles/LABEL (the evidence bundle),
# $SHIMBENCH_STATE/reports/LABEL.{md,html} and appends the Markdown to the
# step summary. Step outputs: session (its id in the store), bundle, label,
# report. Exit: run's own (0 ok; 1 a run failed or was not verified: the
# session and bundle are still kept for the gate and the history; 3
# environment; 130 interrupted).
. "$(dirname "$0")/lib.sh"
plan=${1:?usage: run-study.sh PLAN}
host=${SHIMBENCH_HOST:-$(hostname 2>/dev/null || echo host)}
label=$(ci_label "${SHIMBENCH_LABEL:-$host-${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-1}}")
bundle=$STATE/bundles/$label
report=$STATE/reports/$label
mkdir -p "$STATE/bundles" "$STATE/reports" || exit 3
if [ -e "$bundle" ]; then
	# A re-run of the same attempt: keep the earlier bundle, take a new name.
	n=2
	while [ -e "$bundle-$n" ]; do n=$((n + 1)); done
	label=$label-$n
	bundle=$bundle-$n
	report=$report-$n
fi

before=$("$SHIMBENCH" --db "$DB" sessions --last 2>/dev/null || true)
say "running $plan as '$label' into $DB"
"$SHIMBENCH" --db "$DB" run --label "$label" --bundle "$bundle" "$plan"
rc=$?
session=$("$SHIMBENCH" --db "$DB" sessions --last 2>/dev/null || true)
if [ -z "$session" ] || [ "$session" = "$before" ]; then
	ci_annotate error "run" "'shimbench run' stored no session (exit $rc)"
	[ "$rc" -eq 0 ] && rc=3
	exit "$rc"
fi
"$SHIMBENCH" --db "$DB" --quiet report --select "session=$session" -o "$report.md" &&
"$SHIMBENCH" --db "$DB" --quiet report --select "session=$session" --format html -o "$report.html" ||
	ci_annotate warning "run" "the report of session $session could not be written"
{
	echo "### shimbench run: session $session ($label)"
	echo
	[ -f "$report.md" ] && cat "$report.md"
	echo
} | ci_summary
ci_output session "$session"
ci_output label "$label"
ci_output bundle "$bundle"
ci_output report "$report.md"
if [ "$rc" -ne 0 ]; then
	ci_annotate error "run" "session $session: 'shimbench run' exited $rc (a run failed or its injection was not verified); see the log"
fi
exit "$rc"
