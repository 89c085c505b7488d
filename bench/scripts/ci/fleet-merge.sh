#!/bin/sh
# CI step (fleet): every host's bundle into one store, then a report and
# the gate per host, and one verdict for the fleet.
#
#   sh bench/scripts/ci/fleet-merge.sh DIR
#
# DIR is where the hosts' bundle artifacts were downloaded
# (actions/download-artifact with pattern shimbench-bundle-*: one
# directory per artifact, DIR/shimbench-bundle-HOST/...). Every directory
# under DIR that holds a bundle.json is imported into
# $SHIMBENCH_STATE/store.db in one transaction: all or none, checksums
# verified, a bundle already stored named and not counted twice. Then, per
# host: its report ($SHIMBENCH_STATE/fleet/HOST.md) and gate.sh on its
# session (SHIMBENCH_GATE_FALLBACK defaults to none here: a host is gated
# against its own fingerprint with another OS build, i.e. across a macOS
# update). The step summary gets one table of the hosts' verdicts.
# Exit: 1 when a host regressed, 3 on an error, else 0 (inconclusive and
# no-baseline hosts are neutral). Outputs: sessions, verdict.
. "$(dirname "$0")/lib.sh"
dir=${1:?usage: fleet-merge.sh DIR}
fleet=$STATE/fleet
mkdir -p "$fleet" || exit 3

find "$dir" -name bundle.json -type f | sed 's|/bundle.json$||' | sort >"$fleet/bundles.txt"
if [ ! -s "$fleet/bundles.txt" ]; then
	ci_annotate error "fleet" "no bundle (bundle.json) under '$dir'"
	exit 3
fi
set --
while IFS= read -r b; do set -- "$@" "$b"; done <"$fleet/bundles.txt"
say "importing $# bundles into $DB"
"$SHIMBENCH" --db "$DB" import "$@" >"$fleet/import.txt"
rc=$?
cat "$fleet/import.txt"
if [ "$rc" -ne 0 ]; then
	ci_annotate error "fleet" "import refused the bundles (exit $rc): nothing was stored"
	exit "$rc"
fi

# host of a bundle: the directory under DIR, without the artifact prefix.
host_of() {
	rel=${1#"$dir"/}
	h=${rel%%/*}
	[ "$h" = "$rel" ] && h=$(basename "$1")
	ci_label "${h#shimbench-bundle-}"
}

worst=pass
sessions=
{
	echo "### shimbench fleet: $(wc -l <"$fleet/bundles.txt" | tr -d ' ') hosts"
	echo
	echo "| host | session | verdict | baseline |"
	echo "| --- | --: | --- | --- |"
} >"$fleet/summary.md"
while IFS= read -r b; do
	host=$(host_of "$b")
	sid=$(grep -F "'$b'" "$fleet/import.txt" | sed -n 's/.* as session \([0-9][0-9]*\).*/\1/p' | head -n 1)
	if [ -z "$sid" ]; then
		ci_annotate error "fleet" "no session for '$b' in the import's answer"
		worst=error
		continue
	fi
	sessions="$sessions $sid"
	"$SHIMBENCH" --db "$DB" --quiet report --select "session=$sid" -o "$fleet/$host.md" ||
		worst=error
	outs=$fleet/gate-$host.outputs
	: >"$outs"
	GITHUB_OUTPUT=$outs SHIMBENCH_GATE_OUT=$fleet/gate-$host \
		SHIMBENCH_GATE_FALLBACK=${SHIMBENCH_GATE_FALLBACK:-none} \
		sh "$ci_top/bench/scripts/ci/gate.sh" "session=$sid"
	verdict=$(sed -n 's/^verdict=//p' "$outs" | tail -n 1)
	baseline=$(sed -n 's/^baseline=//p' "$outs" | tail -n 1)
	echo "| $host | $sid | ${verdict:-error} | ${baseline:--} |" >>"$fleet/summary.md"
	case "${verdict:-error}" in
	regression) [ "$worst" = error ] || worst=regression ;;
	error) worst=error ;;
	inconclusive|no-baseline) [ "$worst" = pass ] && worst=neutral ;;
	esac
done <"$fleet/bundles.txt"
"$SHIMBENCH" --db "$DB" --quiet report -o "$fleet/report.md" &&
"$SHIMBENCH" --db "$DB" --quiet report --format html -o "$fleet/report.html" ||
	ci_annotate warning "fleet" "the fleet report could not be written"
echo >>"$fleet/summary.md"
echo "Fleet verdict: **$worst**" >>"$fleet/summary.md"
cat "$fleet/summary.md"
ci_summary <"$fleet/summary.md"
ci_output sessions "${sessions# }"
ci_output verdict "$worst"
case "$worst" in
regression) exit 1 ;;
error) exit 3 ;;
esac
exit 0
