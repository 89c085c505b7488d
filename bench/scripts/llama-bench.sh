#!/bin/sh
# Provisions llama.cpp's llama-bench and llama-quantize from Debian's
# development suite (sid) into a private prefix, without touching the
# system: .llama/prefix inside the repository (gitignored).
#
#   sh bench/scripts/llama-bench.sh              CPU backends only: .llama/
#   sh bench/scripts/llama-bench.sh --vulkan     a second prefix, .llama/vulkan/,
#                                                with the Vulkan backend, the
#                                                Vulkan loader and headers, and
#                                                the GL/X libraries NVIDIA's
#                                                driver links against
#   sh bench/scripts/llama-bench.sh --lavapipe   the same plus Mesa's Vulkan
#                                                drivers (lavapipe: Vulkan on
#                                                the CPU, for machines without
#                                                a GPU)
#   ... --download-only                          only fill .llama/debs with
#                                                the flavor's closure (to copy
#                                                to an offline machine)
#
# The Vulkan prefix is separate so that the CPU llama-bench never loads the
# Vulkan backend (it would print ggml_vulkan lines and change what a run
# records). Both share the package cache .llama/debs.
#
# How: a private apt state (.llama/apt) whose source list is derived from
# this machine's own apt sources (the main Debian archive URI, suite sid);
# `apt-get download` of the dependency closure into .llama/debs;
# `dpkg-deb -x` of each package into the prefix. The programs then run
# through the prefix's own dynamic loader (sid's glibc is newer than the
# host's), so the host's libraries are never replaced:
#
#   PREFIX/usr/lib/MULTIARCH/ld-linux-*.so* --library-path LIBS PREFIX/usr/bin/llama-bench ...
#
# ggml looks for its dynamically loaded backends in the directory of the
# executable, which under an explicit loader is the loader's own directory;
# the backend libraries are therefore linked into that directory, so the
# wrappers need no particular working directory and pass "$@" untouched.
#
# Wrappers: .llama/bin/llama-bench and .llama/bin/llama-quantize (POSIX sh);
# the Vulkan prefix has them in .llama/vulkan/bin, with a third one,
# run-in-prefix PROGRAM ARGS..., that runs any program built on this machine
# (the Vulkan capability probe) through the prefix's loader and libraries.
# $SHIMBENCH_EXTRA_LIBRARY_PATH is appended to --library-path (for a GPU
# driver's libraries). Idempotent: a second call with everything present
# only checks and exits. Offline when the .debs of the closure are cached.
#
# Environment: SHIMBENCH_DEBIAN_URI overrides the archive URI that would be
# derived from the apt sources.
set -eu

flavor=cpu
download_only=0
for a in "$@"; do
	case "$a" in
	--vulkan) flavor=vulkan ;;
	--lavapipe) flavor=lavapipe ;;
	--download-only) download_only=1 ;;
	-h|--help)
		sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0 ;;
	*) echo "llama-bench.sh: unknown option '$a'" >&2; exit 2 ;;
	esac
done

top=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd -P)
root=$top/.llama
debs=$root/debs
aptdir=$root/apt
case $flavor in
cpu) dest=$root ;;
*) dest=$root/vulkan ;;
esac
prefix=$dest/prefix
bindir=$dest/bin

say() { echo "llama-bench: $*"; }
fail() { echo "llama-bench: error: $*" >&2; exit 3; }

case "$(uname -s)" in
Linux) ;;
Darwin)
	# No private prefix on macOS: Homebrew's llama.cpp (Metal) is the tool.
	if command -v llama-bench >/dev/null 2>&1; then
		say "found $(command -v llama-bench)"
		exit 0
	fi
	command -v brew >/dev/null 2>&1 ||
		fail "llama-bench not found; install Homebrew, then run: brew install llama.cpp"
	say "brew install llama.cpp"
	exec brew install llama.cpp ;;
