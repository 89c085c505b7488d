#!/bin/bash
# GPU runs of llama-bench through `shimbench run` with Debian's Vulkan
# backend (the figures in bench/BENCHMARKS.md, "GPU runs"). Run it from the
# repository root on a Linux machine with an NVIDIA GPU:
#
#   NVIDIA_ROOT=DIR [GL_DEBS=DIR] bench/scripts/gpu-vulkan.sh OUTDIR [tinyllama|gemma3-12b]
#
# NVIDIA_ROOT holds the driver's lib64/ and share/vulkan/icd.d/nvidia_icd.json.
# The NVIDIA Vulkan driver needs the glvnd libraries in the system library
# path: when they are missing, GL_DEBS names a directory of Debian .debs
# (libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2) that
# are unpacked into / (root only; meant for a throw-away machine). A
# shimbench built elsewhere needs its libraries there (cJSON, SQLite,
# libcrypto): put copies in a directory named by LD_LIBRARY_PATH.
set -eu
out=${1:?usage: NVIDIA_ROOT=DIR gpu-vulkan.sh OUTDIR [tinyllama|gemma3-12b]}
which=${2:-tinyllama}
: "${NVIDIA_ROOT:?set NVIDIA_ROOT to the root directory of the driver}"
bin=${SHIMBENCH:-build/shimbench}
if [ -n "${GL_DEBS:-}" ]; then
	for f in "$GL_DEBS"/*.deb; do dpkg -x "$f" /; done
	ldconfig
fi
sh bench/scripts/llama-bench.sh --vulkan
export VK_DRIVER_FILES=$NVIDIA_ROOT/share/vulkan/icd.d/nvidia_icd.json
export SHIMBENCH_EXTRA_LIBRARY_PATH=$NVIDIA_ROOT/lib64
export SHIMBENCH_DB=$out/gpu.db
mkdir -p "$out"
lb=$PWD/.llama/vulkan/bin/llama-bench
"$lb" --list-devices 2>/dev/null
case $which in
tinyllama)
	model=$out/tinyllama-q4km.gguf
	[ -f "$model" ] || "$bin" models synth tinyllama-1.1b --quantize Q4_K_M -o "$model"
	variants='{"name":"vulkan-gpu","target":"gpu","role":"bare-metal","expect":["ggml_vulkan: 0 = "]},
	  {"name":"gpu-hidden","target":"gpu","role":"stock","env":{"VK_DRIVER_FILES":"/nonexistent/icd.json"}}'
	k=3 ;;
gemma3-12b)
	model=$out/gemma3-12b-q4_0.gguf
	[ -f "$model" ] || "$bin" models synth gemma3-12b --quantize Q4_0 -o "$model"
	variants='{"name":"vulkan-gpu","target":"gpu","role":"bare-metal","expect":["ggml_vulkan: 0 = "]}'
	k=2 ;;
*) echo "gpu-vulkan.sh: unknown model '$which'" >&2; exit 2 ;;
esac
cat >"$out/plan-$which.json" <<JSON
{"name":"Vulkan GPU: $which",
 "models":[{"name":"synth-$which","path":"$model"}],
 "targets":{"gpu":{"transport":"local","llama_bench":"$lb"}},
 "variants":[$variants],
 "llama_bench":{"args":["-p","512","-n","128","-r","10","-t","8"]},
 "processes":$k, "order":"interleaved", "seed":2026, "timeout":300}
JSON
"$bin" run --bundle "$out/bundle-$which" "$out/plan-$which.json"
