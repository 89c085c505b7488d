#!/bin/bash
# Charts for the claims, drawn by the real gnuplot and rendered by the
# real headless Chromium: speedup with its interval and a 1x line,
# percent of bare metal with a 100 % line, history with OS builds and a
# change point, runtime in every label; SVG in the HTML page, files with
# --plot (PNG with --png), SVG files in a bundle's README. Labels, OS
# builds and target and variant names are hostile: none may reach
# gnuplot's command language.
. "$(dirname "$0")/lib.sh"

SB() { "$SHIMBENCH" --db "$DB" "$@"; }
if ! command -v gnuplot >/dev/null; then
	skip "charts: gnuplot is not installed (make deps installs it)"
	test_done; exit $?
fi
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
--disable-background-networking --disable-component-update --disable-sync \
--user-data-dir=$WORK/chrome"
# dom FILE OUT: the DOM of FILE as Chromium built it.
dom() {
	# shellcheck disable=SC2086
	timeout 120 "$CHROME" $flags --dump-dom "file://$1" >"$2" 2>>"$WORK/chrome.err"
}
# shot FILE PNG WxH: a screenshot of FILE.
shot() {
	# shellcheck disable=SC2086
	timeout 120 "$CHROME" $flags --window-size="$3" --screenshot="$2" \
		"file://$1" >/dev/null 2>>"$WORK/chrome.err"
}
# inked PNG MIN: the PNG is not blank: at least MIN bytes of its filtered
# scanlines are not zero (a uniform image filters to zeros but for each
# row's filter byte and first pixel).
inked() {
	python3 - "$1" "$2" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'\x89PNG\r\n\x1a\n'
i, idat = 8, b''
while i < len(d):
    n, t = struct.unpack('>I4s', d[i:i + 8])
    c = d[i + 8:i + 8 + n]
    if t == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', c[:10])
    elif t == b'IDAT':
        idat += c
    i += 12 + n
raw = zlib.decompress(idat)
bpp = {2: 3, 6: 4}.get(ctype, 1) * depth // 8
ink = len(raw) - raw.count(0) - h * (1 + bpp)
assert ink >= int(sys.argv[2]), "only %d inked bytes" % ink
PY
}
# svg_text SVG WORD...: every WORD is in the text of the SVG's <text> nodes.
svg_text() {
	python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
text = "\n".join("".join(t.itertext()) for t in root.iter() if t.tag.endswith("}text") or t.tag == "text")
missing = [w for w in sys.argv[2:] if w not in text]
assert not missing, "missing %r in %s" % (missing, text[:2000])
PY
}

# ---- ten nightly sessions: an OS update costs the shim 20 % ------------------------
P=$WORK/pwned
HOSTILE_LABEL="Tiny \"q\" \\ <b>&amp; \$(touch $P-1) \`touch $P-2\` '; system(\"touch $P-3\") @ARG1 %s {^_}"
HOSTILE_BUILD="26A'; system('touch $P-4') #"
python3 - "$FIXTURES/llama-bench/gen2026-evidence.json" "$WORK/ev" "$HOSTILE_LABEL" "$HOSTILE_BUILD" <<'PY'
import hashlib, json, os, random, sys
src, out, label, newbuild = sys.argv[1:5]
base = json.load(open(src))
rnd = random.Random(7)
n = 10
for k in range(n):
    d = os.path.join(out, "s%d" % k)
    os.makedirs(d)
    after = k >= n // 2
    sums = []
    runs = []
    for tgt, variant, role, level in (("host", "bare-metal", "bare-metal", 1.0),
                                      ("guest", "stock; x'\"", "stock", 0.1),
                                      ("guest", "shim", "shim", 0.8 if after else 1.0)):
        rows = json.loads(json.dumps(base))
        for r in rows:
            tok = r["n_prompt"] + r["n_gen"]
            ts = [x * level * (1 + rnd.gauss(0, 0.003)) for x in r["samples_ts"]]
            r["samples_ts"] = ts
            r["samples_ns"] = [round(1e9 * tok / x) for x in ts]
            r["avg_ts"] = sum(ts) / len(ts)
            r["avg_ns"] = round(sum(r["samples_ns"]) / len(ts))
            r["test_time"] = "2026-09-%02dT10:00:00Z" % (k + 1)
        name = "%s.json" % role
        text = json.dumps(rows, indent=1)
        open(os.path.join(d, name), "w").write(text)
        sums.append("%s  %s\n" % (hashlib.sha256(text.encode()).hexdigest(), name))
        runs.append({"stdout": name, "target": tgt, "variant": variant, "role": role, "model": "tiny"})
    open(os.path.join(d, "SHA256SUMS"), "w").write("".join(sorted(sums)))
    m = {"shimbench_mapping": 1, "label": "nightly %d" % (k + 1),
         "environments": {
            "guest": {"hw_model": "VirtualMac2,1", "is_vm": 1, "os_name": "macOS",
                      "os_version": "26.6" if after else "26.5",
                      "os_build": newbuild if after else "25F84"},
            "host": {"hw_model": "Mac13,2", "is_vm": 0, "os_name": "macOS",
                     "os_version": "26.6.1", "os_build": "25G76"}},
         "models": {"tiny": {"label": label}},
         "runs": runs}
    json.dump(m, open(os.path.join(out, "m%d.json" % k), "w"))
