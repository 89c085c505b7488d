#!/bin/bash
# Import is all or nothing (issue 13, items 1, 3 and 6): interrupted
# imports leave nothing and a retry completes; several DIRs at once;
# a locked store and a full disk; a file swapped while it is imported;
# the same evidence never counts twice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-integrity.sh"

need_shared "import atomicity" || { test_done; exit $?; }
cd "$WORK" || exit 1
q() { sqlite3 "$1" "$2" 2>&1; }
sessions_in() { [ -f "$1" ] && q "$1" "select count(*) from sessions" || echo 0; }

mk_raw big 9000 1
mk_raw other 20 2

# ---- 1. interrupted imports leave nothing; the retry completes ----------
# A signal at a random moment of an import of 9000 rows (45000 samples):
# afterwards the store is intact and holds the whole session (the signal
# came after the commit) or nothing.
interrupted_ok=0 interrupted_bad=""
for sig in KILL TERM INT KILL TERM INT KILL KILL; do
	rm -f i.db i.db-wal i.db-shm
	"$SHIMBENCH" --db i.db import --mapping big.map.json big >/dev/null 2>&1 &
	pid=$!
	sleep "0.$(( RANDOM % 60 + 5 ))"
	{ kill -"$sig" "$pid"; wait "$pid"; } 2>/dev/null
	rc=$?
	n=$(sessions_in i.db)
	samples=$([ -f i.db ] && q i.db "select count(*) from samples" || echo 0)
	ic=$([ -f i.db ] && q i.db "pragma integrity_check" || echo ok)
	if [ "$ic" = ok ] && { { [ "$n" = 0 ] && [ "$samples" = 0 ]; } ||
	   { [ "$n" = 1 ] && [ "$samples" = 45000 ]; }; }; then
		interrupted_ok=$((interrupted_ok + 1))
	else
		interrupted_bad="$interrupted_bad [$sig: exit $rc, $n sessions, $samples samples, $ic]"
	fi
	"$SHIMBENCH" --db i.db import --mapping big.map.json big >out 2>err
	rc=$?
	if [ "$rc" != 0 ] || [ "$(q i.db "select count(*) from samples")" != 45000 ] ||
	   [ "$(q i.db "select count(*) from sessions")" != 1 ] ||
	   ! grep -qE "imported 'big' as session 1|already imported as session 1" out; then
		interrupted_bad="$interrupted_bad [retry after $sig: exit $rc, $(cat out err)]"
	fi
done
[ -z "$interrupted_bad" ] && ok "8 imports killed (SIGKILL, SIGTERM, SIGINT) at random moments: all or nothing, and every retry completed" ||
	not_ok "interrupted import:$interrupted_bad"

# ---- several DIRs: all or none -------------------------------------------
mkdir -p garbage && printf '[garbage' >garbage/out.jsonl && printf 'x\n' >garbage/out.stderr && resum garbage
cp other.map.json garbage.map.json
expect_code 2 "good DIR, then garbage: exit 2" \
	"$SHIMBENCH" --db all.db import --mapping "$M1" --mapping garbage.map.json "$E1" garbage
grep_in err "'out.jsonl': not llama-bench JSON output: unexpected 'g' at byte 1" "the bad file and byte are named"
grep_in err "cannot import 'garbage'" "and the directory it is in"
grep_in err "nothing from the 2 directories was imported" "says nothing was imported"
[ "$(sessions_in all.db)" = 0 ] && ok "nothing stored from either DIR" || not_ok "a partial import was stored"
cp -r other tampered && printf ' ' >>tampered/out.stderr && cp other.map.json tampered.map.json
expect_code 1 "good DIR, then a tampered one: exit 1" \
	"$SHIMBENCH" --db all.db import --mapping "$M1" --mapping tampered.map.json "$E1" tampered
[ "$(sessions_in all.db)" = 0 ] && ok "nothing stored after a checksum refusal" || not_ok "stored despite a refusal"
expect_code 0 "the same DIRs without the bad one" \
	"$SHIMBENCH" --db all.db import --mapping "$M1" --mapping other.map.json "$E1" other
[ "$(sessions_in all.db)" = 2 ] && ok "both stored" || not_ok "sessions: $(sessions_in all.db)"

