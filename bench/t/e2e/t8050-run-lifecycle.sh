#!/bin/bash
# The life of a run (issue 21 §1-§2): `run` killed with SIGKILL at random
# moments leaves a session shown as abandoned, whose bundle directory the
# next run removes, and `run --resume` finishes it into the same session
# with the same seed and order; --resume refuses, saying why, a session
# that still runs or finished, a changed plan, model or llama-bench; no
# llama-bench outlives a killed shimbench: local (the real llama-bench, and
# a hanging double with a child of its own), over ssh to a real OpenSSH
# server on loopback, and through the tart double (tart exec -i).
# LIFECYCLE_TRIALS (default 4) sets the kills; bench/scripts/crash-test.sh
# runs the long version and prints the figures for BENCHMARKS.md.
. "$(dirname "$0")/lib.sh"
. "$TOP/bench/t/helpers/sshd.sh"

cd "$WORK" || exit 1
TRIALS=${LIFECYCLE_TRIALS:-4}
T0=$(date +%s)
lap() { echo "# $1 at $(( $(date +%s) - T0 )) s"; }
SEED=${LIFECYCLE_SEED:-$$}
RANDOM=$SEED
echo "# seed $SEED, $TRIALS kills"
q() { sqlite3 "$1" "$2" 2>&1; }
LB=$TOP/.llama/bin/llama-bench
ROWS=$FIXTURES/llama-bench/gen-current.jsonl

# count_procs PATTERN: processes whose command line holds PATTERN
count_procs() { pgrep -f -- "$1" | wc -l; }
# gone PATTERN SECONDS: 0 once no process matches, within SECONDS
gone() {
	local i
	for i in $(seq $(( $2 * 10 ))); do
		[ "$(count_procs "$1")" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# appears PATTERN SECONDS: 0 once a process matches
appears() {
	local i
	for i in $(seq $(( $2 * 10 ))); do
		[ "$(count_procs "$1")" != 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# ---- §1: killed, abandoned, resumed ------------------------------------------
cat >lb.sh <<SH
#!/bin/sh
sleep 0.3
echo loading >&2
cat '$ROWS'
SH
chmod +x lb.sh
printf 'not a real model\n' >model.bin
cat >plan.json <<JSON
{"name":"life","models":[{"name":"m","path":"$WORK/model.bin"}],
 "targets":{"here":{"llama_bench":"$WORK/lb.sh"}},
 "variants":[{"name":"a","target":"here","role":"stock"},
             {"name":"b","target":"here","role":"shim"}],
 "llama_bench":{"args":["-p","64","-n","0","-r","5"]}, "processes":3, "seed":7}
JSON
mkdir ref && (cd ref && "$SHIMBENCH" --db ref.db --quiet run ../plan.json >/dev/null 2>&1)
REF=$(q ref/ref.db "select group_concat(seq || variant, ' ') from (select seq, variant from runs order by seq)")
check "the uninterrupted run: 6 processes in the seeded order ($REF)" [ "$(echo "$REF" | wc -w)" = 6 ]
start=$(date +%s%3N)
(cd ref && "$SHIMBENCH" --db ref2.db --quiet run ../plan.json >/dev/null 2>&1)
span=$(( $(date +%s%3N) - start ))
abandoned=0 resumed=0 before=0 orphans=0 leftover=0 bad=""
mkdir runs && cd runs || exit 1
for t in $(seq 1 "$TRIALS"); do
	rm -rf evidence r.db r.db-*
	delay=$(( 200 + RANDOM % span ))
	"$SHIMBENCH" --db r.db --quiet run ../plan.json >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	{ kill -KILL "$pid"; wait "$pid"; } 2>/dev/null
	gone "$WORK/lb.sh" 2 || orphans=$((orphans + 1))
	st=$(q r.db "select status from sessions where id=1" 2>/dev/null)
	shown=$("$SHIMBENCH" --db r.db sessions -f csv 2>/dev/null | awk -F, '$1 == 1 { print $5 }')
	case "$st/$shown" in
	running/abandoned) abandoned=$((abandoned + 1)) ;;
	/) before=$((before + 1)); continue ;;   # killed before the session
	ok/ok) continue ;;                      # killed after it finished
	*) bad="$bad [trial $t (${delay} ms): stored '$st', shown '$shown']"; continue ;;
	esac
	[ -n "$(ls -d evidence/.run-* 2>/dev/null)" ] || bad="$bad [trial $t: no bundle directory of the killed run to clean]"
	"$SHIMBENCH" --db r.db --quiet run --resume 1 >out 2>err
	rc=$?
	got=$(q r.db "select group_concat(seq || variant, ' ') from (select seq, variant from runs where session_id=1 order by seq)")
	st=$(q r.db "select status || ' ' || (select count(*) from sessions) from sessions where id=1")
	if [ "$rc" = 0 ] && [ "$got" = "$REF" ] && [ "$st" = "ok 1" ] &&
	   [ -z "$(ls -d evidence/.run-* 2>/dev/null)" ] &&
	   (cd evidence/session-1 && sha256sum -c --quiet SHA256SUMS >/dev/null 2>&1); then
		resumed=$((resumed + 1))
	else
		bad="$bad [trial $t (${delay} ms): resume exit $rc, runs '$got', session '$st', $(head -c 200 err)]"
	fi
	[ "$(count_procs "$WORK/lb.sh")" = 0 ] || leftover=$((leftover + 1))
