#!/bin/bash
# The store and the outputs (issue 13, items 11-14): read-only commands
# read a store they cannot write; a damaged store is exit 3, never other
# numbers; no output overwrites the store; outputs are written through
# links, FIFOs and devices, never replaced; CSV cells are never formulas;
# labels reach a terminal without their escape sequences; invalid UTF-8
# never makes invalid JSON or SVG.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-integrity.sh"

need_shared "store and sinks" || { test_done; exit $?; }
cd "$WORK" || exit 1
q() { sqlite3 "$1" "$2" 2>&1; }
expect_code 0 "the published evidence imported" \
	"$SHIMBENCH" --db pub.db import --mapping "$M1" --mapping "$M2" "$E1" "$E2"
cp pub.db pristine.db

# Every read-only command with its arguments (cd to the project for
# reproduce's figures).
READERS=(
	"report"
	"report --format json"
	"sessions"
	"history"
	"compare session=1,runtime=llama.cpp,variant=stock session=1,runtime=llama.cpp,variant=shim"
	"gate --baseline session=1 --candidate session=1"
	"reproduce"
)
reader() {   # reader DB I: runs READERS[I] on DB; out/err in $WORK
	# shellcheck disable=SC2086
	(cd "$TOP" && "${RUN_AS[@]}" "$SHIMBENCH" --db "$1" ${READERS[$2]} >"$WORK/out" 2>"$WORK/err")
}
RUN_AS=()
for i in "${!READERS[@]}"; do
	reader "$WORK/pub.db" "$i"
	echo $? >"want.$i.rc"
	cp out "want.$i.out"
done

# ---- 11. read-only stores -------------------------------------------------
# another user: a directory and a store they cannot write
ro_check() {   # ro_check TITLE DB
	local title=$1 db=$2 i rc bad=""
	for i in "${!READERS[@]}"; do
		reader "$db" "$i"
		rc=$?
		if [ "$rc" != "$(cat "want.$i.rc")" ] || ! cmp -s out "want.$i.out"; then
			bad="$bad [${READERS[$i]}: exit $rc: $(head -c 200 err)]"
		fi
	done
	[ -z "$bad" ] && ok "$title: all ${#READERS[@]} read-only commands answer as on a writable store" ||
		not_ok "$title:$bad"
}
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir -p rouser && cp pristine.db rouser/s.db && chmod 755 rouser && chmod 644 rouser/s.db
	chmod 755 "$WORK"
	cp "$SHIMBENCH" "$WORK/sb" && chmod 755 "$WORK/sb"
	RUN_AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	SHIMBENCH_SAVED=$SHIMBENCH SHIMBENCH=$WORK/sb
	ro_check "a store owned by another user (uid 65534)" "$WORK/rouser/s.db"
	"${RUN_AS[@]}" "$SHIMBENCH" --db "$WORK/rouser/s.db" import --mapping "$M1" "$E1" >out 2>err
	rc=$?
	[ "$rc" = 3 ] && ok "that user's import into it: exit 3" || not_ok "import into another user's store: exit $rc"
	[ "$(ls rouser)" = s.db ] && ok "nothing was created beside the store" || not_ok "files created: $(ls rouser)"
	SHIMBENCH=$SHIMBENCH_SAVED
	RUN_AS=()
	if mkdir -p romnt && mount --bind rouser romnt 2>/dev/null &&
	   mount -o remount,ro,bind romnt 2>/dev/null; then
		MOUNTS="$WORK/romnt $MOUNTS"
		ro_check "a store on a read-only mount (as root)" "$WORK/romnt/s.db"
		expect_code 3 "import into a store on a read-only mount: exit 3" \
			"$SHIMBENCH" --db romnt/s.db import --mapping "$M1" "$E1"
	else
		skip "read-only mount: mount --bind is not allowed here"
	fi
else
	mkdir -p rouser && cp pristine.db rouser/s.db && chmod 444 rouser/s.db && chmod 555 rouser
	ro_check "a read-only store in a read-only directory" "$WORK/rouser/s.db"
	chmod 755 rouser
	skip "a store owned by another user: needs root and setpriv"
