#!/bin/sh
# bench/scripts/run-sanitized.sh BUILD_DIR [PATTERN...]: runs
# bench/t/run-all.sh (SHIMBENCH and SHIMBENCH_BUILD as set by make check)
# with ASan's and LeakSanitizer's reports going to files under
# BUILD_DIR/sanitizer/ instead of the tests' stderr, then fails when any
# process wrote one: a test that expects exit 1 or ignores a helper's
# status would otherwise let a finding pass. UBSan halts on the first
# finding with exit 86, which no test expects (gcc's UBSan prints to
# stderr whatever log_path says), so a finding is never recovered from.
# verify_asan_link_order=0: the full-disk tests LD_PRELOAD an
# unsanitized helper into shimbench, which ASan would otherwise refuse.
# Leak checking stays on: a leak fails the suite like any finding.
build=${1:?usage: run-sanitized.sh BUILD_DIR [PATTERN...]}
shift
logs=$build/sanitizer
rm -rf "$logs"
mkdir -p "$logs" || exit 1
ASAN_OPTIONS="exitcode=86:log_path=$logs/asan:verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=86:log_path=$logs/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS
sh "$(dirname "$0")/../t/run-all.sh" "$@"
rc=$?
found=$(ls "$logs" | wc -l)
if [ "$found" -gt 0 ]; then
	echo "sanitizer findings: $found report(s) under $logs:"
	for f in "$logs"/*; do
		echo "== $f"
		head -n 30 "$f"
	done
	exit 1
fi
echo "sanitizers: no report file under $logs"
exit "$rc"
