#!/bin/bash
# `shimbench run` with the real llama-bench on a tiny synthetic model:
# interleaved variants with injection, verification, failures, bundles.
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "run: the real llama-bench is not provisioned (make llama-bench)"
	test_done; exit $?
fi
export LLAMA_BENCH=$LB
LIB=$T_BUILD/t/helpers/libmarker.so
FAKE=$FIXTURES/fake-llama-bench
DB=$WORK/run.db
MODEL="$WORK/tiny model.gguf"     # a space in the path on purpose
count() { sqlite3 "$DB" "$1"; }

expect_code 0 "synthesize the tiny model" "$SHIMBENCH" models synth tiny -o "$MODEL"
LIBSHA=$(sha256sum "$LIB" | cut -d' ' -f1)
ARGS='"llama_bench":{"args":["-p","32","-n","8","-r","3","-t","2"]}'

# 1. The minimal plan shape from the issue stays valid.
cat >"$WORK/minimal.json" <<JSON
{"models":[{"name":"tiny","path":"$MODEL"}], "targets":{"here":{"transport":"local"}}, "variants":[{"name":"plain","target":"here"}], "llama_bench":{"args":["-p","64","-n","16","-r","3"]}, "processes":2}
JSON
expect_code 0 "minimal plan runs" "$SHIMBENCH" --db "$WORK/min.db" --quiet run --bundle "$WORK/min" "$WORK/minimal.json"
# The session stores the plan with its seed, exact above 2^53 (a clock
# seed is), written through the JSON module.
expect_code 0 "a seed above 2^53 runs" "$SHIMBENCH" --db "$WORK/seed.db" --quiet run --seed 9007199254740993 --bundle "$WORK/seed" "$WORK/minimal.json"
check "the stored plan is the plan and the exact seed" python3 -c "
import json, sqlite3, sys
stored = json.loads(sqlite3.connect('$WORK/seed.db').execute('select plan_json from sessions').fetchone()[0])
plan = json.load(open('$WORK/minimal.json'))
seed = stored.pop('shimbench_seed')
sys.exit(not (seed == 9007199254740993 and list(stored) == list(plan) and stored['processes'] == 2))"

# 1a. A pre-flight warning is said in words, one line each (issue 22 §6:
#     it was a raw JSON array); another llama process makes one for sure.
cp "$(command -v sleep)" "$WORK/llama-other"
"$WORK/llama-other" 60 &
other=$!
expect_code 0 "a run beside another llama process" "$SHIMBENCH" --db "$WORK/pre.db" run --bundle "$WORK/pre" "$WORK/minimal.json"
kill "$other" 2>/dev/null; wait "$other" 2>/dev/null
check "the warning in words, on a line of its own" grep -qE '^warning: before the first run: [0-9]+ other llama process(es)? running$' "$WORK/err"
check "no JSON array on screen" sh -c "! grep -qF '[\"' '$WORK/err'"
check "stored with the session" test "$(sqlite3 "$WORK/pre.db" "select json_array_length(warnings_json) >= 1 from sessions")" = 1

# 1c. No llama-bench anywhere (README, job 2): exit 3, the fix named,
#     no session stored. A copy of the binary has no .llama/ beside it.
mkdir -p "$WORK/nolb/bin" "$WORK/nolb/path"
cp "$SHIMBENCH" "$WORK/nolb/bin/shimbench"
for t in sh env uname cat grep sed ps nproc; do
	p=$(command -v "$t") && ln -sf "$p" "$WORK/nolb/path/$t"
done
(cd "$WORK/nolb" && expect_code 3 "run without any llama-bench" env -u LLAMA_BENCH PATH="$WORK/nolb/path" \
	"$WORK/nolb/bin/shimbench" --db nolb.db run "$WORK/minimal.json")
grep_in "$WORK/err" "'llama-bench' not found (\$LLAMA_BENCH, PATH, .llama/bin); provision it with: make llama-bench" "names the fix"
check "no session stored" test "$(sqlite3 "$WORK/nolb/nolb.db" 'select count(*) from sessions')" = 0

