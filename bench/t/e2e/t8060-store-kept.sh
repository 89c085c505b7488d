#!/bin/bash
# The store keeps to itself (issue 22 §4): a --db that is another
# program's SQLite file is refused by every command, named, and left
# byte for byte as it was; a store of the previous release (schema 2,
# a real one: bench/t/fixtures/store-schema2) is read by the read-only
# commands without being written, and `upgrade` (or any writing
# command) upgrades it in place.
. "$(dirname "$0")/lib.sh"

cd "$WORK" || exit 1
OS=$FIXTURES/os-update
q() { sqlite3 "$1" "$2"; }

# ---- another program's database ---------------------------------------
sqlite3 other.db "CREATE TABLE contacts(id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO contacts(name) VALUES ('ann'), ('bo');"
before=$(sha256sum other.db | cut -d' ' -f1)
expect_code 3 "import into another program's SQLite file is refused" \
	"$SHIMBENCH" --db other.db import --mapping "$OS/base.mapping.json" "$OS/base"
grep_in "$WORK/err" "'other.db' is not a shimbench store" "the error names the file"
grep_in "$WORK/err" "('contacts')" "and what it holds"
grep_in "$WORK/err" "nothing was written to it" "and that it is untouched"
for c in report sessions history upgrade; do
	expect_code 3 "$c refuses it too" "$SHIMBENCH" --db other.db $c
	grep_in "$WORK/err" "'other.db' is not a shimbench store" "$c names the file"
done
check "the file is byte for byte as it was" test "$(sha256sum other.db | cut -d' ' -f1)" = "$before"
check "no journal or WAL left beside it" test ! -e other.db-wal -a ! -e other.db-journal
check "its rows are all there" test "$(q other.db 'SELECT group_concat(name) FROM contacts')" = "ann,bo"
# a schema version but no shimbench tables: not ours either
sqlite3 versioned.db "CREATE TABLE t(x); PRAGMA user_version=3;"
expect_code 3 "a versioned database without sessions and runs is refused" \
	"$SHIMBENCH" --db versioned.db import --mapping "$OS/base.mapping.json" "$OS/base"
grep_in "$WORK/err" "no sessions and runs tables" "says what is missing"
check "nothing was added to it" test "$(q versioned.db "SELECT count(*) FROM sqlite_master WHERE type='table'")" = 1

# ---- a store of the previous release ------------------------------------
sqlite3 old.db < "$FIXTURES/store-schema2/study.sql"
sqlite3 old.db "PRAGMA user_version=2"
check "the fixture is a schema-2 store" test "$(q old.db 'PRAGMA user_version')" = 2
old_sum=$(sha256sum old.db | cut -d' ' -f1)
expect_code 0 "report reads a schema-2 store" "$SHIMBENCH" --db old.db report
check "with its figures: pp512 11.08x, tg128 16.36x, host 4871.99" python3 -c "
import re; t = open('$WORK/out').read()
assert re.search(r'^\| TinyLlama 1\.1B Q4_K_M \(llama\.cpp\) +\| pp512 +\| +4871\.99 \|.*\| +11\.08× \|', t, re.M), t
assert re.search(r'^\| TinyLlama 1\.1B Q4_K_M \(llama\.cpp\) +\| tg128 +\|.*\| +16\.36× \|', t, re.M)"
grep_in "$WORK/err" "store 'old.db' has schema version 2" "says the store is of an earlier schema"
grep_in "$WORK/err" "\`shimbench --db 'old.db' upgrade\` upgrades it in place" "and names the command that upgrades it"
expect_code 0 "sessions reads it" "$SHIMBENCH" --db old.db sessions
grep_in "$WORK/out" "cua-lume 2026-08-09 M1 Ultra" "the session is listed"
expect_code 0 "compare reads it" "$SHIMBENCH" --db old.db compare variant=stock variant=shim
grep_in "$WORK/out" "| tinyllama-1.1b-q4_k_m pp512 " "compare's rows"
expect_code 0 "history reads it" "$SHIMBENCH" --db old.db history
check "reading wrote nothing to the store" test "$(sha256sum old.db | cut -d' ' -f1)" = "$old_sum"
check "still schema 2" test "$(q old.db 'PRAGMA user_version')" = 2
# a current store, for the version this shimbench writes
"$SHIMBENCH" --db new.db import --mapping "$OS/base.mapping.json" "$OS/base" >/dev/null 2>&1
now=$(q new.db 'PRAGMA user_version')
expect_code 0 "upgrade" "$SHIMBENCH" --db old.db upgrade
grep_in "$WORK/out" "store 'old.db' upgraded from schema version 2 to $now" "says from and to"
check "the file is at the current schema" test "$(q old.db 'PRAGMA user_version')" = "$now"
check "every sample kept" test "$(q old.db 'SELECT count(*) FROM samples')" = 120
expect_code 0 "upgrade again: nothing to do" "$SHIMBENCH" --db old.db upgrade
grep_in "$WORK/out" "current, nothing to do" "says so"
expect_code 0 "report after the upgrade" "$SHIMBENCH" --db old.db report
check "no schema warning any more" sh -c "! grep -q 'schema version' '$WORK/err'"
grep_in "$WORK/out" "11.08×" "the same figures"
expect_code 3 "upgrade without a store says how to make one" "$SHIMBENCH" --db none.db upgrade
check "and makes none" test ! -e none.db
test_done
