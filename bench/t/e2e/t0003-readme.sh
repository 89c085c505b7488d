#!/bin/bash
# Every ```sh block of README.md runs, as written, in a fresh copy of the
# repository (its tracked files only, as a clone has them), one line at a
# time in one shell, so `export` and `cd` carry over. A line must exit 0,
# or exactly N when it ends with the comment `# exit N` (a gate that finds
# the regression it should, say). The set-up block (make demo / make
# check) is not run here: it is what runs this test.
. "$(dirname "$0")/lib.sh"

CLONE=$WORK/clone
mkdir -p "$CLONE"
(cd "$TOP" && git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$CLONE") ||
	{ not_ok "copy the tracked files"; test_done; exit $?; }
# The provisioned llama-bench is what `make llama-bench` would download:
# share it instead of fetching it again.
[ -d "$TOP/.llama" ] && ln -s "$TOP/.llama" "$CLONE/.llama"

python3 - "$TOP/README.md" "$WORK/blocks" <<'PY' || { not_ok "README.md has sh blocks"; }
import os, re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)
os.makedirs(sys.argv[2], exist_ok=True)
n = 0
for b in blocks:
    if "make check" in b or "make demo" in b:
        continue
    # join continuation lines into one command
    b = re.sub(r"\\\n[ \t]*", " ", b)
    n += 1
    open(os.path.join(sys.argv[2], "%02d.sh" % n), "w").write(b)
assert n >= 3, "fewer than three runnable blocks"
PY

# One shell for all blocks: each line runs, its exit status is checked.
: >"$WORK/lines"
for b in "$WORK"/blocks/*.sh; do
	grep -v -e '^[[:space:]]*$' -e '^[[:space:]]*#' "$b" >>"$WORK/lines"
done
cat >"$WORK/run.sh" <<'SH'
cd "$1" || exit 99
n=0
while IFS= read -r line <&3; do
	n=$((n + 1))
	want=0
	case "$line" in
	*"# exit "[0-9]*) want=$(printf '%s\n' "$line" | sed 's/.*# exit \([0-9]*\).*/\1/') ;;
	esac
	echo "### $line" >>"$2/log"
	(eval "$line") >>"$2/log" 2>&1 </dev/null
	rc=$?
	if [ "$rc" = "$want" ]; then
		echo "ok README line $n: $line"
	else
		echo "not ok README line $n: $line (exit $rc, wanted $want)"
		tail -15 "$2/log" | sed 's/^/# /'
	fi
	# cd and export carry over to the next line
	case "$line" in cd\ *|export\ *) eval "$line" ;; esac
done 3<"$2/lines"
SH
bash "$WORK/run.sh" "$CLONE" "$WORK" >"$WORK/results" 2>&1
while IFS= read -r r; do
	case "$r" in
	"ok "*) ok "${r#ok }" ;;
	"not ok "*) not_ok "${r#not ok }" ;;
	*) echo "$r" ;;
	esac
done <"$WORK/results"
test_done