PY
DB=$WORK/h.db
for k in 0 1 2 3 4 5 6 7 8 9; do
	SB import --mapping "$WORK/ev/m$k.json" "$WORK/ev/s$k" >>"$WORK/imports" 2>&1 ||
		not_ok "import nightly $k"
done
check "ten sessions imported" test "$(sqlite3 "$DB" 'select count(*) from sessions')" = 10

PLOTS="$WORK/plots it's \$(touch $P-5) & \"co\""
expect_code 0 "report --plot --png into a hostile directory" SB report --format csv --plot "$PLOTS" --png
for c in throughput speedup percent history-1 history-2; do
	check "$c.svg is well-formed XML" xmllint --noout "$PLOTS/$c.svg"
	check "$c.png is a PNG with ink" inked "$PLOTS/$c.png" 10000
done
check "the report charts are 1000x640, the history 1000x560" python3 -c "
import struct, sys
for c, size in (('speedup', (1000, 640)), ('history-1', (1000, 560))):
    d = open(sys.argv[1] + '/' + c + '.png', 'rb').read(24)
    assert struct.unpack('>II', d[16:24]) == size, c" "$PLOTS"
check "nothing ran a label, an OS build or the directory name" sh -c "! ls '$P'-* 2>/dev/null && ! ls ./*pwned* 2>/dev/null"
label_out="Tiny 'q' / <b>&amp;"
check "throughput labels: hostile model label, runtime, test" \
	svg_text "$PLOTS/throughput.svg" "$label_out" "(llama.cpp) pp512" "(llama.cpp) tg128" "bare-metal host"
check "speedup: runtime in labels, the 1x line, the interval" \
	svg_text "$PLOTS/speedup.svg" "(llama.cpp) pp512" "1× = no speedup" "95 % bootstrap interval" "×"
check "percent: the 100 % line, stock and shim" \
	svg_text "$PLOTS/percent.svg" "(llama.cpp) tg128" "100 % = bare metal" "stock guest" "shim guest" "10.0 %"
check "history: sessions, OS builds, the change point and its shift, runtime" \
	svg_text "$PLOTS/history-1.svg" "#1 2026-09-01" "#10 2026-09-10" "OS 25F84" \
	"OS 26A'; system('touch $P-4') #" "change point (shift, p)" "-20." "guest/shim tiny pp512" "(llama.cpp)"
check "history: a hostile variant name stays text" svg_text "$PLOTS/history-1.svg" "guest/stock; x''"

# ---- the HTML page in Chromium --------------------------------------------------------
expect_code 0 "report --format html" SB report --format html -o "$WORK/h.html"
if [ -z "$CHROME" ]; then
	skip "html rendering: no chromium on PATH (make deps installs it)"
