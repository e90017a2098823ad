#!/bin/sh
# The HTML report in a real browser (docs/report.md): Debian's chromium,
# headless, opens the reports of ResNet-50 and EfficientNet-B0 and the two side
# by side (report --vs) from disk with no network. Each must render all its
# charts (7 for one network: timeline, both roofline panels, slowest kernels,
# losses, batch, GPUs; 9 side by side: two step splits, four roofline panels,
# batch, two timelines; the page's own check sets data-charts to the number
# of charts with marks in them), log nothing to the console, reference
# nothing online, and give a screenshot.
# Usage: report_browser_test.sh TILEWAVE REPO_ROOT OUT_DIR
# Exit 77 (ctest: skipped) when chromium is not installed.
set -eu
tw=$1
root=$2
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
    --enable-logging=stderr --v=0 "$@"
}
for m in resnet50 efficientnet_b0 resnet50_vs_efficientnet_b0; do
  html="$out/$m.html"
  if [ "$m" = resnet50_vs_efficientnet_b0 ]; then
    charts=9
    "$tw" report "$root/onnx_models/resnet50.onnx" --vs "$root/onnx_models/efficientnet_b0.onnx" --gpu h200 --batch 16 -o "$html"
    grep -q 'Why one uses the GPU better' "$html" || fail "$m.html has no findings"
  else
    charts=7
    "$tw" report "$root/onnx_models/$m.onnx" --gpu h200 --batch 16 --compare a100,l4 -o "$html"
  fi
  if grep -Eq '(src|href)="(https?:)?//' "$html"; then fail "$m.html loads something from the network"; fi
  run_browser --virtual-time-budget=5000 --dump-dom "file://$html" > "$out/$m.dom.html" 2> "$out/$m.console.txt" ||
    fail "chromium could not open $m.html (see $out/$m.console.txt)"
  grep -q "data-charts=\"$charts\"" "$out/$m.dom.html" ||
    fail "$m.html: not every chart rendered ($(grep -o 'data-charts="[0-9]*"' "$out/$m.dom.html" || echo 'the check did not run'))"
  if grep -q "CONSOLE" "$out/$m.console.txt"; then
    grep "CONSOLE" "$out/$m.console.txt"
    fail "$m.html wrote to the browser console"
  fi
  run_browser --window-size=1100,4400 --screenshot="$out/$m.png" "file://$html" 2>> "$out/$m.console.txt" ||
    fail "no screenshot of $m.html"
  [ -s "$out/$m.png" ] || fail "the screenshot of $m.html is empty"
  echo "ok: $m.html renders $charts charts, a quiet console, screenshot $out/$m.png"
done