done
[ -z "$bad" ] && ok "run killed $TRIALS times: $abandoned shown abandoned and resumed into the same session in the seeded order with a whole bundle ($resumed), $before before the session" ||
	not_ok "killed runs:$bad"
check "no llama-bench outlived a killed run ($orphans orphans)" [ "$orphans" = 0 ] && [ "$leftover" = 0 ]
echo "# figures: run SIGKILL trials=$TRIALS abandoned=$abandoned resumed=$resumed before_session=$before orphans=$orphans failures=$(echo "$bad" | grep -o '\[' | wc -l)"

# A dead run's bundle directory goes with the next run, a live one's stays.
rm -rf evidence r.db r.db-*
mkdir -p evidence/.run-"$(hostname | tr -c 'A-Za-z0-9.\n' _ | head -c 40)"-999999-AbCdEf/runs
mkdir -p evidence/.run-"$(hostname | tr -c 'A-Za-z0-9.\n' _ | head -c 40)"-$$-XyZ123
expect_code 0 "a run after a dead one" "$SHIMBENCH" --db r.db --quiet run ../plan.json
check "the dead run's bundle directory is removed" [ ! -e evidence/.run-*-999999-AbCdEf ]
check "a live process's one stays" [ -d evidence/.run-*-$$-XyZ123 ]
cd "$WORK" || exit 1

lap "kills"
# ---- §1: --resume refuses, saying why, and changes nothing ---------------------
# kill_mid DB: a run of plan.json killed after its second process
kill_mid() {
	rm -rf "$1" "$1"-* evidence
	"$SHIMBENCH" --db "$1" --quiet run plan.json >/dev/null 2>&1 &
	local pid=$! i
	for i in $(seq 100); do
		[ "$(q "$1" "select count(*) from runs" 2>/dev/null)" -ge 2 ] 2>/dev/null && break
		sleep 0.05
	done
	{ kill -KILL "$pid"; wait "$pid"; } 2>/dev/null
	gone "$WORK/lb.sh" 2
}
facts_of() { q "$1" "select status, (select count(*) from runs) from sessions"; }

expect_code 1 "resume a finished session: refused" "$SHIMBENCH" --db ref/ref.db run --resume 1 plan.json
grep_in "$WORK/err" "session 1 finished (ok): nothing to resume" "it says the session finished"