fi

# ---- 11. a damaged store is an error, never other numbers ---------------------
# Each page of the store zeroed in turn: every command either answers
# exactly as before or exits 3; a store that fails PRAGMA quick_check
# is never read on, and a damaged page of results or samples is always
# exit 3.
pages=$(( $(stat -c %s pristine.db) / 4096 ))
sample_pages=$(q pristine.db "select group_concat(pageno - 1, ' ') from dbstat where name in ('samples', 'results')")
wrong="" errors=0 same=0
for p in $(seq 1 $((pages - 1))); do
	cp pristine.db z.db
	dd if=/dev/zero of=z.db bs=4096 seek="$p" count=1 conv=notrunc 2>/dev/null
	for i in "${!READERS[@]}"; do
		reader "$WORK/z.db" "$i"
		rc=$?
		if [ "$rc" = 3 ]; then
			errors=$((errors + 1))
		elif [ "$rc" = "$(cat "want.$i.rc")" ] && cmp -s out "want.$i.out"; then
			same=$((same + 1))
			case " $sample_pages " in *" $p "*)
				wrong="$wrong [page $p (samples) ${READERS[$i]}: exit $rc]" ;;
			esac
		else
			wrong="$wrong [page $p ${READERS[$i]}: exit $rc, other output]"
		fi
	done
	# a store that fails the integrity check is never read on
	if [ "$(q z.db "pragma quick_check")" != ok ]; then
		for i in "${!READERS[@]}"; do
			reader "$WORK/z.db" "$i"
			[ $? = 3 ] || wrong="$wrong [page $p ${READERS[$i]}: no exit 3 on a damaged store]"
		done
	fi
done
[ -z "$wrong" ] && ok "$((pages - 1)) pages zeroed x ${#READERS[@]} commands: $errors exit 3, $same identical answers, none different" ||
	not_ok "damaged store:$wrong"
[ "$errors" -gt 0 ] && ok "damage was detected" || not_ok "no damage detected at all"
cp pristine.db z.db
dd if=/dev/zero of=z.db bs=4096 seek="${sample_pages%% *}" count=1 conv=notrunc 2>/dev/null
(cd "$TOP" && expect_code 3 "gate on a store with a zeroed page of results" \
	"$SHIMBENCH" --db "$WORK/z.db" gate --baseline session=1 --candidate session=1)
grep_in err "is damaged" "says the store is damaged"

# ---- 12. outputs never overwrite the store; no in-memory store ------------------
sha_store=$(sha256sum pub.db | cut -d' ' -f1)
ln -s pub.db store-link
for how in "report -o pub.db" "report -o ./pub.db" "report -o $WORK/pub.db" "report -o store-link" \
	"report -o pub.db-wal" "report --plot . --format md -o r.md" \
	"history -o pub.db" "compare -o pub.db session=1,variant=stock session=1,variant=shim" \
	"gate --baseline session=1 --candidate session=1 --json pub.db" \
	"gate --baseline session=1 --candidate session=1 --junit pub.db" \
	"gate --baseline session=1 --candidate session=1 --summary pub.db"; do
	# shellcheck disable=SC2086
	(cd "$WORK" && "$SHIMBENCH" --db pub.db $how >out 2>err)
	rc=$?
	case "$how" in
	*--plot*) ;;   # charts named throughput.svg: not the store; it must still work
	*)
		[ "$rc" = 3 ] && grep -q "the store" err && ok "$how: refused (exit 3)" ||
			not_ok "$how: exit $rc $(head -c 200 err)" ;;
	esac
done
[ "$(sha256sum pub.db | cut -d' ' -f1)" = "$sha_store" ] && [ -L store-link ] &&
	[ "$(q pub.db "pragma integrity_check")" = ok ] && ok "the store is untouched" || not_ok "the store changed"
