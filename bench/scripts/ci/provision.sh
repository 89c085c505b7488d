#!/bin/sh
# CI step: the guests a plan runs in are up, and the plan can run.
#
#   sh bench/scripts/ci/provision.sh PLAN
#
#   SHIMBENCH_VMS       the VMs to start, as TOOL:VM words ("lume:macos-tahoe
#                       tart:runner"); empty: none
#   SHIMBENCH_VM_WAIT   seconds to wait for each to be ready (default 300)
#   SHIMBENCH_SHIM_DIR  optional: make shim's output directory; its dylib
#                       and probe are installed into the plan's shim variant
#                       (SHIMBENCH_SHIM_VARIANT, default "shim") and pinned.
#                       Leave it empty to keep the guest's installed shim and
#                       the plan's committed pin, which doctor then checks
#                       (a rebuilt shim with another hash would change the
#                       fingerprint every run and leave no baseline).
#
# Lume: `lume run VM --display none --vnc disabled --detach` unless `lume
# get` says it runs; ready when it is running with an ipAddress and
# sshAvailable. Tart: `tart run --no-graphics VM` in the background
# unless `tart list` says it runs; ready when `tart ip` answers and `tart
# exec VM true` works (the guest agent). Then `shimbench doctor PLAN`,
# whose lines go to the step summary; exit 3 when something is not ready.
. "$(dirname "$0")/lib.sh"
plan=${1:?usage: provision.sh PLAN}
wait_s=${SHIMBENCH_VM_WAIT:-300}
mkdir -p "$STATE" || exit 3

lume_ready() {
	j=$(LUME_LOG_LEVEL=error lume get "$1" -f json 2>/dev/null) || return 1
	printf '%s\n' "$j" | grep -q '"status" *: *"running"' &&
	printf '%s\n' "$j" | grep -q '"ipAddress" *: *"[^"]' &&
	printf '%s\n' "$j" | grep -q '"sshAvailable" *: *true'
}
lume_running() {
	LUME_LOG_LEVEL=error lume get "$1" -f json 2>/dev/null | grep -q '"status" *: *"running"'
}
tart_running() {
	tart list --format json 2>/dev/null | tr -d '\n' | tr '{' '\n' |
		grep "\"Name\" *: *\"$1\"" | grep -q '"Running" *: *true'
}
tart_ready() {
	tart ip "$1" >/dev/null 2>&1 && tart exec "$1" true >/dev/null 2>&1
}

for spec in ${SHIMBENCH_VMS:-}; do
	tool=${spec%%:*}; vm=${spec#*:}
	case "$tool" in
	lume)
		if lume_running "$vm"; then
			say "lume VM '$vm' is running"
		else
			say "starting lume VM '$vm'"
			lume run "$vm" --display none --vnc disabled --detach || exit 3
		fi
		ready=lume_ready ;;
	tart)
		if tart_running "$vm"; then
			say "tart VM '$vm' is running"
		else
			say "starting tart VM '$vm'"
			nohup tart run --no-graphics "$vm" >"$STATE/tart-$vm.log" 2>&1 &
		fi
		ready=tart_ready ;;
	*)
		say "SHIMBENCH_VMS: '$spec' is not lume:VM or tart:VM" >&2
		exit 2 ;;
	esac
	t=0
	until $ready "$vm"; do
		if [ "$t" -ge "$wait_s" ]; then
			ci_annotate error "provision" "$tool VM '$vm' not ready after ${wait_s}s"
			exit 3
		fi
		sleep 1
		t=$((t + 1))
	done
	say "$tool VM '$vm' is ready"
done

if [ -n "${SHIMBENCH_SHIM_DIR:-}" ]; then
	"$SHIMBENCH" shim install --probe "$SHIMBENCH_SHIM_DIR/metal-capabilities" "$plan" \
		"${SHIMBENCH_SHIM_VARIANT:-shim}" \
		"$SHIMBENCH_SHIM_DIR/LumeMetalCapabilities-arm64.dylib" || exit 3
fi

"$SHIMBENCH" --db "$DB" doctor "$plan" >"$STATE/doctor.txt" 2>&1
rc=$?
cat "$STATE/doctor.txt"
{
	echo "### shimbench doctor $plan"
	echo
	echo '```'
	cat "$STATE/doctor.txt"
	echo '```'
} | ci_summary
if [ "$rc" -ne 0 ]; then
	ci_annotate error "provision" "doctor: the plan's targets are not ready (exit $rc); see the step summary"
	exit "$rc"
fi
