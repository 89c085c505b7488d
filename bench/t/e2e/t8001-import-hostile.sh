#!/bin/bash
# Import stays inside the evidence directory and refuses garbage (issue
# 13, items 4 and 5): symbolic links, symlinked directories, FIFOs and
# devices, whether a run uses them or SHA256SUMS only lists them, are
# refused by name and never hang; text that is not llama-bench output is
# exit 2 with the file and the byte or row; nothing is stored.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-integrity.sh"

need_shared "hostile imports" || { test_done; exit $?; }
cd "$WORK" || exit 1
DB=$WORK/h.db
nothing_stored() {
	if [ ! -f "$DB" ] || [ "$(sqlite3 "$DB" "select count(*) from sessions")" = 0 ]; then
		ok "$1: nothing stored"
	else
		not_ok "$1: something was stored"
		rm -f "$DB" "$DB-wal" "$DB-shm"
	fi
}
# refused CODE TITLE TEXT DIR [MAPPING]: the import exits CODE within 10
# seconds, says TEXT, and stores nothing.
refused() {
	local code=$1 title=$2 text=$3 dir=$4 map=${5:-}
	if [ -n "$map" ]; then
		expect_code "$code" "$title" timeout 10 "$SHIMBENCH" --db "$DB" import --mapping "$map" "$dir"
	else
		expect_code "$code" "$title" timeout 10 "$SHIMBENCH" --db "$DB" import "$dir"
	fi
	grep_in "$WORK/err" "$text" "$title: named"
	nothing_stored "$title"
}
empty_sha=$(printf '' | sha256sum | cut -d' ' -f1)

expect_code 0 "a bundle to tamper with" "$SHIMBENCH" --db "$WORK/src.db" import --mapping "$M1" "$E1"
expect_code 0 "exported" "$SHIMBENCH" --db "$WORK/src.db" export 1 "$WORK/bundle"
mk_raw raw 3 1

# ---- 4. links, FIFOs and devices -----------------------------------------
outside=$WORK/outside
mkdir -p "$outside"
cp raw/out.jsonl "$outside/"

# a member a run uses is a symbolic link out of the directory
cp -r raw r-link && rm r-link/out.jsonl && ln -s "$outside/out.jsonl" r-link/out.jsonl
refused 2 "raw: a run's file is a symlink" "'r-link/out.jsonl' is a symbolic link" r-link raw.map.json
cp -r bundle b-link && mv b-link/tiny-host-minimal.json "$outside/" &&
	ln -s "$outside/tiny-host-minimal.json" b-link/tiny-host-minimal.json
refused 2 "bundle: a run's file is a symlink" "is a symbolic link" b-link
# a link inside the directory is refused too: only regular files are read
cp -r raw r-inlink && mv r-inlink/out.jsonl r-inlink/real.jsonl && ln -s real.jsonl r-inlink/out.jsonl
refused 2 "raw: a link to a file inside the directory" "is a symbolic link" r-inlink raw.map.json
# files only SHA256SUMS lists
for kind in link fifo dev; do
	for form in raw bundle; do
		d=$form-listed-$kind
		cp -r $form $d
		case $kind in
		link) ln -s /etc/passwd $d/extra; h=$(sha256sum /etc/passwd | cut -d' ' -f1) ;;
		fifo) mkfifo $d/extra; h=$empty_sha ;;
		dev)
			if ! mknod $d/extra c 1 3 2>/dev/null; then
				skip "$form: a device file listed in SHA256SUMS (mknod needs root)"
				continue
			fi
			h=$empty_sha ;;
		esac
		echo "$h  extra" >>$d/SHA256SUMS
		case $kind in
		link) want="'$d/extra' is a symbolic link" ;;
		fifo) want="'$d/extra' is not a regular file (a FIFO)" ;;
		dev) want="'$d/extra' is not a regular file (a character device)" ;;
		esac
		if [ $form = raw ]; then
			refused 2 "$form: a $kind only listed in SHA256SUMS" "$want" $d raw.map.json
		else
			refused 2 "$form: a $kind only listed in SHA256SUMS" "$want" $d
		fi
	done
