#!/bin/sh
# The Vulkan capability study through `shimbench run` (bench/plans/
# vulkan-study.json): llama-bench on the bare device, under the Vulkan
# capability shim's stock profile, under its shim profile, and with
# ggml's own GGML_VK_DISABLE_* switches as a cross-check of stock; every
# run's markers and each variant's probe verified. Run it from anywhere:
#
#   bench/scripts/vulkan-study.sh OUTDIR                     lavapipe (no GPU)
#   NVIDIA_ROOT=DIR [GL_DEBS=DIR] bench/scripts/vulkan-study.sh OUTDIR
#                                                            an NVIDIA GPU
#
# OUTDIR gets: plan.json (the plan as run, the library pinned), devices.txt
# (llama-bench --list-devices), warmup.db and warmup/ (one process per
# variant first: each new pipeline set compiles its shaders in its first
# process, so those are run and kept apart, never part of the figures),
# study.db and bundle/ (the study: its evidence bundle, importable with
# `shimbench import`), summary.md (the report, the comparisons, the
# verification of every run, the goal) and log.txt.
#
# lavapipe: Mesa's Vulkan on the CPU from Debian sid (`llama-bench.sh
# --lavapipe`), the tiny synthetic model, -p 64 -n 16 -r 5: the mechanism,
# not the speed (lavapipe emulates cooperative matrices; its speed
# direction is no guide to a GPU's).
#
# GPU: NVIDIA_ROOT holds the driver's lib64/ and
# share/vulkan/icd.d/nvidia_icd.json; GL_DEBS, when set, is a directory of
# .debs (libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
# unpacked into / first (root, a throw-away machine): NVIDIA's driver needs
# glvnd in the system's library path. The TinyLlama-shape Q4_K_M model is
# synthesized there (models/, once), -p 512 -n 128 -r 10. Nothing needs
# the network when build/ holds shimbench, build/shim/vulkan and
# build/gpu-carry (its .debs seed .llama/debs, its lib/ goes on
# LD_LIBRARY_PATH), all made by bench/scripts/vulkan-carry.sh on a
# machine with the network.
#
# Environment: VULKAN_STUDY_MODEL (a manifest name: synth-tiny or
# synth-tinyllama-1.1b-q4_k_m), VULKAN_STUDY_ARGS ("-p 512 -n 128 -r 10"),
# VULKAN_STUDY_PROCESSES (3) override the defaults above;
# VULKAN_STUDY_PLAN=bench/plans/vulkan-ablation.json runs the capability
# ablation instead (bare, stock, shim and a shim variant per capability
# hidden; summary.md then holds its table, cost in % of bare); SHIMBENCH names
# the binary (default build/shimbench). Exit: shimbench run's (0 every run
# ok and verified, 1 a run failed or was not verified), 2 usage, 3 a
# missing tool or file.
set -eu

usage() {
	sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-2}"
}
case "${1:-}" in -h|--help) usage 0 ;; "") usage 2 ;; esac
[ $# -eq 1 ] || usage 2
out=$1
top=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd -P)
fail() { echo "vulkan-study: error: $*" >&2; exit 3; }
say() { echo "vulkan-study: $*"; }

mkdir -p "$out"
out=$(CDPATH='' cd -- "$out" && pwd -P)
cd "$top"
bin=${SHIMBENCH:-$top/build/shimbench}
src=${VULKAN_STUDY_PLAN:-bench/plans/vulkan-study.json}
case $src in
bench/plans/vulkan-study.json|bench/plans/vulkan-ablation.json) ;;
*) fail "VULKAN_STUDY_PLAN='$src': bench/plans/vulkan-study.json or bench/plans/vulkan-ablation.json" ;;
esac
[ -x "$bin" ] || fail "'$bin' not found; run make"
so=build/shim/vulkan/libVulkanCapabilities.so
probe=build/shim/vulkan/vulkan-capabilities
exec 3>&1
log() { tee -a "$out/log.txt" >&3; }
: >"$out/log.txt"
# step TITLE CMD...: runs CMD with its output in log.txt; fails with TITLE.
step() {
	t=$1
	shift
	"$@" >>"$out/log.txt" 2>&1 || { tail -n 15 "$out/log.txt" >&2; fail "$t failed (see $out/log.txt)"; }
}

# ---- the device: an NVIDIA GPU, or lavapipe ----------------------------------

