#!/bin/sh
# CI step: build shimbench, and on macOS the shim too (make shim: arm64
# and arm64e dylibs and the probe, ad-hoc signed, with SHA256SUMS).
# Build packages that are missing are installed first: apt-get on Linux
# (through sudo when not root, as on a GitHub-hosted Ubuntu runner),
# Homebrew on macOS. Only the build's own packages: `make deps` installs
# the test tools, and `make check` calls it.
#
#   sh bench/scripts/ci/build.sh        BUILD=DIR: another build directory
. "$(dirname "$0")/lib.sh"
cd "$ci_top" || exit 3

os=$(uname -s)
inc=
[ "$os" = Darwin ] && command -v brew >/dev/null 2>&1 && inc="-I$(brew --prefix)/include"
missing=
for pair in cjson/cJSON.h:libcjson-dev:cjson sqlite3.h:libsqlite3-dev:- \
	openssl/evp.h:libssl-dev:-; do
	h=${pair%%:*}; rest=${pair#*:}; deb=${rest%%:*}; brew=${rest#*:}
	[ "$os" = Darwin ] && [ "$h" = openssl/evp.h ] && continue
	# shellcheck disable=SC2086 # $inc is one option or none
	echo "#include <$h>" | ${CC:-cc} -E -x c - $inc >/dev/null 2>&1 && continue
	if [ "$os" = Darwin ]; then missing="$missing $brew"; else missing="$missing $deb"; fi
done
if [ -n "$missing" ]; then
	if [ "$os" = Darwin ]; then
		say "brew install$missing"
		# shellcheck disable=SC2086
		brew install $missing || exit 3
	else
		sudo=
		[ "$(id -u)" = 0 ] || sudo="sudo -n"
		say "apt-get install$missing"
		$sudo apt-get update -qq || exit 3
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing || exit 3
	fi
fi
make -s ${BUILD:+BUILD="$BUILD"} || exit 3
if [ "$os" = Darwin ]; then
	make -s shim || exit 3
	ci_output shim-dir "$ci_top/build/shim"
fi
say "built ${BUILD:-build}/shimbench"
ci_output shimbench "$ci_top/${BUILD:-build}/shimbench"
