#!/bin/bash
# sessions: measurement dates from the runs, --last, session=latest[~K]
# in selections, and rm (all or nothing, saying what it removed).
. "$(dirname "$0")/lib.sh"
need_shared "sessions over the published evidence" || { test_done; exit $?; }

DB=$WORK/s.db
E1=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
E2=$EVIDENCE/cua-lume-2026-08-10-m1-ultra-gemma4
expect_code 0 "import two sets" "$SHIMBENCH" --db "$DB" import \
	--mapping "$E1/mapping.json" "$E1"
expect_code 0 "import the second" "$SHIMBENCH" --db "$DB" import \
	--mapping "$E2/mapping.json" "$E2"

expect_code 0 "sessions as csv" "$SHIMBENCH" --db "$DB" sessions --format csv
grep_in "$WORK/out" "session,kind,stored,measured,status" "columns: stored and measured"
check "session 1 measured on 2026-08-09 (from its runs, not the import)" \
	grep -q '^1,import,[^,]*,2026-08-09,ok,' "$WORK/out"
check "session 2 measured on 2026-08-10" grep -q '^2,import,[^,]*,2026-08-10,ok,' "$WORK/out"

expect_code 0 "sessions --last" "$SHIMBENCH" --db "$DB" sessions --last
[ "$(cat "$WORK/out")" = 2 ] && ok "--last prints the newest id only" || not_ok "--last printed '$(cat "$WORK/out")'"

expect_code 0 "report session=latest" "$SHIMBENCH" --db "$DB" report --format csv --select session=latest
grep_in "$WORK/out" "Gemma 4 12B" "latest is the Gemma session"
check "and only it" sh -c "! grep -q TinyLlama '$WORK/out'"
expect_code 0 "report session=latest~1" "$SHIMBENCH" --db "$DB" report --format csv --select session=latest~1
grep_in "$WORK/out" "TinyLlama" "latest~1 is the TinyLlama session"
# nothing matched: exit 3 in every command (issue 11 §1; was exit 0 here)
expect_code 3 "session=latest~5 selects nothing" "$SHIMBENCH" --db "$DB" report --format csv --select session=latest~5
grep_in "$WORK/err" "nothing matched the selection" "and says so"

expect_code 3 "rm of a session that does not exist (nothing matched)" "$SHIMBENCH" --db "$DB" sessions rm 2 9
grep_in "$WORK/err" "no session 9" "names the missing session"
[ "$(sqlite3 "$DB" 'select count(*) from sessions')" = 2 ] && ok "nothing removed (all or nothing)" || not_ok "partial rm"
expect_code 2 "rm of a non-number" "$SHIMBENCH" --db "$DB" sessions rm two
expect_code 0 "rm 2" "$SHIMBENCH" --db "$DB" sessions rm 2
grep_in "$WORK/out" "removed session 2: 3 runs, 6 results, 60 samples, 2 environments" "says what it removed"
[ "$(sqlite3 "$DB" 'select count(*) from samples')" = 120 ] && ok "only session 1's samples remain" || not_ok "samples left: $(sqlite3 "$DB" 'select count(*) from samples')"
expect_code 0 "sessions --last after rm" "$SHIMBENCH" --db "$DB" sessions --last
[ "$(cat "$WORK/out")" = 1 ] && ok "newest is 1 again" || not_ok "--last says $(cat "$WORK/out")"
test_done
