#!/bin/bash
# Crash safety and races (issue 13): `import` and `run` killed with
# SIGKILL at random moments (and once each on a full disk) leave an
# intact store in which no partial session counts, and repeating the
# command completes the work; 8 concurrent imports of the same content
# store it once. CRASH_MOMENTS (default 10 per command) and RACE_TRIALS
# (default 6) set the sizes; bench/scripts/crash-test.sh runs the long
# version (50 moments each) and prints the figures for BENCHMARKS.md.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-integrity.sh"

need_shared "crash safety" || { test_done; exit $?; }
cd "$WORK" || exit 1
MOMENTS=${CRASH_MOMENTS:-10}
TRIALS=${RACE_TRIALS:-6}
SEED=${CRASH_SEED:-$$}
RANDOM=$SEED
echo "# seed $SEED, $MOMENTS moments per command, $TRIALS race trials"
q() { sqlite3 "$1" "$2" 2>&1; }
# ms_now: milliseconds since the epoch
ms_now() { date +%s%3N; }
# report_of DB: the csv report of the sessions that finished (the running
# ones removed from a copy first): what a report must show.
finished_report() {
	local db=$1 copy=$WORK/fin.db sid
	rm -f "$copy" "$copy-wal" "$copy-shm"
	sqlite3 "$db" ".backup '$copy'"
	for sid in $(q "$copy" "select id from sessions where status='running'"); do
		"$SHIMBENCH" --db "$copy" sessions rm "$sid" >/dev/null
	done
	"$SHIMBENCH" --db "$copy" report --format csv 2>/dev/null
}

# ---- import --------------------------------------------------------------
mk_raw big 9000 1
expect_code 0 "a base store (published set 2)" "$SHIMBENCH" --db base.db import --mapping "$M2" "$E2"
cp base.db full.db
start=$(ms_now)
expect_code 0 "the import to interrupt, uninterrupted (2 DIRs, 9006 results)" \
	"$SHIMBENCH" --db full.db import --mapping big.map.json --mapping "$M1" big "$E1"
span=$(( $(ms_now) - start + 50 ))
"$SHIMBENCH" --db base.db report --format csv >base.csv
"$SHIMBENCH" --db full.db report --format csv >full.csv
full_samples=$(q full.db "select count(*) from samples")
before=0 after=0 bad=""
for m in $(seq 1 "$MOMENTS"); do
	rm -f k.db k.db-wal k.db-shm && cp base.db k.db
	delay=$(( RANDOM % span ))
	"$SHIMBENCH" --db k.db import --mapping big.map.json --mapping "$M1" big "$E1" >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	{ kill -KILL "$pid"; wait "$pid"; } 2>/dev/null
	ic=$(q k.db "pragma integrity_check")
	n=$(q k.db "select count(*) from sessions")
	"$SHIMBENCH" --db k.db report --format csv >k.csv 2>/dev/null
	if [ "$ic" != ok ]; then
		bad="$bad [moment $m (${delay} ms): integrity_check: $ic]"
	elif [ "$n" = 1 ] && cmp -s k.csv base.csv; then
		before=$((before + 1))
	elif [ "$n" = 3 ] && cmp -s k.csv full.csv; then
		after=$((after + 1))
	else
		bad="$bad [moment $m (${delay} ms): $n sessions, report neither before nor after]"
	fi
	"$SHIMBENCH" --db k.db import --mapping big.map.json --mapping "$M1" big "$E1" >out 2>err
	rc=$?
	if [ "$rc" != 0 ] || [ "$(q k.db "select count(*) from sessions")" != 3 ] ||
	   [ "$(q k.db "select count(*) from samples")" != "$full_samples" ]; then
		bad="$bad [moment $m: the repeated import: exit $rc, $(head -c 200 err)]"
	else
		"$SHIMBENCH" --db k.db report --format csv >k.csv
		cmp -s k.csv full.csv || bad="$bad [moment $m: the report after the repeat differs]"
	fi
done
[ -z "$bad" ] && ok "import killed at $MOMENTS random moments: intact store; $before left nothing, $after the whole import; every repeat completed" ||
	not_ok "import killed:$bad"
echo "# figures: import SIGKILL moments=$MOMENTS before_commit=$before after_commit=$after failures=$(echo "$bad" | grep -o '\[' | wc -l)"

