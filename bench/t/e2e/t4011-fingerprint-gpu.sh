#!/bin/bash
# The fingerprint's GPU is probed only for what the plan's backends need
# (docs/plans.md): a CPU-only llama-bench never runs vulkaninfo or
# nvidia-smi, a GPU backend's first process does, once per target, and
# the GPU it records (and so the identity) is what the probe says. Both
# halves need the real tools: vulkaninfo on PATH (Mesa's lavapipe will
# do) and, for the GPU half, a llama-bench with the Vulkan backend in
# $LLAMA_BENCH_VULKAN (default: make lavapipe's .llama/vulkan, with
# GGML_VK_VISIBLE_DEVICES=0 for lavapipe). Without them each half says
# SKIP.
. "$(dirname "$0")/lib.sh"

LB=$TOP/.llama/bin/llama-bench
MODEL=$WORK/tiny.gguf
# make lavapipe's Vulkan prefix, when there, is the Vulkan llama-bench
VK=$TOP/.llama/vulkan
if [ -z "${LLAMA_BENCH_VULKAN:-}" ] && [ -x "$VK/bin/llama-bench" ] &&
   [ -f "$VK/prefix/usr/share/vulkan/icd.d/lvp_icd.json" ]; then
	LLAMA_BENCH_VULKAN=$VK/bin/llama-bench
	VK_LVP=$VK/prefix/usr/share/vulkan/icd.d/lvp_icd.json
fi
VKENV=
if ! command -v vulkaninfo >/dev/null 2>&1 ||
   ! vulkaninfo --summary 2>/dev/null | grep -q deviceName; then
	skip "GPU probe: no vulkaninfo on PATH that lists a device"
	test_done; exit $?
fi
GPU=$(vulkaninfo --summary 2>/dev/null | sed -n 's/^[[:space:]]*deviceName[[:space:]]*=[[:space:]]*//p' | head -n 1)
# The real vulkaninfo, behind a wrapper that counts its calls.
REAL=$(command -v vulkaninfo)
mkdir -p "$WORK/bin"
cat >"$WORK/bin/vulkaninfo" <<SH
#!/bin/sh
echo called >>"$WORK/vulkaninfo.calls"
exec "$REAL" "\$@"
SH
chmod +x "$WORK/bin/vulkaninfo"
export PATH="$WORK/bin:$PATH"
calls() { [ -f "$WORK/vulkaninfo.calls" ] && wc -l <"$WORK/vulkaninfo.calls" | tr -d ' ' || echo 0; }
expect_code 0 "synthesize the tiny model" "$SHIMBENCH" models synth tiny -o "$MODEL"
plan() { # plan FILE LLAMA-BENCH PROCESSES
	cat >"$1" <<JSON
{"models":[{"name":"tiny","path":"$MODEL"}],
 "targets":{"here":{"transport":"local","llama_bench":"$2"},"again":{"transport":"local","llama_bench":"$2"}},
 "variants":[{"name":"a","target":"here"${VKENV:+,$VKENV}},{"name":"b","target":"again"${VKENV:+,$VKENV}}],
 "llama_bench":{"args":["-p","16","-n","4","-r","2","-t","2"]}, "processes":$3}
JSON
}
fp() { sqlite3 "$1" "select fingerprint_json from environments where target='$2'"; }
gpu_of() { sqlite3 "$1" "select coalesce(gpu, '(none)') from environments where target='$2'"; }

# --- CPU: a llama-bench whose rows name only the CPU backend.
if [ ! -x "$LB" ] || [ "$(cat "$TOP/.llama/prefix/.complete" 2>/dev/null)" != cpu ]; then
	skip "CPU half: the provisioned llama-bench is not the CPU-only one"
else
	plan "$WORK/cpu.json" "$LB" 1
	expect_code 0 "a CPU plan runs" "$SHIMBENCH" --db "$WORK/cpu.db" run --bundle "$WORK/bcpu" "$WORK/cpu.json"
	[ "$(sqlite3 "$WORK/cpu.db" "select group_concat(distinct backend) from results")" = CPU ] &&
		ok "its rows name the CPU backend only" || not_ok "backends: $(sqlite3 "$WORK/cpu.db" 'select distinct backend from results')"
	[ "$(gpu_of "$WORK/cpu.db" here)" = "(none)" ] && [ "$(gpu_of "$WORK/cpu.db" again)" = "(none)" ] &&
		ok "no GPU recorded although vulkaninfo lists '$GPU'" || not_ok "GPU recorded: $(fp "$WORK/cpu.db" here)"
	[ "$(calls)" = 0 ] && ok "vulkaninfo never ran" || not_ok "vulkaninfo ran $(calls) times"
fi
rm -f "$WORK/vulkaninfo.calls"

# --- GPU: the Vulkan backend's rows; the probe runs once per target.
if [ -z "${LLAMA_BENCH_VULKAN:-}" ] || [ ! -x "$LLAMA_BENCH_VULKAN" ]; then
	skip "GPU half: set LLAMA_BENCH_VULKAN to a llama-bench with the Vulkan backend"
else
	if [ -n "${VK_LVP:-}" ]; then
		# the prefix's lavapipe, for llama-bench only (the plan's env)
		VKENV="\"env\":{\"GGML_VK_VISIBLE_DEVICES\":\"0\",\"VK_DRIVER_FILES\":\"$VK_LVP\"}"
	fi
	plan "$WORK/gpu.json" "$LLAMA_BENCH_VULKAN" 2
	expect_code 0 "a Vulkan plan runs" "$SHIMBENCH" --db "$WORK/gpu.db" run --bundle "$WORK/bgpu" "$WORK/gpu.json"
	sqlite3 "$WORK/gpu.db" "select distinct backend from results" | grep -qv '^CPU$' &&
		ok "its rows name a GPU backend" || not_ok "backends: $(sqlite3 "$WORK/gpu.db" 'select distinct backend from results')"
	[ "$(gpu_of "$WORK/gpu.db" here)" = "$GPU" ] && [ "$(gpu_of "$WORK/gpu.db" again)" = "$GPU" ] &&
		ok "each target records the GPU vulkaninfo names" || not_ok "gpu: $(fp "$WORK/gpu.db" here)"
	[ "$(calls)" = 1 ] && ok "vulkaninfo ran once for two targets on this machine, 4 processes" ||
		not_ok "vulkaninfo ran $(calls) times"
	# the identity is the one a probe that always ran vulkaninfo gives:
	# only the facts count, not where the key sits
	python3 - "$WORK/gpu.db" <<'PY' && ok "the identity follows the facts" || not_ok "identity"
import hashlib, json, sqlite3, sys
keys = ["hw_model", "cpu_model", "cpu_cores", "memory_bytes", "is_vm", "gpu",
        "gpu_cores", "os_name", "os_version", "os_build", "llama_build",
        "llama_bench_sha256", "shim_sha256", "pvg_unrestricted"]
db = sqlite3.connect(sys.argv[1])
for fpj, ident in db.execute("select fingerprint_json, identity from environments"):
    fp = json.loads(fpj)
    def val(k):
        v = fp.get(k)
        if v is None: return ""
        if isinstance(v, str): return v
        return json.dumps(v, separators=(",", ":"))
    text = "".join(f"{k}={val(k)}\n" for k in keys)
    assert hashlib.sha256(text.encode()).hexdigest() == ident, (fpj, ident)
PY
fi
test_done
