#!/bin/bash
# Import of the published evidence, report, reproduce, tamper refusal.
. "$(dirname "$0")/lib.sh"

need_shared "import of the published evidence" || { test_done; exit $?; }
E1=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
E2=$EVIDENCE/cua-lume-2026-08-10-m1-ultra-gemma4
M1=$EVIDENCE/cua-lume-2026-08-09-m1-ultra/mapping.json
M2=$EVIDENCE/cua-lume-2026-08-10-m1-ultra-gemma4/mapping.json
DB=$WORK/ev.db
count() { sqlite3 "$DB" "select count(*) from $1"; }

expect_code 0 "import both evidence sets" \
	"$SHIMBENCH" --db "$DB" import --mapping "$M1" --mapping "$M2" "$E1" "$E2"
grep_in "$WORK/out" "as session 1: 6 runs, 12 results, 120 samples" "first set: 4 llama-bench and 2 MLX-LM runs"
grep_in "$WORK/out" "as session 2: 3 runs, 6 results, 60 samples" "second set: 3 runs"
[ "$(count samples)" = 180 ] && ok "180 samples stored" || not_ok "samples: $(count samples)"
[ "$(sqlite3 "$DB" "select count(*) from runs where verification='verified' and variant='shim'")" = 2 ] \
	&& ok "both shim runs injection-verified" || not_ok "shim runs not verified"

expect_code 0 "report --format csv" "$SHIMBENCH" --db "$DB" report --format csv
cp "$WORK/out" "$WORK/report.csv"
# Every median and ratio of the published results.csv (llama.cpp and
# MLX-LM rows), to the
# printed precision of each published value.
compare_csv() {
	awk -F, -v mine="$WORK/report.csv" '
	function dec(s) { return index(s, ".") ? length(s) - index(s, ".") : 0 }
	BEGIN { while ((getline line < mine) > 0) { split(line, f, ","); m[f[1] "|" f[2]] = line } }
	FNR == 1 { next }
	{
		key = $1 "|" $2
		if (!(key in m)) { print "missing row " key; bad++; next }
		split(m[key], g, ",")
		for (i = 4; i <= 8; i++) {
			if ($i == "") continue
			d = dec($i); want = sprintf("%." d "f", $i); got = sprintf("%." d "f", g[i])
			if (want != got) { print key " column " i ": published " $i ", got " g[i]; bad++ }
			n++
		}
	}
	END { print n " values compared"; exit bad > 0 }' "$1"
}
for f in "$E1/results.csv" "$E2/results.csv"; do
	if compare_csv "$f" >"$WORK/cmp" 2>&1; then
		ok "report reproduces $(basename "$(dirname "$f")")/results.csv ($(tail -1 "$WORK/cmp"))"
	else
		not_ok "report differs from $(basename "$(dirname "$f")")/results.csv"
		sed 's/^/# /' "$WORK/cmp"
	fi
done
expect_code 0 "report (markdown)" "$SHIMBENCH" --db "$DB" report
check "markdown headline row" grep -qE '^\| TinyLlama 1\.1B Q4_K_M \(llama\.cpp\) +\| pp512 +\| +4871\.99 \| +431\.86 \| +4786\.70 \| +11\.08× \|' "$WORK/out"
grep_in "$WORK/out" "**Headline:** TinyLlama 1.1B Q4_K_M: 11.08× prompt, 16.36× generation with the shim; Llama-3.2-3B-Instruct-4bit (MLX-LM) 1.01× / 0.99×; Gemma 4 12B IT QAT Q4_0 7.20× / 14.54×; shim at 98.25–99.59 % of bare metal for prompts." \
	"the headline sentence, computed from the rows"
