#!/bin/sh
# Real A/A and slowdown data for the calibration figures and the OS-update
# test: two synthetic llama models whose tensor data differ by 15 % (the
# "tiny" shape widened: n_embd 512, 8 layers, n_ff 1536 vs 1869), run by
# the real llama-bench as K interleaved processes each (base, slow, base,
# slow, ...), written as raw bundles (llama-bench -o json files,
# SHA256SUMS, a mapping) that `shimbench import --mapping` ingests.
#
#   sh bench/scripts/calib-data.sh OUTDIR [K] [R] [-- LLAMA-BENCH ARGS]
#
# OUTDIR/base (OS build 24A100) and OUTDIR/slow (OS build 24A200): the
# same fingerprint but for the OS build, so `gate --baseline auto` pairs
# them. Defaults: K=5 processes per model, R=10 repetitions, -p 128 -n 32.
# CALIB_FIXTURE=1 keeps stderr out of the bundles (it names this
# machine's paths) and should be used with a relative OUTDIR, so that the
# model_filename llama-bench records is relative too: that is how the
# committed fixture bench/t/fixtures/os-update was recorded.
set -eu
out=${1:?usage: calib-data.sh OUTDIR [K] [R]}
K=${2:-5}
R=${3:-10}
top=$(cd "$(dirname "$0")/../.." && pwd)
lb=${LLAMA_BENCH:-$top/.llama/bin/llama-bench}
build=${SHIMBENCH_BUILD:-$top/build}
mkdir -p "$out/models" "$out/base" "$out/slow"
cc -std=c11 -O2 -I"$top/bench/src" -o "$out/models/synth-sized" \
	"$top/bench/scripts/synth-sized.c" "$build/obj/models/synth.o" \
	"$build/obj/models/gguf.o" "$build/obj/base/util.o" -lm
[ -f "$out/models/base.gguf" ] || "$out/models/synth-sized" "$out/models/base.gguf" 512 8 1536
[ -f "$out/models/slow.gguf" ] || "$out/models/synth-sized" "$out/models/slow.gguf" 512 8 1869
threads=$(nproc 2>/dev/null || echo 2)
i=1
while [ "$i" -le "$K" ]; do
	for m in base slow; do
		"$lb" -m "$out/models/$m.gguf" -p 128 -n 32 -r "$R" -t "$threads" -o json \
			>"$out/$m/run$i.json" 2>"$out/$m/run$i.stderr"
		[ "${CALIB_FIXTURE:-0}" = 1 ] && rm -f "$out/$m/run$i.stderr"
	done
	i=$((i + 1))
done
for m in base slow; do
	case $m in base) build_id=24A100 ;; slow) build_id=24A200 ;; esac
	(cd "$out/$m" && sha256sum run*.json $(ls run*.stderr 2>/dev/null) >SHA256SUMS)
	{
		printf '{\n  "shimbench_mapping": 1,\n  "label": "calibration data: %s model, OS build %s",\n' "$m" "$build_id"
		printf '  "environments": { "here": { "hw_model": "calib-host", "cpu_model": "%s", "cpu_cores": %s, "os_name": "Linux", "os_version": "sim-%s", "os_build": "%s", "is_vm": 1, "llama_build": "Debian" } },\n' \
			"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//; s/"//g')" "$threads" "$build_id" "$build_id"
		# No "sha256": the slow model stands in for a slower OS build of
		# the same workload. Pinned, the two hashes would make base and
		# slow two different workloads, which are never compared
		# (bench/t/fixtures/os-update/README.md).
		printf '  "models": { "calib": { "label": "calib 27M F16", "file": "%s.gguf" } },\n' "$m"
		printf '  "runs": ['
		sep=
		i=1
		while [ "$i" -le "$K" ]; do
			if [ "${CALIB_FIXTURE:-0}" = 1 ]; then errkey=""; else errkey="\"stderr\": \"run$i.stderr\", "; fi
			printf '%s\n    { "stdout": "run%s.json", %s"target": "here", "variant": "plain", "role": "bare-metal", "model": "calib", "argv": ["llama-bench", "-p", "128", "-n", "32", "-r", "%s", "-t", "%s", "-o", "json"] }' "$sep" "$i" "$errkey" "$R" "$threads"
			sep=,
			i=$((i + 1))
		done
		printf '\n  ]\n}\n'
	} >"$out/$m.mapping.json"
done
echo "wrote $out/base and $out/slow ($K processes of -r $R each)"
