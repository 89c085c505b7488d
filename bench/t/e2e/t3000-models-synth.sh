#!/bin/bash
# models synth / info / verify: deterministic synthetic models whose
# SHA-256 equals the manifest's, header facts that match the generator,
# and verification against the manifest (ok, mismatch, missing).
. "$(dirname "$0")/lib.sh"

# sha256sum, or its macOS equivalent with the same output format.
sha256sum() {
	if command -v sha256sum >/dev/null 2>&1; then command sha256sum "$@"
	else shasum -a 256 "$@"; fi
}

MANIFEST=$TOP/models/manifest.json

# manifest_field NAME FIELD: a string or number field of a manifest entry.
manifest_field() {
	awk -v name="\"$1\"" -v field="\"$2\"" '
		$1 == "\"name\":" { cur = $2; sub(/,$/, "", cur) }
		cur == name && $1 == field ":" { v = $2; sub(/,$/, "", v); gsub(/"/, "", v); print v; exit }
	' "$MANIFEST"
}

expect_code 0 "synth --list" "$SHIMBENCH" models synth --list
for s in tiny tiny-gemma3 tinyllama-1.1b gemma3-12b; do
	grep_in "$WORK/out" "$s " "shape $s listed"
done

# The same shape twice gives the same bytes, equal to the manifest's.
mkdir -p "$WORK/a" "$WORK/b"
expect_code 0 "synth tiny" "$SHIMBENCH" models synth tiny -o "$WORK/a/synth-tiny.gguf"
expect_code 0 "synth tiny again" "$SHIMBENCH" models synth tiny -o "$WORK/b/synth-tiny.gguf"
a=$(sha256sum "$WORK/a/synth-tiny.gguf" | cut -d' ' -f1)
b=$(sha256sum "$WORK/b/synth-tiny.gguf" | cut -d' ' -f1)
want=$(manifest_field synth-tiny sha256)
[ -n "$want" ] && [ "$a" = "$b" ] && ok "two runs give identical bytes" || not_ok "runs differ: $a $b"
[ "$a" = "$want" ] && ok "sha256 equals the manifest's ($want)" || not_ok "sha256 $a, manifest $want"

# Every synthetic entry of the manifest is regenerated exactly.
for name in synth-tiny-f32 synth-tiny-q8_0 synth-tiny-gemma3; do
	shape=$(grep -A8 "\"name\": \"$name\"" "$MANIFEST" | sed -n 's/.*"shape": "\([^"]*\)".*/\1/p' | head -1)
	type=$(grep -A8 "\"name\": \"$name\"" "$MANIFEST" | sed -n 's/.*"type": "\([^"]*\)".*/\1/p' | head -1)
	file=$(manifest_field "$name" file)
	expect_code 0 "synth $shape --type $type" "$SHIMBENCH" models synth "$shape" --type "$type" --seed 0 -o "$WORK/a/$file"
	got=$(sha256sum "$WORK/a/$file" | cut -d' ' -f1)
	want=$(manifest_field "$name" sha256)
	[ "$got" = "$want" ] && ok "$name sha256 equals the manifest's" || not_ok "$name: sha256 $got, manifest $want"
done

# A different seed gives different bytes with the same facts.
expect_code 0 "synth --seed 7" "$SHIMBENCH" models synth tiny --seed 7 -o "$WORK/b/seed7.gguf"
s7=$(sha256sum "$WORK/b/seed7.gguf" | cut -d' ' -f1)
[ "$s7" != "$a" ] && ok "seed changes the weights" || not_ok "seed 7 gave the seed 0 bytes"

# info: the header facts, equal to the manifest's llama-bench figures.
expect_code 0 "info" "$SHIMBENCH" models info "$WORK/a/synth-tiny.gguf"
grep_in "$WORK/out" "gguf version: 3" "version"
grep_in "$WORK/out" "tensors: 21" "tensor count"
grep_in "$WORK/out" "architecture: llama" "architecture"
grep_in "$WORK/out" "file type: F16 (1)" "file type named"
grep_in "$WORK/out" "model_n_params: $(manifest_field synth-tiny n_params)" "params equal the manifest's"
grep_in "$WORK/out" "model_size: $(manifest_field synth-tiny model_size)" "size equals the manifest's"
grep_in "$WORK/out" 'tokenizer.ggml.model                         string  "no_vocab"' "no_vocab tokenizer"
grep_in "$WORK/out" "llama.vocab_size" "vocab size key"
expect_code 0 "info --json --tensors" "$SHIMBENCH" models info --json "$WORK/a/synth-tiny-gemma3.gguf"
grep_in "$WORK/out" '"architecture": "gemma3"' "json architecture"
grep_in "$WORK/out" '"gemma3.attention.sliding_window"' "json keys"
check "info --json parses, facts as numbers" python3 -c "
import json; d = json.load(open('$WORK/out'))
assert d['tensor_count'] == 28 and d['tensor_types'] == {'F32': 13, 'F16': 15}
m = d['metadata']
assert m['gemma3.attention.layer_norm_rms_epsilon'] == {'type': 'f32', 'value': 1e-06}
assert m['general.name']['length'] == len(m['general.name']['value'])"
# Metadata no JSON can hold as it is: a NaN and an infinity (null), bytes
# that are not UTF-8 in a key and a value (U+FFFD), a control character
# and quotes (escaped), the largest u64 (exact).
python3 - "$WORK/odd.gguf" <<'PY'
import struct, sys
def s(b): return struct.pack('<Q', len(b)) + b
kv = [s(b'general.architecture') + struct.pack('<I', 8) + s(b'llama'),
      s(b'x.nan') + struct.pack('<I', 6) + struct.pack('<f', float('nan')),
      s(b'x.inf') + struct.pack('<I', 12) + struct.pack('<d', float('inf')),
      s(b'x.bad\xff"key') + struct.pack('<I', 8) + s(b'bad \xff utf8 \x01 "q" \\ end'),
      s(b'x.big') + struct.pack('<I', 10) + struct.pack('<Q', 2**64 - 1)]
d = b'GGUF' + struct.pack('<IQQ', 3, 0, len(kv)) + b''.join(kv)
open(sys.argv[1], 'wb').write(d + b'\0' * (-len(d) % 32))
PY
expect_code 0 "info --json of odd metadata" "$SHIMBENCH" models info --json "$WORK/odd.gguf"
check "is valid JSON: null for NaN and infinity, U+FFFD, exact u64" python3 -c "
import json; m = json.loads(open('$WORK/out', 'rb').read().decode('utf-8'))['metadata']
assert m['x.nan']['value'] is None and m['x.inf']['value'] is None
assert m['x.bad\ufffd\"key']['value'] == 'bad \ufffd utf8 \x01 \"q\" \\\\ end'
assert m['x.big']['value'] == 2**64 - 1"
expect_code 0 "info --tensors" "$SHIMBENCH" models info --tensors "$WORK/a/synth-tiny-gemma3.gguf"
grep_in "$WORK/out" "blk.1.post_ffw_norm.weight" "gemma3 tensors listed"

# Usage errors and hostile input.
expect_code 2 "unknown shape" "$SHIMBENCH" models synth huge -o "$WORK/x.gguf"
grep_in "$WORK/err" "unknown shape 'huge'" "names the shape"
expect_code 2 "bad type" "$SHIMBENCH" models synth tiny --type q4_k -o "$WORK/x.gguf"
grep_in "$WORK/err" "--type 'q4_k'" "names the type"
expect_code 2 "no -o" "$SHIMBENCH" models synth tiny
expect_code 2 "bad seed" "$SHIMBENCH" models synth tiny --seed -1 -o "$WORK/x.gguf"
expect_code 3 "unwritable output" "$SHIMBENCH" models synth tiny -o "$WORK/no/such/dir/x.gguf"
[ ! -e "$WORK/x.gguf" ] && ok "nothing written on usage errors" || not_ok "x.gguf written"
expect_code 2 "unknown subcommand" "$SHIMBENCH" models frob
head -c 100 "$WORK/a/synth-tiny.gguf" > "$WORK/trunc.gguf"
expect_code 2 "info on a truncated file" "$SHIMBENCH" models info "$WORK/trunc.gguf"
grep_in "$WORK/err" "trunc.gguf': offset " "error names the file and offset"
printf 'not a model at all' > "$WORK/text.gguf"
expect_code 2 "info on a text file" "$SHIMBENCH" models info "$WORK/text.gguf"
grep_in "$WORK/err" "bad magic" "bad magic reported"

# verify against the manifest (found beside the binary from anywhere).
cd "$WORK" || exit 1
expect_code 0 "verify all in a directory" "$SHIMBENCH" models verify --dir "$WORK/a"
grep_in "$WORK/out" "ok        synth-tiny  $WORK/a/synth-tiny.gguf" "synth-tiny ok"
grep_in "$WORK/out" "ok        synth-tiny-gemma3" "synth-tiny-gemma3 ok"
grep_in "$WORK/out" "absent    tinyllama-1.1b-q4_k_m" "absent real model listed"
expect_code 0 "verify by name" "$SHIMBENCH" models verify --dir "$WORK/a" synth-tiny synth-tiny-q8_0
cp "$WORK/b/seed7.gguf" "$WORK/a/synth-tiny.gguf"
expect_code 1 "verify a changed file" "$SHIMBENCH" models verify --dir "$WORK/a" synth-tiny
grep_in "$WORK/out" "MISMATCH  synth-tiny  $WORK/a/synth-tiny.gguf" "mismatch printed"
grep_in "$WORK/err" "'$WORK/a/synth-tiny.gguf' has SHA-256 $s7" "error names the file and its hash"
head -c 1000 "$WORK/b/seed7.gguf" > "$WORK/a/synth-tiny-f32.gguf"
expect_code 1 "verify a file of the wrong size" "$SHIMBENCH" models verify --dir "$WORK/a" synth-tiny-f32
grep_in "$WORK/err" "synth-tiny-f32.gguf' is 1000 bytes" "size mismatch names the file"
cp "$WORK/b/synth-tiny.gguf" "$WORK/b/tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf"
expect_code 1 "verify a file with other GGUF facts" "$SHIMBENCH" models verify --dir "$WORK/b" tinyllama-1.1b-q4_k_m
grep_in "$WORK/err" "has model_size 5248000; the manifest's 'tinyllama-1.1b-q4_k_m' has 667078656" "facts mismatch named before hashing"
expect_code 1 "verify a missing named model" "$SHIMBENCH" models verify --dir "$WORK/a" tinyllama-1.1b-q4_k_m
grep_in "$WORK/err" "tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf' not found" "missing file named"
expect_code 2 "verify an unknown name" "$SHIMBENCH" models verify nosuchmodel
grep_in "$WORK/err" "no model named 'nosuchmodel'" "unknown name reported"
printf '{"models": [{"name": "x", "file": "x", "sha256": "zz"}]}' > "$WORK/bad.json"
expect_code 2 "bad manifest" "$SHIMBENCH" models verify --manifest "$WORK/bad.json"
grep_in "$WORK/err" "sha256 'zz' is not 64 hex digits" "bad manifest entry named"
test_done
