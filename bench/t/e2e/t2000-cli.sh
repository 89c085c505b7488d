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
expect_code 2 "no command" "$SHIMBENCH"
expect_code 2 "unknown global option" "$SHIMBENCH" --colour
expect_code 2 "unknown command option" "$SHIMBENCH" report --frob
grep_in "$WORK/err" "--frob" "names the option"
expect_code 2 "--db without a path" "$SHIMBENCH" --db
test_done
