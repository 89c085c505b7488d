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
# Inside a layer, modules include each other without a loop. A module is
# a .c file and its .h (analysis/render.c + analysis/render.h); it
# depends on every module of its layer whose header either file
# includes. A loop (a -> b -> a, or longer) means no module of it can be
# read, tested or replaced on its own: one of them holds two concerns.
# A header without a .c of its name (evidence/capsread.h) is the private
# header of a family of files, not a module: including it is no edge.
#
#   sh bench/scripts/check-layers.sh [SRC_DIR]    (default bench/src)
#
# Prints one line per violation (FILE:LINE: what, or the loop with the
# include of each step) and exits 1 when there is any; prints "layers ok
# (N files)" and exits 0 otherwise.
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
edges=$(mktemp "${TMPDIR:-/tmp}/check-layers.XXXXXX")
trap 'rm -f "$edges"' EXIT
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
			elif [ "$to" = "$layer" ] && [ "${inc%.h}" != "${f%.[ch]}" ] &&
			    [ -f "$src/${inc%.h}.c" ]; then
				# module -> module it depends on, where
				echo "${f%.[ch]} ${inc%.h} $f:$lineno" >>"$edges"
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

# Loops among the modules of a layer: a depth-first walk over the edges
# (modules in sorted order, so the report is stable); every edge back to
# a module still on the walk's path closes a loop, printed with the
# include that makes each step.
cycles=$(sort -u "$edges" | awk '
	{ seen[$1] = 1; seen[$2] = 1 }
	!(($1, $2) in via) { via[$1, $2] = $3; next_of[$1] = next_of[$1] " " $2 }
	function sorted(a, m,    i, j, x) {   # insertion sort of a[1..m]
		for (i = 2; i <= m; i++) {
			x = a[i]
			for (j = i - 1; j >= 1 && a[j] > x; j--)
				a[j + 1] = a[j]
			a[j + 1] = x
		}
	}
	function walk(u,    i, n, to, v, k, nxt, path, where, layer) {
		state[u] = 1
		stack[++depth] = u
		n = split(next_of[u], to, " ")
		for (i = 1; i <= n; i++) {
			v = to[i]
			if (state[v] == 1) {
				for (k = depth; stack[k] != v; k--)
					;
				path = v
				where = ""
				for (; k <= depth; k++) {
					nxt = k < depth ? stack[k + 1] : v
					path = path " -> " nxt
					where = where (where == "" ? "" : ", ") via[stack[k], nxt]
				}
				layer = v
				sub(/\/.*/, "", layer)
				printf "include loop in layer %s: %s (%s)\n", layer, path, where
			} else if (!state[v]) {
				walk(v)
			}
		}
		depth--
		state[u] = 2
	}
	END {
		m = 0
		for (u in seen)
			names[++m] = u
		sorted(names, m)
		for (i = 1; i <= m; i++)
			if (!state[names[i]])
				walk(names[i])
	}')
if [ -n "$cycles" ]; then
	printf '%s\n' "$cycles"
	bad=1
fi
if [ "$bad" -ne 0 ]; then
	exit 1
fi
echo "layers ok ($n files)"
