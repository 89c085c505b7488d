#!/bin/bash
# Every promise about bad input (the exit codes of README.md, the import
# rules of docs/formats.md), checked as written: the exit code, the file
# (row, key, offset) named, and nothing stored. Each block quotes the
# promise it checks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-integrity.sh"

need_shared "README promises" || { test_done; exit $?; }
cd "$WORK" || exit 1
DB=$WORK/p.db
q() { sqlite3 "$1" "$2" 2>&1; }
stored() { [ -f "$DB" ] && q "$DB" "select count(*) from sessions" || echo 0; }
# promise CODE TITLE TEXT CMD...: exit CODE, TEXT on stderr, nothing stored.
promise() {
	local code=$1 title=$2 text=$3 n
	shift 3
	n=$(stored)
	expect_code "$code" "$title" "$@"
	[ -z "$text" ] || grep_in "$WORK/err" "$text" "$title: names it"
	[ "$(stored)" = "$n" ] && ok "$title: nothing stored" || not_ok "$title: something was stored"
}

# "a mismatch, a missing file, or a file the import needs that SHA256SUMS
# does not cover refuses the import with exit 1 and names the file;
# nothing is stored (when several DIRs are given, none is)"
cp -r "$E1" mism && chmod -R u+w mism && printf ' ' >>mism/tiny-stock-minimal.stderr
promise 1 "import: a SHA-256 mismatch" "'mism/tiny-stock-minimal.stderr': SHA-256 mismatch" \
	"$SHIMBENCH" --db "$DB" import --mapping "$M1" mism
cp -r "$E1" missing && chmod -R u+w missing && rm missing/tiny-host-minimal.json
promise 1 "import: a missing file" "'missing/tiny-host-minimal.json' is missing" \
	"$SHIMBENCH" --db "$DB" import --mapping "$M1" missing
cp -r "$E1" uncovered && chmod -R u+w uncovered && grep -v tiny-host-minimal.json "$E1/SHA256SUMS" >uncovered/SHA256SUMS
promise 1 "import: a file SHA256SUMS does not cover" "'uncovered/tiny-host-minimal.json' is not covered by SHA256SUMS" \
	"$SHIMBENCH" --db "$DB" import --mapping "$M1" uncovered
"$SHIMBENCH" --db "$WORK/b.db" import --mapping "$M1" "$E1" >/dev/null 2>&1
"$SHIMBENCH" --db "$WORK/b.db" export 1 bundle >/dev/null 2>&1
cp -r bundle b-absent && rm b-absent/results.csv
promise 1 "import: a bundle file SHA256SUMS lists but that is absent" "'b-absent/results.csv' is listed in SHA256SUMS but absent" \
	"$SHIMBENCH" --db "$DB" import b-absent
promise 1 "import: several DIRs, one tampered: none stored" "SHA-256 mismatch" \
	"$SHIMBENCH" --db "$DB" import --mapping "$M2" --mapping "$M1" "$E2" mism
grep_in "$WORK/err" "nothing from the 2 directories was imported" "says none was stored"

# "--allow-tampered imports anyway and flags the session" and
# (docs/statistics.md, issue 11 §3) "a session imported as tampered" is
# left out unless the selection includes it; "included explicitly, the
# rows are marked ([tampered])" (this block used to expect the tampered
# rows in the default report)
expect_code 0 "import --allow-tampered of a mismatch" "$SHIMBENCH" --db "$DB" import --allow-tampered --mapping "$M1" mism
[ "$(q "$DB" "select tampered from sessions")" = 1 ] && ok "the session is flagged" || not_ok "not flagged"
"$SHIMBENCH" --db "$DB" report >out 2>&1
grep_in out "session 1 (imported as tampered)" "the report leaves it out and says why"
"$SHIMBENCH" --db "$DB" report --select include=tampered >out 2>&1
grep_in out "[tampered]" "the report marks its rows when it is included"
rm -f "$DB"*