"$SHIMBENCH" --db live.db --quiet run plan.json >/dev/null 2>&1 &
live=$!
for i in $(seq 100); do [ "$(q live.db "select count(*) from runs" 2>/dev/null)" -ge 1 ] 2>/dev/null && break; sleep 0.05; done
expect_code 1 "resume a session that still runs: refused" "$SHIMBENCH" --db live.db run --resume 1 plan.json
grep_in "$WORK/err" "is still running (pid $live on" "it names the process that runs it"
wait "$live"
check "the live run finished undisturbed" [ "$(facts_of live.db)" = "ok|6" ]

kill_mid k.db
was=$(facts_of k.db)
sed 's/"processes":3/"processes":2/' plan.json >plan2.json
expect_code 1 "resume with a changed plan: refused" "$SHIMBENCH" --db k.db run --resume 1 plan2.json
grep_in "$WORK/err" "the plan changed since session 1 ran" "it says the plan changed"
cp model.bin model.keep && printf 'another model\n' >model.bin
expect_code 1 "resume with a changed model: refused" "$SHIMBENCH" --db k.db run --resume 1 plan.json
grep_in "$WORK/err" "model 'm' changed since session 1 ran: SHA-256 was" "it names the model and both hashes"
cp model.keep model.bin
cp lb.sh lb.keep && printf '# rebuilt\n' >>lb.sh
expect_code 1 "resume with a changed llama-bench: refused" "$SHIMBENCH" --db k.db run --resume 1
grep_in "$WORK/err" "target 'here' changed since session 1 ran: llama_bench_sha256 was" "it names the target and the fact"
cp lb.keep lb.sh
check "the refusals changed nothing stored ($was)" [ "$(facts_of k.db)" = "$was" ]
expect_code 0 "then, unchanged, the resume (PLAN from the session) completes" "$SHIMBENCH" --db k.db --quiet run --resume 1
check "into the same session, in the seeded order" [ "$(q k.db "select group_concat(seq || variant, ' ') from (select seq, variant from runs order by seq)")" = "$REF" ]
expect_code 2 "resume of a session that does not exist" "$SHIMBENCH" --db k.db run --resume 9
grep_in "$WORK/err" "has no session 9" "it says so"

# An interrupted session (SIGINT) resumes too; its interrupted process runs again.
rm -rf i.db i.db-* evidence
"$SHIMBENCH" --db i.db --quiet run plan.json >/dev/null 2>&1 &
pid=$!
for i in $(seq 100); do [ "$(q i.db "select count(*) from runs" 2>/dev/null)" -ge 2 ] 2>/dev/null && break; sleep 0.05; done
kill -INT "$pid"; wait "$pid"
check "SIGINT: the session is interrupted" [ "$(q i.db "select status from sessions")" = interrupted ]
expect_code 0 "resume the interrupted session" "$SHIMBENCH" --db i.db --quiet run --resume 1
check "every process once, ok, in the seeded order" [ "$(q i.db "select group_concat(seq || variant || status, ' ') from (select * from runs order by seq)")" = "$(echo "$REF" | sed 's/\([ab]\)/\1ok/g')" ]

lap "refusals"
# ---- §2: children die with the parent ------------------------------------------
# A hanging llama-bench double with a child of its own: the whole group goes.
cat >hang.sh <<'SH'
#!/bin/sh
echo hanging >&2
sleep 313 &
wait
SH
chmod +x hang.sh
sed "s|$WORK/lb.sh|$WORK/hang.sh|" plan.json >hang.json
"$SHIMBENCH" --db h.db --quiet run hang.json >/dev/null 2>&1 &
pid=$!
appears "sleep 313" 10
kill -KILL "$pid"; wait "$pid" 2>/dev/null
gone "$WORK/hang.sh" 2 && gone "sleep 313" 1 &&
	ok "a hanging llama-bench and its child died with the killed shimbench" ||
	{ not_ok "a hanging llama-bench outlived shimbench: $(pgrep -fa "hang.sh|sleep 313")"; pkill -KILL -f "sleep 313"; pkill -KILL -f "$WORK/hang.sh"; }

if [ ! -x "$LB" ]; then
	skip "the real llama-bench: not provisioned (make llama-bench)"
