#!/bin/bash
# shimbench shim launchagent: the plist parses as a property list (Python
# plistlib, xmllint) with every documented key and the exact values for
# hostile arguments, and the printed commands, run by a real shell
# against stand-ins for plutil/launchctl/id (macOS tools), deliver the
# plist path and label intact and roll back.
. "$(dirname "$0")/lib.sh"

label=com.example.hostile_server-1
program="/Applications/My Server's \"dir\"/llama-server"
library='/Users/lume/shim dir & co/LumeMetalCapabilities-arm64.dylib'
out_log='/Users/lume/Library/Logs/<a&b> "x".stdout.log'
err_log="/Users/lume/Library/Logs/it's.stderr.log"
args=(--leading-dash - -m '/models/a b.gguf' "it's \"quoted\"" 'a&b' '<tag>'
	']]>' '&amp;' '$(rm -rf /)' '`id`' 'ünïcødé ✓ 🦙' $'new\nline'
	$'tab\there' $'carriage\rreturn' '' '  spaces  ')
mkdir -p "$WORK/Launch Agents"
plist="$WORK/Launch Agents/it's \$(x).plist"

expect_code 0 "launchagent with hostile arguments" \
	"$SHIMBENCH" shim launchagent --label "$label" --program "$program" \
	--library "$library" --family-max 1009 --threadgroup-memory 65536 \
	--working-set 17179869184 --stdout "$out_log" --stderr "$err_log" \
	-o "$plist" -- "${args[@]}"
cp "$WORK/out" "$WORK/commands"

check "xmllint --noout accepts the plist" xmllint --noout "$plist"
if python3 - "$plist" "$label" "$program" "$library" "$out_log" "$err_log" \
	"${args[@]}" >"$WORK/py" 2>&1 <<'PY'
import plistlib, sys
path, label, program, library, out_log, err_log, *args = sys.argv[1:]
with open(path, 'rb') as f:
    d = plistlib.load(f)
want = {
    'Label': label,
    'ProgramArguments': [program] + args,
    'EnvironmentVariables': {
        'DYLD_INSERT_LIBRARIES': library,
        'LUME_METAL_APPLE_FAMILY_MAX': '1009',
        'LUME_METAL_MAX_THREADGROUP_MEMORY': '65536',
        'LUME_METAL_RECOMMENDED_WORKING_SET_SIZE': '17179869184',
    },
    'StandardOutPath': out_log,
    'StandardErrorPath': err_log,
}
if d != want:
    for k in sorted(set(d) | set(want)):
        if d.get(k) != want.get(k):
            print('key %r: got %r, want %r' % (k, d.get(k), want.get(k)))
    sys.exit(1)
print('%d program arguments round-trip' % len(d['ProgramArguments']))
PY
then
	ok "plistlib: exactly the documented keys, values round-trip ($(cat "$WORK/py"))"
else
	not_ok "plistlib round-trip"
	sed 's/^/# /' "$WORK/py"
fi
if grep -q 'RunAtLoad\|KeepAlive\|<integer>' "$plist"; then
	not_ok "plist has RunAtLoad, KeepAlive or an integer"
else
	ok "no RunAtLoad, KeepAlive or integer values"
fi
if grep -q setenv "$WORK/commands"; then not_ok "commands mention setenv"; else ok "never launchctl setenv"; fi

