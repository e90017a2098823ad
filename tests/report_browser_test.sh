#!/bin/sh
# The HTML report in a real browser (docs/report.md "Two networks", its browser test):
# Debian's chromium, headless, opens the reports of ResNet-50 and
# EfficientNet-B0 and the two side by side (report --vs) from disk with no
# network, each at 700, 1100 and 1600 px wide. Each must render all its
# charts (the page's own check sets data-charts to the number of charts with
# marks in them), log nothing to the console, reference nothing online, give
# a screenshot at each width, and lay out without overlapping, clipped,
# wrapped or shrunken text: tests/report_layout_check.js, appended to a copy
# of the page, reads the layout the browser computed and writes its verdict
# into data-layout.
# Usage: report_browser_test.sh TILEWAVE REPO_ROOT OUT_DIR
# Exit 77 (ctest: skipped) when chromium is not installed.
set -eu
tw=$1
root=$(cd "$2" && pwd)
out=$3
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: chromium is not installed (Debian: apt-get install chromium)"; exit 77; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run_browser() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 --hide-scrollbars "$@"
}
# The layout check's verdict in a dumped DOM, entities decoded, one defect a line.
layout_of() {
  grep -o 'data-layout="[^"]*"' "$1" | sed 's/^data-layout="//; s/"$//; s/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g; s/ || /\n/g'
}
failed=0
for m in resnet50 efficientnet_b0 resnet50_vs_efficientnet_b0; do
  html="$out/$m.html"
  # One network: timeline, both roofline panels, slowest kernels, losses, the three batch panels, GPUs;
  # side by side: the three batch panels, two step splits, four roofline panels, two timelines.
  if [ "$m" = resnet50_vs_efficientnet_b0 ]; then
    charts=11
    "$tw" report "$root/onnx_models/resnet50.onnx" --vs "$root/onnx_models/efficientnet_b0.onnx" --gpu h200 --batch 16 -o "$html"
    grep -q 'Which is faster' "$html" || fail "$m.html does not lead with which network is faster"
  else
    charts=9
    "$tw" report "$root/onnx_models/$m.onnx" --gpu h200 --batch 16 --compare a100,l4 -o "$html"
  fi
  if grep -Eq '(src|href)="(https?:)?//' "$html"; then fail "$m.html loads something from the network"; fi
  sed "s#</body>#<script src=\"file://$root/tests/report_layout_check.js\"></script></body>#" "$html" > "$out/$m.check.html"
  for width in 700 1100 1600; do
    run_browser --window-size="$width,4400" --virtual-time-budget=5000 --screenshot="$out/$m.$width.png" \
      --dump-dom "file://$out/$m.check.html" > "$out/$m.$width.dom.html" 2> "$out/$m.$width.console.txt" ||
      fail "chromium could not open $m.html at $width px (see $out/$m.$width.console.txt)"
    [ -s "$out/$m.$width.png" ] || fail "the screenshot of $m.html at $width px is empty"
    grep -q "data-charts=\"$charts\"" "$out/$m.$width.dom.html" ||
      fail "$m.html: not every chart rendered ($(grep -o 'data-charts="[0-9]*"' "$out/$m.$width.dom.html" || echo 'the check did not run'))"
    if grep -q "CONSOLE" "$out/$m.$width.console.txt"; then
      grep "CONSOLE" "$out/$m.$width.console.txt"
      fail "$m.html wrote to the browser console"
    fi
    layout=$(layout_of "$out/$m.$width.dom.html")
    if [ "$layout" = ok ]; then
      echo "ok: $m.html at $width px: $charts charts, a quiet console, no overlap or clipping, screenshot $out/$m.$width.png"
    else
      echo "FAIL: $m.html at $width px (screenshot $out/$m.$width.png):"
      echo "${layout:-the layout check did not run}" | sed 's/^/  /'
      failed=$((failed + 1))
    fi
  done
done
[ "$failed" = 0 ] || fail "$failed page layouts have defects"
