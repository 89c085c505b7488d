#!/bin/bash
# shimbench models fetch: the manifest's pinned Hugging Face URL, curl
# with resume, SHA-256 before the rename, a clear error on a mismatch.
# Every download comes from a local HTTP server (bench/t/helpers/
# http-range-server.py) that supports ranges and cuts transfers on
# request; no real weights are ever downloaded.
. "$(dirname "$0")/lib.sh"

if ! command -v curl >/dev/null 2>&1; then
	skip "models fetch: curl is not installed (apt-get install curl)"
	test_done; exit $?
fi
SERVER_PID=
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"' EXIT

# serve [OPTIONS...]: (re)starts the server on a free port; sets BASE.
serve() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
	rm -f "$WORK/port"
	python3 "$TOP/bench/t/helpers/http-range-server.py" --root "$WORK/www" \
		--port-file "$WORK/port" --log "$WORK/http.log" "$@" &
	SERVER_PID=$!
	for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
	BASE="http://127.0.0.1:$(cat "$WORK/port")"
}

REV=0123456789abcdef0123456789abcdef01234567
REL=test/Fake-Model-GGUF/resolve/$REV
mkdir -p "$WORK/www/$REL" "$WORK/models"
head -c 3000000 /dev/urandom >"$WORK/www/$REL/fake.gguf"
SHA=$(sha256sum "$WORK/www/$REL/fake.gguf" | cut -d' ' -f1)
manifest() { # manifest SHA SIZE
	cat <<JSON
{"version": 1, "models": [
 {"name": "fake", "label": "Fake", "file": "fake.gguf", "size": $2,
  "sha256": "$1", "repository": "test/Fake-Model-GGUF", "revision": "$REV"},
 {"name": "nosum", "file": "nosum.gguf", "repository": "test/Fake-Model-GGUF",
  "revision": "$REV"},
 {"name": "synth", "file": "s.gguf", "synth": {"shape": "tiny", "type": "f16", "seed": 0}}]}
JSON
}
manifest "$SHA" 3000000 >"$WORK/m.json"
export SHIMBENCH_MANIFEST=$WORK/m.json
F=$WORK/models/fake.gguf
fetch() { "$SHIMBENCH" models fetch --dir "$WORK/models" "$@"; }

# --- the real manifest: the documented, pinned Hugging Face URLs.
expect_code 0 "print the real models' URLs" env -u SHIMBENCH_MANIFEST \
	"$SHIMBENCH" models fetch --manifest "$TOP/models/manifest.json" --print-url \
	tinyllama-1.1b-q4_k_m gemma-4-12b-q4_0
grep_in "$WORK/out" "tinyllama-1.1b-q4_k_m  https://huggingface.co/TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF/resolve/52e7645ba7c309695bec7ac98f4f005b139cf465/tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf" "TinyLlama at its pinned revision"
grep_in "$WORK/out" "gemma-4-12b-q4_0  https://huggingface.co/google/gemma-4-12B-it-qat-q4_0-gguf/resolve/29d097773436b69ff9feafd636ab4cf873786537/gemma-4-12b-it-qat-q4_0.gguf" "Gemma at the revision of its provenance"

# --- a plain download.
serve
expect_code 0 "fetch from the local server" fetch --url "$BASE" fake
grep_in "$WORK/out" "fetched   fake  $F (3.0 MB, SHA-256 verified) from $BASE/$REL/fake.gguf" "says what it fetched and from where"
check "the file is the served one" cmp -s "$F" "$WORK/www/$REL/fake.gguf"
check "no partial file left" test ! -e "$F.part"
grep_in "$WORK/http.log" "GET /$REL/fake.gguf -" "requested the pinned path"
: >"$WORK/http.log"
expect_code 0 "a verified file is not downloaded again" fetch --url "$BASE" fake
grep_in "$WORK/out" "ok        fake  $F (already there" "says it is there"
check "no request" test ! -s "$WORK/http.log"

# --- a slow transfer: progress while it runs (one line per tenth when
# stderr is not a terminal).
rm -f "$F"
serve --rate 1500000
expect_code 0 "a slow download" fetch --url "$BASE" fake
grep_in "$WORK/err" "fetch: fake " "progress lines"
grep_in "$WORK/err" " of 3.0 MB (" "with the size and the share done"
check "the file is whole" cmp -s "$F" "$WORK/www/$REL/fake.gguf"