ln -sf pub.db throughput.svg
(cd "$WORK" && "$SHIMBENCH" --db pub.db report --plot . >out 2>err)
rc=$?
if command -v gnuplot >/dev/null; then
	[ "$rc" = 3 ] && [ "$(sha256sum pub.db | cut -d' ' -f1)" = "$sha_store" ] &&
		ok "a chart whose name links to the store is refused" || not_ok "chart over the store: exit $rc"
else
	skip "charts: gnuplot is not installed"
fi
rm -f throughput.svg
for db in "" ":memory:"; do
	expect_code 2 "import --db '$db' is refused" "$SHIMBENCH" --db "$db" import --mapping "$M1" "$E1"
	grep_in err "is not a file" "says why"
	expect_code 2 "run --db '$db' is refused" "$SHIMBENCH" --db "$db" run "$TOP/bench/plans/default.json"
	expect_code 2 "calibrate --db '$db' is refused" "$SHIMBENCH" --db "$db" calibrate --from session=1
done
SHIMBENCH_DB=:memory: expect_code 2 "SHIMBENCH_DB=:memory: is refused" "$SHIMBENCH" import --mapping "$M1" "$E1"
for uri in "file::memory:" "file:x.db?mode=memory" "file:y.db"; do
	(cd "$WORK" && "$SHIMBENCH" --db "$uri" import --mapping "$M1" "$E1" >out 2>err)
	[ -f "$WORK/$uri" ] && [ "$(q "./$uri" "select count(*) from sessions")" = 1 ] &&
		ok "--db '$uri' is a file of that name, not an SQLite URI" || not_ok "--db '$uri': $(ls "$WORK" | head -30 | tr '\n' ' ')"
done

# ---- 13. outputs are written through, not replaced ------------------------------
"$SHIMBENCH" --db pub.db report >report.md
echo old >target.md
ln -s target.md link.md
expect_code 0 "report -o a symbolic link" "$SHIMBENCH" --db pub.db report -o link.md
[ -L link.md ] && cmp -s target.md report.md && ok "the link stays a link; its target has the report" ||
	not_ok "link replaced or target not written"
mkdir -p sub && ln -s ../target2.md sub/rel-link.md
expect_code 0 "report -o a relative link in another directory" "$SHIMBENCH" --db pub.db report -o sub/rel-link.md
[ -L sub/rel-link.md ] && cmp -s target2.md report.md && ok "written where the relative link points" || not_ok "relative link"
ln -s nowhere.md dangling.md
expect_code 0 "report -o a dangling link" "$SHIMBENCH" --db pub.db report -o dangling.md
[ -L dangling.md ] && cmp -s nowhere.md report.md && ok "the file it names is created" || not_ok "dangling link"
ln -s loop1 loop2 && ln -s loop2 loop1
expect_code 3 "report -o a link loop" "$SHIMBENCH" --db pub.db report -o loop1
mkfifo fifo
cat fifo >fifo.out &
reader_pid=$!
expect_code 0 "report -o a FIFO" timeout 10 "$SHIMBENCH" --db pub.db report -o fifo
wait "$reader_pid"
[ -p fifo ] && cmp -s fifo.out report.md && ok "the FIFO stays a FIFO; its reader got the whole report" ||
	not_ok "FIFO: $(stat -c %F fifo), $(wc -c <fifo.out) bytes read"
before=$(stat -c '%F %t:%T %i' /dev/null)
expect_code 0 "report -o /dev/null" "$SHIMBENCH" --db pub.db report -o /dev/null
[ "$(stat -c '%F %t:%T %i' /dev/null)" = "$before" ] && ok "/dev/null is still the same device ($before)" ||
	not_ok "/dev/null replaced: $(stat -c '%F %t:%T %i' /dev/null)"
if [ "$(id -u)" = 0 ]; then
	mknod mynull c 1 3
	expect_code 0 "report -o a character device (as root)" "$SHIMBENCH" --db pub.db report -o mynull
	[ -c mynull ] && ok "the device node is not replaced" || not_ok "device node replaced"