# 1b. A plan naming a missing model is refused before anything is stored
#     (issue 22 §6): no store, no session, no bundle, the model named.
sed "s|\"path\":\"$MODEL\"|\"path\":\"$WORK/no such.gguf\"|" "$WORK/minimal.json" >"$WORK/missing.json"
expect_code 3 "a plan with a missing model is refused" "$SHIMBENCH" --db "$WORK/miss.db" run --bundle "$WORK/miss" "$WORK/missing.json"
grep_in "$WORK/err" "model 'tiny': cannot read '$WORK/no such.gguf' on target 'here': No such file or directory" "names the model, the file and the target"
grep_in "$WORK/err" "nothing was run or stored" "and says nothing was stored"
check "no store was made" test ! -e "$WORK/miss.db"
check "no bundle was written" test ! -e "$WORK/miss"
"$SHIMBENCH" --db "$WORK/miss2.db" --quiet run --bundle "$WORK/min2" "$WORK/minimal.json" >/dev/null 2>&1
expect_code 3 "into an existing store: refused the same" "$SHIMBENCH" --db "$WORK/miss2.db" run "$WORK/missing.json"
check "the store still holds its one session, no failed one" test "$(sqlite3 "$WORK/miss2.db" 'select count(*) from sessions')" = 1

# 2. Two variants, K=2 interleaved, one with an injected library that
#    must leave its marker.
cat >"$WORK/two.json" <<JSON
{"name":"two-variants",
 "models":[{"name":"tiny","path":"$MODEL"}],
 "targets":{"here":{"transport":"local"}},
 "variants":[
   {"name":"plain","target":"here","role":"stock"},
   {"name":"preload","target":"here","role":"shim",
    "inject":{"library":"$LIB","sha256":"$LIBSHA","env":{"SHIMBENCH_TEST_MARKER_QUIET":"0"}},
    "expect":["[shimbench-test-preload] Enabled for"]}],
 $ARGS, "processes":2, "order":"interleaved", "seed":7}
JSON
expect_code 0 "two-variant plan runs" "$SHIMBENCH" --db "$DB" run --bundle "$WORK/b2" "$WORK/two.json"
grep_in "$WORK/err" "4 processes, interleaved order, seed 7" "schedule and seed announced"
[ "$(count 'select count(*) from runs')" = 4 ] && ok "4 runs stored" || not_ok "runs: $(count 'select count(*) from runs')"
[ "$(count 'select count(*) from results')" = 8 ] && ok "8 results (pp32, tg8 per run)" || not_ok "results"
[ "$(count 'select count(*) from samples')" = 24 ] && ok "24 samples" || not_ok "samples"
[ "$(count "select count(*) from runs where variant='preload' and verification='verified'")" = 2 ] \
	&& ok "injected runs verified" || not_ok "injected runs not verified"
[ "$(count "select count(*) from runs where variant='preload' and env_json like '%LD_PRELOAD%'")" = 2 ] \
	&& ok "LD_PRELOAD recorded in the run's environment" || not_ok "no LD_PRELOAD"
order=$(count "select group_concat(variant, ' ') from (select variant from runs order by seq)")
case "$order" in
"plain preload plain preload"|"preload plain preload plain"|"plain preload preload plain"|"preload plain plain preload")
	ok "interleaved: each round runs every variant ($order)" ;;