*) fail "provisioning from Debian works on Linux only; install llama.cpp and put llama-bench on PATH" ;;
esac
command -v dpkg >/dev/null 2>&1 || fail "'dpkg' not found; this script needs a Debian-based system"
command -v apt-get >/dev/null 2>&1 || fail "'apt-get' not found; this script needs a Debian-based system"
arch=$(dpkg --print-architecture)
case "$arch" in
amd64) multiarch=x86_64-linux-gnu ;;
arm64) multiarch=aarch64-linux-gnu ;;
*) fail "unsupported architecture '$arch' (amd64 and arm64 are supported)" ;;
esac

roots="llama.cpp-tools libllama0 libggml0"
if [ "$flavor" != cpu ]; then
	# The Vulkan backend, the Vulkan loader, its headers (the capability
	# shim in shim/vulkan is built against them), and what NVIDIA's ICD
	# (libGLX_nvidia.so.0) links against: libGLdispatch, libX11, libXext.
	roots="$roots libggml0-backend-vulkan libvulkan1 libvulkan-dev libglvnd0 libx11-6 libxext6"
fi
if [ "$flavor" = lavapipe ]; then
	# Mesa's Vulkan drivers: lavapipe (llvmpipe) runs Vulkan on the CPU.
	roots="$roots mesa-vulkan-drivers"
fi

# Dependencies left out on purpose: configuration and download helpers
# (debconf, wget, curl: llama-bench never downloads), packages holding only
# documentation (gcc-N-base), extra iconv charsets, OpenSSL's legacy
# algorithms provider, X11 locale data, Python (libvulkan-dev's scripts).
skip_dep() {
	case "$1" in
	debconf|debconf-2.0|cdebconf|wget|curl|gcc-*-base|libc-gconv-modules-extra|openssl-provider-legacy|libx11-data) return 0 ;;
	# libvulkan-dev's registry scripts (only its headers are used)
	python3) return 0 ;;
	esac
	return 1
}


# up_to_date: the prefix is complete for this flavor (lavapipe includes
# vulkan; the CPU prefix must be exactly cpu: one of an older version of
# this script may hold the Vulkan backend).
up_to_date() {
	[ -f "$prefix/.complete" ] || return 1
	[ -x "$bindir/llama-bench" ] && [ -x "$bindir/llama-quantize" ] || return 1
	if [ "$flavor" != cpu ]; then
		[ -x "$bindir/run-in-prefix" ] || return 1
	fi
	have=$(cat "$prefix/.complete")
	[ "$have" = "$flavor" ] || { [ "$flavor" = vulkan ] && [ "$have" = lavapipe ]; }
}

if [ "$download_only" = 0 ] && up_to_date; then
	say "up to date ($(cat "$prefix/.complete")): $bindir/llama-bench"
	exit 0
fi

# ---- private apt state ------------------------------------------------------

# debian_uris: the main Debian archive URI(s) named in this machine's apt
# sources, one per line: entries of type deb whose suite is a release name
# without a -security/-updates/-backports suffix.
debian_uris() {
	{
		if [ -f /etc/apt/sources.list ]; then
			sed -n 's/^[[:space:]]*deb[[:space:]]\{1,\}//p' /etc/apt/sources.list |
				sed 's/\[[^]]*\][[:space:]]*//' |
				awk '{ print $1, $2 }'
		fi
		for f in /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			sed -n 's/^[[:space:]]*deb[[:space:]]\{1,\}//p' "$f" |
				sed 's/\[[^]]*\][[:space:]]*//' |
				awk '{ print $1, $2 }'
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			# deb822 stanzas: emit "URI SUITE" pairs of enabled deb entries.
			awk '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && enabled != "no")
					for (i = 1; i <= nu; i++)
						for (j = 1; j <= ns; j++)
							print u[i], s[j]
				types = ""; enabled = ""; nu = 0; ns = 0
			}
			/^[[:space:]]*$/ { flush(); next }
			/^#/ { next }
			tolower($1) == "types:" { $1 = ""; types = $0; next }
			tolower($1) == "enabled:" { enabled = tolower($2); next }
			tolower($1) == "uris:" { for (i = 2; i <= NF; i++) u[++nu] = $i; next }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) s[++ns] = $i; next }
			END { flush() }' "$f"
		done
	} | awk '
		$1 !~ /^(https?|file):/ { next }
		$1 ~ /security/ { next }
		$2 ~ /-(security|updates|backports|proposed-updates)$/ { next }
		$2 ~ /\// { next }
		{ sub(/\/+$/, "", $1); if (!seen[$1]++) print $1 }'
}