fi
"$SHIMBENCH" --db pub.db report -o /dev/stdout >stdout.md 2>err
cmp -s stdout.md report.md && ok "-o /dev/stdout writes to stdout" || not_ok "-o /dev/stdout"
printf 'before\n' >append.md
"$SHIMBENCH" --db pub.db report -o /dev/stdout >>append.md 2>err
{ printf 'before\n'; cat report.md; } | cmp -s - append.md &&
	ok "-o /dev/stdout into a file opened for appending keeps what was there" || not_ok "append lost"
"$SHIMBENCH" --db pub.db report -o /dev/stdout 2>err | cat >piped.md
cmp -s piped.md report.md && ok "-o /dev/stdout into a pipe" || not_ok "-o /dev/stdout into a pipe"
"$SHIMBENCH" --db pub.db report -o /dev/fd/1 >fd.md 2>err
cmp -s fd.md report.md && ok "-o /dev/fd/1" || not_ok "-o /dev/fd/1"
"$SHIMBENCH" --db pub.db report -o /dev/stderr 2>stderr.md >/dev/null
grep -q "TinyLlama" stderr.md && ok "-o /dev/stderr" || not_ok "-o /dev/stderr"
on_tty tty.out "$SHIMBENCH" --db pub.db report -o /dev/tty
grep -q "TinyLlama" tty.out && ok "-o /dev/tty on a terminal" || not_ok "-o /dev/tty"
mkdir -p adir
expect_code 3 "report -o a directory is refused" "$SHIMBENCH" --db pub.db report -o adir
echo secret >private.md && chmod 600 private.md
expect_code 0 "report -o an existing file" "$SHIMBENCH" --db pub.db report -o private.md
[ "$(stat -c %a private.md)" = 600 ] && cmp -s private.md report.md && ok "its permissions are kept (600)" ||
	not_ok "mode $(stat -c %a private.md)"
[ -z "$(ls -A | grep '^\.private\|\.tmp\.')" ] && ok "no temporary file left behind" || not_ok "left: $(ls -A)"
expect_code 0 "gate --junit, --json, --summary to FIFOs and /dev/null" sh -c "
	cd '$TOP' && mkfifo '$WORK/j.fifo' && (cat '$WORK/j.fifo' >'$WORK/j.xml' &) &&
	'$SHIMBENCH' --db '$WORK/pub.db' gate --baseline session=1 --candidate session=1 \
		--junit '$WORK/j.fifo' --json /dev/null --summary /dev/null >/dev/null"
sleep 0.2
grep -q "<testsuite" j.xml && ok "the JUnit report went through the FIFO" || not_ok "junit through a FIFO"

