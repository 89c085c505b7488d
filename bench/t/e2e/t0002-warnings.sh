#!/bin/bash
# The harness builds without a single warning under gcc and clang with
# -Wall -Wextra -Wshadow (-O2, where gcc's flow analysis warns most).
. "$(dirname "$0")/lib.sh"

for cc in gcc clang; do
	if ! command -v "$cc" >/dev/null 2>&1; then
		skip "$cc is not installed"
		continue
	fi
	if make -s -C "$TOP" -j2 BUILD="$WORK/$cc" CC="$cc" \
		CFLAGS='-Wall -Wextra -Wshadow -O2 -Werror' \
		"$WORK/$cc/shimbench" >"$WORK/$cc.log" 2>&1; then
		ok "$cc: zero warnings"
	else
		not_ok "$cc: warnings or errors"
		grep -E 'warning|error' "$WORK/$cc.log" | head -20 | sed 's/^/# /'
	fi
done
test_done
