#!/bin/bash
# models hash: output byte-identical to sha256sum, answers from the store's
# hash cache for unchanged files (seen through --verbose), invalidation by
# any change of size or mtime, the racy-timestamp guard, --rehash, and
# hostile file names.
. "$(dirname "$0")/lib.sh"

# sha256sum, or its macOS equivalent with the same output format.
sha256sum() {
	if command -v sha256sum >/dev/null 2>&1; then command sha256sum "$@"
	else shasum -a 256 "$@"; fi
}

OLD=202001020304.05           # touch -t: POSIX
cd "$WORK" || exit 1
head -c 3000000 /dev/urandom > a.bin
printf 'hello\n' > "b it's.txt"
: > empty
touch -t "$OLD" a.bin "b it's.txt" empty

expect_code 0 "hash three files" "$SHIMBENCH" models hash a.bin "b it's.txt" empty
sha256sum a.bin "b it's.txt" empty > want
cmp -s "$WORK/out" want && ok "output identical to sha256sum" || { not_ok "output differs from sha256sum"; diff "$WORK/out" want | sed 's/^/# /'; }
expect_code 0 "hash absolute paths" "$SHIMBENCH" models hash "$WORK/a.bin"
sha256sum "$WORK/a.bin" > want
cmp -s "$WORK/out" want && ok "absolute path printed as given" || not_ok "absolute path output differs"

# Second time: every answer comes from the cache.
expect_code 0 "hash again --verbose" "$SHIMBENCH" models hash --verbose a.bin "b it's.txt" empty
grep_in "$WORK/err" "cached: a.bin" "a.bin from the cache"
grep_in "$WORK/err" "cached: b it's.txt" "quoted name from the cache"
sha256sum a.bin "b it's.txt" empty > want
cmp -s "$WORK/out" want && ok "cached output still identical to sha256sum" || not_ok "cached output differs"

# --rehash reads again.
expect_code 0 "--rehash" "$SHIMBENCH" models hash --rehash --verbose a.bin
grep_in "$WORK/err" "hashed: a.bin (3000000 bytes" "--rehash reads the file"

# A touch (new mtime) invalidates; a fresh mtime is never cached (racy).
touch a.bin
expect_code 0 "hash after touch" "$SHIMBENCH" models hash --verbose a.bin
grep_in "$WORK/err" "hashed: a.bin" "touched file is read again"
grep_in "$WORK/err" "not cached" "recently modified file is not cached"
expect_code 0 "hash right after" "$SHIMBENCH" models hash --verbose a.bin
grep_in "$WORK/err" "hashed: a.bin" "still read: the racy guard holds"

# Same size, new content, old mtime again (another one): the new hash.
printf 'HELLO\n' > "b it's.txt"
touch -t 202105060708.09 "b it's.txt"
expect_code 0 "hash modified file" "$SHIMBENCH" models hash --verbose "b it's.txt"
grep_in "$WORK/err" "hashed: b it's.txt" "modified file is read again"
sha256sum "b it's.txt" > want
cmp -s "$WORK/out" want && ok "modified file's new hash" || not_ok "stale hash returned"
# Replaced by another file (new inode) with the cached file's size and mtime.
printf 'hellO\n' > new.txt
touch -t 202105060708.09 new.txt
mv new.txt "b it's.txt"
expect_code 0 "hash replaced file" "$SHIMBENCH" models hash --verbose "b it's.txt"
grep_in "$WORK/err" "hashed: b it's.txt" "replaced file is read again"
sha256sum "b it's.txt" > want
cmp -s "$WORK/out" want && ok "replaced file's new hash" || not_ok "stale hash for a replaced file"

# --no-cache, -j, errors.
expect_code 0 "--no-cache -j 1" "$SHIMBENCH" models hash --no-cache -j 1 --verbose a.bin empty
grep_in "$WORK/err" "hashed: empty" "no cache: read"
expect_code 2 "a missing file" "$SHIMBENCH" models hash a.bin missing.bin empty
grep_in "$WORK/err" "cannot open 'missing.bin'" "missing file named"
[ "$(wc -l <"$WORK/out")" -eq 2 ] && ok "the other files are still printed" || not_ok "other files not printed"
expect_code 2 "a directory" "$SHIMBENCH" models hash "$WORK"
grep_in "$WORK/err" "is not a regular file" "directory refused"
expect_code 2 "no file" "$SHIMBENCH" models hash
expect_code 2 "bad -j" "$SHIMBENCH" models hash -j 0 a.bin
test_done
