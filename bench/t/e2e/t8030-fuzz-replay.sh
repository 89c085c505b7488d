#!/bin/bash
# The fuzz corpora (bench/t/fuzz/corpus/NAME, seeds from the fixtures and
# the real corpus plus what fuzzing found worth keeping) replayed through
# every fuzz target under AddressSanitizer, UndefinedBehaviorSanitizer
# and float-cast-overflow (the build-san/ build that t3010 makes): no
# input may crash, leak or report. The fuzzing itself is
# bench/scripts/fuzz.sh (libFuzzer, clang); figures in bench/BENCHMARKS.md.
. "$(dirname "$0")/lib.sh"

if [ -n "${SHIMBENCH_SKIP_SANITIZE:-}" ]; then
	skip "sanitizer build: SHIMBENCH_SKIP_SANITIZE is set"
	test_done
	exit $?
fi
CORPUS=$TOP/bench/t/fuzz/corpus
names=$(cd "$TOP/bench/t/fuzz" && ls fuzz-*.c | sed 's/^fuzz-//; s/\.c$//')
targets=""
for n in $names; do targets="$targets build-san/fuzz/replay-$n"; done
# shellcheck disable=SC2086
if ! make -C "$TOP" --no-print-directory -j2 SANITIZE=address,undefined $targets \
	>"$WORK/build.log" 2>&1; then
	not_ok "sanitizer build of the replay targets failed"
	tail -20 "$WORK/build.log" | sed 's/^/# /'
	test_done
	exit $?
fi
ok "replay targets built with -fsanitize=address,undefined,float-cast-overflow"
# (a rebuild names the flags; targets already up to date print only that)
grep -q "float-cast-overflow" "$WORK/build.log" ||
	! grep -qv "is up to date" "$WORK/build.log" ||
	not_ok "float-cast-overflow missing from the sanitizer flags"

export ASAN_OPTIONS=abort_on_error=0:exitcode=99:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:exitcode=98:print_stacktrace=1
start=$(date +%s)
for n in $names; do
	[ -d "$CORPUS/$n" ] && [ -n "$(ls "$CORPUS/$n")" ] || {
		not_ok "$n: no committed corpus in bench/t/fuzz/corpus/$n"
		continue
	}
	(cd "$WORK" && timeout 120 "$TOP/build-san/fuzz/replay-$n" "$CORPUS/$n") >"$WORK/$n.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && ! grep -q "runtime error\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer" "$WORK/$n.log"; then
		ok "$n: $(tail -1 "$WORK/$n.log") clean"
	else
		not_ok "$n: exit $rc"
		grep -E "ERROR|runtime error|SUMMARY|#[0-9]" "$WORK/$n.log" | head -12 | sed 's/^/# /'
	fi
done
took=$(( $(date +%s) - start ))
[ "$took" -le 60 ] && ok "the replay took ${took}s (at most 60)" || not_ok "the replay took ${took}s, more than 60"
test_done
