#!/bin/sh
# Enforces the layers of bench/src (bench/t/README.md):
#
#   base  <-  models  <-  evidence  <-  { run , analysis }  <-  cmd
#
# A file may include headers of its own layer and of the layers below it;
# run and analysis never include each other. Third-party headers belong
# to one module each: cJSON to base/json.c, sqlite3.h to the store
# (evidence/store.c and its parts evidence/store-*.c), OpenSSL and
# CommonCrypto to models/hash.c.
#
#   sh bench/scripts/check-layers.sh [SRC_DIR]    (default bench/src)
#
# Prints one line per violation (FILE:LINE: what) and exits 1 when there
# is any; prints "layers ok (N files)" and exits 0 otherwise.
set -u
src=${1:-$(dirname "$0")/../src}
[ -d "$src" ] || { echo "check-layers: no directory '$src'" >&2; exit 2; }

allowed() {
	case "$1" in
	base) echo "base" ;;
	models) echo "base models" ;;
	evidence) echo "base models evidence" ;;
	run) echo "base models evidence run" ;;
	analysis) echo "base models evidence analysis" ;;
	cmd) echo "base models evidence run analysis cmd" ;;
	*) echo "" ;;
	esac
}

# third-party header -> the files allowed to include it (names or
# patterns, space-separated: the files of one module)
owner_of() {
	case "$1" in
	cjson/cJSON.h|cJSON.h) echo "base/json.c" ;;
	sqlite3.h) echo "evidence/store.c evidence/store-*.c" ;;
	openssl/*|CommonCrypto/*) echo "models/hash.c" ;;
	*) echo "" ;;
	esac
}
# true when file $1 is one of the owner files $2 (names or patterns)
owned_by() {
	set -f      # the patterns are patterns, not file names here
	for p in $2; do
		# shellcheck disable=SC2254
		case "$1" in $p) set +f; return 0 ;; esac
	done
	set +f
	return 1
}

bad=0
n=0
for f in $(cd "$src" && find . -name '*.[ch]' | sed 's#^\./##' | sort); do
	n=$((n + 1))
	layer=${f%%/*}
	if [ "$layer" = "$f" ]; then
		echo "$f: not inside a layer directory"
		bad=1
		continue
	fi
	ok=$(allowed "$layer")
	if [ -z "$ok" ]; then
		echo "$f: unknown layer '$layer'"
		bad=1
		continue
	fi
	lineno=0
	while IFS= read -r line; do
		lineno=$((lineno + 1))
		case "$line" in
		\#*include*) ;;
		*) continue ;;
		esac
		inc=$(printf '%s\n' "$line" | sed -n 's/^#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p')
		[ -n "$inc" ] || continue
		case "$line" in
		*\"*)
			to=${inc%%/*}
			if [ "$to" = "$inc" ]; then
				echo "$f:$lineno: include \"$inc\" without its layer directory"
				bad=1
			elif ! printf ' %s ' "$ok" | grep -q " $to "; then
				echo "$f:$lineno: layer '$layer' includes \"$inc\" from layer '$to'"
				bad=1
			fi ;;
		*)
			own=$(owner_of "$inc")
			if [ -n "$own" ] && ! owned_by "$f" "$own"; then
				echo "$f:$lineno: <$inc> belongs to $(echo "$own" | sed 's/ / or /g') only"
				bad=1
			fi ;;
		esac
	done <"$src/$f"
done
if [ "$bad" -ne 0 ]; then
	exit 1
fi
echo "layers ok ($n files)"
