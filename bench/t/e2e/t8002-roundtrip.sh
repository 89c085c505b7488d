#!/bin/bash
# Export -> import round trips (issue 13, item 2): every stored session
# exports to a bundle whose import into an empty store gives the same
# facts (status, labels, model labels without a SHA-256, MLX-LM runs,
# the content identity) and the same report; outputs over 8 MB come back
# whole; sessions that ended ok, failed, interrupted or were killed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-integrity.sh"

need_shared "round trips" || { test_done; exit $?; }
cd "$WORK" || exit 1
q() { sqlite3 "$1" "$2" 2>&1; }

# same_facts TITLE DB_A DB_B: every fact but the kind and where it was
# imported from is the same, and so are the reports.
same_facts() {
	local title=$1 a=$2 b=$3 f
	facts "$a" >facts.a
	facts "$b" >facts.b
	if cmp -s facts.a facts.b && [ -s facts.a ]; then
		ok "$title: the same facts ($(wc -l <facts.a) rows)"
	else
		not_ok "$title: facts differ"
		diff facts.a facts.b | cut -c1-300 | head -10 | sed 's/^/# /'
	fi
	for fmt in md csv json; do
		"$SHIMBENCH" --db "$a" report --format $fmt >rep.a 2>/dev/null
		"$SHIMBENCH" --db "$b" report --format $fmt >rep.b 2>/dev/null
		if cmp -s rep.a rep.b; then
			ok "$title: the same report ($fmt)"
		else
			not_ok "$title: the reports differ ($fmt)"
			diff rep.a rep.b | head -6 | sed 's/^/# /'
		fi
	done
}
# round_trip TITLE DB: exports every session of DB and imports each
# bundle into one new store, then compares the two stores.
round_trip() {
	local title=$1 db=$2 sid
	rm -rf "rt-$title" && mkdir "rt-$title"
	for sid in $(q "$db" "select id from sessions order by id"); do
		"$SHIMBENCH" --db "$db" export "$sid" "rt-$title/$sid" >/dev/null 2>"rt-$title/err" ||
			{ not_ok "$title: export of session $sid: $(cat "rt-$title/err")"; return; }
		"$SHIMBENCH" --db "rt-$title/store.db" import "rt-$title/$sid" >/dev/null 2>"rt-$title/err" ||
			{ not_ok "$title: import of session $sid's bundle: $(cat "rt-$title/err")"; return; }
	done
	ok "$title: every session exported and imported"
	same_facts "$title" "$db" "rt-$title/store.db"
}

# ---- the published evidence: MLX-LM runs, a model without a SHA-256 -----
expect_code 0 "published set 1 imported with a label" \
	"$SHIMBENCH" --db pub.db import --label "label with 'quotes', commas and ünïcode" --mapping "$M1" "$E1"
expect_code 0 "published set 2 imported" "$SHIMBENCH" --db pub.db import --mapping "$M2" "$E2"
[ "$(q pub.db "select count(*) from runs where runtime='mlx-lm'")" = 2 ] && ok "two MLX-LM runs" || not_ok "no MLX-LM runs"
[ "$(q pub.db "select count(*) from runs where model_sha256 is null and model_label='Llama-3.2-3B-Instruct-4bit'")" = 2 ] &&
	ok "a model label without a SHA-256" || not_ok "model label lost"
round_trip published pub.db
[ "$(q rt-published/store.db "select count(*) from runs where model_sha256 is null and model_label='Llama-3.2-3B-Instruct-4bit' and runtime='mlx-lm'")" = 2 ] &&
	ok "MLX-LM runs and their model label without a SHA-256 came back" || not_ok "MLX-LM model label lost"
(cd "$TOP" && "$SHIMBENCH" --db "$WORK/rt-published/store.db" reproduce >"$WORK/out" 2>&1)
grep_in out "figures: 26 pass, 0 fail, 0 missing" "the round-tripped store reproduces all 26 published figures"

# ---- outputs over 8 MB -------------------------------------------------------
mk_raw big 9000 1
expect_code 0 "9 MB of llama-bench output imported" "$SHIMBENCH" --db big.db import --mapping big.map.json big
[ "$(q big.db "select count(*) from results")" = 9000 ] && ok "all 9000 results stored" ||
	not_ok "results: $(q big.db "select count(*) from results")"
round_trip big big.db
check "the exported output is the original, byte for byte" cmp -s big/out.jsonl rt-big/1/out.jsonl
[ "$(q rt-big/store.db "select count(*) from samples")" = 45000 ] && ok "45000 samples came back" ||
	not_ok "samples: $(q rt-big/store.db "select count(*) from samples")"

