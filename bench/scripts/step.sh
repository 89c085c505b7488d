#!/bin/sh
# step.sh NAME CMD...: one line for a build step of `make demo`: CMD's
# output goes to build/logs/NAME.log; the line says ok and how long it
# took, or, when CMD fails, the last lines of the log and where it is.
# (A first run's 68 provisioning lines and 60 compiler lines buried the
# demo's own results; issue 22.)
set -u
name=$1
shift
logs=${BUILD:-build}/logs
mkdir -p "$logs"
log=$logs/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_').log
start=$(date +%s)
printf '%-22s ' "$name:"
if "$@" >"$log" 2>&1; then
	last=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1 | cut -c1-100)
	echo "ok ($(( $(date +%s) - start )) s)${last:+ · $last}"
	exit 0
else
	rc=$?
	echo "FAILED (exit $rc); the end of $log:"
	tail -n 20 "$log" | sed 's/^/  /'
	exit "$rc"
fi
