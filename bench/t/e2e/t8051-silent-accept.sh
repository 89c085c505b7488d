#!/bin/bash
# The last silent acceptances, hangs and misleading messages (issue 21
# §3-§5): an output `[]`, a misspelt role, a typo of a declared target are
# refused naming file, key and valid values, with nothing stored; `-o
# FIFO` with no reader fails at once and `-` is stdout; --db DIR, a store
# that fills during `run`, a model path with a newline on an ssh target,
# a VM named like an option, control characters in labels, and the temp
# file of a killed `export` each get the true message or the clean result.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-integrity.sh"
. "$TOP/bench/t/helpers/sshd.sh"

need_shared "silent acceptances" || { test_done; exit $?; }
cd "$WORK" || exit 1
q() { sqlite3 "$1" "$2" 2>&1; }
lacks() { ! grep -q -- "$2" "$1"; }   # lacks FILE PATTERN
expect_code 0 "a base store (the published TinyLlama set)" "$SHIMBENCH" --db base.db import --mapping "$M1" "$E1"
"$SHIMBENCH" --db base.db report --format csv >base.csv 2>/dev/null
unchanged() { # unchanged TITLE: the store holds what it held, no more
	"$SHIMBENCH" --db base.db report --format csv >now.csv 2>/dev/null
	check "$1: nothing stored, the report unchanged" cmp -s base.csv now.csv
	check "$1: still one session" [ "$(q base.db "select count(*) from sessions")" = 1 ]
}
refused=0 accepted=0
refuse() { # refuse TITLE MESSAGE CMD...: exit 2 with MESSAGE in stderr
	local title=$1 msg=$2
	shift 2
	if expect_code 2 "$title: refused" "$@"; then refused=$((refused + 1)); else accepted=$((accepted + 1)); fi
	grep_in "$WORK/err" "$msg" "$title: the message names file, key and valid values"
	unchanged "$title"
}

# ---- §3 -----------------------------------------------------------------------
mkdir empty && printf '[]\n' >empty/r.json && (cd empty && sha256sum r.json >SHA256SUMS)
cat >empty.map.json <<'JSON'
{"shimbench_mapping": 1, "environments": {"host": {"os_name": "Linux"}},
 "runs": [{"stdout": "r.json", "target": "host", "variant": "bare-metal", "role": "bare-metal"}]}
JSON
refuse "an output that is \`[]\`" "'empty.map.json': runs[0]: 'r.json' holds no result (an empty output, \`[]\` or a table header alone)" \
	"$SHIMBENCH" --db base.db import --mapping empty.map.json empty
sed 's/"role": "bare-metal"/"role": "Bare-Metal"/' "$M1" >role.json
refuse "role Bare-Metal" "'role.json': runs[0].role 'Bare-Metal' is not a role: bare-metal, stock, shim, or a free name unlike them" \
	"$SHIMBENCH" --db base.db import --mapping role.json "$E1"
python3 - "$M1" <<'PY' >gust.json
import json, sys
m = json.load(open(sys.argv[1]))
m["runs"][1]["target"] = "gust"
print(json.dumps(m))
PY
refuse "target gust" "'gust.json': runs[1].target 'gust' is not a declared target (the keys of 'environments': 'host', 'guest')" \
	"$SHIMBENCH" --db base.db import --mapping gust.json "$E1"
refuse "--set role=Stock" "runs[0].role 'Stock' is not a role: bare-metal, stock, shim" \
	"$SHIMBENCH" --db base.db import --set target=guest,variant=stock,role=Stock "$E1/tiny-stock-minimal.json"
expect_code 0 "a free role still imports (role=mlx-lm)" "$SHIMBENCH" --db free.db import --set target=guest,variant=mlx,role=mlx-lm "$E1/tiny-stock-minimal.json"
echo "# figures: hostile inputs=4 refused=$refused silently_accepted=$accepted"