*) not_ok "not interleaved: $order" ;;
esac
[ "$(count "select status from sessions")" = ok ] && ok "session ok" || not_ok "session status"
count "select fingerprint_json from environments" | grep -q '"llama_build":"b' && ok "fingerprint has the llama.cpp build" || not_ok "no llama_build"
grep_in "$WORK/out" "| tiny (llama.cpp) | pp32" "report printed"
grep_in "$WORK/out" "×" "ratio shown"
check "bundle SHA256SUMS verifies" sh -c "cd '$WORK/b2' && sha256sum -c --quiet SHA256SUMS"
expect_code 0 "bundle imports into an empty store" "$SHIMBENCH" --db "$WORK/rt.db" import "$WORK/b2"
"$SHIMBENCH" --db "$DB" report --format csv >"$WORK/a.csv"
"$SHIMBENCH" --db "$WORK/rt.db" report --format csv >"$WORK/b.csv"
check "round trip gives the identical report" cmp -s "$WORK/a.csv" "$WORK/b.csv"
expect_code 0 "export of the session" "$SHIMBENCH" --db "$DB" export 1 "$WORK/exp"
check "exported raw files equal the run's" diff -r "$WORK/b2/runs" "$WORK/exp/runs"
expect_code 0 "the run's own bundle into its own store" "$SHIMBENCH" --db "$DB" import "$WORK/b2"
grep_in "$WORK/out" "already imported as session 1" "counted once: it names the run's session"
[ "$(count 'select count(*) from samples')" = 24 ] && ok "no sample counted twice" || not_ok "samples: $(count 'select count(*) from samples')"
expect_code 2 "export into a non-empty directory" "$SHIMBENCH" --db "$DB" export 1 "$WORK/exp"
grep_in "$WORK/err" "is not empty" "says why"
expect_code 2 "run --bundle into a non-empty directory" "$SHIMBENCH" --db "$DB" run --bundle "$WORK/exp" "$WORK/two.json"
grep_in "$WORK/err" "bundle directory '$WORK/exp' is not empty" "names the directory"
[ "$(count 'select count(*) from sessions')" = 1 ] && ok "nothing stored by the refused run" || not_ok "refused run stored a session"

# 3. A marker that never appears: unverified, excluded, exit 1.
sed 's/"SHIMBENCH_TEST_MARKER_QUIET":"0"/"SHIMBENCH_TEST_MARKER_QUIET":"1"/; s/"processes":2/"processes":1/' \
	"$WORK/two.json" >"$WORK/quiet.json"
expect_code 1 "missing marker fails the session" "$SHIMBENCH" --db "$DB" run --bundle "$WORK/b3" "$WORK/quiet.json"
grep_in "$WORK/err" "injection not verified: missing marker '[shimbench-test-preload] Enabled for'" "says what was missing"
grep_in "$WORK/err" "likely causes" "says the likely causes"
grep_in "$WORK/out" "Excluded: injection not verified" "report lists the unverified run apart"
[ "$(count "select status from sessions where id=2")" = failed ] && ok "session 2 failed" || not_ok "session 2 status"

# 3b. A capability probe run under the variant's environment before its
#     processes: passes with the library injected, fails without it.
cat >"$WORK/probe.json" <<JSON
{"models":[{"name":"tiny","path":"$MODEL"}], "targets":{"here":{}},
 "variants":[
   {"name":"probed","target":"here","role":"shim",
    "inject":{"library":"$LIB","sha256":"$LIBSHA"},
    "expect":["[shimbench-test-preload] Enabled for"],
    "probe":{"argv":["$FIXTURES/fake-probe.sh"],"expect":{"shim.loaded":true,"supportsFamily.1009":true}}},
   {"name":"probe-fails","target":"here","role":"other",
    "probe":{"argv":["$FIXTURES/fake-probe.sh"],"expect":{"shim.loaded":true}}}],
 $ARGS, "order":"grouped"}
JSON
expect_code 1 "a failing probe fails the session" "$SHIMBENCH" --db "$WORK/pr.db" run --bundle "$WORK/bp" "$WORK/probe.json"
grep_in "$WORK/err" "variant probed: probe ok: probe: shim.loaded = true, supportsFamily.1009 = true" "probe passes with the library"
grep_in "$WORK/err" "probe: shim.loaded is false, expected true" "probe failure says what differed"
pv() { sqlite3 "$WORK/pr.db" "select verification from runs where variant='$1'"; }
[ "$(pv probed)" = verified ] && ok "probed variant verified" || not_ok "probed: $(pv probed)"
[ "$(pv probe-fails)" = unverified ] && ok "variant with a failing probe unverified" || not_ok "probe-fails: $(pv probe-fails)"
sqlite3 "$WORK/pr.db" "select capabilities_json from runs where variant='probed'" | grep -q '"probe":{"device":"fake"' \
	&& ok "probe output kept with the run's capabilities" || not_ok "no probe output stored"
expect_code 0 "the probed bundle imports" "$SHIMBENCH" --db "$WORK/pr2.db" import "$WORK/bp"
[ "$(sqlite3 "$WORK/pr2.db" "select verification from runs where variant='probe-fails'")" = unverified ] \
	&& ok "re-import never upgrades a probe failure" || not_ok "probe failure lost on import"