setup_apt() {
	mkdir -p "$aptdir/etc/apt.conf.d" "$aptdir/etc/preferences.d" \
		"$aptdir/etc/sources.list.d" "$aptdir/state/lists/partial" \
		"$aptdir/cache/archives/partial"
	: >"$aptdir/state/status"
	if [ -n "${SHIMBENCH_DEBIAN_URI:-}" ]; then
		uris=$SHIMBENCH_DEBIAN_URI
	else
		uris=$(debian_uris)
	fi
	[ -n "$uris" ] || fail "no Debian archive found in /etc/apt/sources.list or /etc/apt/sources.list.d; set SHIMBENCH_DEBIAN_URI to a Debian mirror URI"
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -f "$keyring" ] || fail "'$keyring' not found; install debian-archive-keyring"
	: >"$aptdir/etc/sources.list"
	for u in $uris; do
		echo "deb [signed-by=$keyring] $u sid main" >>"$aptdir/etc/sources.list"
	done
}

apt_opts() {
	# Every path apt would use on the system is redirected under $aptdir;
	# the system's apt.conf.d (proxies) still applies.
	printf '%s\n' \
		-o "Dir::State=$aptdir/state" \
		-o "Dir::State::status=$aptdir/state/status" \
		-o "Dir::Cache=$aptdir/cache" \
		-o "Dir::Etc::SourceList=$aptdir/etc/sources.list" \
		-o "Dir::Etc::SourceParts=$aptdir/etc/sources.list.d" \
		-o "Dir::Etc::Preferences=$aptdir/etc/preferences" \
		-o "Dir::Etc::PreferencesParts=$aptdir/etc/preferences.d" \
		-o "Debug::NoLocking=1" \
		-o "APT::Architecture=$arch" \
		-o "APT::Architectures::=$arch" \
		-o "APT::Sandbox::User=root" \
		-o "Acquire::Languages=none"
}

# run_apt CMD ARGS...: apt-get/apt-cache with the private state.
run_apt() {
	cmd=$1; shift
	# apt_opts prints one word per line; none contains a newline.
	set -f
	old_ifs=$IFS; IFS='
'
	# shellcheck disable=SC2046
	set -- $(apt_opts) "$@"
	IFS=$old_ifs
	set +f
	"$cmd" "$@"
}

# resolve: writes the dependency closure of $roots (first alternative of
# each dependency, a virtual package resolved to its first provider) to
# $aptdir/closure as "PACKAGE VERSION ARCH" lines. One apt-cache call per
# level of the dependency tree.
resolve() {
	todo=$roots
	done_list=" "
	: >"$aptdir/stanzas"
	while [ -n "$todo" ]; do
		want=""
		for p in $todo; do
			case "$done_list$want " in *" $p "*) continue ;; esac
			skip_dep "$p" && continue
			want="$want $p"
		done
		[ -n "$want" ] || break
		# shellcheck disable=SC2086 # package names, split on purpose
		run_apt apt-cache show --no-all-versions $want >"$aptdir/level" 2>/dev/null || true
		found=" $(awk '/^Package:/ { print $2 }' "$aptdir/level" | tr '\n' ' ')"
		extra=""
		for p in $want; do
			case "$found" in *" $p "*) continue ;; esac
			# A virtual package: take the first real provider.
			prov=$(run_apt apt-cache showpkg "$p" 2>/dev/null |
				awk '/^Reverse Provides:/ { f = 1; next } f && NF { print $1; exit }')
			[ -n "$prov" ] || fail "package '$p' not found in sid"
			extra="$extra $prov"
		done
		cat "$aptdir/level" >>"$aptdir/stanzas"
		done_list="$done_list${found# } "
		todo="$extra $(awk '/^(Pre-)?Depends:/ { sub(/^[^:]*:/, ""); print }' "$aptdir/level" |
			tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/:any//; s/[[:space:]]//g' |
			grep -v '^$' | sort -u | tr '\n' ' ')"
	done
	awk '/^Package:/ { p = $2 } /^Version:/ { v = $2 } /^Architecture:/ { a = $2 }
		/^$/ { if (p != "") print p, v, a; p = "" }
		END { if (p != "") print p, v, a }' "$aptdir/stanzas" | sort -u >"$aptdir/closure"
}

