#!/bin/bash
# shimbench doctor: one line per check, --json, exit 0 only when
# llama-bench and the store are usable, 3 otherwise; llama-bench found
# through $LLAMA_BENCH, the current directory's .llama and beside the
# executable.
. "$(dirname "$0")/lib.sh"

PREFIX_WRAPPER=$TOP/.llama/bin/llama-bench

json_get() { # json_get FILE PYTHON-EXPR (d is the parsed object)
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
json_true() { # json_true FILE PYTHON-EXPR: succeeds when the expression is true
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
check_of() { # the JSON check object named $2 in file $1
	echo "[c for c in d['checks'] if c['name'] == '$1'][0]"
}

expect_code 0 "doctor --help" "$SHIMBENCH" doctor --help
grep_in "$WORK/out" "usage: shimbench doctor" "usage shown"
expect_code 2 "unknown option" "$SHIMBENCH" doctor --frob
grep_in "$WORK/err" "--frob" "names the option"
expect_code 2 "stray argument" "$SHIMBENCH" doctor extra
grep_in "$WORK/err" "'extra'" "names the argument"

# A wrong explicit choice is an error with a fix, exit 3.
expect_code 3 "LLAMA_BENCH pointing nowhere" \
	env LLAMA_BENCH="$WORK/no such bench" "$SHIMBENCH" doctor
grep_in "$WORK/out" "error    llama-bench     \$LLAMA_BENCH '$WORK/no such bench' is not an executable file" "names the bad path"
grep_in "$WORK/out" "fix: unset LLAMA_BENCH" "says how to fix it"
grep_in "$WORK/out" "essentials missing" "summary says so"
expect_code 3 "--llama-bench pointing nowhere" \
	"$SHIMBENCH" doctor --llama-bench /nonexistent/llama-bench
grep_in "$WORK/out" "'/nonexistent/llama-bench'" "names the bad path"

# Nothing anywhere: missing, with the provisioning command.
mkdir -p "$WORK/empty" "$WORK/nothing/build"
cp "$SHIMBENCH" "$WORK/nothing/build/shimbench"
(cd "$WORK/empty" && PATH=/usr/bin:/bin "$WORK/nothing/build/shimbench" doctor >"$WORK/out" 2>"$WORK/err")
rc=$?
if [ "$rc" -eq 3 ]; then ok "no llama-bench anywhere: exit 3"; else not_ok "no llama-bench anywhere: exit $rc"; fi
if [ "$(uname -s)" = Darwin ]; then
	grep_in "$WORK/out" "fix: brew install llama.cpp" "missing, with the fix"
else
	grep_in "$WORK/out" "missing  llama-bench" "reported missing"
	grep_in "$WORK/out" "fix: make llama-bench" "missing, with the fix"
fi

# A llama-bench that does not work is an error, not ok.
cat >"$WORK/broken-bench" <<'EOF'
#!/bin/sh
echo "error while loading shared libraries: libllama.so.0" >&2
exit 127
EOF
chmod +x "$WORK/broken-bench"
expect_code 3 "broken llama-bench" env LLAMA_BENCH="$WORK/broken-bench" "$SHIMBENCH" doctor
grep_in "$WORK/out" "--list-devices exited 127" "says it does not run"

# Store: a file that is not a database, a directory that is not writable.
echo "not a database" >"$WORK/garbage.db"
expect_code 3 "store not a database" "$SHIMBENCH" --db "$WORK/garbage.db" doctor --json
check "json says not ok" [ "$(json_get "$WORK/out" "d['ok']")" = False ]
check "store check is an error" [ "$(json_get "$WORK/out" "$(check_of store)['status']")" = error ]
expect_code 3 "store in a missing directory" "$SHIMBENCH" --db "$WORK/no/dir/x.db" doctor
grep_in "$WORK/out" "cannot be created: directory '$WORK/no/dir' is not writable" "names the directory"
check "doctor created nothing" [ ! -e "$WORK/no" ]

if [ ! -x "$PREFIX_WRAPPER" ]; then
	skip "doctor with the real llama-bench: $PREFIX_WRAPPER is absent (run: make llama-bench)"
	test_done
	exit $?
fi

# The real llama-bench, provisioned; a store that does not exist yet is
# fine and is not created by doctor.
expect_code 0 "doctor with the provisioned llama-bench" \
	env PATH=/usr/bin:/bin LLAMA_BENCH= "$SHIMBENCH" --db "$WORK/new.db" doctor --json
check "json ok" [ "$(json_get "$WORK/out" "d['ok']")" = True ]
lb=$(check_of llama-bench)
check "found as a prefix wrapper" [ "$(json_get "$WORK/out" "${lb}['where']")" = prefix ]
check "sha256 is of the binary it runs" [ "$(json_get "$WORK/out" "${lb}['sha256']")" = \
	"$(sha256sum "$TOP/.llama/prefix/usr/bin/llama-bench" | cut -d' ' -f1)" ]
check "binary is the prefix's" [ "$(json_get "$WORK/out" "${lb}['binary']")" = \
	"$(cd "$TOP/.llama/prefix/usr/bin" && pwd -P)/llama-bench" ]
check "version line read" json_true "$WORK/out" "'build' in ${lb}['version']"
check "devices listed" json_true "$WORK/out" "isinstance(${lb}['devices'], list)"
check "store not created" [ ! -e "$WORK/new.db" ]
check "store reported as new" json_true "$WORK/out" "'does not exist yet' in $(check_of store)['detail']"

# An existing SQLite file is opened and migrated: schema version shown.
sqlite3 "$WORK/s.db" 'CREATE TABLE t(a); DROP TABLE t;'
expect_code 0 "doctor on an existing store" env PATH=/usr/bin:/bin LLAMA_BENCH= "$SHIMBENCH" --db "$WORK/s.db" doctor
grep_in "$WORK/out" "ok       store           $WORK/s.db (schema version" "schema version shown"
grep_in "$WORK/out" "ok       llama-bench     $PREFIX_WRAPPER (prefix) sha256 " "one line for llama-bench"
grep_in "$WORK/out" "essentials ok" "summary"

# Found beside the executable (<exe dir>/../.llama/bin) from another cwd.
mkdir -p "$WORK/repo/build" "$WORK/repo/.llama/bin"
cp "$SHIMBENCH" "$WORK/repo/build/shimbench"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$PREFIX_WRAPPER" >"$WORK/repo/.llama/bin/llama-bench"
chmod +x "$WORK/repo/.llama/bin/llama-bench"
(cd "$WORK/empty" && PATH=/usr/bin:/bin LLAMA_BENCH='' "$WORK/repo/build/shimbench" --db "$WORK/s.db" doctor >"$WORK/out" 2>"$WORK/err")
rc=$?
if [ "$rc" -eq 0 ]; then ok "found beside the executable: exit 0"; else not_ok "found beside the executable: exit $rc"; fi
grep_in "$WORK/out" "ok       llama-bench     $(cd "$WORK/repo/.llama/bin" && pwd -P)/llama-bench (prefix)" "found beside the executable"

# $LLAMA_BENCH wins over the prefix.
expect_code 0 "LLAMA_BENCH wins" env LLAMA_BENCH="$WORK/repo/.llama/bin/llama-bench" "$SHIMBENCH" --db "$WORK/s.db" doctor
grep_in "$WORK/out" "$WORK/repo/.llama/bin/llama-bench (env)" "where is env"

test_done
