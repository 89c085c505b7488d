#!/bin/sh
# Prepares what the Vulkan study needs on a GPU machine that can reach no
# package archive and builds nothing (bench/scripts/vulkan-study.sh with
# NVIDIA_ROOT set), from this machine (Debian, x86-64, network):
#
#   sh bench/scripts/vulkan-carry.sh        then copy these to the GPU machine:
#
#   build/shimbench                  the harness (make)
#   build/shim/vulkan                the shim and its probe (make shim)
#   build/gpu-carry/debs             the Vulkan prefix's .debs and closure
#                                    (llama-bench.sh --vulkan --download-only)
#   build/gpu-carry/lib              shimbench's libraries that a machine of
#                                    another distribution may lack (cJSON,
#                                    SQLite, libcrypto)
#
# vulkan-study.sh picks build/gpu-carry up by itself. It prints the sizes.
set -eu
top=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd -P)
cd "$top"
dest=build/gpu-carry
say() { echo "vulkan-carry: $*"; }

make -s
make -s -C shim/vulkan
sh bench/scripts/llama-bench.sh --vulkan --download-only
rm -rf "$dest"
mkdir -p "$dest/debs" "$dest/lib"
cp .llama/debs/closure-vulkan.txt .llama/debs/closure-vulkan.roots "$dest/debs/"
while read -r f; do
	cp ".llama/debs/$f" "$dest/debs/"
done <.llama/debs/closure-vulkan.txt
# Every library shimbench links except the C library's own.
ldd build/shimbench | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
while read -r name path; do
	case $name in
	libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|ld-linux*) continue ;;
	esac
	cp -L "$path" "$dest/lib/$name"
done
say "$(ls "$dest/lib" | tr '\n' ' ')"
du -sh build/shimbench build/shim/vulkan "$dest/debs" "$dest/lib" | sed 's/^/vulkan-carry:   /'
say "carry: build/shimbench build/shim/vulkan build/gpu-carry (and the glvnd .debs)"