if [ -n "${NVIDIA_ROOT:-}" ]; then
	mode=gpu
	if [ -n "${GL_DEBS:-}" ]; then
		for f in "$GL_DEBS"/*.deb; do dpkg -x "$f" /; done
		ldconfig
	fi
	# What bench/scripts/vulkan-carry.sh prepared elsewhere: the
	# prefix's .debs, and shimbench's libraries.
	carry=$top/build/gpu-carry
	if [ -f "$carry/debs/closure-vulkan.txt" ]; then
		mkdir -p .llama/debs
		cp "$carry"/debs/* .llama/debs/
	fi
	if [ -d "$carry/lib" ]; then
		LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		export LD_LIBRARY_PATH
	fi
	step "provisioning llama-bench --vulkan" sh bench/scripts/llama-bench.sh --vulkan
	icd=$NVIDIA_ROOT/share/vulkan/icd.d/nvidia_icd.json
	[ -f "$icd" ] || fail "no '$icd' (NVIDIA_ROOT is the driver's root directory)"
	export VK_DRIVER_FILES="$icd"
	export SHIMBENCH_EXTRA_LIBRARY_PATH="$NVIDIA_ROOT/lib64"
	model=${VULKAN_STUDY_MODEL:-synth-tinyllama-1.1b-q4_k_m}
	args=${VULKAN_STUDY_ARGS:--p 512 -n 128 -r 10}
else
	mode=lavapipe
	step "provisioning llama-bench --lavapipe" sh bench/scripts/llama-bench.sh --lavapipe
	export VK_DRIVER_FILES="$top/.llama/vulkan/prefix/usr/share/vulkan/icd.d/lvp_icd.json"
	model=${VULKAN_STUDY_MODEL:-synth-tiny}
	args=${VULKAN_STUDY_ARGS:--p 64 -n 16 -r 5}
	# builds need no network once the Vulkan prefix is there
	[ -f "$so" ] && [ -f "$probe" ] || step "make -C shim/vulkan" make -s -C shim/vulkan
fi
procs=${VULKAN_STUDY_PROCESSES:-3}
# The arguments go into the plan's JSON: words of safe characters only.
case $args in *[!A-Za-z0-9\ ._,-]*|'') fail "VULKAN_STUDY_ARGS='$args': llama-bench words of letters, digits and . _ , - only" ;; esac
case $procs in ''|*[!0-9]*|0) fail "VULKAN_STUDY_PROCESSES='$procs' is not a count" ;; esac
[ -f "$so" ] && [ -f "$probe" ] ||
	fail "'$so' or '$probe' missing; run make shim (on a machine with the Vulkan headers)"
# Nothing inherited may change what a variant sees: each sets its own.
for v in $(env | sed -n 's/^\(GGML_VK_[A-Z0-9_]*\)=.*/\1/p; s/^\(VULKAN_CAPS_[A-Z_]*\)=.*/\1/p'); do
	unset "$v"
done

# ---- the model -----------------------------------------------------------------

case $model in
synth-tiny) shape=tiny; quant= ;;
synth-tinyllama-1.1b-q4_k_m) shape=tinyllama-1.1b; quant=Q4_K_M ;;
*) fail "VULKAN_STUDY_MODEL='$model': synth-tiny or synth-tinyllama-1.1b-q4_k_m" ;;
esac
mfile=models/$model.gguf
if [ ! -f "$mfile" ]; then
	say "synthesizing $mfile" | log
	if [ -n "$quant" ]; then
		step "models synth" env LLAMA_QUANTIZE="$top/.llama/vulkan/bin/llama-quantize" \
			"$bin" models synth "$shape" --quantize "$quant" -o "$mfile"
	else
		step "models synth" "$bin" models synth "$shape" -o "$mfile"
	fi
fi

# ---- the plans: the study's, and its one-process warm-up ---------------------