closure=$debs/closure-$flavor.txt
# The roots a cached closure was resolved from: another set (a flavor that
# gained a package) resolves again. A CPU cache from before this record
# had today's roots.
closure_roots=$debs/closure-$flavor.roots

have_debs() {
	[ -s "$closure" ] || return 1
	if [ -f "$closure_roots" ]; then
		[ "$(cat "$closure_roots")" = "$roots" ] || return 1
	elif [ "$flavor" != cpu ]; then
		return 1
	fi
	while read -r f; do
		[ -f "$debs/$f" ] || return 1
	done <"$closure"
}

mkdir -p "$debs"
if have_debs; then
	say "using cached packages in $debs ($(wc -l <"$closure") packages)"
else
	setup_apt
	say "updating the private package lists for sid from: $(tr '\n' ' ' <"$aptdir/etc/sources.list" | sed 's/\[[^]]*\] //g')"
	run_apt apt-get -q update >"$aptdir/update.log" 2>&1 ||
		{ cat "$aptdir/update.log" >&2; fail "apt-get update (private state) failed"; }
	resolve
	pkgs=$(awk '{ print $1 }' "$aptdir/closure")
	say "dependency closure: $(echo "$pkgs" | tr "\n" " ")"
	# shellcheck disable=SC2086
	(cd "$debs" && run_apt apt-get -q download $pkgs) >"$aptdir/download.log" 2>&1 ||
		{ cat "$aptdir/download.log" >&2; fail "apt-get download failed"; }
	# Record the exact files of this closure (name_version_arch.deb).
	: >"$closure.tmp"
	while read -r p v a; do
		f=$(printf '%s_%s_%s.deb' "$p" "$v" "$a" | sed 's/:/%3a/g')
		[ -f "$debs/$f" ] || fail "downloaded package file '$f' is missing"
		echo "$f" >>"$closure.tmp"
	done <"$aptdir/closure"
	mv "$closure.tmp" "$closure"
	echo "$roots" >"$closure_roots"
fi

if [ "$download_only" = 1 ]; then
	say "downloaded: $closure ($(wc -l <"$closure") packages in $debs)"
	exit 0
fi

# ---- extract into a fresh prefix, then move it into place --------------------

tmp=$dest/prefix.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
say "extracting $(wc -l <"$closure") packages into $prefix"
while read -r f; do
	dpkg-deb -x "$debs/$f" "$tmp" || fail "cannot extract '$f'"
done <"$closure"

