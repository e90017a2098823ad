#!/bin/sh
# Installs the build into a temporary prefix and runs the installed tilewave
# from outside the checkout: it must use the installed GPU database (a mark
# put into the installed copy shows in its output), and the manual and the
# search spaces must be in place. With PYTHON given, the installed Python
# module must import from outside the checkout and read the same installed
# data. Usage: install_test.sh BUILD_DIR REPO_ROOT [PYTHON]
set -eu
build=$(cd "$1" && pwd)
root=$(cd "$2" && pwd)
python=${3:-}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
sed -i 's/"name": "NVIDIA H200 SXM 141GB"/"name": "H200 from the installed database"/' \
  "$prefix/share/tilewave/gpu_models/h200.json"
cd "$prefix"
out=$(env -u TILEWAVE_GPU_DIR -u TILEWAVE_DATA "$prefix/bin/tilewave" analyze "$root/onnx_models/resnet50.onnx" --gpu h200)
echo "$out" | grep -q "H200 from the installed database" ||
  { echo "FAIL: the installed tilewave did not use the installed GPU database"; echo "$out" | head -5; exit 1; }
# TILEWAVE_DATA overrides the installed data.
mkdir -p "$prefix/alt" && cp -r "$root/gpu_models" "$prefix/alt/gpu_models"
TILEWAVE_DATA="$prefix/alt" "$prefix/bin/tilewave" analyze "$root/onnx_models/resnet50.onnx" --gpu h200 |
  grep -q "NVIDIA H200 SXM 141GB" || { echo "FAIL: TILEWAVE_DATA was not used"; exit 1; }
for f in share/doc/tilewave/tilewave-help.txt share/tilewave/spaces/mobilenetv2.json; do
  [ -s "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
"$prefix/bin/tilewave" nas "$prefix/share/tilewave/spaces/resnet.json" --samples 10 -o "$prefix/rows.csv" 2>/dev/null
# CSV: the `# tilewave VERSION` line, the column names, then a row per candidate (the header is rows.csv.meta.json).
[ "$(grep -vc '^#' "$prefix/rows.csv")" = 11 ] && [ -s "$prefix/rows.csv.meta.json" ] ||
  { echo "FAIL: the installed nas wrote no rows"; exit 1; }
if [ -n "$python" ]; then
  env -u TILEWAVE_GPU_DIR -u TILEWAVE_DATA PYTHONPATH="$prefix/lib/python3/dist-packages" "$python" -c '
import sys, tilewave
assert tilewave.__file__.startswith(sys.argv[1]), tilewave.__file__
r = tilewave.analyze(sys.argv[2], gpu="h200")
assert r["gpu_name"] == "H200 from the installed database", r["gpu_name"]
assert tilewave.Space("resnet").scorer().score(tilewave.Space("resnet").sample(1, 0))["time_us"] > 0
' "$prefix" "$root/onnx_models/resnet50.onnx" || { echo "FAIL: the installed Python module"; exit 1; }
fi
# The .deb: the same files, depending on Debian's packages.
(cd "$build" && cpack -G DEB -B "$prefix/deb" >/dev/null)
dpkg-deb -c "$prefix"/deb/tilewave_*.deb | grep -q "usr/share/tilewave/gpu_models/h200.json" ||
  { echo "FAIL: the .deb lacks the GPU database"; exit 1; }
if [ -n "$python" ]; then
  dpkg-deb -c "$prefix"/deb/tilewave_*.deb | grep -q "usr/lib/python3/dist-packages/tilewave" ||
    { echo "FAIL: the .deb lacks the Python module"; exit 1; }
fi
echo "installed tilewave works from $prefix; the .deb holds it"
