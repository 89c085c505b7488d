#!/bin/bash
# Remote targets: ssh against a real OpenSSH server on loopback, and the
# lume and tart transports through test doubles that follow the tools'
# documented behaviour (bench/t/fixtures/doubles/). The "remote" machine is
# this one, so the real llama-bench runs on the far side.
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
if [ ! -x "$LB" ]; then
	skip "remote targets: the real llama-bench is not provisioned"
	test_done; exit $?
fi
LIB=$T_BUILD/t/helpers/libmarker.so
LIBSHA=$(sha256sum "$LIB" | cut -d' ' -f1)
MODEL="$WORK/it's a model.gguf"
expect_code 0 "synthesize the tiny model" "$SHIMBENCH" models synth tiny -o "$MODEL"
ARGS='"llama_bench":{"args":["-p","32","-n","8","-r","3","-t","2"]}'
MJSON=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$MODEL")

# --- ssh: a real sshd on a free loopback port, key authentication only.
if [ ! -x "$SSHD" ] || [ "$(id -u)" != 0 ]; then
	skip "ssh: needs sshd (openssh-server) and root to run it"
else
	mkdir -p /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f "$WORK/hostkey"
	ssh-keygen -q -t ed25519 -N '' -f "$WORK/userkey"
	cp "$WORK/userkey.pub" "$WORK/authorized_keys"
	chmod 600 "$WORK/authorized_keys"
	PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$WORK/sshd_config" <<CONF
Port $PORT
ListenAddress 127.0.0.1
HostKey $WORK/hostkey
AuthorizedKeysFile $WORK/authorized_keys
PidFile $WORK/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers $(id -un)
CONF
	"$SSHD" -f "$WORK/sshd_config" -D -e 2>"$WORK/sshd.log" &
	SSHD_PID=$!
	trap 'kill $SSHD_PID 2>/dev/null; rm -rf "$WORK"' EXIT
	SSHOPTS="\"-i\",\"$WORK/userkey\",\"-o\",\"UserKnownHostsFile=$WORK/known_hosts\",\"-o\",\"StrictHostKeyChecking=accept-new\",\"-o\",\"IdentitiesOnly=yes\""
	for _ in $(seq 50); do
		ssh -o BatchMode=yes -i "$WORK/userkey" -o UserKnownHostsFile="$WORK/known_hosts" \
			-o StrictHostKeyChecking=accept-new -p "$PORT" "$(id -un)@127.0.0.1" true 2>/dev/null && break
		sleep 0.2
	done
	cat >"$WORK/ssh.json" <<JSON
{"models":[{"name":"tiny","path":$MJSON}],
 "targets":{"far":{"transport":"ssh","host":"127.0.0.1","port":$PORT,"user":"$(id -un)",
                   "ssh_options":[$SSHOPTS],"llama_bench":"$LB"}},
 "variants":[
   {"name":"plain","target":"far","role":"stock","env":{"NOTE":"\$(touch $WORK/pwned) 'q' \"dq\""}},
   {"name":"preload","target":"far","role":"shim",
    "inject":{"library":"$LIB","sha256":"$LIBSHA"},
    "expect":["[shimbench-test-preload] Enabled for"]}],
 $ARGS, "order":"grouped"}
JSON
	expect_code 0 "run over ssh" "$SHIMBENCH" --db "$WORK/ssh.db" run --bundle "$WORK/bssh" "$WORK/ssh.json"
	grep_in "$WORK/err" "on target 'far'" "model verified on the ssh target"
	v() { sqlite3 "$WORK/ssh.db" "$1"; }
	[ "$(v "select count(*) from runs where status='ok'")" = 2 ] && ok "2 runs over ssh" || not_ok "ssh runs: $(v 'select status from runs')"
	[ "$(v "select verification from runs where variant='preload'")" = verified ] \
		&& ok "injection verified from the remote stderr" || not_ok "preload not verified"
	v "select fingerprint_json from environments" | grep -q '"os_name":"Debian' \
		&& ok "fingerprint probed over ssh" || not_ok "no remote fingerprint"
	check "nothing in a variable's value ran in the remote shell" test ! -e "$WORK/pwned"
	check "stdout came back alone (valid jsonl)" python3 -c "