tlib=$tmp/usr/lib/$multiarch
loader=""
for f in "$tlib"/ld-linux-*.so.*; do [ -f "$f" ] && loader=${f##*/} && break; done
[ -n "$loader" ] || fail "no dynamic loader in the extracted libc6"
[ -x "$tmp/usr/bin/llama-bench" ] || fail "llama-bench missing from llama.cpp-tools"
[ -d "$tlib/ggml/backends0" ] || fail "no ggml backends directory in libggml0"
# ggml searches the executable's directory (here: the loader's) for backends.
for b in "$tlib"/ggml/backends0/*.so; do
	ln -sf "ggml/backends0/${b##*/}" "$tlib/${b##*/}"
done
if [ "$flavor" != cpu ]; then
	[ -f "$tmp/usr/include/vulkan/vulkan_core.h" ] || fail "no Vulkan headers in the extracted libvulkan-dev"
fi
if [ "$flavor" = lavapipe ]; then
	[ -f "$tmp/usr/share/vulkan/icd.d/lvp_icd.json" ] || fail "no lavapipe ICD file in the extracted mesa-vulkan-drivers"
fi
echo "$flavor" >"$tmp/.complete"

rm -rf "$prefix"
mv "$tmp" "$prefix"

# ---- wrappers ------------------------------------------------------------------

mkdir -p "$bindir"
for prog in llama-bench llama-quantize; do
	cat >"$bindir/$prog.tmp" <<EOF
#!/bin/sh
# Generated by bench/scripts/llama-bench.sh: runs Debian sid's $prog from
# the private prefix through the prefix's own dynamic loader. Arguments are
# passed exactly; \$SHIMBENCH_EXTRA_LIBRARY_PATH is appended to the library
# path (e.g. a GPU driver's libraries).
self=\$(readlink -f -- "\$0" 2>/dev/null) || self=\$0
d=\$(CDPATH='' cd -- "\$(dirname -- "\$self")/.." && pwd -P) || exit 127
p=\$d/prefix
l=\$p/usr/lib/$multiarch
lp=\$l:\$l/llama
if [ -n "\${SHIMBENCH_EXTRA_LIBRARY_PATH:-}" ]; then
	lp=\$lp:\$SHIMBENCH_EXTRA_LIBRARY_PATH
fi
exec "\$l/$loader" --library-path "\$lp" "\$p/usr/bin/$prog" "\$@"
EOF
	chmod 755 "$bindir/$prog.tmp"
	mv "$bindir/$prog.tmp" "$bindir/$prog"
done
if [ "$flavor" != cpu ]; then
	cat >"$bindir/run-in-prefix.tmp" <<EOF
#!/bin/sh
# Generated by bench/scripts/llama-bench.sh: runs PROGRAM (built on this
# machine, e.g. the Vulkan capability probe) through the private prefix's
# dynamic loader with the prefix's libraries, as llama-bench runs, so that
# it loads the same Vulkan loader and drivers. \$SHIMBENCH_EXTRA_LIBRARY_PATH
# is appended to the library path.
[ \$# -ge 1 ] || { echo "usage: run-in-prefix PROGRAM [ARGS...]" >&2; exit 2; }
self=\$(readlink -f -- "\$0" 2>/dev/null) || self=\$0
d=\$(CDPATH='' cd -- "\$(dirname -- "\$self")/.." && pwd -P) || exit 127
l=\$d/prefix/usr/lib/$multiarch
lp=\$l
if [ -n "\${SHIMBENCH_EXTRA_LIBRARY_PATH:-}" ]; then
	lp=\$lp:\$SHIMBENCH_EXTRA_LIBRARY_PATH
fi
exec "\$l/$loader" --library-path "\$lp" "\$@"
EOF
	chmod 755 "$bindir/run-in-prefix.tmp"
	mv "$bindir/run-in-prefix.tmp" "$bindir/run-in-prefix"
fi

# ---- verify ------------------------------------------------------------------------

if ! "$bindir/llama-bench" --help >/dev/null 2>"$dest/verify.log"; then
	cat "$dest/verify.log" >&2
	rm -f "$prefix/.complete"
	fail "the provisioned llama-bench does not run"
fi
if [ "$flavor" = lavapipe ]; then
	# ggml skips CPU devices unless GGML_VK_VISIBLE_DEVICES names them.
	lvp=$prefix/usr/share/vulkan/icd.d/lvp_icd.json
	say "lavapipe: VK_DRIVER_FILES=$lvp GGML_VK_VISIBLE_DEVICES=0"
	VK_DRIVER_FILES=$lvp GGML_VK_VISIBLE_DEVICES=0 "$bindir/llama-bench" --list-devices 2>/dev/null |
		sed 's/^/llama-bench:   /' || true
else
	"$bindir/llama-bench" --list-devices 2>/dev/null | sed 's/^/llama-bench:   /' || true
fi
say "ready: $bindir/llama-bench, $bindir/llama-quantize ($(du -sh "$prefix" | cut -f1))"