# The committed plan with this run's model, arguments and process count;
# each substitution must hit exactly one line of it.
json_args=$(printf '%s\n' $args | sed 's/.*/"&"/' | paste -sd, - | sed 's/,/, /g')
make_plan() {
	for pat in '"name": "synth-tinyllama-1.1b-q4_k_m"' \
		'"llama_bench": { "args": \["-p", "512", "-n", "128", "-r", "10"\] },' \
		'"processes": 3,'; do
		[ "$(grep -c -- "$pat" "$src")" = 1 ] ||
			fail "$src changed shape: no single line matching '$pat'"
	done
	sed -e "s/\"name\": \"synth-tinyllama-1.1b-q4_k_m\"/\"name\": \"$model\"/" \
	    -e "s/\"args\": \[\"-p\", \"512\", \"-n\", \"128\", \"-r\", \"10\"\]/\"args\": [$2]/" \
	    -e "s/\"processes\": 3,/\"processes\": $3,/" "$src" >"$1"
	"$bin" shim pin "$1" stock "$so" >/dev/null
	"$bin" shim pin "$1" shim "$so" >/dev/null
}
make_plan "$out/plan.json" "$json_args" "$procs"
warm_args=$(printf '%s\n' $args | awk 'p { $0 = "1"; p = 0 } $0 == "-r" { p = 1 } 1' |
	sed 's/.*/"&"/' | paste -sd, - | sed 's/,/, /g')
make_plan "$out/warmup-plan.json" "$warm_args" 1

GGML_VK_VISIBLE_DEVICES=0 .llama/vulkan/bin/llama-bench --list-devices 2>&1 |
	grep -E '^ggml_vulkan: [0-9]|^Available devices|^ +[A-Za-z]+[0-9]+: ' >"$out/devices.txt" || true
say "mode $mode, model $model, llama-bench $args, $procs processes per variant" | log
sed 's/^/vulkan-study:   /' "$out/devices.txt" | log
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
say "load average before: $load_before" | log

rm -rf "$out/warmup" "$out/warmup.db" "$out/bundle" "$out/study.db"
say "warm-up: one process per variant (kept apart in warmup.db)" | log
"$bin" --db "$out/warmup.db" --quiet run --bundle "$out/warmup" \
	"$out/warmup-plan.json" >"$out/warmup.txt" 2>&1 ||
	say "the warm-up session failed (see warmup.txt); the study runs anyway" | log

say "the study" | log
set +e
"$bin" --db "$out/study.db" run --bundle "$out/bundle" "$out/plan.json" \
	>"$out/study.txt" 2>"$out/study.err"
rc=$?
set -e
tail -n 20 "$out/study.err" | log
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# ---- the summary ---------------------------------------------------------------

sb() { "$bin" --db "$out/study.db" "$@"; }
{
	echo "# Vulkan capability $(grep -q '"ablate"' "$src" && echo ablation || echo study) ($mode)"
	echo
	echo "Model \`$model\`, \`llama-bench $args\`, $procs interleaved processes per"
	echo "variant (seed 2026), after a warm-up session of one process per variant."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after."
	echo "\`shimbench run\` exit status: $rc."
	echo
	echo '```'
	cat "$out/devices.txt"
	echo '```'
	echo
	echo "## Verification"
	echo
	n_v=$(sb sessions --show 1 --wide 2>/dev/null | grep -c '| verified ' || true)
	n_u=$(sb sessions --show 1 --wide 2>/dev/null | grep -c '| unverified ' || true)
	echo "$n_v runs verified, $n_u unverified."
	echo
	sb sessions --show 1 --wide 2>/dev/null || true
	echo
	echo "## Goal (prompt processing)"
	echo
	if [ "$mode" = lavapipe ]; then
		echo "The goal is the GPU's; lavapipe shows the mechanism, and its speed"
		echo "direction is no guide (it emulates cooperative matrices on the CPU)."
		echo
	fi
	sb report --format csv 2>/dev/null | awk -F, '
		NR > 1 && $(NF-6) ~ /^pp/ {
			r = $(NF-1) + 0; b = $NF + 0
			printf "- %s: shim / stock = %.2fx (goal >= 4x: %s); shim = %.1f %% of bare (goal >= 97 %%: %s)\n", \
			    $(NF-6), r, ((r >= 4) ? "met" : "NOT met"), b, ((b >= 97) ? "met" : "NOT met")
		}' || true
	echo
	echo "## Report"
	echo
	cat "$out/study.txt"
	if grep -q '"ablate"' "$src"; then
		echo
		sb report --ablation 2>&1 || true
	fi
	for pair in "stock shim" "bare shim" "stock ggml-switches"; do
		set -- $pair
		grep -q "\"name\": \"$2\"" "$src" || continue
		echo
		echo "## compare variant=$1 variant=$2"
		echo
		sb compare "variant=$1" "variant=$2" 2>&1 || true
	done
} >"$out/summary.md"
say "summary: $out/summary.md; exit $rc" | log
exit "$rc"
