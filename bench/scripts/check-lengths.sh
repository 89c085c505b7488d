#!/bin/sh
# Enforces the size limits of bench/src (bench/t/README.md): no function
# longer than 150 lines, no source file longer than 1,500 lines.
#
#   sh bench/scripts/check-lengths.sh [SRC_DIR]    (default bench/src)
#
# A function is what the project's style writes as one: a line at column
# 0 that opens a body with '{' at column 0 and ends at the next '}' at
# column 0 (return type, name and parameters above the brace). Its length
# counts from the line that holds its name to the closing brace. Limits
# can be lowered for a test: SHIMBENCH_MAX_FUNCTION, SHIMBENCH_MAX_FILE.
#
# Prints one line per violation (FILE:LINE: what) and exits 1 when there
# is any; prints "lengths ok (N files, N functions, longest N lines in
# NAME)" and exits 0 otherwise.
set -u
src=${1:-$(dirname "$0")/../src}
[ -d "$src" ] || { echo "check-lengths: no directory '$src'" >&2; exit 2; }
maxf=${SHIMBENCH_MAX_FUNCTION:-150}
maxl=${SHIMBENCH_MAX_FILE:-1500}
files=$(cd "$src" && find . -name '*.[ch]' | sed 's#^\./##' | sort)
[ -n "$files" ] || { echo "check-lengths: no C files under '$src'" >&2; exit 2; }
cd "$src" || exit 2
# shellcheck disable=SC2086
awk -v maxf="$maxf" -v maxl="$maxl" '
FNR == 1 {
	if (NR > 1) endfile()
	nfiles++; name = ""; nameline = 0; start = 0; inbody = 0
}
# the line that names a function: an identifier at column 0 directly
# followed by "(", outside a body (the return type is on the line above)
!inbody && /^[A-Za-z_][A-Za-z_0-9]*\(/ {
	name = $0; sub(/\(.*/, "", name); nameline = FNR
}
!inbody && /^\{/ {
	inbody = 1; start = nameline ? nameline : FNR
	if (!nameline) name = "(unnamed)"
}
inbody && /^\}/ {
	inbody = 0; nfun++
	len = FNR - start + 1
	if (len > longest) { longest = len; lname = FILENAME ":" name }
	if (len > maxf) {
		printf "%s:%d: function %s is %d lines (at most %d)\n", FILENAME, start, name, len, maxf
		bad = 1
	}
	name = ""; nameline = 0
}
function endfile() {
	if (lastfnr > maxl) {
		printf "%s: %d lines (at most %d)\n", lastname, lastfnr, maxl
		bad = 1
	}
}
{ lastfnr = FNR; lastname = FILENAME }
END {
	endfile()
	if (bad) exit 1
	printf "lengths ok (%d files, %d functions, longest %d lines in %s)\n", nfiles, nfun, longest, lname
}' $files
