#!/bin/sh
# docs/nas.md "Speed": `tilewave nas` over 1M candidates per shipped space on
# 1 and 2 threads (and more where the machine has them), wall time from start
# to the written CSV, peak memory. Prints one Markdown row per space.
# Usage: tests/bench/nas_speed.sh [TILEWAVE] [SAMPLES]
set -eu
tw=${1:-build/analyzer/tilewave}
samples=${2:-1000000}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out" "$out.err"' EXIT
threads="1 2"
[ "$(nproc)" -gt 2 ] && threads="$threads $(nproc)"
echo "| space | threads: candidates/s (peak memory) |"
echo "| --- | --- |"
for space in mobilenetv2 regnet resnet; do
  row="| $space |"
  for t in $threads; do
    /usr/bin/time -f "%M" "$tw" nas "$root/onnx_models/spaces/$space.json" --samples "$samples" --seed 1 \
      --threads "$t" -o "$out" 2> "$out.err"
    rate=$(grep -o '([0-9]*/s' "$out.err" | tr -d '(/s')
    kb=$(tail -1 "$out.err")
    row="$row $t: $rate ($(( kb / 1024 )) MB);"
  done
  echo "$row"
done
