#!/bin/bash
# The GGUF reader (and the hashing threads) under AddressSanitizer and
# UndefinedBehaviorSanitizer:
# builds build-san/ (make SANITIZE=address,undefined), runs the unit test
# with its hostile-header corpus, then feeds every corpus file to
# `shimbench models info`: each must exit 2 with an error naming an
# offset, and no sanitizer may report anything. Takes about 30 s.
. "$(dirname "$0")/lib.sh"

if [ -n "${SHIMBENCH_SKIP_SANITIZE:-}" ]; then
	skip "sanitizer build: SHIMBENCH_SKIP_SANITIZE is set"
	test_done
	exit $?
fi
SAN=$TOP/build-san
if ! make -C "$TOP" --no-print-directory SANITIZE=address,undefined \
	build-san/t/test-gguf build-san/t/test-hash build-san/shimbench \
	>"$WORK/build.log" 2>&1; then
	not_ok "sanitizer build failed"
	tail -20 "$WORK/build.log" | sed 's/^/# /'
	test_done
	exit $?
fi
ok "sanitizer build"

export ASAN_OPTIONS=abort_on_error=0:exitcode=99:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:exitcode=98:print_stacktrace=1
mkdir -p "$WORK/corpus"
GGUF_CORPUS_DIR=$WORK/corpus "$SAN/t/test-gguf" >"$WORK/unit.log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "unit test and corpus clean under the sanitizers" || {
	not_ok "test-gguf under sanitizers (exit $rc)"
	grep -v '^ok ' "$WORK/unit.log" | head -30 | sed 's/^/# /'
}
"$SAN/t/test-hash" >"$WORK/hash.log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "hashing (threads, cache) clean under the sanitizers" || {
	not_ok "test-hash under sanitizers (exit $rc)"
	grep -v '^ok ' "$WORK/hash.log" | head -30 | sed 's/^/# /'
}
n=$(ls "$WORK/corpus" | wc -l)
[ "$n" -gt 100 ] && ok "corpus has $n hostile files" || not_ok "corpus has only $n files"

bad=0 crashed=0 unnamed=0
for f in "$WORK/corpus"/*.gguf; do
	"$SAN/shimbench" models info "$f" >/dev/null 2>"$WORK/err"
	rc=$?
	if [ $rc -ne 2 ] && [ $rc -ne 0 ]; then
		crashed=$((crashed + 1))
		[ $crashed -le 3 ] && { echo "# $f: exit $rc"; head -5 "$WORK/err" | sed 's/^/# /'; }
	elif grep -q -E 'Sanitizer|runtime error' "$WORK/err"; then
		crashed=$((crashed + 1))
	elif [ $rc -eq 2 ]; then
		bad=$((bad + 1))
		grep -q "': offset [0-9]*: " "$WORK/err" || unnamed=$((unnamed + 1))
	fi
done
[ $crashed -eq 0 ] && ok "models info: no crash or sanitizer report on $n files" || not_ok "$crashed files crashed or tripped a sanitizer"
[ $bad -ge $((n * 9 / 10)) ] && ok "models info rejects the hostile files ($bad of $n; the rest are random flips that stay valid)" || not_ok "only $bad of $n rejected"
[ $unnamed -eq 0 ] && ok "every rejection names the file and an offset" || not_ok "$unnamed rejections without an offset"
test_done