# "Importing the same content again stores nothing and names the session
# that holds it."
expect_code 0 "import" "$SHIMBENCH" --db "$DB" import --mapping "$M1" "$E1"
promise 0 "import of the same content again" "" "$SHIMBENCH" --db "$DB" import --mapping "$M1" "$E1"
grep_in out "already imported as session 1; nothing stored" "names the session that holds it"
rm -f "$DB"*

# "Bad input (unknown keys, bad JSON, a bad llama-bench row) exits 2 with
# the file, row or key named." and "Unknown keys are errors."
python3 -c "import json; m=json.load(open('$M1')); m['runs'][1]['colour']='red'; json.dump(m, open('badkey.json','w'))"
promise 2 "import: an unknown key in a mapping" "'badkey.json': runs[1]: unknown key 'colour'" \
	"$SHIMBENCH" --db "$DB" import --mapping badkey.json "$E1"
python3 -c "import json; m=json.load(open('$M1')); m['models']['tinyllama-1.1b-q4_k_m']['flavour']='x'; json.dump(m, open('badkey2.json','w'))"
promise 2 "import: an unknown key in a model" "unknown key 'flavour'" \
	"$SHIMBENCH" --db "$DB" import --mapping badkey2.json "$E1"
head -c 300 "$M1" >badjson.json
promise 2 "import: bad JSON in a mapping" "'badjson.json'" "$SHIMBENCH" --db "$DB" import --mapping badjson.json "$E1"
python3 -c "import json; b=json.load(open('bundle/bundle.json')); b['session']['mood']='x'; json.dump(b, open('bundle/bundle.json','w'))"
resum bundle
promise 2 "import: an unknown key in bundle.json" "session: unknown key 'mood'" "$SHIMBENCH" --db "$DB" import bundle
mk_raw row 3 1
python3 - <<'PY'
lines = open("row/out.jsonl").read().splitlines()
lines[1] = lines[1].replace('"n_gen": 0', '"n_gen": -4')
open("row/out.jsonl", "w").write("\n".join(lines) + "\n")
PY
resum row
promise 2 "import: a bad llama-bench row" "'out.jsonl' row 2" "$SHIMBENCH" --db "$DB" import --mapping row.map.json row

# "The parser ... rejects non-finite or negative values, samples_ns and
# samples_ts of different lengths, and samples inconsistent with
# n_prompt+n_gen."
for f in bad-nonfinite bad-negative bad-lengths bad-inconsistent; do
	rm -rf g && mkdir g && cp "$FIXTURES/llama-bench/$f.json" g/out.jsonl && echo x >g/out.stderr && resum g
	promise 2 "import: $f" "'out.jsonl'" "$SHIMBENCH" --db "$DB" import --mapping row.map.json g
done

# "A run with expect markers whose stderr lacks one is stored as
# unverified and excluded from the figures."
python3 -c "
import json; m=json.load(open('$M1'))
for r in m['runs']:
    if r['variant'] == 'stock': r['expect'] = ['[LumeMetalCapabilities] Enabled for']
json.dump(m, open('expect.json','w'))"
expect_code 0 "import: a run whose stderr lacks its marker" "$SHIMBENCH" --db "$DB" import --mapping expect.json "$E1"
[ "$(q "$DB" "select group_concat(distinct verification) from runs where variant='stock'")" = unverified ] &&
	ok "stored as unverified" || not_ok "verification: $(q "$DB" "select group_concat(verification) from runs where variant='stock'")"
"$SHIMBENCH" --db "$DB" report >out 2>&1
grep_in out "Excluded" "excluded from the figures"
rm -f "$DB"*

# Plans: "Unknown keys and wrong types are errors naming the key and its
# path."
printf 'x\n' >model.bin
plan_models='"models":[{"name":"m","path":"'$WORK'/model.bin"}]'
plan_variants='"variants":[{"name":"v","target":"here"}]'
plan_base="$plan_models"',"targets":{"here":{}},'"$plan_variants"
echo "{$plan_base}" >valid.json
echo "{$plan_base, \"procesess\": 2}" >typo.json
promise 2 "run: an unknown key in a plan" "unknown key 'plan.procesess'" "$SHIMBENCH" --db "$DB" run typo.json
echo "{$plan_base, \"processes\": \"2\"}" >type.json
promise 2 "run: a wrong type in a plan" "processes" "$SHIMBENCH" --db "$DB" run type.json
echo "{$plan_models, \"targets\": {\"here\": {\"transport\": \"carrier-pigeon\"}}, $plan_variants}" >transport.json
promise 2 "run: an unknown transport" "carrier-pigeon" "$SHIMBENCH" --db "$DB" run transport.json
printf '{"models": [' >cut.json
promise 2 "run: a plan that is not JSON" "cut.json" "$SHIMBENCH" --db "$DB" run cut.json