# ---- a locked store ------------------------------------------------------
cp all.db locked.db
python3 - locked.db <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("INSERT INTO noise(identity, test) VALUES ('lock', 'x')")
time.sleep(11)
c.execute("ROLLBACK")
PY
locker=$!
sleep 1
expect_code 3 "import into a store another process holds locked: exit 3" \
	"$SHIMBENCH" --db locked.db import --mapping big.map.json big
grep_in err "locked" "says the store is locked"
wait "$locker"
[ "$(sessions_in locked.db)" = 2 ] && [ "$(q locked.db "pragma integrity_check")" = ok ] &&
	ok "nothing stored while locked; the store is intact" || not_ok "locked store changed"
expect_code 0 "the retry after the lock is released completes" \
	"$SHIMBENCH" --db locked.db import --mapping big.map.json big
[ "$(sessions_in locked.db)" = 3 ] && ok "stored by the retry" || not_ok "retry stored $(sessions_in locked.db)"

# ---- a full disk under the store -----------------------------------------
if small_disk disk 160; then
	expect_code 3 "import of 9000 rows onto a full disk: exit 3" \
		"$SHIMBENCH" --db disk/s.db import --mapping "$M1" --mapping big.map.json "$E1" big
	grep_in err "full" "says the disk is full"
	grow_disk disk 65536
	# A store the import created and could not give its schema is removed;
	# one that got its schema is intact (sqlite3 itself would create the
	# file, so it is asked only when the file is there).
	if [ -f disk/s.db ]; then
		[ "$(q disk/s.db "pragma integrity_check")" = ok ] && ok "the store is intact after the full disk" ||
			not_ok "store damaged: $(q disk/s.db "pragma integrity_check")"
		[ "$(q disk/s.db "pragma user_version")" -gt 0 ] && ok "no empty store file is left behind" ||
			not_ok "an empty store file stayed behind"
	else
		ok "the store the import could not create is not left behind"
	fi
	[ "$(sessions_in disk/s.db)" = 0 ] && ok "nothing of the import is stored" || not_ok "partial import on a full disk"
	expect_code 0 "the retry with space completes" \
		"$SHIMBENCH" --db disk/s.db import --mapping "$M1" --mapping big.map.json "$E1" big
	[ "$(q disk/s.db "select count(*) from samples")" = 45120 ] && ok "both sessions whole" ||
		not_ok "samples: $(q disk/s.db "select count(*) from samples")"
else
	mkdir -p disk
	"$SHIMBENCH" --db disk/s.db sessions >/dev/null 2>&1   # no store yet: makes nothing
	expect_code 3 "import onto a full disk (write failures injected): exit 3" \
		with_full_disk "$WORK/disk" 40000 "$SHIMBENCH" --db disk/s.db import \
		--mapping "$M1" --mapping big.map.json "$E1" big
	[ "$(sessions_in disk/s.db)" = 0 ] && ok "nothing of the import is stored" || not_ok "partial import on a full disk"
	[ ! -f disk/s.db ] || [ "$(q disk/s.db "pragma integrity_check")" = ok ] &&
		ok "the store is intact after the full disk" || not_ok "store damaged"
	expect_code 0 "the retry with space completes" \
		"$SHIMBENCH" --db disk/s.db import --mapping "$M1" --mapping big.map.json "$E1" big
fi

# ---- 3. a file swapped while it is imported is never imported -----------
# The good and the bad version alternate under the same name; the bad one
# has other numbers and is not what SHA256SUMS lists. Whatever the timing,
# an import stores the good numbers or refuses.
mk_raw swap 200 3
mk_raw bad 200 4
good_sha=$(sha256sum swap/out.jsonl | cut -d' ' -f1)
cp swap/out.jsonl good.jsonl
cp bad/out.jsonl bad.jsonl
(
	while [ -d swap ]; do
		cp bad.jsonl swap/.b && mv -f swap/.b swap/out.jsonl
		cp good.jsonl swap/.g && mv -f swap/.g swap/out.jsonl
	done
) 2>/dev/null &
swapper=$!
imported=0 refused=0 wrong=""
for i in $(seq 1 40); do
	rm -f sw.db sw.db-wal sw.db-shm
	"$SHIMBENCH" --db sw.db import --mapping swap.map.json swap >out 2>err
	rc=$?
	if [ "$rc" = 0 ]; then
		got=$(q sw.db "select stdout_sha256 from runs")
		if [ "$got" = "$good_sha" ] && [ "$(q sw.db "select count(*) from samples")" = 1000 ]; then
			imported=$((imported + 1))
		else
			wrong="$wrong [try $i: stored $got]"
		fi
	elif [ "$rc" = 1 ] && grep -q "SHA-256 mismatch" err; then
		refused=$((refused + 1))
	else
		wrong="$wrong [try $i: exit $rc: $(head -1 err)]"
	fi
