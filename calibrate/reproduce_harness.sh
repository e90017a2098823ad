#!/bin/sh
# Reprints every figure of docs/validation.md "timm's harness" and
# docs/calibration.md "Host" and "Layout and precision sets" from the
# committed H200 data (calibrate/data/h200/timm_harness/), into
# calibrate/data/h200/timm_harness/report/. The harness's scripts, by stage:
# pair/harness_runs.py (the measured rows, the split, the predictions),
# pair/harness_kernel_classes.py, fit/harness_host.py, fit/harness_passes.py,
# validate/harness.py, validate/harness_repeatability.py.
# usage: calibrate/reproduce_harness.sh build/analyzer/tilewave
set -eu
tw=$1
here=$(dirname "$0")
out=$here/data/h200/timm_harness/report
mkdir -p "$out"
python3 "$here/fit/harness_host.py" "$tw" >"$out/fit_host.txt"
python3 "$here/fit/harness_passes.py" "$tw" >"$out/fit_passes.txt"
for set in fit held-out fresh; do
  python3 "$here/pair/harness_kernel_classes.py" "$tw" --set $set >"$out/kernel_classes_$set.txt"
done
python3 "$here/validate/harness.py" "$tw" >"$out/validate.txt"
python3 "$here/validate/harness.py" "$tw" --markdown >"$out/validate.md"
python3 "$here/validate/harness_repeatability.py" "$tw" >"$out/repeatability.txt"
cat "$out/validate.txt"