else
	dom "$WORK/h.html" "$WORK/h.dom"
	check "the rendered page holds the four chart kinds, each an SVG with text" python3 - "$WORK/h.dom" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
for c in ("throughput", "speedup", "percent", "history-1", "history-2"):
    m = re.search(r'<div class="chart" id="chart-%s">(.*?)</div>' % c, t, re.S)
    assert m, c
    body = m.group(1)
    assert "<svg" in body, c
    texts = re.findall(r"<text[^>]*>([^<]+)</text>", body)
    assert len(texts) > 5, (c, texts)
    assert any("(llama.cpp)" in x for x in texts), (c, texts)
assert "<script" not in t.lower().replace("&lt;script", "")
PY
	grep_in "$WORK/h.dom" "<h3>History: Tiny" "history chart titled by the workload"
	grep_in "$WORK/h.dom" "1× = no speedup" "the speedup chart's 1x line in the DOM"
	shot "$WORK/h.html" "$WORK/h.png" 1200,4000
	check "the page renders with ink" inked "$WORK/h.png" 40000
	for c in throughput speedup percent history-1; do
		dom "$PLOTS/$c.svg" "$WORK/$c.dom"
		check "Chromium reads $c.svg as SVG with its labels" sh -c \
			"grep -q '<svg' '$WORK/$c.dom' && grep -q '(llama.cpp)' '$WORK/$c.dom'"
		shot "$PLOTS/$c.svg" "$WORK/$c-shot.png" 1000,640
		check "$c.svg renders with ink" inked "$WORK/$c-shot.png" 10000
	done
fi

# ---- the published evidence: both runtimes, the headline figures -----------------------
if need_shared "charts of the published evidence"; then
	E1=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
	E2=$EVIDENCE/cua-lume-2026-08-10-m1-ultra-gemma4
	DB=$WORK/ev.db
	expect_code 0 "import the published evidence" SB import \
		--mapping "$E1/mapping.json" --mapping "$E2/mapping.json" "$E1" "$E2"
	expect_code 0 "plots of the evidence" SB report --plot "$WORK/evp"
	check "speedup: 11.08x, 16.36x, 7.20x, 14.54x; MLX-LM and llama.cpp labelled" \
		svg_text "$WORK/evp/speedup.svg" "11.08×" "16.36×" "7.20×" "14.54×" \
		"TinyLlama 1.1B Q4_K_M (llama.cpp) pp512" "Llama-3.2-3B-Instruct-4bit (MLX-LM) tg128"
	check "percent: Gemma pp512 shim at 99.6 % of bare metal" \
		svg_text "$WORK/evp/percent.svg" "99.6 %" "Gemma 4 12B IT QAT Q4_0 (llama.cpp) pp512"
	check "no history chart from one session per workload" test ! -e "$WORK/evp/history-1.svg"

	# A bundle carries the charts its README shows.
	expect_code 0 "export session 1" SB export 1 "$WORK/b1"
	for c in throughput speedup percent; do
		grep_in "$WORK/b1/README.md" "![$c](charts/$c.svg)" "README shows the $c chart"
		check "charts/$c.svg is in the bundle and well-formed" xmllint --noout "$WORK/b1/charts/$c.svg"
	done
	check "SHA256SUMS covers the charts" grep -q "  charts/speedup.svg\$" "$WORK/b1/SHA256SUMS"
	check "SHA256SUMS verifies" sh -c "cd '$WORK/b1' && sha256sum -c --quiet SHA256SUMS"
	DB=$WORK/b1.db
	expect_code 0 "the bundle imports" SB import "$WORK/b1"
	if [ -n "$CHROME" ]; then
		dom "$WORK/b1/charts/speedup.svg" "$WORK/b1.dom"
		grep_in "$WORK/b1.dom" "11.08×" "Chromium renders the bundle's speedup chart with its figures"
	fi
fi
test_done
