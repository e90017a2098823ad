#!/bin/sh
# End-to-end `tilewave layers` throughput: 200,000 layers (the calibration
# layer set, repeated) through parse, predict and JSON output, one process.
# usage: tests/bench/layers_throughput.sh build/analyzer/tilewave LAYERS.jsonl
set -eu
tw=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=200000
awk -v n=$n 'BEGIN{c=0} {line[c++]=$0} END{for(i=0;i<n;i++) print line[i%c]}' "$src" >"$tmp/in.jsonl"
start=$(date +%s.%N)
"$tw" layers "$tmp/in.jsonl" --gpu h200 -o "$tmp/out.jsonl"
end=$(date +%s.%N)
lines=$(wc -l <"$tmp/out.jsonl")
awk -v s="$start" -v e="$end" -v n="$lines" 'BEGIN{printf "%d layers in %.2f s = %.0f layers/s (parse + predict + write)\n", n, e-s, n/(e-s)}'