# "every injected library's SHA-256 is checked (a mismatch refuses the
# run, exit 1)"
cat >lib.json <<JSON
{$plan_base}
JSON
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
p = json.load(open(w + "/lib.json"))
p["variants"][0]["inject"] = {"library": w + "/model.bin", "sha256": "0" * 64}
json.dump(p, open(w + "/lib.json", "w"))
PY
promise 1 "run: an injected library with another SHA-256" "has SHA-256" "$SHIMBENCH" --db "$DB" run lib.json

# "An explicit choice (1, 2) that does not name an executable is an
# error, never a silent fallback to another llama-bench."
promise 3 "run: \$LLAMA_BENCH names no executable" "no such bench" \
	env LLAMA_BENCH="$WORK/no such bench" "$SHIMBENCH" --db "$DB" run valid.json
echo "{$plan_base, \"llama_bench\": {\"path\": \"$WORK/none-here\"}}" >lbpath.json
promise 3 "run: the plan's llama-bench path names no executable" "none-here" "$SHIMBENCH" --db "$DB" run lbpath.json

# GGUF: "Hostile files ... are refused with exit 2 and an error naming
# the file and the byte offset"
head -c 40 "$TOP/bench/t/fuzz/corpus/gguf/$(ls "$TOP/bench/t/fuzz/corpus/gguf" | head -1)" >cut.gguf
printf 'GGUF\003\000\000\000\377\377\377\377\377\377\377\377' >huge.gguf
for f in cut.gguf huge.gguf; do
	expect_code 2 "models info: hostile $f" "$SHIMBENCH" models info "$f"
	grep_in "$WORK/err" "'$f': offset" "names the file and the offset"
done

# models verify: "Exit 1 on any mismatch or missing named model, with an
# error naming the file."
cp model.bin mm.gguf
cat >manifest.json <<JSON
{"version": 1, "models": [{"name": "mm", "file": "mm.gguf", "sha256": "$(printf '%064d' 0)"},
                           {"name": "gone", "file": "gone.gguf", "sha256": "$(printf '%064d' 0)"}]}
JSON
expect_code 1 "models verify: a mismatch" "$SHIMBENCH" --db "$DB" models verify --manifest manifest.json --dir . mm
grep_in "$WORK/out" "MISMATCH" "says MISMATCH"
grep_in "$WORK/err" "mm.gguf" "names the file"
expect_code 1 "models verify: a missing named model" "$SHIMBENCH" --db "$DB" models verify --manifest manifest.json --dir . gone
grep_in "$WORK/err" "gone.gguf" "names the file"

# Reports: bad formats and selections are usage errors (exit 2); a
# missing store is exit 3 and never makes one.
"$SHIMBENCH" --db "$WORK/r.db" import --mapping "$M1" "$E1" >/dev/null 2>&1
expect_code 2 "report: a bad format" "$SHIMBENCH" --db "$WORK/r.db" report --format xml
expect_code 2 "report: a bad selection" "$SHIMBENCH" --db "$WORK/r.db" report --select variant
promise 3 "report: no store" "no store at" "$SHIMBENCH" --db "$WORK/none.db" report
[ ! -e "$WORK/none.db" ] && ok "no store was made" || not_ok "a store was made"
expect_code 0 "doctor with no store" env LLAMA_BENCH= "$SHIMBENCH" --db "$WORK/none2.db" doctor
[ ! -e "$WORK/none2.db" ] && ok "doctor never creates a store" || not_ok "doctor created a store"
test_done
