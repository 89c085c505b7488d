# Helpers of the data-integrity tests (t8xxx): evidence of any size,
# llama-bench stand-ins, the facts of a store, terminals, full disks.
# Source lib.sh first.

E1=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
M1=$E1/mapping.json
E2=$EVIDENCE/cua-lume-2026-08-10-m1-ultra-gemma4
M2=$E2/mapping.json
ROW_FIXTURE=$FIXTURES/llama-bench/gen-current.jsonl

# mk_raw DIR ROWS SEED [VARIANT]: a raw evidence directory DIR holding
# out.jsonl (ROWS llama-bench rows, 5 samples each, contents depending on
# SEED), out.stderr and SHA256SUMS, and its mapping DIR.map.json.
mk_raw() {
	python3 - "$1" "$2" "$3" "${4:-plain}" "$ROW_FIXTURE" <<'PY'
import hashlib, json, os, sys
d, rows, seed, variant, fixture = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
os.makedirs(d, exist_ok=True)
base = json.loads(open(fixture).readline())
out = []
for i in range(rows):
    r = dict(base)
    r["test_time"] = "2026-08-09T%02d:%02d:%02dZ" % (i // 3600 % 24, i // 60 % 60, i % 60)
    ts = [2000.0 + ((seed * 7919 + i * 31 + k * 17) % 1000) / 10.0 for k in range(5)]
    r["samples_ts"] = ts
    r["samples_ns"] = [int(64 * 1e9 / t) for t in ts]
    r["avg_ts"] = sum(ts) / 5
    r["avg_ns"] = sum(r["samples_ns"]) // 5
    out.append(json.dumps(r))
open(os.path.join(d, "out.jsonl"), "w").write("\n".join(out) + "\n")
open(os.path.join(d, "out.stderr"), "w").write("llama-bench (seed %d)\n" % seed)
with open(os.path.join(d, "SHA256SUMS"), "w") as f:
    for n in ("out.jsonl", "out.stderr"):
        f.write("%s  %s\n" % (hashlib.sha256(open(os.path.join(d, n), "rb").read()).hexdigest(), n))
json.dump({"shimbench_mapping": 1, "label": "raw %d" % seed,
           "environments": {"here": {"hw_model": "test", "os_build": "T1"}},
           "runs": [{"stdout": "out.jsonl", "stderr": "out.stderr",
                     "target": "here", "variant": variant, "role": "stock",
                     "model": "tiny"}]},
          open(d + ".map.json", "w"))
PY
}

# resum DIR: rewrites DIR/SHA256SUMS over every regular file in DIR.
resum() {
	local sums
	sums=$(cd "$1" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort |
		while read -r f; do sha256sum "$f"; done) &&
		printf '%s\n' "$sums" >"$1/SHA256SUMS"
}

# fake_lb PATH STDOUT STDERR [SLEEP]: a llama-bench stand-in that prints
# the file STDOUT to stdout (its cpu_info made unique to the call, as
# real samples are) and STDERR to stderr, after SLEEP seconds.
fake_lb() {
	cat >"$1" <<SH
#!/bin/sh
sleep ${4:-0}
cat '$3' >&2
sed "s/\"cpu_info\": \"/\"cpu_info\": \"call \$\$ \$(date +%s%N) /" '$2'
SH
	chmod +x "$1"
}

# facts DB: the facts of every session of a store; ids, the kind (an
# import is one) and where it was imported from left out; ordered.
facts() {
	sqlite3 "$1" "
	select 'session', started_at, finished_at, status, tampered,
	       -- a run killed before it finished never got its identity
	       case status when 'running' then '' else content_hash end,
	       plan_json, warnings_json, label from sessions order by id;
	select 'env', target, identity, base_identity, fingerprint_json
	  from environments order by session_id, target;
	select 'run', seq, target, variant, role, model, model_label,
	       model_sha256, runtime, argv_json, env_json, status, exit_code,
	       signal, timed_out, wall_s, stdout_path, stderr_path,
	       stdout_sha256, stderr_sha256, length(t.stdout_text),
	       length(t.stderr_text), capabilities_json, expect_json,
	       verification, verification_detail, error, probe_path,
	       probe_sha256, probe_expect_json, started_at
	  from runs left join run_texts t on t.run_id = runs.id
	  order by session_id, seq;
	select 'result', r.seq, x.idx, x.test, x.avg_ts, w.raw_json,
	       (select group_concat(ts, ' ') from samples s where s.result_id = x.id)
	  from results x join runs r on r.id = x.run_id
	  left join result_raw w on w.result_id = x.id
	  order by r.session_id, r.seq, x.idx;
	select 'artifact', sha256, kind, path, size, facts_json from artifacts order by sha256;"
}

# on_tty OUT CMD...: runs CMD with stdout and stderr on a pseudo-terminal;
# what it printed goes to OUT; returns its exit status.
on_tty() {
	local out=$1
	shift
	python3 - "$out" "$@" <<'PY'
import os, pty, subprocess, sys
out, cmd = sys.argv[1], sys.argv[2:]
m, s = pty.openpty()
def own_terminal():   # the pty becomes the controlling terminal (/dev/tty)
    import fcntl, termios
    os.setsid()
    fcntl.ioctl(1, termios.TIOCSCTTY, 0)
p = subprocess.Popen(cmd, stdin=s, stdout=s, stderr=s, preexec_fn=own_terminal)
os.close(s)
data = b""
while True:
    try:
        chunk = os.read(m, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
open(out, "wb").write(data)
sys.exit(p.wait())
PY
}

# Full disks: a small tmpfs when this user may mount one (root), else an
# LD_PRELOAD library that fails writes under a directory with ENOSPC.
ENOSPC_LIB=$T_BUILD/t/helpers/libenospc.so
CAN_MOUNT=0
if [ "$(id -u)" = 0 ] && mkdir -p "$WORK/.mnt-probe" &&
   mount -t tmpfs -o size=64k tmpfs "$WORK/.mnt-probe" 2>/dev/null; then
	umount "$WORK/.mnt-probe"
	CAN_MOUNT=1
fi
MOUNTS=""
trap 'for m in $MOUNTS; do umount "$m" 2>/dev/null; done; rm -rf "$WORK"' EXIT

# small_disk DIR KB: DIR becomes a file system of KB kilobytes (tmpfs);
# 1 when that cannot be done here.
small_disk() {
	[ "$CAN_MOUNT" = 1 ] || return 1
	mkdir -p "$1" && mount -t tmpfs -o "size=${2}k,nr_inodes=1000" tmpfs "$1" ||
		return 1
	MOUNTS="$1 $MOUNTS"
}
# grow_disk DIR KB: frees the disk (a new size).
grow_disk() {
	mount -o "remount,size=${2}k" "$1"
}
# with_full_disk DIR BYTES CMD...: runs CMD with writes under DIR failing
# (ENOSPC) after BYTES bytes, through the LD_PRELOAD library.
with_full_disk() {
	local dir=$1 bytes=$2
	shift 2
	SHIMBENCH_TEST_ENOSPC_DIR=$dir SHIMBENCH_TEST_ENOSPC_BYTES=$bytes \
		LD_PRELOAD=$ENOSPC_LIB "$@"
}
