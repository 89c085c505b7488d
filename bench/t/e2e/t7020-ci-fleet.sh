#!/bin/bash
# The fleet workflow's steps: three hosts each run the plan into their own
# store (run-study.sh) and hand over their bundle the way the workflow's
# artifacts arrive (one directory per artifact); fleet-merge.sh imports
# them into one store (counts equal to the sum of the hosts', and a second
# merge counts nothing twice), writes a report per host and one for the
# fleet, and gates each host: across an OS update a host that regressed
# turns the fleet red; a tampered bundle is refused whole.
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
if [ ! -x "$LB" ]; then
	skip "fleet steps: the real llama-bench is not provisioned"
	test_done; exit $?
fi
CI=$TOP/bench/scripts/ci
export GITHUB_ACTIONS=true GITHUB_OUTPUT=$WORK/gh-output GITHUB_STEP_SUMMARY=$WORK/summary.md
export SHIMBENCH GITHUB_RUN_ID=7 GITHUB_RUN_ATTEMPT=1
out_of() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT" | tail -n 1; }
expect_code 0 "synthesize the model" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
cat >"$WORK/plan.json" <<JSON
{"models": [{"name": "tiny", "path": "$WORK/tiny.gguf"}],
 "targets": {"host": {"transport": "local", "llama_bench": "$LB"}},
 "variants": [{"name": "bare-metal", "target": "host", "role": "bare-metal"},
              {"name": "stock", "target": "host", "role": "stock"}],
 "llama_bench": {"args": ["-p", "16", "-n", "4", "-r", "2", "-t", "2"]}}
JSON

# --- three hosts, each with its own store; their bundles as artifacts.
mkdir -p "$WORK/dl"
for h in mac-1 mac-2 mac-3; do
	: >"$GITHUB_OUTPUT"
	expect_code 0 "$h: run-study.sh" env SHIMBENCH_STATE="$WORK/$h" SHIMBENCH_HOST="$h" \
		sh "$CI/run-study.sh" "$WORK/plan.json"
	mkdir -p "$WORK/dl/shimbench-bundle-$h"
	cp -R "$(out_of bundle)/." "$WORK/dl/shimbench-bundle-$h/"
done
count() { # count DB TABLE
	sqlite3 "$1" "select count(*) from $2"
}

export SHIMBENCH_STATE=$WORK/fleet
: >"$GITHUB_OUTPUT"
: >"$GITHUB_STEP_SUMMARY"
expect_code 0 "fleet-merge.sh: three bundles, no baseline yet (neutral)" sh "$CI/fleet-merge.sh" "$WORK/dl"
[ "$(out_of sessions)" = "1 2 3" ] && ok "one session per host" || not_ok "sessions: $(out_of sessions)"
[ "$(out_of verdict)" = neutral ] && ok "fleet verdict neutral" || not_ok "verdict: $(out_of verdict)"
for t in sessions environments runs results samples; do
	sum=0
	for h in mac-1 mac-2 mac-3; do sum=$((sum + $(count "$WORK/$h/store.db" "$t"))); done
	got=$(count "$WORK/fleet/store.db" "$t")
	[ "$got" -eq "$sum" ] && [ "$sum" -gt 0 ] && ok "merged $t: $got = the sum of the hosts'" \
		|| not_ok "merged $t: $got, the hosts hold $sum"
done
for h in mac-1 mac-2 mac-3; do
	grep_in "$WORK/fleet/fleet/summary.md" "| $h |" "$h in the fleet table"
	check "$h: its report" test -s "$WORK/fleet/fleet/$h.md"
done
grep_in "$WORK/fleet/fleet/summary.md" "no-baseline" "hosts without an OS update are neutral"
check "the fleet report, md and html" test -s "$WORK/fleet/fleet/report.md" -a -s "$WORK/fleet/fleet/report.html"
grep_in "$GITHUB_STEP_SUMMARY" "### shimbench fleet: 3 hosts" "the fleet table in the step summary"

before=$(count "$WORK/fleet/store.db" samples)
: >"$GITHUB_OUTPUT"
expect_code 0 "fleet-merge.sh again: the same bundles" sh "$CI/fleet-merge.sh" "$WORK/dl"
grep_in "$WORK/out" "is already imported as session 1; nothing stored" "names what is already there"
[ "$(count "$WORK/fleet/store.db" samples)" = "$before" ] && ok "nothing counted twice" || not_ok "samples grew"
[ "$(out_of sessions)" = "1 2 3" ] && ok "the same sessions gated" || not_ok "sessions: $(out_of sessions)"

# A tampered bundle: the whole merge is refused, nothing stored.
cp -R "$WORK/dl" "$WORK/dl-bad"
cp -R "$WORK/dl/shimbench-bundle-mac-1" "$WORK/dl-bad/shimbench-bundle-mac-4"
f=$(ls "$WORK/dl-bad/shimbench-bundle-mac-4/runs/"*.jsonl | head -n 1)
sed -i 's/"avg_ts": *[0-9.e+]*/"avg_ts": 1/' "$f"
echo >>"$f"
expect_code 1 "a tampered bundle refuses the merge" env SHIMBENCH_STATE="$WORK/fleet-bad" \
	sh "$CI/fleet-merge.sh" "$WORK/dl-bad"
grep_in "$WORK/out" "::error title=fleet::import refused the bundles" "says so"
check "nothing stored" sh -c "[ ! -f '$WORK/fleet-bad/store.db' ] || [ \$(sqlite3 '$WORK/fleet-bad/store.db' 'select count(*) from sessions') = 0 ]"
expect_code 3 "no bundles at all" env SHIMBENCH_STATE="$WORK/fleet-none" sh "$CI/fleet-merge.sh" "$WORK/empty-dir"

# --- across an OS update: one host regressed, the fleet is red.
OSU=$FIXTURES/os-update
if [ -f "$OSU/base.mapping.json" ]; then
	for s in base slow; do
		expect_code 0 "the $s session as a host's bundle" "$SHIMBENCH" --db "$WORK/$s.db" import \
			--mapping "$OSU/$s.mapping.json" "$OSU/$s"
		mkdir -p "$WORK/osu-$s"
		expect_code 0 "export it" "$SHIMBENCH" --db "$WORK/$s.db" export 1 "$WORK/osu-$s/shimbench-bundle-calib"
	done
	export SHIMBENCH_STATE=$WORK/fleet-osu
	expect_code 0 "the fleet before the update" sh "$CI/fleet-merge.sh" "$WORK/osu-base"
	: >"$GITHUB_OUTPUT"
	expect_code 1 "the fleet after the update: calib regressed, red" sh "$CI/fleet-merge.sh" "$WORK/osu-slow"
	[ "$(out_of verdict)" = regression ] && ok "fleet verdict regression" || not_ok "verdict: $(out_of verdict)"
	grep_in "$WORK/fleet-osu/fleet/summary.md" "| calib | 2 | regression | auto |" "the host's row says so"
	check "its JUnit" test "$(grep -c '<failure ' "$WORK/fleet-osu/fleet/gate-calib/junit.xml")" = 2
else
	skip "the fleet across an OS update: bench/t/fixtures/os-update is absent"
fi
test_done