import json, glob
for f in glob.glob('$WORK/bssh/runs/*.jsonl'):
    for line in open(f):
        json.loads(line)"
	sed "s/\"sha256\":\"$LIBSHA\"/\"sha256\":\"$(printf '0%.0s' $(seq 64))\"/" "$WORK/ssh.json" >"$WORK/ssh-bad.json"
	expect_code 1 "library hash checked on the ssh target" "$SHIMBENCH" --db "$WORK/ssh.db" run "$WORK/ssh-bad.json"
	grep_in "$WORK/err" "refusing to run" "refused before any benchmark"
fi

# --- lume: one merged buffer after exit, split back into two streams.
export PATH="$FIXTURES/doubles:$PATH"
export FAKE_LUME_VMS="macos-tahoe" FAKE_TART_VMS="runner"
cat >"$WORK/lume.json" <<JSON
{"models":[{"name":"tiny","path":$MJSON}],
 "targets":{"guest":{"transport":"lume","vm":"macos-tahoe","user":"lume","llama_bench":"$LB"}},
 "variants":[{"name":"shim","target":"guest","role":"shim",
    "inject":{"library":"$LIB","sha256":"$LIBSHA"},
    "expect":["[shimbench-test-preload] Enabled for"]}],
 $ARGS}
JSON
expect_code 0 "run through lume ssh" "$SHIMBENCH" --db "$WORK/lume.db" run --bundle "$WORK/blume" "$WORK/lume.json"
[ "$(sqlite3 "$WORK/lume.db" "select status || ' ' || verification from runs")" = "ok verified" ] \
	&& ok "lume run ok and verified" || not_ok "lume: $(sqlite3 "$WORK/lume.db" 'select status, verification, error from runs')"
check "the marker landed in the stderr file" grep -q "shimbench-test-preload" "$WORK"/blume/runs/*.stderr
check "and not in the jsonl" sh -c "! grep -q 'shimbench-test-preload' \"$WORK\"/blume/runs/*.jsonl"
check "no separator left in either file" sh -c "! grep -q 'shimbench-stderr-follows' \"$WORK\"/blume/runs/*"
check "lume's own log lines kept off stdout" sh -c "! grep -q 'INFO: Executing' \"$WORK\"/blume/runs/*.jsonl"
sed 's/"vm":"macos-tahoe"/"vm":"stopped-vm"/' "$WORK/lume.json" >"$WORK/lume-off.json"
expect_code 3 "a stopped VM: environment failure" "$SHIMBENCH" --db "$WORK/lume.db" run "$WORK/lume-off.json"
grep_in "$WORK/err" "is not running" "lume's reason is shown"

# --- tart: argv passed unchanged, streams separate.
cat >"$WORK/tart.json" <<JSON
{"models":[{"name":"tiny","path":$MJSON}],
 "targets":{"ci":{"transport":"tart","vm":"runner","llama_bench":"$LB"}},
 "variants":[{"name":"plain","target":"ci","role":"bare-metal"}],
 $ARGS}
JSON
expect_code 0 "run through tart exec" "$SHIMBENCH" --db "$WORK/tart.db" run --bundle "$WORK/btart" "$WORK/tart.json"
[ "$(sqlite3 "$WORK/tart.db" "select status from runs")" = ok ] && ok "tart run ok" || not_ok "tart run"
echo '{"models":[{"name":"t","path":"/x"}],"targets":{"g":{"transport":"lume"}},"variants":[{"name":"v","target":"g"}]}' >"$WORK/novm.json"
expect_code 2 "lume target without a vm" "$SHIMBENCH" run "$WORK/novm.json"
grep_in "$WORK/err" "uses lume and needs 'vm'" "says what is missing"
test_done