check "MLX-LM rows without bare metal: –† and the footnote" python3 -c "
import re; t = open('$WORK/out').read()
assert len(re.findall(r'^\| Llama-3\.2-3B-Instruct-4bit \(MLX-LM\) \| (pp512|tg128) \| +–† \|', t, re.M)) == 2
assert '† No bare-metal run of Llama-3.2-3B-Instruct-4bit (MLX-LM) is among the sessions shown: session 1 measured it in the guest only (stock and shim), so it has no percent of bare metal.' in t"
expect_code 0 "report of the Gemma session alone" "$SHIMBENCH" --db "$DB" report --select session=2
grep_in "$WORK/out" "**Headline:** Gemma 4 12B IT QAT Q4_0: 7.20× prompt, 14.54× generation with the shim; shim at 99.59 % of bare metal for prompts." \
	"a headline of other rows says other figures"
check "no footnote where every row has bare metal" sh -c "! grep -q '†' '$WORK/out'"
expect_code 0 "report of the host rows alone" "$SHIMBENCH" --db "$DB" report --select role=bare-metal
check "no speedup, no headline" sh -c "! grep -q 'Headline' '$WORK/out'"
expect_code 0 "report (markdown) again" "$SHIMBENCH" --db "$DB" report
check "rows in the study's order: TinyLlama (session 1) before Gemma (session 2)" python3 -c "
t = open('$WORK/out').read(); assert t.index('| TinyLlama 1.1B') < t.index('| Gemma 4 12B')"
check "the terminal table fits 160 columns" python3 -c "
w = max(len(l) for l in open('$WORK/out').read().split('\n') if l.startswith('|'))
assert w <= 160, w"
expect_code 0 "report --wide" "$SHIMBENCH" --db "$DB" report --wide
check "--wide adds the spread columns" grep -qE '\| +4845\.63–4881\.12, n=10 \|' "$WORK/out"
grep_in "$WORK/out" "hooked-superseded" "superseded runs listed as their own variant"
grep_in "$WORK/out" "11.08×" "guest speedup shown"
check "no 26-field configuration block above the table" python3 -c "
t = open('$WORK/out').read(); head = t[:t.index('| TinyLlama')]
assert 'build_commit' not in head and 'n_ubatch' not in head, head"

# issue 22: compare and history fit a terminal, only what differs named
expect_code 0 "compare stock shim (markdown)" "$SHIMBENCH" --db "$DB" compare variant=stock variant=shim
check "compare: every line within 160 columns, the workload named plainly" python3 -c "
t = open('$WORK/out').read().split('\n')
assert max(len(l) for l in t if l.startswith('|')) <= 160, max(len(l) for l in t)
assert any(l.startswith('| tinyllama-1.1b-q4_k_m pp512 ') for l in t)
assert not any('configuration.' in l or 'build_commit' in l for l in t)"
grep_in "$WORK/out" "Not shown (empty, or too wide for the terminal): hl_shift," "compare says which columns it left out"
expect_code 0 "compare --wide" "$SHIMBENCH" --db "$DB" compare --wide variant=stock variant=shim
check "--wide: every column, in order" python3 -c "
h = [c.strip() for c in open('$WORK/out').readline().strip().strip('|').split('|')]
assert h == ['workload', 'a_median', 'b_median', 'ratio', 'ci95_lo', 'ci95_hi', 'p_mwu', 'hl_shift', 'hl_pct', 'a_samples', 'a_processes', 'b_samples', 'b_processes', 'noise', 'between_cv_pct', 'mde_pct', 'verdict', 'warnings'], h"
expect_code 0 "compare csv" "$SHIMBENCH" --db "$DB" compare --format csv variant=stock variant=shim
check "csv holds every column" python3 -c "
import csv; r = list(csv.DictReader(open('$WORK/out')))
assert len(r) == 6 and {'hl_shift', 'between_cv_pct', 'warnings', 'noise'} <= set(r[0])"
expect_code 0 "history (markdown)" "$SHIMBENCH" --db "$DB" history
check "history: every line within 160 columns, no MLX-only keys on llama.cpp rows" python3 -c "
t = open('$WORK/out').read().split('\n')
assert max(len(l) for l in t if l.startswith('|')) <= 160, max(len(l) for l in t)
assert any(l.startswith('| host/bare-metal tinyllama-1.1b-q4_k_m pp512 [') for l in t)
assert not any('configuration.' in l for l in t)"
expect_code 0 "report --format json" "$SHIMBENCH" --db "$DB" report --format json
check "json report parses" python3 -c "import json,sys; d=json.load(open('$WORK/out')); assert len(d['workloads'])==6"
expect_code 0 "report -o file" "$SHIMBENCH" --db "$DB" report --format csv -o "$WORK/r.csv"
check "report file equals stdout csv" cmp -s "$WORK/r.csv" "$WORK/report.csv"

