#!/bin/sh
# Renders a report of a simulated calibration in headless Chromium and checks that the page really draws:
# a screenshot is taken, the DOM Chromium built holds every chart's series paths and axis labels, and the
# page logged no console errors. Skips (77) where Chromium is not installed.
# usage: render_check.sh NCCL_AUTOTUNE WORK_DIR
set -eu
tool=$1
work=$2
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "SKIP: no chromium: install Debian's 'chromium' package to run the report rendering check"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/store"
"$tool" tune --simulate --example h100-8x --collectives allreduce,allgather --min-bytes 1K --max-bytes 256M \
  --strategy exhaustive --store "$work/store" --name render-check >"$work/tune.txt"
"$tool" report "$(ls "$work"/store/render-check*.toml)" -o "$work/report.html" >/dev/null

# Chromium needs a writable home and no session bus; each run gets its own profile directory.
export HOME="$work/home"
mkdir -p "$HOME"
run_browser() {
  timeout 90 "$browser" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --disable-extensions --hide-scrollbars --user-data-dir="$work/chromium-profile" \
    --enable-logging=stderr --v=0 --window-size=1400,3000 "$@" "file://$work/report.html"
}
run_browser --screenshot="$work/report.png" 2>"$work/screenshot.log" >/dev/null
run_browser --dump-dom 2>"$work/dom.log" >"$work/dom.html"

fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
png_size=$(wc -c <"$work/report.png" 2>/dev/null || echo 0)
check "screenshot written ($png_size bytes)" '[ "$png_size" -gt 20000 ]'
check "PNG signature" 'head -c 8 "$work/report.png" | od -An -c | grep -q "P   N   G"'
html_paths=$(grep -o '<path class="series' "$work/report.html" | wc -l)
dom_paths=$(grep -o '<path class="series' "$work/dom.html" | wc -l)
check "series paths in the rendered DOM ($dom_paths) equal those in the file ($html_paths), and there are some" \
  '[ "$dom_paths" -eq "$html_paths" ] && [ "$dom_paths" -gt 4 ]'
svgs=$(grep -o '<svg ' "$work/dom.html" | wc -l)
xl=$(grep -o 'class="axis-label x-label"' "$work/dom.html" | wc -l)
yl=$(grep -o 'class="axis-label y-label"' "$work/dom.html" | wc -l)
check "every chart ($svgs) has an x and a y axis label ($xl, $yl)" '[ "$svgs" -ge 2 ] && [ "$xl" -eq "$svgs" ] && [ "$yl" -eq "$svgs" ]'
# Every candidate in a chart's legend has its own path in that chart: compare names per chart.
legend_missing=$(awk '
  /<svg / { delete series; delete legend; inlegend = 0 }
  /<path class="series/ { if (match($0, /data-series="[^"]*"/)) series[substr($0, RSTART + 13, RLENGTH - 14)] = 1 }
  /<g class="legend"/ { inlegend = 1 }
  inlegend && /<text/ { t = $0; sub(/.*<text[^>]*>/, "", t); sub(/<\/text>.*/, "", t); if (t != "rule range") legend[t] = 1 }
  /<\/svg>/ { for (n in legend) if (!(n in series)) { print n; missing++ } inlegend = 0 }
  END { exit 0 }' "$work/dom.html" | wc -l)
check "every legend entry has a drawn path ($legend_missing missing)" '[ "$legend_missing" -eq 0 ]'
check "the default is drawn distinctly" 'grep -q "class=\"series default\"" "$work/dom.html"'
# No two lines of a chart share a colour; the busbw axis (the first chart) is ticked at 1, 2 or 5 x 10^k.
shared=$(awk '
  /<svg / { delete seen }
  /<path class="series/ { if (match($0, /stroke="[^"]*"/)) { c = substr($0, RSTART, RLENGTH); if (c in seen) n++; seen[c] = 1 } }
  END { print n + 0 }' "$work/dom.html")
check "no colour shared by two lines of one chart ($shared)" '[ "$shared" -eq 0 ]'
odd_ticks=$(awk '/<svg / { charts++ } charts == 1 && /class="y-tick"/ { t = $0; sub(/.*class="y-tick"[^>]*>/, "", t); sub(/<.*/, "", t); if (t !~ /^(0\.0*)?[125]0*$/) print t }' "$work/dom.html" | wc -l)
check "the busbw axis is ticked at 1, 2, 5 x 10^k ($odd_ticks other ticks)" '[ "$odd_ticks" -eq 0 ]'
check "the busbw axis is logarithmic" 'grep -q "bus bandwidth (GB/s, log scale)" "$work/dom.html"'
check "the simulated banner is shown" 'grep -q "SIMULATED" "$work/dom.html"'
console_errors=$(grep -h 'CONSOLE' "$work/screenshot.log" "$work/dom.log" | grep -ci 'error\|uncaught' || true)
check "no console errors ($console_errors)" '[ "$console_errors" -eq 0 ]'
if [ "$fail" -ne 0 ]; then
  echo "render check failed; files in $work"
  exit 1
fi
echo "report rendered: $dom_paths series paths in $svgs charts, screenshot $work/report.png ($png_size bytes)"
