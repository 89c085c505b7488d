#!/bin/bash
# The source tree's layers (bench/t/README.md): no file includes a header
# of a higher layer, run and analysis never include each other, each
# third-party header has one owner, and every header stands alone (it
# compiles on its own, twice in a row).
. "$(dirname "$0")/lib.sh"

CHECK=$TOP/bench/scripts/check-layers.sh
expect_code 0 "bench/src keeps its layers" sh "$CHECK" "$TOP/bench/src"
grep_in "$WORK/out" "layers ok" "the check says so"

# The check catches what it must: a copy of the tree with violations.
mk() { mkdir -p "$WORK/src/$(dirname "$1")"; printf '%s\n' "$2" >"$WORK/src/$1"; }
mk base/a.h '#include "base/b.h"'
mk models/m.c '#include "evidence/store.h"'
mk run/r.c '#include "analysis/report.h"'
mk analysis/x.c '#include "run/session.h"'
mk evidence/j.c '#include <cjson/cJSON.h>'
mk cmd/d.c '#include <sqlite3.h>'
mk evidence/storex.c '#include <sqlite3.h>'
mk evidence/store-part.c '#include <sqlite3.h>'
mk cmd/k.c '#include <openssl/evp.h>'
mk base/flat.c '#include "util.h"'
expect_code 1 "violations fail the check" sh "$CHECK" "$WORK/src"
grep_in "$WORK/out" "models/m.c:1: layer 'models' includes \"evidence/store.h\"" "models reaching up to evidence"
grep_in "$WORK/out" "run/r.c:1: layer 'run' includes \"analysis/report.h\"" "run including analysis"
grep_in "$WORK/out" "analysis/x.c:1: layer 'analysis' includes \"run/session.h\"" "analysis including run"
grep_in "$WORK/out" "evidence/j.c:1: <cjson/cJSON.h> belongs to base/json.c only" "cJSON outside base/json.c"
grep_in "$WORK/out" "cmd/d.c:1: <sqlite3.h> belongs to evidence/store.c or evidence/store-*.c only" "sqlite3.h outside the store"
grep_in "$WORK/out" "evidence/storex.c:1: <sqlite3.h> belongs to" "sqlite3.h in an evidence file that is not the store's"
! grep -q "evidence/store-part.c" "$WORK/out" && ok "the store's own parts include sqlite3.h" ||
	not_ok "a part of the store (evidence/store-part.c) was flagged"
grep_in "$WORK/out" "cmd/k.c:1: <openssl/evp.h> belongs to models/hash.c only" "OpenSSL outside hashing"
grep_in "$WORK/out" "without its layer directory" "an include without its layer"

# Include loops inside a layer, between modules (a .c and its .h): two
# modules, three modules, and what is no loop (a module including its
# own header, a chain, a diamond, a family's private header that has no
# .c of its own).
mkl() { mkdir -p "$WORK/loops/$(dirname "$1")"; printf '%s\n' "$2" >"$WORK/loops/$1"; }
mkl analysis/p.c '#include "analysis/p.h"
#include "analysis/q.h"'
mkl analysis/q.c '#include "analysis/q.h"
#include "base/util.h"
#include "analysis/p.h"'
mkl run/a.h '#include "run/b.h"'
mkl run/a.c '#include "run/a.h"'
mkl run/b.c '#include "run/c.h"'
mkl run/c.c '#include "run/a.h"'
mkl models/x.c '#include "models/y.h"
#include "models/z.h"'
mkl models/y.c '#include "models/w.h"'
mkl models/z.h '#include "models/w.h"'
mkl models/w.c ''
mkl evidence/fam.c '#include "evidence/famread.h"'
mkl evidence/famread.h '#include "evidence/fam.h"'
mkl evidence/famgpu.c '#include "evidence/famread.h"'
expect_code 1 "include loops fail the check" sh "$CHECK" "$WORK/loops"
grep_in "$WORK/out" "include loop in layer analysis: analysis/p -> analysis/q -> analysis/p (analysis/p.c:2, analysis/q.c:3)" "a loop of two modules, with the includes that make it"
grep_in "$WORK/out" "include loop in layer run: run/a -> run/b -> run/c -> run/a (run/a.h:1, run/b.c:1, run/c.c:1)" "a loop of three modules"
if grep -q "models\|evidence" "$WORK/out"; then
	not_ok "a chain, a diamond and a private header are no loops"
else
	ok "a chain, a diamond and a private header are no loops"
fi
rm -rf "$WORK/loops/analysis" "$WORK/loops/run"
expect_code 0 "without the loops the same tree passes" sh "$CHECK" "$WORK/loops"

# Every header compiles alone and twice (include guards that cover it all).
bad=0
for h in $(cd "$TOP/bench/src" && find . -name '*.h' | sed 's#^\./##' | sort); do
	printf '#include "%s"\n#include "%s"\nint main(void) { return 0; }\n' "$h" "$h" >"$WORK/h.c"
	if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$TOP/bench/src" \
		"$WORK/h.c" 2>"$WORK/h.err"; then
		not_ok "header $h does not stand alone"
		sed 's/^/# /' "$WORK/h.err" | head -5
		bad=1
	fi
done
[ "$bad" = 0 ] && ok "every header compiles alone and twice"
test_done
