#!/bin/bash
# The source tree's size limits (bench/t/README.md): no function over
# 150 lines, no file in bench/src over 1,500 lines; and the check finds
# what it must on a tree made to break them.
. "$(dirname "$0")/lib.sh"

CHECK=$TOP/bench/scripts/check-lengths.sh
expect_code 0 "bench/src keeps its size limits" sh "$CHECK" "$TOP/bench/src"
grep_in "$WORK/out" "lengths ok (" "the check says so"

# fn FILE NAME BODYLINES: a function in the project's style whose length,
# from the line of its name to its closing brace, is BODYLINES + 3.
fn() {
	{
		echo "static int"
		echo "$2(int a,"
		echo "    int b)"
		echo "{"
		i=0
		while [ "$i" -lt "$3" ]; do echo "	a += b;"; i=$((i + 1)); done
		echo "}"
	} >>"$WORK/src/$1"
}
mkdir -p "$WORK/src/base" "$WORK/src/run"
: >"$WORK/src/base/a.c"
fn base/a.c at_limit 146          # 2 + 1 + 146 + 1 = 150 lines
fn base/a.c over_limit 147        # 151 lines
expect_code 1 "a function of 151 lines fails" sh "$CHECK" "$WORK/src"
grep_in "$WORK/out" "base/a.c:153: function over_limit is 151 lines (at most 150)" "names the function, its line and length"
if grep -q "at_limit" "$WORK/out"; then
	not_ok "a function of exactly 150 lines is within the limit"
else
	ok "a function of exactly 150 lines is within the limit"
fi

rm -f "$WORK/src/base/a.c"
fn base/a.c small 3
awk 'BEGIN { for (i = 0; i < 1501; i++) print "/* line */" }' >"$WORK/src/run/big.c"
awk 'BEGIN { for (i = 0; i < 1500; i++) print "/* line */" }' >"$WORK/src/run/full.h"
expect_code 1 "a file of 1,501 lines fails" sh "$CHECK" "$WORK/src"
grep_in "$WORK/out" "run/big.c: 1501 lines (at most 1500)" "names the file and its length"
if grep -q "full.h" "$WORK/out"; then
	not_ok "a file of exactly 1,500 lines is within the limit"
else
	ok "a file of exactly 1,500 lines is within the limit"
fi

expect_code 2 "a missing directory is a usage error" sh "$CHECK" "$WORK/nowhere"
grep_in "$WORK/err" "no directory" "and says so"
test_done
