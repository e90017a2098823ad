#!/bin/sh
# Issue 20: no data race where tilewave runs threads. Under ThreadSanitizer
# (a TILEWAVE_TSAN build), nas and rank on 8 worker threads, 8 Python
# threads sharing one Scorer, and 8 Python threads analysing on GPUs of five
# architectures (whose files a shared cache holds), must run without a
# report and give one thread's answers. Usage: tsan_test.sh TILEWAVE MODULE_DIR TSAN_PYTHON REPO_ROOT
set -eu
tw=$1 module_dir=$2 tsan_python=$3 root=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TSAN_OPTIONS="halt_on_error=1 exitcode=66"
space=$root/onnx_models/spaces/mobilenetv2.json
"$tw" nas "$space" --samples 4000 --threads 1 -o "$tmp/one.csv" 2>/dev/null
"$tw" nas "$space" --samples 4000 --threads 8 -o "$tmp/eight.csv"
cmp "$tmp/one.csv" "$tmp/eight.csv"
"$tw" rank "$root/onnx_models/resnet18.onnx" "$root/onnx_models/mobilenet_v2.onnx" "$root/tests/data/tiny_cnn.onnx" \
  "$root/onnx_models/efficientnet_b0.onnx" --threads 8 >"$tmp/rank.txt"
# The Python tests of threads, on the instrumented module.
"$tsan_python" "$module_dir" -q -s -p no:cacheprovider "$root/tests/python/test_tilewave.py" -k threads
echo "tsan: nas, rank, the Python Scorer and Python threads on five architectures ran without a data race"
