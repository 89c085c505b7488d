#!/bin/bash
# report --format html and --plot: real gnuplot, rendered by headless
# Chromium; hostile labels and directory names.
. "$(dirname "$0")/lib.sh"

DB=$WORK/h.db
# A raw evidence directory made from a parser fixture, with a hostile
# model label and variant names.
RAW=$WORK/raw
mkdir -p "$RAW"
# Two distinct outputs: the same file twice would be refused as counting
# one process twice.
cp "$FIXTURES/llama-bench/gen2026-evidence.json" "$RAW/host.json"
sed 's/"avg_ts": \([0-9]*\)\./"avg_ts": 1\1./' "$FIXTURES/llama-bench/gen2026-evidence.json" >"$RAW/guest.json"
cmp -s "$RAW/host.json" "$RAW/guest.json" && not_ok "guest.json differs from host.json"
(cd "$RAW" && sha256sum host.json guest.json >SHA256SUMS)
cat >"$WORK/map.json" <<'JSON'
{"shimbench_mapping": 1,
 "models": {"m": {"label": "<script>alert(1)</script> & 'quoted' \"model\""}},
 "runs": [
  {"stdout": "host.json", "target": "host", "variant": "bare-metal", "role": "bare-metal", "model": "m"},
  {"stdout": "guest.json", "target": "guest", "variant": "shim", "role": "shim", "model": "m"}]}
JSON
expect_code 0 "import a directory with a hostile label" "$SHIMBENCH" --db "$DB" import --mapping "$WORK/map.json" "$RAW"

expect_code 0 "report --format html" "$SHIMBENCH" --db "$DB" report --format html -o "$WORK/r.html"
check "no raw script tag from the label" sh -c "! grep -q '<script>' '$WORK/r.html'"
grep_in "$WORK/r.html" "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;quoted&#39; &quot;model&quot;" "label escaped"
grep_in "$WORK/r.html" '<div class="chart" id="chart-throughput">' "throughput chart embedded"

PLOTS="$WORK/plots it's \$(touch pwned) & co"
expect_code 0 "report --plot into a hostile directory name" \
	"$SHIMBENCH" --db "$DB" report --format csv --plot "$PLOTS" --png
check "throughput.svg is well-formed XML" xmllint --noout "$PLOTS/throughput.svg"
is_png() { head -c 8 "$1" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'; }
check "throughput.png is a PNG" is_png "$PLOTS/throughput.png"
check "no speedup chart without a stock run" test ! -e "$PLOTS/speedup.svg"
check "nothing ran the directory name" test ! -e pwned -a ! -e "$WORK/pwned"
expect_code 2 "--png without --plot" "$SHIMBENCH" --db "$DB" report --png

# Without gnuplot: the page says so; --plot is an environment error.
expect_code 0 "html without gnuplot" env PATH=/nonexistent "$SHIMBENCH" --db "$DB" report --format html
grep_in "$WORK/out" "Charts need gnuplot" "the page says charts need gnuplot"
expect_code 3 "--plot without gnuplot" env PATH=/nonexistent "$SHIMBENCH" --db "$DB" report --plot "$WORK/p2"
grep_in "$WORK/err" "--plot needs gnuplot" "says what is missing"

# The published evidence, rendered by a real browser.
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
	skip "html rendering: no chromium on PATH (make deps installs it)"
elif need_shared "html report of the published evidence"; then
	E1=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
	expect_code 0 "import the TinyLlama evidence" "$SHIMBENCH" --db "$WORK/ev.db" import \
		--mapping "$EVIDENCE/cua-lume-2026-08-09-m1-ultra/mapping.json" "$E1"
	expect_code 0 "html report" "$SHIMBENCH" --db "$WORK/ev.db" report --format html -o "$WORK/ev.html"
	flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
--disable-background-networking --disable-component-update --disable-sync \
--user-data-dir=$WORK/chrome"
	# shellcheck disable=SC2086
	timeout 120 "$CHROME" $flags --dump-dom "file://$WORK/ev.html" >"$WORK/dom.html" 2>"$WORK/chrome.err"
	grep_in "$WORK/dom.html" "<td class=\"num\">11.08×</td>" "rendered page shows the 11.08× speedup"
	grep_in "$WORK/dom.html" "<td class=\"num\">16.36×</td>" "and the 16.36× speedup"
	n=$(grep -o "<svg" "$WORK/dom.html" | wc -l)
	[ "$n" -eq 3 ] && ok "three charts in the rendered DOM" || not_ok "charts in the DOM: $n"
	# shellcheck disable=SC2086
	timeout 120 "$CHROME" $flags --window-size=1200,1600 --screenshot="$WORK/ev.png" \
		"file://$WORK/ev.html" >/dev/null 2>>"$WORK/chrome.err"
	check "screenshot taken" test -s "$WORK/ev.png"
	check "screenshot is 1200x1600" python3 -c "
import struct; d = open('$WORK/ev.png', 'rb').read(24)
assert d[:8] == b'\x89PNG\r\n\x1a\n' and struct.unpack('>II', d[16:24]) == (1200, 1600)"
fi
test_done