echo '{"models":[{"name":"t","path":"/x"}],"targets":{"h":{}},"variants":[{"name":"v","target":"h","probe":{"argv":[],"expect":{"a":1}}}]}' >"$WORK/badprobe.json"
expect_code 2 "probe without a program" "$SHIMBENCH" --db "$WORK/pr.db" run "$WORK/badprobe.json"
grep_in "$WORK/err" "variants[0].probe.argv' must name the probe program" "names the key"

# 4. A library with the wrong hash: refused before any process starts.
before=$(count "select count(*) from runs")
sed "s/$LIBSHA/$(printf '0%.0s' $(seq 64))/" "$WORK/two.json" >"$WORK/badlib.json"
expect_code 1 "wrong library hash refused" "$SHIMBENCH" --db "$DB" run --bundle "$WORK/b4" "$WORK/badlib.json"
grep_in "$WORK/err" "refusing to run" "says it refused"
[ "$(count "select count(*) from runs")" = "$before" ] && ok "no process started" || not_ok "runs were stored"
[ ! -e "$WORK/b4" ] && ok "no bundle written" || not_ok "bundle written"

# 5. llama-bench that crashes, hangs or prints garbage: recorded, the
#    session goes on, and fails.
cat >"$WORK/bad.json" <<JSON
{"models":[{"name":"tiny","path":"$MODEL"}],
 "targets":{"segv":{"llama_bench":"$FAKE/segv.sh"},
            "hang":{"llama_bench":"$FAKE/hang.sh","timeout":2},
            "garbage":{"llama_bench":"$FAKE/garbage.sh"},
            "real":{}},
 "variants":[{"name":"segv","target":"segv"},{"name":"hang","target":"hang"},
             {"name":"garbage","target":"garbage"},{"name":"real","target":"real"}],
 $ARGS, "order":"grouped", "timeout":120}
JSON
expect_code 1 "crash, hang and garbage fail the session" "$SHIMBENCH" --db "$DB" run --bundle "$WORK/b5" "$WORK/bad.json"
st() { count "select status || '|' || coalesce(signal,'') || '|' || timed_out from runs where session_id=(select max(id) from sessions) and variant='$1'"; }
[ "$(st segv)" = "crashed|11|0" ] && ok "crash recorded with its signal" || not_ok "segv: $(st segv)"
[ "$(st hang)" = "timeout|15|1" ] || [ "$(st hang)" = "timeout|9|1" ] && ok "hang recorded as timeout" || not_ok "hang: $(st hang)"
[ "$(st garbage)" = "failed|0|0" ] && ok "garbage recorded as failed" || not_ok "garbage: $(st garbage)"
[ "$(st real)" = "ok|0|0" ] && ok "the session went on to the real run" || not_ok "real: $(st real)"
count "select error from runs where variant='garbage'" | grep -q "unparseable output" && ok "garbage cause recorded" || not_ok "garbage cause"
grep_in "$WORK/err" "killed by signal 11" "crash cause reported"

# 6. Plans with mistakes: errors that name the key and its path.
echo '{"models":[{"name":"t","path":"/x"}],"targets":{"h":{}},"variants":[{"name":"v","target":"h","inejct":{}}]}' >"$WORK/typo.json"
expect_code 2 "unknown key in a plan" "$SHIMBENCH" --db "$DB" run "$WORK/typo.json"
grep_in "$WORK/err" "unknown key 'variants[0].inejct'" "names the key and its path"
echo '{"models":[{"name":"t","path":"/x"}],"targets":{"h":{}},"variants":[{"name":"v","target":"h"}],"processes":"2"}' >"$WORK/type.json"
expect_code 2 "wrong type in a plan" "$SHIMBENCH" --db "$DB" run "$WORK/type.json"
grep_in "$WORK/err" "'processes' must be an integer" "names the key"
echo '{"models":[{"name":"t","path":"/x"}],"targets":{"h":{}},"variants":[{"name":"v","target":"nowhere"}]}' >"$WORK/tgt.json"
expect_code 2 "unknown target" "$SHIMBENCH" --db "$DB" run "$WORK/tgt.json"