# ---- 14. CSV formulas, terminal escapes, invalid UTF-8 ----------------------------
python3 - "$M1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["models"]["tinyllama-1.1b-q4_k_m"]["label"] = "=HYPERLINK(\"http://x\";\"y\")"
m["models"]["llama-3.2-3b-instruct-4bit"]["label"] = "@SUM(A1) \x1b]0;pwned\x07\x1b[2J\xc2\x9b31m"
json.dump(m, open("hostile.json", "w"))
m["models"]["tinyllama-1.1b-q4_k_m"]["label"] = "+1+2"
json.dump(m, open("hostile2.json", "w"))
PY
expect_code 0 "evidence with hostile labels imported" "$SHIMBENCH" --db hostile.db import \
	--label "$(printf 'session \033]0;pwned\007\033[2J\302\23331m')" --mapping hostile.json "$E1"
expect_code 0 "report --format csv" "$SHIMBENCH" --db hostile.db report --format csv
grep_in out "\"'=HYPERLINK" "a cell starting with = is shown as text"
grep_in out "\"'@SUM(A1)" "a cell starting with @ is shown as text"
python3 - out <<'PY' && ok "no cell of the CSV starts with = + - @ TAB or CR unless it is a number" || not_ok "a formula cell"
import csv, sys
for row in csv.reader(open(sys.argv[1], newline="")):
    for c in row:
        if c[:1] in ("=", "+", "-", "@", "\t", "\r"):
            try:
                float(c)
            except ValueError:
                sys.exit(1)
PY
grep -q ',-' out || grep -q '[0-9]' out && ok "numbers are left as they are" || not_ok "numbers changed"
expect_code 0 "export of the hostile session" "$SHIMBENCH" --db hostile.db export 1 hostile-bundle
grep_in hostile-bundle/results.csv "\"'=HYPERLINK" "the bundle's results.csv is neutralised too"
sqlite3 hostile.db "update runs set model_label = model_label || X'FF2D' || X'C3' where runtime='mlx-lm'"
# invalid UTF-8 and control characters never make invalid JSON or SVG
expect_code 0 "report --format json with invalid UTF-8 in a label" "$SHIMBENCH" --db hostile.db report --format json
check "the JSON is valid (strict UTF-8)" python3 -c "import json; json.loads(open('$WORK/out', 'rb').read().decode('utf-8'))"
expect_code 0 "sessions --format json" "$SHIMBENCH" --db hostile.db sessions --format json
check "sessions JSON is valid" python3 -c "import json; json.loads(open('$WORK/out', 'rb').read().decode('utf-8'))"
if command -v gnuplot >/dev/null && command -v xmllint >/dev/null; then
	expect_code 0 "charts with hostile labels" "$SHIMBENCH" --db hostile.db report --plot "$WORK/charts"
	for f in charts/*.svg; do
		check "$(basename "$f") is well-formed XML" xmllint --noout "$f"
	done
	expect_code 0 "the HTML report with hostile labels" "$SHIMBENCH" --db hostile.db report --format html -o "$WORK/h.html"
	check "the HTML report is valid UTF-8" python3 -c "open('$WORK/h.html', 'rb').read().decode('utf-8')"
else
	skip "charts: gnuplot or xmllint missing"
fi
# a terminal gets escapes shown, never obeyed; a pipe gets the bytes
for cmd in "sessions" "report" "report --format csv" "sessions --format csv"; do
	# shellcheck disable=SC2086
	on_tty tty.out "$SHIMBENCH" --db hostile.db $cmd
	if LC_ALL=C grep -q "$(printf '\033')" tty.out || LC_ALL=C grep -q "$(printf '\007')" tty.out ||
	   LC_ALL=C grep -q "$(printf '\302\233')" tty.out; then
		not_ok "$cmd on a terminal: a raw escape sequence"
	else
		ok "$cmd on a terminal: no raw escape, BEL or C1 control"
	fi
done
on_tty tty.out "$SHIMBENCH" --db hostile.db sessions
grep_in tty.out '\x1b]0;pwned\x07' "the escape is shown as text"
for dest in /dev/stdout /dev/tty /dev/fd/1; do
	on_tty tty.out "$SHIMBENCH" --db hostile.db report -o "$dest"
	if LC_ALL=C grep -q "$(printf '\033')" tty.out; then
		not_ok "report -o $dest on a terminal: a raw escape"
	else
		grep -q '\\x1b' tty.out && ok "report -o $dest on a terminal: escapes shown, not obeyed" ||
			not_ok "report -o $dest on a terminal: the label is missing"
	fi
done
"$SHIMBENCH" --db hostile.db sessions --format csv >pipe.out
# Into a pipe or a file too, csv and md never carry a raw control
# character (issue 21 §5): the label's escape is written as \x1b.
if LC_ALL=C grep -q "$(printf '\033')" pipe.out; then
	not_ok "into a pipe: a raw escape in the csv"
else
	grep_in pipe.out '\x1b]0;pwned\x07' "into a pipe the label's escape is written as text"
fi
python3 -c "
import json; m = json.load(open('$M1')); m['runs'][0]['\x1b[31mkey'] = 1; json.dump(m, open('$WORK/esckey.json', 'w'))"
on_tty tty.out "$SHIMBENCH" --db esc.db import --mapping "$WORK/esckey.json" "$E1"
LC_ALL=C grep -q "$(printf '\033')" tty.out && not_ok "an error message printed a raw escape" ||
	ok "an error naming a hostile key prints no raw escape on a terminal"
grep_in tty.out "unknown key" "the error is still there"
test_done
