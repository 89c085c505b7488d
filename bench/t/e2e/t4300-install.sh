#!/bin/bash
# make install: the binary and its data files under PREFIX, links to the
# provisioned llama-bench, advice on PATH; the installed binary, run from
# elsewhere with a bare PATH, finds llama-bench and the manifest. Plain
# `make` only builds: package installation is `make deps`' job.
. "$(dirname "$0")/lib.sh"

mk() { make -s --no-print-directory -C "$TOP" BUILD="$T_BUILD" "$@"; }

expect_code 0 "make -n (the default goal)" mk -n
check "plain make does not install packages" sh -c "! grep -q 'deps.sh' '$WORK/out'"
expect_code 0 "make -n deps" mk -n deps
grep_in "$WORK/out" "deps.sh" "make deps does"
for goal in check demo; do
	mk -n -p "$goal" 2>/dev/null | grep -q "^$goal: deps" \
		&& ok "make $goal calls deps first" || not_ok "make $goal does not depend on deps"
done

expect_code 0 "make install PREFIX=…" env PATH=/usr/bin:/bin make -s --no-print-directory \
	-C "$TOP" BUILD="$T_BUILD" install PREFIX="$WORK/inst"
check "binary installed" test -x "$WORK/inst/bin/shimbench"
check "manifest installed" test -f "$WORK/inst/share/shimbench/manifest.json"
check "published figures installed" test -f "$WORK/inst/share/shimbench/figures.json"
grep_in "$WORK/out" "is not on your PATH" "says the bin directory is not on PATH"
grep_in "$WORK/out" "export PATH=\"$WORK/inst/bin:\$PATH\"" "gives the line to add"
grep_in "$WORK/out" "shimbench doctor" "and what to run next"

expect_code 0 "on PATH: says so" env PATH="$WORK/inst/bin:/usr/bin:/bin" make -s \
	--no-print-directory -C "$TOP" BUILD="$T_BUILD" install PREFIX="$WORK/inst"
grep_in "$WORK/out" "is on your PATH" "recognises PATH"

expect_code 0 "DESTDIR stages under DESTDIR, names PREFIX" mk install \
	DESTDIR="$WORK/stage" PREFIX=/opt/sb
check "staged binary" test -x "$WORK/stage/opt/sb/bin/shimbench"
grep_in "$WORK/out" "/opt/sb/bin/shimbench" "messages name PREFIX"

mkdir -p "$WORK/elsewhere"
if [ -x "$TOP/.llama/bin/llama-bench" ]; then
	check "llama-bench linked" test -L "$WORK/inst/libexec/shimbench/llama-bench"
	(cd "$WORK/elsewhere" && env -u LLAMA_BENCH PATH=/usr/bin:/bin \
		"$WORK/inst/bin/shimbench" --db "$WORK/d.db" doctor --json >"$WORK/out" 2>"$WORK/err")
	rc=$?
	[ "$rc" -eq 0 ] && ok "installed doctor: essentials ok" || not_ok "installed doctor exit $rc"
	python3 - "$WORK/out" "$WORK/inst" <<'EOF' && ok "the installed binary finds the provisioned llama-bench" || not_ok "llama-bench not found through the install"
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["checks"] if c["name"] == "llama-bench"][0]
assert c["status"] == "ok", c
assert c["where"] == "prefix", c
assert c["path"] == sys.argv[2] + "/libexec/shimbench/llama-bench", c
assert c["binary"].endswith("/.llama/prefix/usr/bin/llama-bench"), c
EOF
else
	skip "installed llama-bench lookup: llama-bench is not provisioned"
fi
(cd "$WORK/elsewhere" && PATH=/usr/bin:/bin "$WORK/inst/bin/shimbench" --db "$WORK/d.db" \
	models verify >"$WORK/out" 2>"$WORK/err")
grep_in "$WORK/out" "synth-tiny" "the installed binary reads the installed manifest"
test_done