# 7. A model whose hash does not match: its runs are skipped, exit 1.
sed "s|\"path\":\"$MODEL\"|\"path\":\"$MODEL\",\"sha256\":\"$(printf 'a%.0s' $(seq 64))\"|" "$WORK/minimal.json" >"$WORK/badmodel.json"
expect_code 1 "model hash mismatch fails the session" "$SHIMBENCH" --db "$WORK/bm.db" run --bundle "$WORK/b7" "$WORK/badmodel.json"
grep_in "$WORK/err" "skipping its runs" "says the model's runs are skipped"
[ "$(sqlite3 "$WORK/bm.db" 'select count(*) from runs')" = 0 ] && ok "no run of the bad model" || not_ok "bad model ran"

# 8. calibrate PLAN: runs the A/A processes, stores the noise floor.
cat >"$WORK/aa.json" <<JSON
{"models":[{"name":"tiny","path":"$MODEL"}], "targets":{"here":{}},
 "variants":[{"name":"aa","target":"here","role":"bare-metal"}], $ARGS, "processes":3}
JSON
# (from $WORK: the run's default bundle directory is ./evidence/session-N)
(cd "$WORK" && expect_code 0 "calibrate PLAN" "$SHIMBENCH" --db "$WORK/cal.db" --quiet calibrate --trials 20 --format csv "$WORK/aa.json")
[ -d "$WORK/evidence/session-1" ] && ok "calibration run wrote its bundle" || not_ok "no calibration bundle"
grep_in "$WORK/out" "here,tiny,pp32,3," "calibrated from the plan's 3 processes"
[ "$(sqlite3 "$WORK/cal.db" 'select count(*) from noise')" = 2 ] && ok "noise floor stored for pp32 and tg8" || not_ok "noise rows: $(sqlite3 "$WORK/cal.db" 'select count(*) from noise')"
(cd "$WORK" && expect_code 0 "a run of another store from the same directory" "$SHIMBENCH" --db "$WORK/other.db" --quiet run "$WORK/aa.json")
[ -d "$WORK/evidence/session-1-2" ] && [ -f "$WORK/evidence/session-1/SHA256SUMS" ] &&
	ok "its bundle is session-1-2: the first store's session-1 is untouched" ||
	not_ok "default bundle names collided: $(ls "$WORK/evidence")"
(cd "$WORK/evidence/session-1" && sha256sum -c --quiet SHA256SUMS) && ok "session-1 still verifies" || not_ok "session-1 changed"
expect_code 2 "calibrate PLAN and --from together" "$SHIMBENCH" --db "$WORK/cal.db" calibrate --from session=1 "$WORK/aa.json"

# 9. SIGINT stops the current child, keeps completed runs, stores the
#    session as interrupted and exits non-zero.
cat >"$WORK/int.json" <<JSON
{"models":[{"name":"tiny","path":"$MODEL"}],
 "targets":{"real":{},"hang":{"llama_bench":"$FAKE/hang.sh"}},
 "variants":[{"name":"real","target":"real"},{"name":"hang","target":"hang"}],
 $ARGS, "order":"grouped", "timeout":60}
JSON
"$SHIMBENCH" --db "$WORK/int.db" run --bundle "$WORK/b8" "$WORK/int.json" >"$WORK/out" 2>"$WORK/err" &
pid=$!
for _ in $(seq 100); do
	grep -q "run 1/2" "$WORK/err" 2>/dev/null && break
	sleep 0.2
done
sleep 0.5
kill -INT "$pid"
wait "$pid"; rc=$?
[ "$rc" = 130 ] && ok "interrupted run exits 130" || not_ok "interrupted run exit $rc"
[ "$(sqlite3 "$WORK/int.db" 'select status from sessions')" = interrupted ] && ok "session stored as interrupted" || not_ok "session not interrupted"
[ "$(sqlite3 "$WORK/int.db" "select status from runs where variant='real'")" = ok ] && ok "completed run kept" || not_ok "completed run lost"
pgrep -f "$FAKE/hang.sh" >/dev/null && not_ok "hanging child left behind" || ok "no child left behind"
test_done
