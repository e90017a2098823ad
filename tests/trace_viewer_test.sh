#!/bin/sh
# The predicted timeline (--trace-out, docs/report.md) in a real trace viewer:
# Debian's chromium, headless, opens its bundled DevTools and parses each trace
# with the Performance panel's own trace engine (tests/trace_viewer_check.py;
# Debian's chromium has no chrome://tracing, and Perfetto's trace processor is
# not packaged). For tiny_cnn and ResNet-18 at batch 2, as a plain loop and as
# a CUDA graph, the viewer must see: a GPU lane with one slice per kernel of
# the same run's `total.kernels` and their durations adding up to its
# `gpu_busy_us`; for the loop a host lane with one op per kernel, all inside
# ProfilerStep#0, and for the graph no host ops; a window the length of the
# step; no warnings and nothing logged to the console.
# Usage: trace_viewer_test.sh TILEWAVE REPO_ROOT OUT_DIR
# Exit 77 (ctest: skipped) when chromium or python3 is not installed.
set -eu
tw=$1
root=$2
out=$3
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: chromium is not installed (Debian: apt-get install chromium)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
mkdir -p "$out"
cases=""
for m in tiny_cnn resnet18; do
  model=$root/onnx_models/$m.onnx
  [ "$m" = tiny_cnn ] && model=$root/tests/data/tiny_cnn.onnx
  for mode in loop graph; do
    flags=""
    [ "$mode" = graph ] && flags="--graph"
    # shellcheck disable=SC2086
    "$tw" analyze "$model" --batch 2 $flags --trace-out "$out/${m}_$mode.trace.json" --format json -o "$out/${m}_$mode.json"
    cases="$cases ${m}_b2_$mode:$mode:$out/${m}_$mode.trace.json:$out/${m}_$mode.json"
  done
done
# shellcheck disable=SC2086
timeout 180 python3 "$root/tests/trace_viewer_check.py" "$browser" $cases