# ---- §4 -----------------------------------------------------------------------
mkfifo fifo
start=$(date +%s)
expect_code 3 "report -o FIFO with no reader: fails" timeout 20 "$SHIMBENCH" --db base.db report -o fifo
grep_in "$WORK/err" "'fifo' is a FIFO that nobody reads" "it says nobody reads the FIFO"
check "at once, not after a wait ($(( $(date +%s) - start )) s)" [ $(( $(date +%s) - start )) -lt 10 ]
cat fifo >from-fifo &
reader=$!
sleep 0.2
expect_code 0 "report -o FIFO with a reader" timeout 20 "$SHIMBENCH" --db base.db report --format csv -o fifo
wait "$reader"
check "the reader got the report" cmp -s from-fifo base.csv
expect_code 0 "report -o - writes to stdout" "$SHIMBENCH" --db base.db report --format csv -o -
check "stdout holds the report" cmp -s "$WORK/out" base.csv
check "no file named '-'" [ ! -e ./- ]
expect_code 0 "export --format llama-bench-sql 1 - writes to stdout too" "$SHIMBENCH" --db base.db export --format llama-bench-sql 1 -
grep_in "$WORK/out" "CREATE TABLE" "the SQL is on stdout"

# ---- §5 -----------------------------------------------------------------------
mkdir adir
for c in sessions report; do
	expect_code 3 "--db DIR: $c fails" "$SHIMBENCH" --db adir $c
	grep_in "$WORK/err" "'adir' is a directory, not a store: --db names the store's file (e.g. 'adir/shimbench.db')" "--db DIR: $c says it is a directory"
done
expect_code 3 "--db DIR: import fails" "$SHIMBENCH" --db adir import --mapping "$M1" "$E1"
grep_in "$WORK/err" "'adir' is a directory, not a store" "--db DIR: import says it is a directory"

# A store that fills during `run`: the store's own message, no "not a file
# of this session" for the run's own first output.
ROWS=$FIXTURES/llama-bench/gen-current.jsonl
head -c 300000 /dev/urandom | base64 >big.stderr
cat >lb.sh <<SH
#!/bin/sh
cat '$WORK/big.stderr' >&2
cat '$ROWS'
SH
chmod +x lb.sh
printf 'not a real model\n' >model.bin
cat >plan.json <<JSON
{"name":"fill","models":[{"name":"m","path":"$WORK/model.bin"}],
 "targets":{"here":{"llama_bench":"$WORK/lb.sh"}},
 "variants":[{"name":"a","target":"here","role":"stock"}],
 "llama_bench":{"args":["-p","64","-n","0","-r","5"]}, "processes":2}
JSON
if small_disk "$WORK/sdisk" 1200; then
	expect_code 0 "a store on a small disk" "$SHIMBENCH" --db sdisk/s.db --quiet run --bundle b0 plan.json
	i=0
	while dd if=/dev/zero of=sdisk/fill$i bs=16k count=1 2>/dev/null; do i=$((i + 1)); done
	rm -f sdisk/fill0 sdisk/fill1 sdisk/fill2
	mkdir fillrun && cd fillrun || exit 1
	expect_code 3 "run while the store fills: fails" "$SHIMBENCH" --db ../sdisk/s.db --quiet run ../plan.json
	grep_in "$WORK/err" "full" "the store's own message (disk full)"
	check "not the misleading 'not a file of this session'" lacks "$WORK/err" "not a file of this session"
	cd "$WORK" || exit 1
	check "the store stays intact" [ "$(q sdisk/s.db "pragma integrity_check")" = ok ]
	rm -f sdisk/fill*
	umount "$WORK/sdisk" && MOUNTS=${MOUNTS/$WORK\/sdisk /}
else
	skip "store filling during run: no tmpfs can be mounted here"
fi

# A model path with a newline, on an ssh target (real sshd).
LB=$TOP/.llama/bin/llama-bench
if [ -x "$LB" ] && start_sshd; then
	NL="$WORK/new
line.gguf"
	expect_code 0 "a tiny model whose path holds a newline" "$SHIMBENCH" models synth tiny -o "$NL"
	MJ=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$NL")
	cat >nl.json <<JSON
{"models":[{"name":"tiny","path":$MJ}],
 "targets":{"far":{"transport":"ssh","host":"127.0.0.1","user":"$(id -un)","ssh_options":[$SSH_OPTS],"llama_bench":"$LB"}},
 "variants":[{"name":"plain","target":"far","role":"stock"}],
 "llama_bench":{"args":["-p","16","-n","4","-r","1","-t","1"]}, "processes":1}