done
# a FIFO a run reads, a FIFO as bundle.json, SHA256SUMS or the mapping
cp -r raw r-fifo && rm r-fifo/out.jsonl && mkfifo r-fifo/out.jsonl
refused 2 "raw: a run's stdout is a FIFO" "'r-fifo/out.jsonl' is not a regular file (a FIFO)" r-fifo raw.map.json
cp -r bundle b-fifo && rm b-fifo/bundle.json && mkfifo b-fifo/bundle.json
refused 2 "bundle: bundle.json is a FIFO" "bundle.json' is not a regular file" b-fifo
cp -r raw r-sums && rm r-sums/SHA256SUMS && mkfifo r-sums/SHA256SUMS
refused 2 "SHA256SUMS is a FIFO" "SHA256SUMS' is not a regular file" r-sums raw.map.json
cp -r raw r-sumslink && mv r-sumslink/SHA256SUMS "$outside/SUMS" && ln -s "$outside/SUMS" r-sumslink/SHA256SUMS
refused 2 "SHA256SUMS is a symlink" "SHA256SUMS' is a symbolic link" r-sumslink raw.map.json
mkfifo map.fifo
refused 2 "the mapping is a FIFO" "'map.fifo' is not a regular file" raw map.fifo
ln -s /dev/zero r-zero 2>/dev/null; cp -r raw r-devzero && rm r-devzero/out.jsonl && ln -s /dev/zero r-devzero/out.jsonl
refused 2 "a run's file links to /dev/zero" "is a symbolic link" r-devzero raw.map.json
if cp -r raw r-dev && rm r-dev/out.jsonl && mknod r-dev/out.jsonl c 1 5 2>/dev/null; then
	refused 2 "a run's file is a device (/dev/zero's numbers)" "is not a regular file (a character device)" r-dev raw.map.json
else
	skip "a run's file is a device (mknod needs root)"
fi
# a symbolic link to a directory on the way to a member
mkdir -p r-subdir "$outside/sub"
cp raw/out.jsonl raw/out.stderr "$outside/sub/"
ln -s "$outside/sub" r-subdir/sub
(cd "$outside/sub" && sha256sum out.jsonl out.stderr | sed 's|  |  sub/|') >r-subdir/SHA256SUMS
sed 's|"out.jsonl"|"sub/out.jsonl"|; s|"out.stderr"|"sub/out.stderr"|' raw.map.json >r-subdir.map.json
refused 2 "raw: a member in a symlinked subdirectory" "a directory on the way is a symbolic link" r-subdir r-subdir.map.json
# a run bundle keeps its raw files in runs/: that directory as a link out
mkdir -p b-runs
python3 - <<'PY'
import json, os, shutil
b = json.load(open("bundle/bundle.json"))
for r in b["runs"]:
    for k in ("stdout", "stderr"):
        if r.get(k):
            os.makedirs("outside/runs", exist_ok=True)
            shutil.copy(os.path.join("bundle", r[k]), os.path.join("outside/runs", r[k]))
            r[k] = "runs/" + r[k]
for n in ("results.csv", "README.md"):
    shutil.copy(os.path.join("bundle", n), os.path.join("b-runs", n))
json.dump(b, open("b-runs/bundle.json", "w"))
PY
ln -s "$outside/runs" b-runs/runs
(cd b-runs && { sha256sum bundle.json results.csv README.md; (cd runs && sha256sum * | sed 's|  |  runs/|'); } >SHA256SUMS)
refused 2 "bundle: runs/ is a symbolic link out" "a directory on the way is a symbolic link" b-runs
# a name that leaves the directory
sed 's|"out.jsonl"|"../outside/out.jsonl"|' raw.map.json >escape.map.json
refused 2 "a file name with .." "leaves the directory" raw escape.map.json
sed "s|\"out.jsonl\"|\"$outside/out.jsonl\"|" raw.map.json >abs.map.json
refused 2 "an absolute file name" "leaves the directory" raw abs.map.json
# the directory itself may be reached through a link: its real path counts
ln -s "$WORK/raw" raw-via-link
expect_code 0 "a DIR given through a symbolic link is read" "$SHIMBENCH" --db "$DB" import --mapping raw.map.json raw-via-link
rm -f "$DB" "$DB-wal" "$DB-shm"

# ---- 5. garbage is not an empty run ----------------------------------------
garbage() {
	local title=$1 text=$2 want=$3
	rm -rf g && mkdir g
	printf '%s' "$text" >g/out.jsonl
	printf 'stderr\n' >g/out.stderr
	resum g
	refused 2 "$title" "$want" g raw.map.json
}
garbage "[garbage" '[garbage' "'out.jsonl': not llama-bench JSON output: unexpected 'g' at byte 1"
garbage "a bare [" '[' "'out.jsonl': an unclosed array"
garbage "an array followed by bytes" "$(printf '[\n%s\n]\nxyz' "$(head -1 "$ROW_FIXTURE")")" "text after the JSON array"
garbage "an empty array followed by bytes" '[] x' "text after the JSON array: unexpected 'x' at byte 3"
garbage "an empty JSON object" '{}' "row 1: not a llama-bench row"
garbage "any JSON object" '{"a": 1, "b": [2]}' "row 1: not a llama-bench row"
garbage "a JSON string" '"hello"' "'out.jsonl': not llama-bench output"
garbage "null" 'null' "'out.jsonl': not llama-bench output"
garbage "an array of numbers" '[1, 2]' "row 1: not a JSON object"
garbage "n_prompt as a hex string" "$(head -1 "$ROW_FIXTURE" | sed 's/"n_prompt": 64/"n_prompt": "0x200"/')" "row 1: n_prompt must be an integer"
garbage "samples_ns beyond int64" "$(head -1 "$ROW_FIXTURE" | sed 's/"samples_ns": \[30571506/"samples_ns": [92233720368547758070/')" "row 1"
garbage "a negative sample" "$(head -1 "$ROW_FIXTURE" | sed 's/"samples_ts": \[2093.45/"samples_ts": [-2093.45/')" "row 1"
garbage "a non-finite sample" "$(head -1 "$ROW_FIXTURE" | sed 's/"samples_ts": \[2093.45/"samples_ts": [1e999/')" "row 1"
garbage "a key twice" "$(head -1 "$ROW_FIXTURE" | sed 's/"n_gen": 0/"n_gen": 0, "n_gen": 5/')" "row 1"
garbage "a second line of garbage" "$(head -1 "$ROW_FIXTURE"; printf '\nnot json\n')" "row 2"
garbage "binary bytes" "$(printf '\001\002\377\376')" "'out.jsonl'"
for f in "$FIXTURES"/llama-bench/bad-*.json "$FIXTURES/llama-bench/garbage.txt"; do
	rm -rf g && mkdir g && cp "$f" g/out.jsonl && printf 'x\n' >g/out.stderr && resum g
	refused 2 "fixture $(basename "$f")" "'out.jsonl'" g raw.map.json
