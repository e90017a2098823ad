#!/bin/sh
# Golden outputs of every view (docs/report.md): each command's output on
# the small models in tests/data must equal tests/data/golden/<view>.txt
# byte for byte. After an intended change, regenerate them with
#   TILEWAVE_UPDATE_GOLDEN=1 tests/golden_test.sh build/analyzer/tilewave .
# and review the diff in git.
# Usage: golden_test.sh TILEWAVE REPO_ROOT
set -u
tw=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$2"
golden=tests/data/golden
# The GPU files the goldens are computed with: frozen copies (tests/data/gpus/README.md),
# so a refit of gpu_models/ changes the predictions the docs quote, not the views' goldens.
TILEWAVE_GPU_DIR=$(pwd)/tests/data/gpus
export TILEWAVE_GPU_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
m=tests/data/tiny_cnn.onnx
# Every output names the version (docs/report.md "Version"): the goldens say
# VERSION there, so that a release changes none of them.
version=$("$tw" --version | sed 's/^tilewave //; s/\./\\./g')
check() {
  view=$1
  shift
  if ! "$tw" "$@" > "$tmp/$view.out" 2> "$tmp/$view.err"; then
    echo "FAIL: $view: tilewave $* exited $?"; cat "$tmp/$view.err"; fails=$((fails + 1)); return
  fi
  sed -e "s/\"tilewave_version\": \"$version\"/\"tilewave_version\": \"VERSION\"/; s/tilewave $version\b/tilewave VERSION/g" \
    "$tmp/$view.out" > "$tmp/$view.txt"
  if [ "${TILEWAVE_UPDATE_GOLDEN:-}" = 1 ]; then cp "$tmp/$view.txt" "$golden/$view.txt"; return; fi
  if ! diff -u "$golden/$view.txt" "$tmp/$view.txt" > "$tmp/$view.diff"; then
    echo "FAIL: $view differs from $golden/$view.txt:"; head -40 "$tmp/$view.diff"; fails=$((fails + 1))
  fi
}
check analyze_table analyze "$m" --batch 4
check analyze_json analyze "$m" --batch 4 --format json
check analyze_csv analyze "$m" --batch 4 --format csv
check analyze_node_csv analyze "$m" --batch 4 --format csv --by node
check analyze_op_csv analyze "$m" --batch 4 --format csv --by op
check rank_table rank "$m" tests/data/depthwise.onnx --batch 4 --threads 1
check rank_json rank "$m" tests/data/depthwise.onnx --batch 4 --threads 1 --format json
check sweep_table sweep "$m" --batch 1,8
check sweep_json sweep "$m" --batch 1,8 --format json
check compare_table compare "$m" --gpu h200,a100 --runtime eager,tensorrt --batch 4
check compare_json compare "$m" --gpu h200 --batch 4 --format json
check advise_table advise "$m" --batch 4
check advise_json advise "$m" --batch 4 --format json
check check_table check onnx_models/runtime/resnet18.onnx --trace tests/data/traces/resnet18_b1_eager_h200.profiler.json.gz --batch 1 --layout nhwc --no-amp
check check_json check onnx_models/runtime/resnet18.onnx --trace tests/data/traces/resnet18_b1_eager_h200.profiler.json.gz --batch 1 --layout nhwc --no-amp --format json
check report_html report "$m" --batch 4 --batches 1,4 --compare a100 -o -
check layers_jsonl layers calibrate/measure/runner/smoke.jsonl
check nas_csv nas onnx_models/spaces/resnet.json --samples 5 --seed 2
[ "$fails" = 0 ] && echo "all views equal their golden outputs"
exit $((fails > 0))
