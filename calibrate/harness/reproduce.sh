#!/bin/sh
# Reprints every figure of docs/validation.md "timm's harness" and
# docs/calibration.md "Host" and "Layout and precision sets" from the
# committed H200 data (calibrate/data/h200/timm_harness/), into
# calibrate/data/h200/timm_harness/report/.
# usage: calibrate/harness/reproduce.sh build/analyzer/tilewave
set -eu
tw=$1
here=$(dirname "$0")
out=$here/../data/h200/timm_harness/report
mkdir -p "$out"
python3 "$here/fit_host.py" "$tw" >"$out/fit_host.txt"
python3 "$here/fit_passes.py" "$tw" >"$out/fit_passes.txt"
for set in fit held-out fresh; do
  python3 "$here/kernel_classes.py" "$tw" --set $set >"$out/kernel_classes_$set.txt"
done
python3 "$here/validate.py" "$tw" >"$out/validate.txt"
python3 "$here/validate.py" "$tw" --markdown >"$out/validate.md"
python3 "$here/repeatability.py" "$tw" >"$out/repeatability.txt"
cat "$out/validate.txt"