# import killed while the disk is full
if small_disk "$WORK/idisk" 200; then
	cp base.db idisk/s.db
	"$SHIMBENCH" --db idisk/s.db import --mapping big.map.json --mapping "$M1" big "$E1" >/dev/null 2>&1 &
	pid=$!
	sleep 0.3
	{ kill -KILL "$pid"; wait "$pid"; } 2>/dev/null
	grow_disk "$WORK/idisk" 65536
	[ "$(q idisk/s.db "pragma integrity_check")" = ok ] && [ "$(q idisk/s.db "select count(*) from sessions")" = 1 ] &&
		ok "import on a full disk, then killed: intact, nothing stored" || not_ok "full disk + kill: $(q idisk/s.db "pragma integrity_check")"
	expect_code 0 "the repeat with space completes" \
		"$SHIMBENCH" --db idisk/s.db import --mapping big.map.json --mapping "$M1" big "$E1"
	[ "$(q idisk/s.db "select count(*) from samples")" = "$full_samples" ] && ok "all samples stored" || not_ok "samples after the repeat"
else
	skip "import killed on a full disk: no tmpfs can be mounted here (t8000 injects the failures instead)"
fi

# ---- run -----------------------------------------------------------------
mk_raw canned 2 7
printf 'loading\n[shimbench-test] Enabled for pid 1\n' >marked.stderr
fake_lb lb.sh "$WORK/canned/out.jsonl" "$WORK/marked.stderr" 0.05
printf 'not a real model\n' >model.bin
cat >plan.json <<JSON
{"name":"crash","models":[{"name":"m","path":"$WORK/model.bin"}],
 "targets":{"here":{"llama_bench":"$WORK/lb.sh"}},
 "variants":[{"name":"plain","target":"here","role":"stock"},
             {"name":"marked","target":"here","role":"shim","expect":["[shimbench-test] Enabled for"]}],
 "llama_bench":{"args":["-p","64","-n","0","-r","5"]}, "processes":2}
JSON
mkdir -p runs && cd runs || exit 1
expect_code 0 "a base run" "$SHIMBENCH" --db "$WORK/rbase.db" --quiet run "$WORK/plan.json"
start=$(ms_now)
expect_code 0 "the run to interrupt, uninterrupted" "$SHIMBENCH" --db "$WORK/rbase2.db" --quiet run "$WORK/plan.json"
span=$(( $(ms_now) - start + 50 ))
bad="" finished=0 partial=0 nothing=0
for m in $(seq 1 "$MOMENTS"); do
	rm -f "$WORK/r.db"* && cp "$WORK/rbase.db" "$WORK/r.db"
	delay=$(( RANDOM % span ))
	"$SHIMBENCH" --db "$WORK/r.db" --quiet run "$WORK/plan.json" >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	{ kill -KILL "$pid"; wait "$pid"; } 2>/dev/null
	pkill -KILL -f "$WORK/lb.sh" 2>/dev/null
	ic=$(q "$WORK/r.db" "pragma integrity_check")
	st=$(q "$WORK/r.db" "select coalesce((select status from sessions where id=2), 'none')")
	"$SHIMBENCH" --db "$WORK/r.db" report --format csv >"$WORK/r.csv" 2>/dev/null
	finished_report "$WORK/r.db" >"$WORK/fin.csv"
	if [ "$ic" != ok ]; then
		bad="$bad [moment $m: integrity_check: $ic]"
	elif ! cmp -s "$WORK/r.csv" "$WORK/fin.csv"; then
		bad="$bad [moment $m (${delay} ms): a partial session counts in the report]"
	else
		case $st in
		none) nothing=$((nothing + 1)) ;;
		running) partial=$((partial + 1)) ;;
		ok) finished=$((finished + 1)) ;;
		*) bad="$bad [moment $m: session status $st]" ;;
		esac
	fi
	"$SHIMBENCH" --db "$WORK/r.db" --quiet run "$WORK/plan.json" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	last=$(q "$WORK/r.db" "select id || ' ' || status || ' ' || (select count(*) from runs r where r.session_id=s.id) from sessions s order by id desc limit 1")
	case "$last" in
	*" ok 4") ;;
	*) bad="$bad [moment $m: the repeated run: exit $rc, last session $last]" ;;
	esac
	[ "$rc" = 0 ] || bad="$bad [moment $m: the repeated run exited $rc]"
	b=$(ls -d evidence/session-"${last%% *}"* 2>/dev/null | tail -1)
	[ -n "$b" ] && (cd "$b" && sha256sum -c --quiet SHA256SUMS >/dev/null 2>&1) ||
		bad="$bad [moment $m: the repeated run's bundle is not whole]"
	rm -rf evidence
