#!/bin/bash
# A store of schema version 5 (raw text in the runs and results rows) is
# upgraded by the next writing command: the raw text moves to run_texts
# and result_raw, every figure, raw byte and configuration reads as in a
# store written fresh, and the store check covers the moved text.
. "$(dirname "$0")/lib.sh"

need_shared "upgrade of a version-5 store" || { test_done; exit $?; }
E1=evidence/cua-lume-2026-08-09-m1-ultra
E2=evidence/cua-lume-2026-08-10-m1-ultra-gemma4
C=bench/t/fixtures/configs
OLD=$WORK/old.db NEW=$WORK/new.db
q() { sqlite3 "$1" "$2"; }
cd "$TOP" || exit 1
sqlite3 "$OLD" <"$FIXTURES/store-v5/store.sql"
[ "$(q "$OLD" 'pragma user_version')" = 5 ] && ok "the fixture is a version-5 store" ||
	not_ok "fixture version: $(q "$OLD" 'pragma user_version')"

# 1. A read-only command reads it as it is (issue 22 §4: through a copy
#    upgraded in memory), does not change it and says what upgrades it.
sum5=$(sha256sum "$OLD" | cut -d' ' -f1)
expect_code 0 "report reads a version-5 store" "$SHIMBENCH" --db "$OLD" report
grep_in "$WORK/out" "11.08×" "with its figures"
grep_in "$WORK/err" "store '$OLD' has schema version 5 (an earlier shimbench): read through a copy upgraded to" "the warning names the version"
grep_in "$WORK/err" "\`shimbench --db '$OLD' upgrade\` upgrades it in place" "and the command that upgrades it"
[ "$(q "$OLD" 'pragma user_version')" = 5 ] && [ "$(sha256sum "$OLD" | cut -d' ' -f1)" = "$sum5" ] &&
	ok "the store read is untouched" || not_ok "the store changed"

# 2. The next import upgrades it; a fresh store gets the same three imports.
expect_code 0 "an import upgrades the store" "$SHIMBENCH" --db "$OLD" --quiet import --mapping "$E2/mapping.json" "$E2"
grep_in "$WORK/out" "as session 3: 3 runs, 6 results, 60 samples" "the new evidence is session 3"
for args in "--mapping $E1/mapping.json $E1" "--mapping $C/a.mapping.json $C/a" "--mapping $E2/mapping.json $E2"; do
	# shellcheck disable=SC2086
	"$SHIMBENCH" --db "$NEW" --quiet import $args >/dev/null 2>&1 || not_ok "fresh import of $args"
done
v=$(q "$NEW" 'pragma user_version')
[ "$(q "$OLD" 'pragma user_version')" = "$v" ] && [ "$v" -ge 6 ] && ok "upgraded to the fresh store's version ($v)" ||
	not_ok "versions: upgraded $(q "$OLD" 'pragma user_version'), fresh $v"
for t in runs results; do
	cols=$(q "$OLD" "select group_concat(name, ',') from pragma_table_info('$t') where name like '%text' or name = 'raw_json'")
	[ -z "$cols" ] && ok "no raw text left in $t" || not_ok "$t still has $cols"
	[ "$(q "$OLD" "select group_concat(name, ',') from pragma_table_info('$t')")" = \
	  "$(q "$NEW" "select group_concat(name, ',') from pragma_table_info('$t')")" ] &&
		ok "$t: the same columns as in a fresh store" || not_ok "$t: columns differ"
done
[ "$(q "$OLD" 'select count(*) from runs; select count(*) from run_texts')" = "$(printf '11\n11')" ] &&
	ok "every run has its texts row" || not_ok "runs/texts: $(q "$OLD" 'select count(*) from runs; select count(*) from run_texts' | tr '\n' ' ')"
[ "$(q "$OLD" 'select count(*) from results; select count(*) from result_raw')" = "$(printf '34\n34')" ] &&
	ok "every result has its raw row" || not_ok "results/raw: $(q "$OLD" 'select count(*) from results; select count(*) from result_raw' | tr '\n' ' ')"
# compacted: the rows the text left take no more pages than written fresh
pages="select name, count(*) from dbstat where name in ('runs', 'results') group by name order by name"
[ "$(q "$OLD" "$pages")" = "$(q "$NEW" "$pages")" ] && ok "runs and results take the pages of a fresh store" ||
	not_ok "pages: upgraded $(q "$OLD" "$pages" | tr '\n' ' '), fresh $(q "$NEW" "$pages" | tr '\n' ' ')"