# Stand-ins for the macOS tools: they record their arguments.
fake=$WORK/fakebin
mkdir -p "$fake"
cat >"$fake/launchctl" <<'SH'
#!/bin/sh
printf '%s\n' "launchctl $#" "$@" >>"$FAKE_LOG"
SH
cat >"$fake/plutil" <<'SH'
#!/bin/sh
printf '%s\n' "plutil $#" "$@" >>"$FAKE_LOG"
python3 -c 'import plistlib,sys; plistlib.load(open(sys.argv[1],"rb"))' "$2" && echo "$2: OK"
SH
cat >"$fake/id" <<'SH'
#!/bin/sh
[ "$1" = -u ] && echo 501
SH
chmod +x "$fake"/*
FAKE_LOG=$WORK/fake.log PATH="$fake:$PATH" sh "$WORK/commands" >"$WORK/cmd.out" 2>&1
rc=$?
printf '%s\n' "plutil 2" -lint "$plist" \
	"launchctl 3" bootstrap gui/501 "$plist" \
	"launchctl 3" kickstart -k "gui/501/$label" \
	"launchctl 2" print "gui/501/$label" \
	"launchctl 2" bootout "gui/501/$label" >"$WORK/fake.want"
if [ "$rc" -eq 0 ] && cmp -s "$WORK/fake.log" "$WORK/fake.want"; then
	ok "printed commands pass path and label intact: lint, bootstrap, kickstart -k, print, bootout"
else
	not_ok "printed commands (exit $rc)"
	diff "$WORK/fake.want" "$WORK/fake.log" | sed 's/^/# /'
	sed 's/^/# /' "$WORK/cmd.out"
fi
if [ ! -e "$plist" ]; then ok "rollback removed the plist"; else not_ok "plist still there after rollback"; fi

# Without -o: plist on stdout, commands (with a save hint) on stderr.
expect_code 0 "launchagent to stdout" \
	"$SHIMBENCH" shim launchagent --label "$label" --program /usr/bin/true \
	--library /opt/l.dylib --family-max 01009 --threadgroup-memory 032768
# Leading zeros are dropped: the shim parses like strtoull(..., 0), so
# "01009" would be (invalid) octal there.
check "stdout is a plist with canonical decimal values" python3 -c 'import plistlib,sys; e=plistlib.load(open(sys.argv[1],"rb"))["EnvironmentVariables"]; assert e["LUME_METAL_APPLE_FAMILY_MAX"]=="1009" and e["LUME_METAL_MAX_THREADGROUP_MEMORY"]=="32768" and "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE" not in e, e' "$WORK/out"
grep_in "$WORK/err" "Save the property list as \"\$HOME\"/Library/LaunchAgents/'$label'.plist first." "save hint on stderr"

# Refusals: exit 2, the bad argument named, no file written.
bad() {
	local title=$1 msg=$2
	shift 2
	rm -f "$WORK/bad.plist"
	if expect_code 2 "$title" "$SHIMBENCH" shim launchagent -o "$WORK/bad.plist" "$@"; then
		grep_in "$WORK/err" "$msg" "$title: message"
		[ ! -e "$WORK/bad.plist" ] && ok "$title: no file" || not_ok "$title: file written"
	fi
}
base=(--label "$label" --program /usr/bin/true --library /opt/l.dylib)
bad "control character in an argument" "program argument 2 contains U+0001" \
	"${base[@]}" --family-max 1009 -- ok $'bad\001arg'
bad "family 2000" "--family-max 2000 is out of range [1001, 1999]" \
	"${base[@]}" --family-max 2000
bad "family 1000" "--family-max 1000 is out of range" "${base[@]}" --family-max 1000
bad "family in hex" "--family-max '0x3f1' is not a whole number" "${base[@]}" --family-max 0x3f1
bad "label with a slash" "invalid --label 'a/b'" \
	--label a/b --program /usr/bin/true --library /opt/l.dylib --family-max 1009
bad "relative program" "--program 'llama-server' must be an absolute path" \
	--label x --program llama-server --library /opt/l.dylib --family-max 1009
bad "library list" "contains ':'" \
	--label x --program /p --library /a.dylib:/b.dylib --family-max 1009
bad "missing --family-max" "are required" "${base[@]}"
bad "argument without --" "unexpected argument 'stray' (program arguments go after --)" \
	"${base[@]}" --family-max 1009 stray
bad "option without its value" "--family-max needs N" \
	"${base[@]}" --family-max
bad "negative working set" "--working-set -1 is out of range" \
	"${base[@]}" --family-max 1009 --working-set -1
bad "invalid UTF-8" "program argument 1 is not valid UTF-8" \
	"${base[@]}" --family-max 1009 -- $'\xff'

# After --, everything is the program's, --help and -o included.
expect_code 0 "options after -- are program arguments" \
	"$SHIMBENCH" shim launchagent "${base[@]}" --family-max 1009 -- --help -o x
check "--help and -o reach ProgramArguments" python3 -c 'import plistlib,sys; a=plistlib.load(open(sys.argv[1],"rb"))["ProgramArguments"]; assert a==["/usr/bin/true","--help","-o","x"], a' "$WORK/out"
test_done
