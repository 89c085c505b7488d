#!/bin/bash
# The HTML page fits a 1,400 px window and no chart label is cut (issue
# 22 §3), measured by a real headless Chromium: the layout's scroll width,
# every table and paragraph, and every SVG text's box against its chart's
# box, on the demo's store (the published study, the simulated OS-update
# pair, six configurations of one model in two sessions).
. "$(dirname "$0")/lib.sh"

CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ] || ! command -v gnuplot >/dev/null; then
	skip "html fit: needs chromium and gnuplot (make deps installs them)"
	test_done; exit $?
fi
need_shared "the published evidence" || { test_done; exit $?; }
DB=$WORK/fit.db
SB() { "$SHIMBENCH" --db "$DB" "$@"; }
E1=$EVIDENCE/cua-lume-2026-08-09-m1-ultra
E2=$EVIDENCE/cua-lume-2026-08-10-m1-ultra-gemma4
OS=$FIXTURES/os-update
CF=$FIXTURES/configs
# measure FILE W: FILE's page in a W px window, measured after layout
measure() {
	cat "$1" - >"$WORK/m.html" <<'JS'
<script>
window.addEventListener('load', function () {
  var vw = window.innerWidth, out = {width: document.documentElement.scrollWidth, view: vw, charts: 0, texts: 0, cut: [], wide: []};
  document.querySelectorAll('.chart svg').forEach(function (s) {
    var b = s.getBoundingClientRect();
    out.charts++;
    s.querySelectorAll('text').forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (!t.textContent.trim()) return;
      out.texts++;
      if (r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5)
        out.cut.push(t.textContent.trim());
    });
  });
  document.querySelectorAll('table, p, li, h1, h2, h3, svg').forEach(function (e) {
    if (e.getBoundingClientRect().right > vw + 0.5) out.wide.push(e.tagName + ': ' + e.textContent.slice(0, 60));
  });
  var p = document.createElement('pre'); p.id = 'measure'; p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
});
</script>
JS
	# shellcheck disable=SC2086
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$WORK/chrome" --window-size="$2,1000" --dump-dom "file://$WORK/m.html" \
		2>>"$WORK/chrome.err" | python3 -c "
import html, re, sys
m = re.search(r'<pre id=\"measure\">([^<]*)</pre>', sys.stdin.read())
print(html.unescape(m.group(1)) if m else '{}')"
}
fits() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
m = json.loads(open(sys.argv[1]).read())
w, charts = int(sys.argv[2]), int(sys.argv[3])
assert m.get('view') == w, m
assert m['width'] <= w, ('the page is wider than the window', m['width'])
assert not m['wide'], m['wide']
assert m['charts'] >= charts and m['texts'] > 20 * charts, m
assert not m['cut'], ('chart labels cut', m['cut'])
PY
}

expect_code 0 "import the published study" SB import --mapping "$E1/mapping.json" --mapping "$E2/mapping.json" "$E1" "$E2"
expect_code 0 "report html of the study" SB report --format html -o "$WORK/study.html"
measure "$WORK/study.html" 1400 >"$WORK/study.json"
check "the study's page: 1,400 px, nothing wider, no chart label cut" fits "$WORK/study.json" 1400 3
expect_code 0 "import the OS-update pair and six configurations in two sessions" SB import \
	--mapping "$OS/base.mapping.json" --mapping "$OS/slow.mapping.json" \
	--mapping "$CF/a.mapping.json" --mapping "$CF/b.mapping.json" "$OS/base" "$OS/slow" "$CF/a" "$CF/b"
expect_code 0 "report html of three studies" SB report --format html -o "$WORK/all.html"
measure "$WORK/all.html" 1400 >"$WORK/all.json"
check "three studies: 1,400 px, nothing wider, no chart label cut" fits "$WORK/all.json" 1400 4
check "the sessions kept apart in the page" python3 -c "
import re; t = open('$WORK/all.html').read()
assert '<th>Session</th>' in t
assert len(re.findall(r'<td>calib 27M F16 \(llama.cpp\)</td><td>pp128</td><td>[34]</td>', t)) == 2"
check "no field column that only tells models apart" python3 -c "
t = open('$WORK/all.html').read(); head = t[t.index('<h2>Speedup'):t.index('<h2>Charts')]
assert '<th>flash_attn</th>' in head and '<th>n_threads</th>' in head
assert '<th>backends</th>' not in head and '<th>build_commit</th>' not in head"
test_done
