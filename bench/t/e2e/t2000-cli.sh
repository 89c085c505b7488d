#!/bin/bash
# The command line: --help for every command, --version, usage errors.
. "$(dirname "$0")/lib.sh"

expect_code 0 "--version" "$SHIMBENCH" --version
grep_in "$WORK/out" "shimbench " "version printed"
expect_code 0 "--help" "$SHIMBENCH" --help
cmds=$(awk '/^commands:/{f=1;next} /^$/{f=0} f{print $1}' "$WORK/out")
[ -n "$cmds" ] && ok "commands listed" || not_ok "no commands listed"
for c in $cmds; do
	expect_code 0 "$c --help" "$SHIMBENCH" "$c" --help
	grep_in "$WORK/out" "usage: shimbench $c" "$c --help shows its usage"
	expect_code 0 "help $c" "$SHIMBENCH" help "$c"
done
expect_code 2 "unknown command" "$SHIMBENCH" frobnicate
grep_in "$WORK/err" "unknown command 'frobnicate'" "names the command"
check "frobnicate: nothing near, nothing suggested" sh -c "! grep -q 'did you mean' '$WORK/err'"
expect_code 2 "no command" "$SHIMBENCH"
# "did you mean" for a mistyped command, subcommand, option, selection key
# (issue 22 §6); nothing suggested when nothing is near
expect_code 2 "a mistyped command" "$SHIMBENCH" reprot
grep_in "$WORK/err" "unknown command 'reprot' (did you mean 'report'?)" "suggests report"
expect_code 2 "a mistyped subcommand" "$SHIMBENCH" models verfy
grep_in "$WORK/err" "unknown subcommand 'verfy' (did you mean 'verify'?)" "suggests verify"
expect_code 2 "a mistyped command option" "$SHIMBENCH" report --wdie
grep_in "$WORK/err" "unknown option '--wdie' (did you mean '--wide'?)" "suggests --wide"
expect_code 2 "an abbreviated option" "$SHIMBENCH" report --sel session=1
grep_in "$WORK/err" "unknown option '--sel' (did you mean '--select'?)" "suggests --select"
expect_code 2 "a mistyped global option" "$SHIMBENCH" --quite report
grep_in "$WORK/err" "unknown option '--quite' (did you mean '--quiet'?)" "suggests --quiet"
expect_code 2 "an ambiguous start" "$SHIMBENCH" rep
check "rep: report or reproduce, so no guess" sh -c "! grep -q 'did you mean' '$WORK/err'"
"$SHIMBENCH" --db "$WORK/dym.db" import --mapping "$FIXTURES/os-update/base.mapping.json" "$FIXTURES/os-update/base" >/dev/null 2>&1
expect_code 2 "a mistyped selection key" "$SHIMBENCH" --db "$WORK/dym.db" report --select varient=plain
grep_in "$WORK/err" "unknown selection key 'varient' (did you mean 'variant'?)" "suggests variant"
expect_code 2 "unknown global option" "$SHIMBENCH" --colour
expect_code 2 "unknown command option" "$SHIMBENCH" report --frob
grep_in "$WORK/err" "--frob" "names the option"
expect_code 2 "--db without a path" "$SHIMBENCH" --db

# Commands with subcommands list them; each subcommand has its own help.
expect_code 0 "help models" "$SHIMBENCH" help models
for sub in info synth verify hash; do
	grep_in "$WORK/out" "shimbench models $sub " "help models: usage of $sub"
	awk '/^subcommands/{f=1;next} /^$/{f=0} f{print $1}' "$WORK/out" | grep -qx "$sub" &&
		ok "help models lists $sub" || not_ok "help models does not list $sub"
done
expect_code 0 "models synth --help" "$SHIMBENCH" models synth --help
grep_in "$WORK/out" "usage: shimbench models synth SHAPE -o FILE" "synth --help: its usage"
for o in "-o, --output FILE" "--type T" "--seed N" "--quantize TYPE" "--list"; do
	grep_in "$WORK/out" "$o" "synth --help lists $o"
done
if grep -q -- "--rehash\|--no-cache\|--tensors" "$WORK/out"; then
	not_ok "synth --help lists other subcommands' options"
else
	ok "synth --help lists only synth's options"
fi
expect_code 0 "shim launchagent --help" "$SHIMBENCH" shim launchagent --help
grep_in "$WORK/out" "--family-max N" "launchagent --help lists --family-max"

# Option values are checked by the parser: range, number, choice.
expect_code 2 "range error: models hash -j 0" "$SHIMBENCH" models hash -j 0 x
grep_in "$WORK/err" "--jobs 0 is out of range [1, 1024]" "names the option, the value and the range"
grep_in "$WORK/err" "see 'shimbench models hash --help'" "points at the subcommand's help"
expect_code 2 "not a number: models hash -j two" "$SHIMBENCH" models hash -j two x
grep_in "$WORK/err" "--jobs 'two' is not a whole number" "names the option and the value"
expect_code 2 "bad choice: reproduce --format xml" "$SHIMBENCH" reproduce --format xml
grep_in "$WORK/err" "--format 'xml' is not one of: md, csv, json" "names the option, the value and the choices"
expect_code 2 "models without a subcommand" "$SHIMBENCH" models
expect_code 2 "models info without FILE" "$SHIMBENCH" models info
grep_in "$WORK/err" "usage: shimbench models info" "shows the subcommand's usage"

# doctor --json is one valid JSON document.
# (exit 0 or 3: whether llama-bench is found depends on this machine)
expect_code 0 "doctor --json exits 0 or 3" \
	sh -c '"$1" doctor --json; rc=$?; [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]' sh "$SHIMBENCH"
check "doctor --json is valid JSON" sh -c 'python3 -m json.tool "$1" >/dev/null' sh "$WORK/out"
check "doctor --json has ok and one check per line of doctor" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d["ok"], bool)
names = [c["name"] for c in d["checks"]]
assert names == ["llama-bench", "llama-quantize", "gnuplot", "sqlite", "cjson", "crypto", "ssh", "chromium", "store"], names
assert all(isinstance(c["essential"], bool) and c["status"] in ("ok", "missing", "error") for c in d["checks"])' "$WORK/out"
test_done
