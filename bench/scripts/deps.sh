#!/bin/sh
# Installs what shimbench needs to build and test, when it is missing.
# Debian as root: apt-get (one `apt-get update` first); macOS: brew;
# otherwise prints the exact command and fails.
#
# Each line of the table: CHECK  DEBIAN-PACKAGE  BREW-FORMULA
#   CHECK is h:HEADER (a C header), c:COMMAND (on PATH) or f:FILE.
set -u
table='
h:cjson/cJSON.h            libcjson-dev          cjson
h:sqlite3.h                libsqlite3-dev        -
h:openssl/evp.h            libssl-dev            -
c:sqlite3                  sqlite3               -
c:xmllint                  libxml2-utils         -
'
# Lines other parts of the project add (models, run engine, shim...).
[ -f bench/scripts/deps.d ] && table="$table$(cat bench/scripts/deps.d)"

os=$(uname -s)
missing_deb=""
missing_brew=""

have_header() {
	echo "#include <$1>" | ${CC:-cc} -E -x c - $( [ "$os" = Darwin ] && command -v brew >/dev/null && echo "-I$(brew --prefix)/include" ) >/dev/null 2>&1
}

echo "$table" | while read -r chk deb brew; do
	[ -n "$chk" ] || continue
	case "$chk" in \#*) continue ;; esac
	kind=${chk%%:*}; what=${chk#*:}
	case "$kind" in
	h) have_header "$what" && continue ;;
	c) command -v "$what" >/dev/null 2>&1 && continue ;;
	f) [ -e "$what" ] && continue ;;
	esac
	echo "$deb $brew"
done > /tmp/shimbench-deps.$$

missing_deb=$(awk '$1 != "-" {print $1}' /tmp/shimbench-deps.$$ | sort -u | tr '\n' ' ')
missing_brew=$(awk '$2 != "-" && $2 != "" {print $2}' /tmp/shimbench-deps.$$ | sort -u | tr '\n' ' ')
rm -f /tmp/shimbench-deps.$$

[ -z "$(echo $missing_deb $missing_brew)" ] && exit 0

if [ "$os" = Darwin ]; then
	[ -z "$(echo $missing_brew)" ] && exit 0
	if command -v brew >/dev/null 2>&1; then
		echo "deps: brew install $missing_brew"
		exec brew install $missing_brew
	fi
	echo "deps: missing; install Homebrew, then run: brew install $missing_brew" >&2
	exit 3
fi
[ -z "$(echo $missing_deb)" ] && exit 0
if [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ]; then
	echo "deps: installing $missing_deb"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || exit 3
	apt-get install -y -qq --no-install-recommends $missing_deb || exit 3
	exit 0
fi
echo "deps: missing packages; run: sudo apt-get install $missing_deb" >&2
exit 3