done
# A cut-off llama-bench array keeps its complete rows (and says so).
rm -rf g && mkdir g && cp "$FIXTURES/llama-bench/truncated.json" g/out.jsonl && printf 'x\n' >g/out.stderr && resum g
expect_code 0 "a cut-off llama-bench array is imported" "$SHIMBENCH" --db "$DB" import --mapping raw.map.json g
[ "$(sqlite3 "$DB" "select status from runs")" = incomplete ] && ok "its run is marked incomplete" ||
	not_ok "status: $(sqlite3 "$DB" "select status from runs")"
rm -f "$DB" "$DB-wal" "$DB-shm"
# A stderr line a parser misreads must never crash the import: a CUDA
# device line without the colon after its number made caps.c follow a
# NULL pointer (found by fuzzing).
mk_raw cuda 2 9
printf 'ggml_cuda_init: found 1 CUDA devices:\n  Device 2 compute capability 9.0 and no colon\n' >cuda/out.stderr
resum cuda
expect_code 0 "a stderr CUDA device line without its colon" "$SHIMBENCH" --db "$DB" import --mapping cuda.map.json cuda
rm -f "$DB" "$DB-wal" "$DB-shm"
# Bad mappings and bundle.json
bad_map() {
	local title=$1 want=$2
	refused 2 "$title" "$want" raw bad.map.json
}
printf '{"shimbench_mapping": 1, "runs": [' >bad.map.json; bad_map "a cut-off mapping" "bad.map.json"
printf '[]' >bad.map.json; bad_map "a mapping that is an array" "must be a JSON object"
python3 -c "import json; m=json.load(open('raw.map.json')); m['runs'][0]['colour']='red'; json.dump(m, open('bad.map.json','w'))"
bad_map "an unknown key in a run" "runs[0]: unknown key 'colour'"
python3 -c "import json; m=json.load(open('raw.map.json')); m['runs'][0]['seq']='1'; json.dump(m, open('bad.map.json','w'))"
bad_map "a string where a number belongs" "runs[0].seq must be a whole number"
python3 -c "import json; m=json.load(open('raw.map.json')); m['runs'][0]['exit_code']=1e30; json.dump(m, open('bad.map.json','w'))"
bad_map "a number out of range" "runs[0].exit_code"
printf '{"shimbench_mapping": 1, "runs": [], "runs": []}' >bad.map.json; bad_map "a key twice in the mapping" "runs"
printf '{"shimbench_mapping": 2, "runs": []}' >bad.map.json; bad_map "another mapping version" "expected \"shimbench_mapping\": 1"
cp -r bundle b-bad && printf '{"shimbench_bundle": 1, "runs": [{"stdout": "x"}' >b-bad/bundle.json && resum b-bad
refused 2 "a cut-off bundle.json" "bundle.json" b-bad
cp -r bundle b-status
python3 -c "import json; b=json.load(open('b-status/bundle.json')); b['session']['status']='great'; json.dump(b, open('b-status/bundle.json','w'))"
resum b-status
refused 2 "a session status that does not exist" "status 'great'" b-status
# run states and verifications come from one name table too
cp -r bundle b-run-status
python3 -c "import json; b=json.load(open('b-run-status/bundle.json')); b['runs'][0]['status']='fmiled'; json.dump(b, open('b-run-status/bundle.json','w'))"
resum b-run-status
refused 2 "a run status that does not exist" "runs[0].status 'fmiled' is not ok, failed, incomplete" b-run-status
python3 -c "import json; m=json.load(open('raw.map.json')); m['runs'][0]['verification']='probably'; json.dump(m, open('bad.map.json','w'))"
bad_map "a verification that does not exist" "runs[0].verification 'probably' is not not-required, verified or unverified"
test_done
