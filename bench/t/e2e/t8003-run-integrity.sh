#!/bin/bash
# What `run` writes and trusts (issue 13, items 6-10): a run's own bundle
# is never counted twice; bundles never overwrite or mix; the hash cache
# misses after an edit in place with the mtime put back; a bundle that
# cannot be written fails the run and the session, never "ok" with the
# hash of an empty file; a marker after 4 MB of stderr is found.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-integrity.sh"

cd "$WORK" || exit 1
q() { sqlite3 "$1" "$2" 2>&1; }

expect_code 0 "a model to run" "$SHIMBENCH" models synth tiny -o "$WORK/tiny.gguf"
MODEL_SHA=$(sha256sum tiny.gguf | cut -d' ' -f1)
mk_raw canned 2 5
printf 'loading\n[shimbench-test] Enabled for pid 1\n' >marked.stderr
fake_lb lb.sh "$WORK/canned/out.jsonl" "$WORK/marked.stderr"
# plan NAME LLAMA_BENCH [SHA256]
plan() {
	cat >"$1.json" <<JSON
{"name":"$1","models":[{"name":"tiny","path":"$WORK/tiny.gguf"${3:+,\"sha256\":\"$3\"}}],
 "targets":{"here":{"llama_bench":"$WORK/$2"}},
 "variants":[{"name":"plain","target":"here","role":"stock"},
             {"name":"marked","target":"here","role":"shim","expect":["[shimbench-test] Enabled for"]}],
 "llama_bench":{"args":["-p","64","-n","0","-r","5"]}, "processes":1}
JSON
}
plan p lb.sh

# ---- 6. a run's own bundle is the same evidence -----------------------------
expect_code 0 "a run" "$SHIMBENCH" --db own.db --quiet run --bundle "$WORK/own" p.json
expect_code 0 "its bundle imported into the same store" "$SHIMBENCH" --db own.db import own
grep_in out "already imported as session 1; nothing stored" "recognised as already imported"
[ "$(q own.db "select count(*) from sessions")" = 1 ] && [ "$(q own.db "select count(*) from samples")" = 20 ] &&
	ok "nothing counted twice" || not_ok "double counted"
expect_code 0 "its export imported into the same store" sh -c \
	"'$SHIMBENCH' --db own.db export 1 own-exp >/dev/null && '$SHIMBENCH' --db own.db import own-exp"
grep_in out "already imported as session 1" "the export too"

# ---- 7. bundles never overwrite ----------------------------------------------
mkdir -p proj && cd proj || exit 1
expect_code 0 "a run into store A, default bundle" "$SHIMBENCH" --db A.db --quiet run ../p.json
[ -f evidence/session-1/SHA256SUMS ] && ok "evidence/session-1 written" || not_ok "no evidence/session-1"
sum_before=$(cd evidence/session-1 && cat SHA256SUMS | sha256sum)
expect_code 0 "a run into another store B, default bundle" "$SHIMBENCH" --db B.db --quiet run ../p.json
[ -f evidence/session-1-2/SHA256SUMS ] && ok "B's session 1 went to evidence/session-1-2" || not_ok "no evidence/session-1-2: $(ls evidence)"
[ "$(cd evidence/session-1 && cat SHA256SUMS | sha256sum)" = "$sum_before" ] &&
	(cd evidence/session-1 && sha256sum -c --quiet SHA256SUMS) && ok "A's bundle untouched and intact" ||
	not_ok "A's bundle was changed"
mkdir -p elsewhere && ln -s "$PWD/elsewhere" evidence/session-2
expect_code 0 "a run whose default name is taken by a symbolic link" "$SHIMBENCH" --db A.db --quiet run ../p.json
[ -z "$(ls elsewhere)" ] && [ -f evidence/session-2-2/SHA256SUMS ] && ok "the link's target untouched; session-2-2 used" ||
	not_ok "wrote through a link: $(ls elsewhere evidence)"
[ -z "$(ls -A evidence | grep '^\.run-')" ] && ok "no temporary bundle directory left" || not_ok "left: $(ls -A evidence)"
mkdir -p full && echo keep >full/old.txt
expect_code 2 "run --bundle into a non-empty directory is refused" "$SHIMBENCH" --db A.db --quiet run --bundle full ../p.json
grep_in "$WORK/err" "is not empty" "says why"
[ "$(ls full)" = old.txt ] && ok "nothing written into it" || not_ok "wrote into it: $(ls full)"
expect_code 0 "run --bundle DIR --force writes into it" "$SHIMBENCH" --db A.db --quiet run --bundle full --force ../p.json
[ -f full/old.txt ] && [ -f full/SHA256SUMS ] && ok "with --force: the bundle beside the old file" || not_ok "--force"
mkdir -p linked && echo precious >precious.txt && ln -s "$PWD/precious.txt" linked/README.md
expect_code 3 "run --bundle --force into a directory whose README.md links out" \
	"$SHIMBENCH" --db A.db --quiet run --bundle linked --force ../p.json
grep_in "$WORK/err" "is a symbolic link; a bundle holds regular files only" "the link is refused"
[ "$(cat precious.txt)" = precious ] && [ -L linked/README.md ] && ok "the file it links to is untouched" ||
	not_ok "wrote through the link"
mkdir -p withfifo && mkfifo withfifo/results.csv
expect_code 3 "run --bundle --force into a directory with a FIFO member" \
	timeout 20 "$SHIMBENCH" --db A.db --quiet run --bundle withfifo --force ../p.json
[ -p withfifo/results.csv ] && ok "the FIFO is refused, not written or replaced" || not_ok "FIFO member"
expect_code 2 "export into a non-empty directory is refused (a usage error, as for run --bundle)" "$SHIMBENCH" --db A.db export 1 evidence/session-1
grep_in "$WORK/err" "is not empty" "export says why"
[ "$(cd evidence/session-1 && cat SHA256SUMS | sha256sum)" = "$sum_before" ] && ok "the existing bundle untouched" || not_ok "export overwrote a bundle"
cd "$WORK" || exit 1

# ---- 8. the hash cache misses after an edit in place, mtime put back ----------
cp tiny.gguf edit.gguf
touch -d '1 hour ago' edit.gguf   # the cache keeps no answer for a file just written
expect_code 0 "models hash (fills the cache)" "$SHIMBENCH" --db cache.db models hash edit.gguf
expect_code 0 "models hash again" "$SHIMBENCH" --db cache.db models hash --verbose edit.gguf
grep_in err "cached: edit.gguf" "the second answer came from the cache"
mtime=$(stat -c %y edit.gguf)
size=$(stat -c %s edit.gguf)
printf '\001' | dd of=edit.gguf bs=1 seek=$((size - 100)) conv=notrunc 2>/dev/null
touch -d "$mtime" edit.gguf
[ "$(stat -c %y edit.gguf)" = "$mtime" ] && [ "$(stat -c %s edit.gguf)" = "$size" ] &&
	ok "edited in place: same size, mtime put back" || not_ok "could not restore the mtime"
expect_code 0 "models hash after the edit" "$SHIMBENCH" --db cache.db models hash --verbose edit.gguf
new_sha=$(sha256sum edit.gguf | cut -d' ' -f1)
grep_in out "$new_sha" "the new SHA-256, not the cached one"
grep -q "cached: edit.gguf" err && not_ok "answered from the cache" || ok "not answered from the cache"
cat >manifest.json <<JSON
{"version": 1, "models": [{"name": "t", "file": "edit.gguf", "size": $size, "sha256": "$MODEL_SHA"}]}
JSON
cp tiny.gguf edit.gguf && touch -d '1 hour ago' edit.gguf
mtime=$(stat -c %y edit.gguf)
expect_code 0 "models verify of the original (fills the cache)" \
	"$SHIMBENCH" --db cache.db models verify --manifest manifest.json --dir . t
printf '\001' | dd of=edit.gguf bs=1 seek=$((size - 100)) conv=notrunc 2>/dev/null
touch -d "$mtime" edit.gguf
expect_code 1 "models verify after an edit in place with the mtime put back" \
	"$SHIMBENCH" --db cache.db models verify --manifest manifest.json --dir . t
grep_in out "MISMATCH" "reported as a mismatch"
cp tiny.gguf runmodel.gguf && touch -d '1 hour ago' runmodel.gguf
plan cached lb.sh "$MODEL_SHA"
sed -i "s|$WORK/tiny.gguf|$WORK/runmodel.gguf|" cached.json
expect_code 0 "a run that checks the model's SHA-256 (cached)" "$SHIMBENCH" --db cache.db --quiet run --bundle "$WORK/c1" cached.json
mtime=$(stat -c %y runmodel.gguf)
printf '\001' | dd of=runmodel.gguf bs=1 seek=$((size - 100)) conv=notrunc 2>/dev/null
touch -d "$mtime" runmodel.gguf
expect_code 1 "the run after an edit in place with the mtime put back is refused" \
	"$SHIMBENCH" --db cache.db --quiet run --bundle "$WORK/c2" cached.json
grep_in err "SHA-256 mismatch" "a model hash mismatch"

# ---- 9. a bundle that cannot be written fails the run ------------------------------
# Whatever the point where the disk fills: the run exits non-zero, the
# session is failed, no run is "ok" with the hash of an empty file, every
# stored hash is of the stored bytes, and a SHA256SUMS that exists vouches
# for a whole bundle that imports.
EMPTY=$(printf '' | sha256sum | cut -d' ' -f1)
full_disk_check() {   # full_disk_check LABEL DB DIR RC
	local label=$1 db=$2 dir=$3 rc=$4 st bad
	st=$(q "$db" "select status from sessions")
	bad=$(q "$db" "select seq from runs where status='ok' and (stdout_sha256 is null or stdout_sha256='$EMPTY')")
	bad="$bad$(stored_hashes_wrong "$db")"
	if [ -f "$dir/SHA256SUMS" ]; then
		if [ "$rc" = 0 ] && [ "$st" = ok ] && [ -z "$bad" ] &&
		   (cd "$dir" && sha256sum -c --quiet SHA256SUMS >/dev/null 2>&1) &&
		   "$SHIMBENCH" --db "$WORK/fd-check.db" import "$dir" >/dev/null 2>&1; then
			outcomes="$outcomes ok"
		else
			not_ok "$label: exit $rc, session $st, bad runs '$bad', with a SHA256SUMS"
			return
		fi
	elif [ "$rc" != 0 ] && [ "$st" = failed ] && [ -z "$bad" ]; then
		outcomes="$outcomes failed"
	else
		not_ok "$label: exit $rc, session $st, bad runs '$bad', no SHA256SUMS"
		return
	fi
	rm -f "$WORK/fd-check.db"*
	passes=$((passes + 1))
}
# The runs whose recorded SHA-256 is not that of the bytes stored.
stored_hashes_wrong() {
	python3 - "$1" <<'PY'
import hashlib, sqlite3, sys
for seq, text, sha in sqlite3.connect(sys.argv[1]).execute(
        "select r.seq, t.stdout_text, r.stdout_sha256 from runs r"
        " left join run_texts t on t.run_id = r.id"):
    if text is None and sha is None:
        continue
    if isinstance(text, str):
        text = text.encode()
    if text is None or hashlib.sha256(text).hexdigest() != sha:
        print(seq, end=" ")
PY
}
passes=0 outcomes=""
if [ "$CAN_MOUNT" = 1 ]; then
	for pages in 1 2 3 4 5 6 7 8 12; do
		small_disk "$WORK/disk$pages" $((pages * 4)) || break
		"$SHIMBENCH" --db "fd$pages.db" --quiet run --bundle "$WORK/disk$pages/b" p.json >out 2>err
		full_disk_check "tmpfs of $pages pages" "fd$pages.db" "$WORK/disk$pages/b" $?
	done
	[ "$passes" = 9 ] && ok "bundle on a full tmpfs (9 sizes):$outcomes" || not_ok "full tmpfs: $passes of 9"
fi
passes=0 outcomes=""
# (the last points leave room for the whole bundle: raw files, bundle.json,
# the report with its provenance, and the chart SVGs)
for bytes in 0 10 100 500 1000 2000 4000 9000 20000 200000 2000000; do
	with_full_disk "$WORK/pre$bytes" "$bytes" "$SHIMBENCH" --db "pre$bytes.db" --quiet run \
		--bundle "$WORK/pre$bytes" p.json >out 2>err
	full_disk_check "writes failing after $bytes bytes" "pre$bytes.db" "$WORK/pre$bytes" $?
done
[ "$passes" = 11 ] && ok "bundle writes failing after 0..2000000 bytes (11 points):$outcomes" ||
	not_ok "write failures: $passes of 11"
case "$outcomes" in *failed*ok*) ok "both a failed and a complete bundle seen" ;; *) not_ok "outcomes:$outcomes" ;; esac

# ---- 10. a marker after 4 MB of stderr ----------------------------------------
python3 - <<'PY'
with open("late.stderr", "w") as f:
    line = "ggml_backend: a long and boring line of loader chatter, repeated " * 2 + "\n"
    while f.tell() < 5 * 1024 * 1024:
        f.write(line)
    f.write("[shimbench-test] Enabled for pid 2\n")
with open("nomark.stderr", "w") as f:
    f.write(open("late.stderr").read().replace("[shimbench-test] Enabled", "[shimbench-test] Disabled"))
PY
fake_lb late.sh "$WORK/canned/out.jsonl" "$WORK/late.stderr"
fake_lb nomark.sh "$WORK/canned/out.jsonl" "$WORK/nomark.stderr"
plan late late.sh
plan nomark nomark.sh
expect_code 0 "a run whose marker comes after 5 MB of stderr" "$SHIMBENCH" --db late.db --quiet run --bundle "$WORK/late" late.json
[ "$(q late.db "select verification from runs where variant='marked'")" = verified ] &&
	ok "the late marker verifies the run" || not_ok "not verified: $(q late.db "select verification_detail from runs where variant='marked'")"
[ "$(q late.db "select length(t.stderr_text) from runs r join run_texts t on t.run_id = r.id where r.variant='marked'")" = "$(stat -c %s late.stderr)" ] &&
	ok "the whole stderr is stored" || not_ok "stderr stored: $(q late.db "select length(t.stderr_text) from runs r join run_texts t on t.run_id = r.id where r.variant='marked'") bytes"
check "the bundle holds the whole stderr" cmp -s late.stderr late/runs/00?-marked-tiny.stderr
expect_code 1 "without the marker, 5 MB of stderr do not verify" "$SHIMBENCH" --db late.db --quiet run --bundle "$WORK/nomark" nomark.json
expect_code 0 "the bundle with the late marker imports" "$SHIMBENCH" --db late2.db import late
[ "$(q late2.db "select verification from runs where variant='marked'")" = verified ] &&
	ok "import verifies the late marker too" || not_ok "import: not verified"
test_done
