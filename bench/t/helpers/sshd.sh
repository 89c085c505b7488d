# A real OpenSSH server on a free loopback port, key authentication only,
# for the tests of ssh, scp and the VM transports. Source it after lib.sh;
# then `start_sshd` (returns 1 when sshd cannot run here: no sshd or not
# root) sets
#   SSHD_PORT       the port
#   SSH_KEY         the client's private key
#   SSH_OPTS        ssh/scp options as a JSON array body for a plan's
#                   ssh_options (port, key, a private known_hosts file,
#                   a shared master connection: SSH_MUX)
# and replaces the EXIT trap with one that also stops the server and its
# master connections (stop_sshd).
SSHD_PID=
# Ends the shared master connections, then the server.
stop_sshd() {
	local sock
	for sock in "$WORK"/cm-*; do
		[ -S "$sock" ] && ssh -o ControlPath="$sock" -O exit sshd-test 2>/dev/null
	done
	[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null
}
start_sshd() {
	local sshd
	sshd=$(command -v sshd || echo /usr/sbin/sshd)
	[ -x "$sshd" ] && [ "$(id -u)" = 0 ] || return 1
	mkdir -p /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f "$WORK/sshd-hostkey"
	ssh-keygen -q -t ed25519 -N '' -f "$WORK/sshd-userkey"
	cp "$WORK/sshd-userkey.pub" "$WORK/sshd-authorized_keys"
	chmod 600 "$WORK/sshd-authorized_keys"
	SSHD_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$WORK/sshd_config" <<CONF
Port $SSHD_PORT
ListenAddress 127.0.0.1
HostKey $WORK/sshd-hostkey
AuthorizedKeysFile $WORK/sshd-authorized_keys
PidFile $WORK/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers $(id -un)
Subsystem sftp internal-sftp
CONF
	"$sshd" -f "$WORK/sshd_config" -D -e 2>"$WORK/sshd.log" &
	SSHD_PID=$!
	trap 'stop_sshd; rm -rf "$WORK"' EXIT
	SSH_KEY=$WORK/sshd-userkey
	# One master connection carries the test's many short commands.
	SSH_MUX="\"-o\",\"ControlMaster=auto\",\"-o\",\"ControlPath=$WORK/cm-%C\",\"-o\",\"ControlPersist=20\""
	SSH_OPTS="\"-o\",\"Port=$SSHD_PORT\",\"-i\",\"$SSH_KEY\",\"-o\",\"UserKnownHostsFile=$WORK/sshd-known_hosts\",\"-o\",\"StrictHostKeyChecking=accept-new\",\"-o\",\"IdentitiesOnly=yes\",$SSH_MUX"
	for _ in $(seq 50); do
		ssh -o BatchMode=yes -i "$SSH_KEY" -o UserKnownHostsFile="$WORK/sshd-known_hosts" \
			-o StrictHostKeyChecking=accept-new -p "$SSHD_PORT" "$(id -un)@127.0.0.1" true 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}