else
	expect_code 0 "a tiny model for the real llama-bench" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
	real_plan() { # real_plan FILE TARGET_JSON
		cat >"$1" <<JSON
{"name":"real","models":[{"name":"tiny","path":"$WORK/tiny.gguf"}],
 "targets":{"t":$2},
 "variants":[{"name":"plain","target":"t","role":"stock"}],
 "llama_bench":{"args":["-p","16","-n","4","-r","100000","-t","1"]}, "processes":1}
JSON
	}
	real_plan real.json "{\"llama_bench\":\"$LB\"}"
	# the real binary as it runs (.llama/bin/llama-bench execs it through
	# the prefix's loader); an ssh or tart client's quoted argv never
	# matches this
	REAL="llama-bench -m $WORK/tiny.gguf"
	korph=0 noshow=0
	for t in $(seq 1 "$TRIALS"); do
		"$SHIMBENCH" --db real$t.db --quiet run real.json >/dev/null 2>&1 &
		pid=$!
		appears "$REAL" 20 || noshow=$((noshow + 1))
		sleep "0.$(( RANDOM % 9 ))"
		kill -KILL "$pid"; wait "$pid" 2>/dev/null
		sleep 1
		[ "$(count_procs "$WORK/tiny.gguf")" = 0 ] || { korph=$((korph + 1)); pkill -KILL -f "$WORK/tiny.gguf"; }
	done
	check "the real llama-bench was running when shimbench was killed, $TRIALS of $TRIALS times" [ "$noshow" = 0 ]
	check "the real llama-bench was gone 1 s after shimbench was killed, $TRIALS of $TRIALS times" [ "$korph" = 0 ]
	echo "# figures: real llama-bench, shimbench SIGKILL trials=$TRIALS alive_after_1s=$korph"

	lap "local kills"
	# ssh: the remote llama-bench ends when the ssh client or shimbench dies
	if ! start_sshd; then
		skip "ssh: needs sshd (openssh-server) and root to run it"
	else
		real_plan ssh.json "{\"transport\":\"ssh\",\"host\":\"127.0.0.1\",\"user\":\"$(id -un)\",\"ssh_options\":[$SSH_OPTS],\"llama_bench\":\"$LB\"}"
		sorph=0 noshow=0
		for t in 1 2; do
			"$SHIMBENCH" --db ssh$t.db --quiet run ssh.json >/dev/null 2>&1 &
			pid=$!
			appears "$REAL" 30 || noshow=$((noshow + 1))
			sleep "0.$(( RANDOM % 9 ))"
			kill -KILL "$pid"; wait "$pid" 2>/dev/null
			gone "$REAL" 3 || { sorph=$((sorph + 1)); pkill -KILL -f "$WORK/tiny.gguf"; }
		done
		check "over ssh: the remote llama-bench was running when shimbench was killed, 2 of 2 times" [ "$noshow" = 0 ]
		check "over ssh (real sshd): the remote llama-bench ended within 3 s of the kill, 2 of 2 times" [ "$sorph" = 0 ]
		echo "# figures: ssh remote llama-bench, shimbench SIGKILL trials=2 alive_after_3s=$sorph"
	fi

	lap "ssh"
	# tart: tart exec -i attaches our stdin, which the remote wrapper watches
	export PATH=$FIXTURES/doubles:$PATH FAKE_TART_VMS=runner
	real_plan tart.json "{\"transport\":\"tart\",\"vm\":\"runner\",\"llama_bench\":\"$LB\"}"
	"$SHIMBENCH" --db tart.db --quiet run tart.json >/dev/null 2>&1 &
	pid=$!
	appears "$REAL" 30 && ok "through tart: the guest's llama-bench runs" || not_ok "through tart: no llama-bench ran"
	kill -KILL "$pid"; wait "$pid" 2>/dev/null
	gone "$WORK/tiny.gguf" 3 && ok "through tart exec -i: the guest's llama-bench ended with shimbench" ||
		{ not_ok "tart: the guest's llama-bench outlived shimbench"; pkill -KILL -f "$WORK/tiny.gguf"; }
fi
test_done