# ---- run sessions: ok, failed, interrupted, killed ------------------------------
printf 'GGUF-not-really\n' >model.bin
mk_raw canned 2 5
printf 'loading\n[shimbench-test] Enabled for pid 1\n' >canned.stderr
fake_lb fast.sh "$WORK/canned/out.jsonl" "$WORK/canned.stderr"
fake_lb garbage.sh "$FIXTURES/llama-bench/garbage.txt" "$WORK/canned.stderr"
fake_lb big.sh "$WORK/big/out.jsonl" "$WORK/canned.stderr"
# slow on the second call: the first process completes, the second hangs
cat >slow.sh <<SH
#!/bin/sh
if [ -e '$WORK/slow.once' ]; then sleep 30; fi
touch '$WORK/slow.once'
cat '$WORK/canned.stderr' >&2
sed "s/\"cpu_info\": \"/\"cpu_info\": \"call \$\$ /" '$WORK/canned/out.jsonl'
SH
chmod +x slow.sh
plan() {   # plan NAME LLAMA_BENCH PROCESSES
	cat >"$1.json" <<JSON
{"name":"$1","models":[{"name":"m","path":"$WORK/model.bin","label":"Model =1+1"}],
 "targets":{"here":{"llama_bench":"$WORK/$2"}},
 "variants":[{"name":"plain","target":"here","role":"stock"},
             {"name":"marked","target":"here","role":"shim","expect":["[shimbench-test] Enabled for"]}],
 "llama_bench":{"args":["-p","64","-n","0","-r","5"]}, "processes":$3, "order":"grouped"}
JSON
}
plan ok fast.sh 1
plan failed garbage.sh 1
plan big big.sh 1
plan slow slow.sh 2
expect_code 0 "a run that ends ok" "$SHIMBENCH" --db runs.db --quiet run --label "ok run" ok.json
expect_code 1 "a run that fails (garbage output)" "$SHIMBENCH" --db runs.db --quiet run failed.json
expect_code 0 "a run whose output is over 8 MB" "$SHIMBENCH" --db runs.db --quiet run --bundle "$WORK/bigrun" big.json
[ "$(q runs.db "select count(*) from results x join runs r on r.id=x.run_id where r.session_id=3")" = 18000 ] &&
	ok "a run's 9 MB output is stored whole (2 x 9000 results)" ||
	not_ok "results of the big run: $(q runs.db "select count(*) from results x join runs r on r.id=x.run_id where r.session_id=3")"
check "its bundle holds the whole output (9000 rows)" sh -c "[ \$(wc -l <bigrun/runs/001-plain-m.jsonl) = 9000 ]"
rm -f slow.once
"$SHIMBENCH" --db runs.db --quiet run slow.json >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -e slow.once ] && [ "$(q runs.db "select count(*) from runs where session_id=4")" = 1 ] && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] && ok "an interrupted run exits 130" || not_ok "interrupted run: exit $rc"
rm -f slow.once
"$SHIMBENCH" --db runs.db --quiet run slow.json >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -e slow.once ] && [ "$(q runs.db "select count(*) from runs where session_id=5")" = 1 ] && break; sleep 0.1; done
{ kill -KILL "$pid"; wait "$pid"; } 2>/dev/null
pkill -f "$WORK/slow.sh" 2>/dev/null
statuses=$(q runs.db "select group_concat(status, ' ') from (select status from sessions order by id)")
[ "$statuses" = "ok failed ok interrupted running" ] && ok "sessions: $statuses" || not_ok "sessions: $statuses"
"$SHIMBENCH" --db runs.db report --format csv >killed.csv
! grep -q "" <(q runs.db "select 1 from sessions where id=5 and status='running'") ||
	{ "$SHIMBENCH" --db runs.db report --select session=5 >sel.out 2>&1
	  grep -q "nothing matched" sel.out && ok "the killed run's session never counts" ||
		not_ok "the killed run's completed process counts: $(head -3 sel.out)"; }
round_trip runs runs.db
check "the big run's output exports byte for byte" cmp -s bigrun/runs/001-plain-m.jsonl rt-runs/3/runs/001-plain-m.jsonl
[ "$(q rt-runs/store.db "select group_concat(status, ' ') from (select status from sessions order by id)")" = "$statuses" ] &&
	ok "every status came back ($statuses)" || not_ok "statuses after the round trip: $(q rt-runs/store.db "select group_concat(status, ' ') from sessions")"
[ "$(q rt-runs/store.db "select label from sessions where id=1")" = "ok run" ] && ok "the session label came back" || not_ok "label lost"
# Each bundle of the round trip, imported again, is the same evidence.
expect_code 0 "a round-tripped bundle imported into the store it came from" \
	"$SHIMBENCH" --db rt-runs/store.db import rt-runs/1
grep_in out "already imported as session 1" "is recognised as already imported"
test_done
