#!/bin/sh
# make install: puts shimbench, its data files and links to the
# provisioned llama.cpp tools under PREFIX, then says how to reach it.
#
#   BIN=build/shimbench sh bench/scripts/install.sh DESTDIR PREFIX
#
#   PREFIX/bin/shimbench                     the binary
#   PREFIX/share/shimbench/manifest.json     models/manifest.json
#   PREFIX/share/shimbench/figures.json      evidence/published/figures.json
#   PREFIX/libexec/shimbench/llama-bench     -> this checkout's .llama/bin/llama-bench
#   PREFIX/libexec/shimbench/llama-quantize  -> this checkout's .llama/bin/llama-quantize
#
# The installed binary looks for its data files in ../share/shimbench and,
# after $LLAMA_BENCH and PATH, for llama-bench in ../libexec/shimbench, so it
# finds the llama-bench `make llama-bench` provisioned here (the links
# follow the checkout: move it and run make install again). Nothing is
# linked when the tools are not provisioned (macOS: Homebrew's are found
# anyway). DESTDIR stages the files; the links and the advice name PREFIX.
set -eu

destdir=${1-}
prefix=${2:?usage: install.sh DESTDIR PREFIX}
bin=${BIN:-build/shimbench}
top=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd -P)
root=$destdir$prefix

cd "$top"
install -d "$root/bin" "$root/share/shimbench" "$root/libexec/shimbench"
install -m 755 "$bin" "$root/bin/shimbench"
install -m 644 models/manifest.json evidence/published/figures.json \
	"$root/share/shimbench/"
echo "install: $prefix/bin/shimbench, data files in $prefix/share/shimbench"

for tool in llama-bench llama-quantize; do
	if [ -x "$top/.llama/bin/$tool" ]; then
		ln -sf "$top/.llama/bin/$tool" "$root/libexec/shimbench/$tool"
		echo "install: $prefix/libexec/shimbench/$tool -> $top/.llama/bin/$tool"
	else
		rm -f "$root/libexec/shimbench/$tool"
	fi
done
if [ ! -x "$top/.llama/bin/llama-bench" ] && [ "$(uname -s)" != Darwin ]; then
	echo "install: no provisioned llama-bench to link; run 'make llama-bench'" \
		"and 'make install' again, or put llama-bench on PATH"
fi

case ":${PATH:-}:" in
*":$prefix/bin:"*)
	echo "install: $prefix/bin is on your PATH; check the setup with: shimbench doctor" ;;
*)
	case "${SHELL:-}" in
	*zsh) rc='~/.zprofile' ;;
	*bash) rc='~/.bashrc' ;;
	*) rc='~/.profile' ;;
	esac
	echo "install: $prefix/bin is not on your PATH; add it for new shells with:"
	echo "    echo 'export PATH=\"$prefix/bin:\$PATH\"' >> $rc"
	echo "  and for this shell: export PATH=\"$prefix/bin:\$PATH\""
	echo "  then check the setup with: shimbench doctor" ;;
esac