done
[ -z "$bad" ] && ok "run killed at $MOMENTS random moments: intact store; $nothing before the session, $partial mid-session (never counted), $finished after it; every repeat completed" ||
	not_ok "run killed:$bad"
echo "# figures: run SIGKILL moments=$MOMENTS no_session=$nothing partial=$partial finished=$finished failures=$(echo "$bad" | grep -o '\[' | wc -l)"
cd "$WORK" || exit 1

# run killed while its bundle's disk is full
if small_disk "$WORK/rdisk" 12; then
	rm -f r.db* && cp rbase.db r.db
	"$SHIMBENCH" --db r.db --quiet run --bundle "$WORK/rdisk/b" plan.json >/dev/null 2>&1 &
	pid=$!
	sleep 0.15
	{ kill -KILL "$pid"; wait "$pid"; } 2>/dev/null
	pkill -KILL -f "$WORK/lb.sh" 2>/dev/null
	"$SHIMBENCH" --db r.db report --format csv >r.csv 2>/dev/null
	finished_report r.db >fin.csv
	[ "$(q r.db "pragma integrity_check")" = ok ] && cmp -s r.csv fin.csv &&
		ok "run on a full disk, then killed: intact, nothing partial counts" || not_ok "run: full disk + kill"
	grow_disk "$WORK/rdisk" 65536
	expect_code 0 "the repeated run with space completes" "$SHIMBENCH" --db r.db --quiet run --bundle "$WORK/rdisk/b2" plan.json
else
	skip "run killed on a full disk: no tmpfs can be mounted here (t8003 injects the failures instead)"
fi

# ---- races: 8 concurrent imports of the same content ----------------------------
race_ok=0 race_bad=""
for t in $(seq 1 "$TRIALS"); do
	rm -f race.db race.db-wal race.db-shm
	[ $((t % 2)) = 0 ] && cp base.db race.db    # even trials: into an existing store
	for i in 1 2 3 4 5 6 7 8; do
		( "$SHIMBENCH" --db race.db import --mapping "$M1" "$E1" >"race.$i.out" 2>"race.$i.err"
		  echo $? >"race.$i.rc" ) &
	done
	wait
	imported=$(cat race.*.out | grep -c "^imported")
	already=$(cat race.*.out | grep -c "already imported as session")
	rcs=$(cat race.*.rc | sort -u | tr '\n' ' ')
	want_sessions=$([ $((t % 2)) = 0 ] && echo 2 || echo 1)
	if [ "$imported" = 1 ] && [ "$already" = 7 ] && [ "$rcs" = "0 " ] &&
	   [ "$(q race.db "select count(*) from sessions")" = "$want_sessions" ] &&
	   [ "$(q race.db "pragma integrity_check")" = ok ]; then
		race_ok=$((race_ok + 1))
	else
		race_bad="$race_bad [trial $t: $imported imported, $already already, exits $rcs, $(cat race.*.err | sort -u | head -2)]"
	fi
done
[ -z "$race_bad" ] && ok "8 concurrent imports of the same content, $TRIALS trials: one session and seven 'already imported' each time" ||
	not_ok "races:$race_bad"
echo "# figures: races trials=$TRIALS ok=$race_ok"
# 8 concurrent imports of different content all land, once each
rm -f race.db*
for i in 1 2 3 4 5 6 7 8; do mk_raw "d$i" 30 $((100 + i)); done
for i in 1 2 3 4 5 6 7 8; do
	( "$SHIMBENCH" --db race.db import --mapping "d$i.map.json" "d$i" >"race.$i.out" 2>"race.$i.err"; echo $? >"race.$i.rc" ) &
done
wait
[ "$(cat race.*.rc | sort -u | tr '\n' ' ')" = "0 " ] && [ "$(q race.db "select count(*) from sessions")" = 8 ] &&
	[ "$(q race.db "select count(*) from samples")" = 1200 ] && ok "8 concurrent imports of different content: 8 sessions, all samples" ||
	not_ok "different content: $(q race.db "select count(*) from sessions") sessions; $(cat race.*.err | head -3)"
test_done
