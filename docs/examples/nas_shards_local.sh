#!/bin/sh
# A sharded `tilewave nas` run on one machine: N shards in parallel, merged,
# and checked against the same sampling done in one piece (docs/nas.md).
# usage: docs/examples/nas_shards_local.sh [SAMPLES] [SHARDS] [TILEWAVE]
set -eu
samples=${1:-20000}
shards=${2:-4}
tw=${3:-build/analyzer/tilewave}
space=onnx_models/spaces/mobilenetv2.json
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=0
while [ "$i" -lt "$shards" ]; do
  "$tw" nas "$space" --samples "$samples" --seed 7 --shard "$i/$shards" -o "$out/part_$i.csv" &
  i=$((i + 1))
done
wait
"$tw" nas-merge "$out"/part_*.csv -o "$out/merged.csv"
"$tw" nas "$space" --samples "$samples" --seed 7 -o "$out/whole.csv"
tail -n +3 "$out/merged.csv" >"$out/merged.rows"
tail -n +3 "$out/whole.csv" >"$out/whole.rows"
if cmp -s "$out/merged.rows" "$out/whole.rows"; then
  echo "merged $shards shards: $(wc -l <"$out/whole.rows") lines, identical to the unsharded run"
else
  echo "merged shards differ from the unsharded run" >&2
  exit 1
fi
