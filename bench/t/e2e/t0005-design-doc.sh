#!/bin/bash
# docs/design.md stays true to the tree: every source file of bench/src
# is named there (a .c, or a header without a .c of its name), and every
# source file it names exists; README links it.
. "$(dirname "$0")/lib.sh"

DOC=$TOP/docs/design.md
[ -f "$DOC" ] && ok "docs/design.md exists" || { not_ok "no docs/design.md"; test_done; exit $?; }
grep -qF "(docs/design.md)" "$TOP/README.md" && ok "README links it" || not_ok "README does not link docs/design.md"

missing=
for f in "$TOP"/bench/src/*/*.c "$TOP"/bench/src/*/*.h; do
	name=$(basename "$f")
	case "$name" in
	*.h) [ -f "${f%.h}.c" ] && continue ;;
	esac
	grep -qF "\`$name\`" "$DOC" || grep -qF "\`${f#"$TOP"/bench/src/}\`" "$DOC" || missing="$missing $name"
done
[ -z "$missing" ] && ok "every source file of bench/src is named" || not_ok "not named in docs/design.md:$missing"

gone=
for name in $(grep -oE '`[A-Za-z0-9_./-]+\.[ch]`' "$DOC" | tr -d '`' | sort -u); do
	case "$name" in
	*'*'*) continue ;;
	esac
	if [ -z "$(find "$TOP/bench/src" -path "*/$name" -print -quit)" ]; then gone="$gone $name"; fi
done
[ -z "$gone" ] && ok "every source file it names exists" || not_ok "named but not in bench/src:$gone"

# the layers picture is the one check-layers.sh enforces
pic=$(grep -m1 -F 'base  ←  models' "$DOC")
grep -qF "$pic" "$TOP/bench/t/README.md" && ok "the layers picture matches bench/t/README.md" || not_ok "layers picture: '$pic'"
test_done