texts='select r.session_id, r.seq, t.stdout_text, t.stderr_text, t.probe_text from runs r join run_texts t on t.run_id = r.id order by r.id;
select x.id, w.raw_json, c.json from results x join result_raw w on w.result_id = x.id join result_configs rc on rc.result_id = x.id join configs c on c.id = rc.config_id order by x.id'
[ "$(q "$OLD" "$texts" | sha256sum)" = "$(q "$NEW" "$texts" | sha256sum)" ] &&
	ok "raw text, raw rows and configurations as in the fresh store" || not_ok "stored text differs"
[ "$(q "$OLD" "select length(t.stderr_text) from runs r join run_texts t on t.run_id = r.id where r.session_id = 1 and r.stderr_path = 'tiny-safe-shim-10x-final.stderr'")" = \
  "$(stat -c %s "$E1/tiny-safe-shim-10x-final.stderr")" ] && ok "a moved stderr has its bytes" || not_ok "moved stderr length"

# 3. Every reader gives what the fresh store gives (the sessions' import
#    times, which the reports print, made the same first).
for id in 1 2 3; do
	q "$NEW" "update sessions set started_at = '$(q "$OLD" "select started_at from sessions where id = $id")' where id = $id"
done
for f in md csv json; do
	"$SHIMBENCH" --db "$OLD" report --format $f >"$WORK/old.$f" 2>/dev/null
	"$SHIMBENCH" --db "$NEW" report --format $f >"$WORK/new.$f" 2>/dev/null
	[ -s "$WORK/old.$f" ] && cmp -s "$WORK/old.$f" "$WORK/new.$f" && ok "report --format $f as from a fresh store" ||
		{ not_ok "report --format $f differs"; diff "$WORK/old.$f" "$WORK/new.$f" | head -5 | sed 's/^/# /'; }
done
grep -q "11.08" "$WORK/old.md" && ok "the published 11.08x reads back" || not_ok "no 11.08x in the report"
expect_code 0 "export of an upgraded session" "$SHIMBENCH" --db "$OLD" --quiet export 1 "$WORK/x1"
check "its SHA256SUMS verify" sh -c "cd '$WORK/x1' && sha256sum -c --quiet SHA256SUMS"
for f in tiny-safe-shim-10x-final.json tiny-safe-shim-10x-final.stderr mlx-stock-10x.json; do
	check "exported $f is the evidence's bytes" cmp -s "$E1/$f" "$WORK/x1/$f"
done

# 4. The store check reads the moved text: a changed byte or a missing
#    texts row is damage, and nothing is reported from it.
rm -f "$OLD-verified"
expect_code 0 "the full check passes on the upgraded store" "$SHIMBENCH" --db "$OLD" report --format csv
cp "$OLD" "$WORK/bad.db"
q "$WORK/bad.db" "update run_texts set stderr_text = replace(stderr_text, 'Apple9', 'Apple5') where run_id = (select id from runs where stderr_path = 'tiny-safe-shim-10x-final.stderr')"
expect_code 3 "a changed stderr byte is caught" "$SHIMBENCH" --db "$WORK/bad.db" report
grep_in "$WORK/err" "its stored stderr_text does not match its SHA-256" "the error names the stream"
[ ! -s "$WORK/out" ] && ok "nothing reported from a damaged store" || not_ok "a report was printed"
cp "$OLD" "$WORK/gone.db"
q "$WORK/gone.db" "delete from run_texts where run_id = (select min(id) from runs)"
expect_code 3 "a missing texts row is caught" "$SHIMBENCH" --db "$WORK/gone.db" report
grep_in "$WORK/err" "its stored raw output is missing" "the error says the raw output is missing"

# 5. Removing a session removes its text.
expect_code 0 "sessions rm 1 on the upgraded store" "$SHIMBENCH" --db "$OLD" sessions rm 1
[ "$(q "$OLD" 'select count(*) from run_texts; select count(*) from result_raw')" = "$(printf '5\n22')" ] &&
	ok "its texts and raw rows went with it" || not_ok "left: $(q "$OLD" 'select count(*) from run_texts; select count(*) from result_raw' | tr '\n' ' ')"
test_done