(cd "$TOP" && expect_code 0 "reproduce passes" "$SHIMBENCH" --db "$DB" reproduce)
grep_in "$WORK/out" "figures: 26 pass, 0 fail, 0 missing" "all 26 published figures pass, MLX-LM included"
(cd "$TOP" && expect_code 0 "reproduce --format json" "$SHIMBENCH" --db "$DB" reproduce --format json)
# a signed delta ("+0.0025" in the table) must still be a JSON number
check "reproduce json parses, deltas are numbers" python3 -c "
import json; d = json.load(open('$WORK/out'))
assert len(d) >= 26 and all(isinstance(r['Delta'], (int, float)) for r in d if r['Delta'] is not None)"
(cd "$TOP" && expect_code 0 "reproduce --exact passes" "$SHIMBENCH" --db "$DB" reproduce --exact)
(cd "$TOP" && expect_code 0 "reproduce --require-all passes" "$SHIMBENCH" --db "$DB" reproduce --require-all)
(cd "$TOP" && expect_code 1 "reproduce --require-all fails when MLX-LM runs are not selected" \
	"$SHIMBENCH" --db "$DB" reproduce --require-all --select runtime=llama.cpp)

# An installed binary finds the figures it ships, from any directory.
mkdir -p "$WORK/inst/bin" "$WORK/inst/share/shimbench"
cp "$SHIMBENCH" "$WORK/inst/bin/"
cp "$TOP/evidence/published/figures.json" "$TOP/models/manifest.json" "$WORK/inst/share/shimbench/"
(cd / && expect_code 0 "installed reproduce from / finds share/shimbench" "$WORK/inst/bin/shimbench" --db "$DB" reproduce)
grep_in "$WORK/out" "figures: 26 pass" "installed copy of the figures used"

# Importing the same content again stores nothing.
expect_code 0 "second import" "$SHIMBENCH" --db "$DB" import --mapping "$M1" "$E1"
grep_in "$WORK/out" "already imported as session 1" "re-import says which session"
[ "$(count sessions)" = 2 ] && [ "$(count samples)" = 180 ] && ok "no duplicates" || not_ok "duplicated"

# One flipped byte: refused, named, nothing stored.
T=$WORK/tampered
cp -r "$E1" "$T"; chmod -R u+w "$T"
python3 - "$T/tiny-stock-minimal.json" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read())
i = b.index(b'431') ; b[i+2] ^= 0x01
open(p, 'wb').write(bytes(b))
PY
before=$(count sessions)
expect_code 1 "tampered bundle refused" "$SHIMBENCH" --db "$DB" import --mapping "$M1" "$T"
grep_in "$WORK/err" "tiny-stock-minimal.json': SHA-256 mismatch" "error names the file"
[ "$(count sessions)" = "$before" ] && ok "nothing stored" || not_ok "tampered import stored something"
expect_code 1 "tampered dir with a good one: nothing stored at all" \
	"$SHIMBENCH" --db "$DB.2" import --mapping "$M2" --mapping "$M1" "$E2" "$T"
[ ! -s "$DB.2" ] || [ "$(sqlite3 "$DB.2" 'select count(*) from sessions')" = 0 ] && ok "no partial import" || not_ok "partial import"
# --allow-tampered never counts the untouched files twice: into the store
# that holds them already it is refused; into a new store it imports and
# flags the session.
expect_code 1 "--allow-tampered refuses what is already stored" \
	"$SHIMBENCH" --db "$DB" import --allow-tampered --mapping "$M1" "$T"
