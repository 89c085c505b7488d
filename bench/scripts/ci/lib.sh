# Shared by the CI scripts (bench/scripts/ci/*.sh): where things are, and
# the GitHub Actions files (outputs, step summary, annotations), which are
# skipped when the scripts run outside Actions. Sourced, never run.
#
#   SHIMBENCH        the binary (default: build/shimbench of this checkout)
#   SHIMBENCH_STATE  the directory kept between runs: store.db, bundles/,
#                    reports/, gate/ (default .shimbench-ci)
set -u
ci_top=$(CDPATH='' cd -- "$(dirname -- "$0")/../../.." && pwd -P)
SHIMBENCH=${SHIMBENCH:-$ci_top/build/shimbench}
STATE=${SHIMBENCH_STATE:-.shimbench-ci}
DB=$STATE/store.db

say() { echo "ci: $*"; }

# ci_output KEY VALUE: a step output ($GITHUB_OUTPUT).
ci_output() {
	[ -n "${GITHUB_OUTPUT:-}" ] && printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
	return 0
}

# ci_summary: stdin appended to the job's step summary.
ci_summary() {
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat >>"$GITHUB_STEP_SUMMARY"; else cat >/dev/null; fi
}

# ci_annotate LEVEL TITLE MESSAGE: an annotation (notice, warning, error)
# on the run page; a plain line elsewhere. Newlines end the message.
ci_annotate() {
	msg=$(printf '%s' "$3" | head -n 1)
	if [ -n "${GITHUB_ACTIONS:-}" ]; then
		echo "::$1 title=$2::$msg"
	else
		echo "$1: $2: $msg"
	fi
}

# ci_label TEXT: TEXT with only letters, digits, '.', '_' and '-'.
ci_label() { printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '-'; }