done
kill "$swapper" 2>/dev/null
wait "$swapper" 2>/dev/null
[ -z "$wrong" ] && ok "40 imports during swaps: $imported with the listed bytes, $refused refused, none with other bytes" ||
	not_ok "swapped file:$wrong"
[ "$refused" -gt 0 ] && [ "$imported" -gt 0 ] && ok "both outcomes seen (the race was real)" ||
	skip "the swaps did not interleave with imports this time ($imported imported, $refused refused)"

# ---- 6. no double counting ---------------------------------------------
expect_code 0 "published evidence imported" "$SHIMBENCH" --db dup.db import --mapping "$M1" "$E1"
samples=$(q dup.db "select count(*) from samples")
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); json.dump(d, open('reformatted.json','w'), indent=7, sort_keys=True)" "$M1"
expect_code 0 "the same evidence with a re-formatted mapping" \
	"$SHIMBENCH" --db dup.db import --mapping reformatted.json "$E1"
grep_in out "already imported as session 1; nothing stored" "recognised as the same evidence"
sed 's/"tinyllama-1.1b-q4_k_m"/"tinyllama-1.1b-q4_k_m"   /g; s/^  //' "$M1" >spaced.json
expect_code 0 "the same evidence with a re-indented mapping" \
	"$SHIMBENCH" --db dup.db import --mapping spaced.json "$E1"
grep_in out "already imported as session 1" "recognised again"
sed 's/"variant": "stock"/"variant": "stock-renamed"/' "$M1" >renamed.json
expect_code 1 "the same raw files under another meaning: refused" \
	"$SHIMBENCH" --db dup.db import --mapping renamed.json "$E1"
grep_in err "is already stored as run" "names where the output is stored"
expect_code 0 "export of the imported session" "$SHIMBENCH" --db dup.db export 1 exported
expect_code 0 "its own export imported into the same store" "$SHIMBENCH" --db dup.db import exported
grep_in out "already imported as session 1" "the export is the same evidence"
[ "$(q dup.db "select count(*) from samples")" = "$samples" ] && [ "$(sessions_in dup.db)" = 1 ] &&
	ok "nothing counted twice ($samples samples, one session)" || not_ok "double counted"
# Duplicated runs inside one mapping or bundle.
python3 - "$M1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["runs"].append(dict(m["runs"][0]))
json.dump(m, open("twice.json", "w"))
PY
expect_code 1 "a mapping that lists one output twice is refused" \
	"$SHIMBENCH" --db dup2.db import --mapping twice.json "$E1"
grep_in err "hold the same output" "names the two runs"
cp -r other copied && cp copied/out.jsonl copied/copy.jsonl && resum copied
python3 - <<'PY'
import json
m = json.load(open("other.map.json"))
r = dict(m["runs"][0]); r["stdout"] = "copy.jsonl"; r["stderr"] = None; r["variant"] = "again"
m["runs"].append(r)
json.dump(m, open("copied.map.json", "w"))
PY
expect_code 1 "the same output under two names in one mapping is refused" \
	"$SHIMBENCH" --db dup2.db import --mapping copied.map.json copied
[ "$(sessions_in dup2.db)" = 0 ] && ok "nothing stored from duplicated runs" || not_ok "duplicated runs stored"
cp -r exported exported2
python3 - exported2/bundle.json <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["runs"].append(dict(b["runs"][0], seq=99))
json.dump(b, open(sys.argv[1], "w"))
PY
resum exported2
expect_code 1 "a bundle that lists one run twice is refused" \
	"$SHIMBENCH" --db dup2.db import exported2
grep_in err "hold the same output" "names the duplicated runs"
test_done