grep_in "$WORK/err" "already stored as run" "names the run that holds the output"
[ "$(count sessions)" = "$before" ] && ok "nothing stored by the refused import" || not_ok "refused import stored something"
TDB=$WORK/tampered.db
expect_code 0 "--allow-tampered imports" "$SHIMBENCH" --db "$TDB" import --allow-tampered --mapping "$M1" "$T"
[ "$(sqlite3 "$TDB" 'select tampered from sessions order by id desc limit 1')" = 1 ] && ok "session flagged tampered" || not_ok "not flagged"
# Tampered data never enters a figure unless the selection asks for it
# (issue 11 §3; this test used to expect it in the default report).
expect_code 3 "a report of the tampered session leaves it out" "$SHIMBENCH" --db "$TDB" report --select "session=1"
grep_in "$WORK/err" "imported as tampered" "and says why"
grep_in "$WORK/err" "include=tampered" "and how to count it"
expect_code 0 "report of the tampered session, included explicitly" "$SHIMBENCH" --db "$TDB" report --select "session=1,include=tampered"
grep_in "$WORK/out" "[tampered]" "report marks tampered data"
grep_in "$WORK/out" "session 1 was imported as tampered" "and says in words that it counts"
expect_code 0 "sessions lists the store" "$SHIMBENCH" --db "$DB" sessions --format csv
grep_in "$WORK/out" "1,import," "session 1 listed"
check "two sessions, none flagged tampered" sh -c "[ \$(grep -c ',import,' '$WORK/out') = 2 ] && ! grep -q ',yes\$' '$WORK/out'"
expect_code 0 "sessions of the tampered store" "$SHIMBENCH" --db "$TDB" sessions --format csv
check "its one session is flagged tampered" grep -q '^1,.*,yes$' "$WORK/out"

# Bad input: clear errors, non-zero exits, nothing lost.
expect_code 2 "missing directory" "$SHIMBENCH" --db "$DB" import "$WORK/nope"
grep_in "$WORK/err" "nope' is not a directory" "names the directory"
expect_code 2 "raw directory without a mapping" "$SHIMBENCH" --db "$DB" import "$E1"
grep_in "$WORK/err" "give --mapping FILE" "says how to fix it"
sed 's/"stdout": "tiny-host-minimal.json"/"stdout": "tiny-host-minimal.json", "colour": "red"/' "$M1" >"$WORK/badkey.json"
expect_code 2 "unknown key in mapping" "$SHIMBENCH" --db "$DB" import --mapping "$WORK/badkey.json" "$E1"
grep_in "$WORK/err" "runs[0]: unknown key 'colour'" "names the key and its place"
sed 's|"stdout": "tiny-host-minimal.json"|"stdout": "../../etc/passwd"|' "$M1" >"$WORK/escape.json"
expect_code 2 "file name escaping the bundle" "$SHIMBENCH" --db "$DB" import --mapping "$WORK/escape.json" "$E1"
mkdir -p "$WORK/nosums"; cp "$E1/tiny-host-minimal.json" "$WORK/nosums/"
expect_code 2 "directory without SHA256SUMS" "$SHIMBENCH" --db "$DB" import --mapping "$M1" "$WORK/nosums"
grep_in "$WORK/err" "has no SHA256SUMS" "unverifiable evidence refused"
expect_code 2 "mappings and directories mismatch" "$SHIMBENCH" --db "$DB" import --mapping "$M1" "$E1" "$E2"
[ "$(count sessions)" = 2 ] && ok "store intact after bad input" || not_ok "store changed"
expect_code 3 "report without a store" "$SHIMBENCH" --db "$WORK/none.db" report
expect_code 2 "report with a bad format" "$SHIMBENCH" --db "$DB" report --format xml
expect_code 2 "report with a bad selection" "$SHIMBENCH" --db "$DB" report --select "variant"
test_done