# --- $SHIMBENCH_MODELS_URL, and a transfer cut mid-way, resumed at once.
rm -f "$F"
serve --cut-after 1000000
expect_code 0 "a cut transfer is resumed" env SHIMBENCH_MODELS_URL="$BASE" "$SHIMBENCH" \
	models fetch --dir "$WORK/models" fake
grep_in "$WORK/err" "stopped at 1000000 bytes" "says where it stopped"
grep_in "$WORK/out" "resumed, 2 attempts" "says it resumed"
grep_in "$WORK/http.log" "GET /$REL/fake.gguf bytes=1000000-" "the second request asks for the rest"
check "the resumed file is whole" cmp -s "$F" "$WORK/www/$REL/fake.gguf"

# --- no retries: the .part stays and the next fetch continues it.
rm -f "$F"
serve --cut-after 1200000
expect_code 3 "a cut transfer without retries fails" fetch --url "$BASE" --retries 0 fake
grep_in "$WORK/err" "the next fetch resumes it" "says the part is kept"
check "the partial file is kept" test "$(wc -c <"$F.part")" -eq 1200000
check "nothing at the final path" test ! -e "$F"
serve
: >"$WORK/http.log"
expect_code 0 "the next fetch resumes the .part" fetch --url "$BASE" fake
grep_in "$WORK/http.log" "bytes=1200000-" "with a Range request"
grep_in "$WORK/out" "resumed" "and says so"
check "whole" cmp -s "$F" "$WORK/www/$REL/fake.gguf"

# --- a server that ignores ranges: start over.
rm -f "$F"
head -c 500000 "$WORK/www/$REL/fake.gguf" >"$F.part"
serve --no-range
expect_code 0 "a server without ranges: downloaded again from the start" fetch --url "$BASE" fake
check "whole" cmp -s "$F" "$WORK/www/$REL/fake.gguf"

# --- a complete .part from an interrupted rename is only verified.
rm -f "$F"
cp "$WORK/www/$REL/fake.gguf" "$F.part"
: >"$WORK/http.log"
expect_code 0 "a complete .part is verified, not fetched" fetch --url "$BASE" fake
check "no request" test ! -s "$WORK/http.log"
grep_in "$WORK/out" "an earlier fetch had downloaded it all" "says where the bytes came from"

# --- mismatches: the download is deleted, the error names both hashes.
rm -f "$F"
manifest "$(printf 'ab%.0s' $(seq 32))" 3000000 >"$WORK/m.json"
expect_code 1 "SHA-256 mismatch" fetch --url "$BASE" fake
grep_in "$WORK/err" "has SHA-256 $SHA; the manifest's 'fake' pins abab" "names both hashes"
grep_in "$WORK/err" "the download was deleted" "says what became of it"
check "nothing kept" test ! -e "$F" -a ! -e "$F.part"
manifest "$SHA" 2999999 >"$WORK/m.json"
expect_code 1 "size mismatch" fetch --url "$BASE" fake
grep_in "$WORK/err" "is 3000000 bytes; the manifest's 'fake' is 2999999 bytes" "names both sizes"
manifest "$SHA" 3000000 >"$WORK/m.json"
echo "not the model" >"$F"
expect_code 1 "a wrong file in place is not overwritten" fetch --url "$BASE" fake
grep_in "$WORK/err" "move it away" "says what to do"
grep_in "$F" "not the model" "the file is untouched"
rm -f "$F"

# --- what cannot be fetched.
expect_code 3 "404" fetch --url "$BASE/nowhere" fake
grep_in "$WORK/err" "404" "curl's reason is shown"
expect_code 2 "no pinned SHA-256" fetch --url "$BASE" nosum
grep_in "$WORK/err" "pins no SHA-256" "says why"
expect_code 2 "synthetic model" fetch --url "$BASE" synth
grep_in "$WORK/err" "models synth" "points at synth"
expect_code 2 "unknown model" fetch --url "$BASE" nope
grep_in "$WORK/err" "no model named 'nope'" "names it"
expect_code 3 "no curl" env PATH=/nonexistent "$SHIMBENCH" models fetch --dir "$WORK/models" --url "$BASE" fake
grep_in "$WORK/err" "cannot run 'curl'" "says curl is missing"
sed 's/"revision": "[0-9a-f]*"/"revision": "main"/' "$WORK/m.json" >"$WORK/m2.json"
expect_code 2 "a branch is not a pinned revision" "$SHIMBENCH" models fetch --manifest "$WORK/m2.json" fake
grep_in "$WORK/err" "is not a pinned commit" "says so"
test_done