JSON
	expect_code 0 "run it over ssh" "$SHIMBENCH" --db nl.db --quiet run nl.json
	check "its SHA-256 was read on the target" [ "$(q nl.db "select model_sha256 from runs")" = "$(sha256sum <"$NL" | cut -d' ' -f1)" ]
else
	skip "model path with a newline on ssh: needs the real llama-bench, sshd and root"
fi

# A VM named like an option never reaches lume or tart.
for tp in lume tart; do
	cat >vm.json <<JSON
{"models":[{"name":"m","path":"$WORK/model.bin"}],
 "targets":{"g":{"transport":"$tp","vm":"--help","llama_bench":"/usr/local/bin/llama-bench"}},
 "variants":[{"name":"a","target":"g","role":"stock"}]}
JSON
	expect_code 2 "$tp: vm \"--help\" refused" env PATH="$FIXTURES/doubles:$PATH" "$SHIMBENCH" --db vm.db run vm.json
	grep_in "$WORK/err" "'targets.g.vm' is '--help': a name starting with '-' would be read as an option" "$tp: the message names the key"
done

# Control characters in a label: shown as \xNN in md and csv, never raw.
expect_code 0 "import with a label holding ESC and CR" "$SHIMBENCH" --db esc.db import --label "$(printf 'red\033[31mX\rY')" --mapping "$M1" "$E1"
"$SHIMBENCH" --db esc.db report --format md -o esc.md 2>/dev/null
"$SHIMBENCH" --db esc.db sessions --format md >esc.smd
"$SHIMBENCH" --db esc.db sessions --format csv >esc.csv
for f in esc.md esc.smd esc.csv; do
	check "$f: no raw ESC or CR" lacks $f "$(printf '[\033\r]')"
	grep_in $f 'red\x1b[31mX\x0dY' "$f: the label with its escapes"
done

# export killed while writing: the retry with --force leaves no temp file.
expect_code 0 "a store of two sets to export" "$SHIMBENCH" --db ex.db import --mapping "$M1" "$E1" --mapping "$M2" "$E2"
start=$(date +%s%3N)
"$SHIMBENCH" --db ex.db --quiet export 2 full >/dev/null 2>&1
span=$(( $(date +%s%3N) - start + 20 ))
left=0 bad=""
for t in $(seq 1 8); do
	rm -rf x
	delay=$(( RANDOM % span ))
	"$SHIMBENCH" --db ex.db --quiet export 2 x >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	{ kill -KILL "$pid"; wait "$pid"; } 2>/dev/null
	[ -n "$(find x -name '.*.??????' 2>/dev/null)" ] && left=$((left + 1))
	if [ -d x ]; then
		"$SHIMBENCH" --db ex.db --quiet export --force 2 x >/dev/null 2>err.x ||
			bad="$bad [trial $t: retry failed: $(head -c 200 err.x)]"
	else
		"$SHIMBENCH" --db ex.db --quiet export 2 x >/dev/null 2>err.x ||
			bad="$bad [trial $t: export failed: $(head -c 200 err.x)]"
	fi
	[ -z "$(find x -name '.*.??????')" ] || bad="$bad [trial $t: temp files after the retry: $(find x -name '.*')]"
	(cd x && sha256sum -c --quiet SHA256SUMS >/dev/null 2>&1) || bad="$bad [trial $t: the bundle does not verify]"
	diff -r -q x full >/dev/null || bad="$bad [trial $t: the retried bundle differs from an uninterrupted one]"
done
[ -z "$bad" ] && ok "export killed 8 times ($left left a temp file): every retry gave the whole bundle and no temp file" ||
	not_ok "killed export:$bad"
echo "# figures: export SIGKILL trials=8 left_temp=$left failures=$(echo "$bad" | grep -o '\[' | wc -l)"
test_done
