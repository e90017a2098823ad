#!/usr/bin/env bash
# One call on the GPU machine (device tool): records the GPU's state, runs the
# runner's self-test, measures a layer set, then optionally times whole
# networks. Everything lands in $OUT.
# usage: calibrate/measure/h200_run.sh LAYERS.jsonl FIRST_LINE MEASURE_SECONDS NETBENCH_SECONDS
#   FIRST_LINE lets a second call continue where a timed-out one stopped;
#   NETBENCH_SECONDS 0 skips the network bench.
# Environment: NETBENCH_MODELS (netbench --models: default the 23 bundled; a set
#   name of onnx_models/zoo.py for a validation-only set); PROFILE_MODELS (a comma list or a set name) also
#   records per-kernel profiles of those networks at batch 1, 16 and 128
#   (PROFILE_S seconds at most, default 300).
set -uo pipefail
layers=$1 first=$2 measure_s=$3 net_s=$4
out=${OUT:?OUT must name the output folder}
. calibrate/measure/runner/gpu_env.sh
bin=calibrate/measure/runner/build/tilewave-calibrate

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit,persistence_mode --format=csv >"$out/gpu_state.csv" 2>&1
cat "$out/gpu_state.csv"
if [ "$first" = 1 ]; then
  timeout 60 "$bin" --self-test >"$out/selftest.log" 2>&1
  echo "self-test exit $? ($(grep -c PASS "$out/selftest.log") PASS lines, $(grep -c FAIL "$out/selftest.log") FAIL lines)"
fi
if [ "$measure_s" -gt 0 ]; then
  tail -n +"$first" "$layers" >/tmp/layers_part.jsonl
  start=$(date +%s)
  timeout "$measure_s" "$bin" measure /tmp/layers_part.jsonl -o "$out/measured.jsonl" 2>"$out/measure.log"
  echo "measure exit $? after $(( $(date +%s) - start )) s: $(( $(wc -l <"$out/measured.jsonl") - 1 )) of $(wc -l </tmp/layers_part.jsonl) layers from line $first"
  tail -2 "$out/measure.log"
fi
if [ "$net_s" -gt 0 ]; then
  PYTHONUNBUFFERED=1 timeout $((net_s + 60)) python3 -m calibrate.measure.netbench.netbench --out "$out/netbench.jsonl" \
    ${NETBENCH_MODELS:+--models "$NETBENCH_MODELS"} \
    --deadline-s "$net_s" 2>"$out/netbench.log"
  echo "netbench exit $?"
  tail -5 "$out/netbench.log"
fi
if [ -n "${PROFILE_MODELS:-}" ]; then
  PYTHONUNBUFFERED=1 timeout "${PROFILE_S:-300}" python3 -m calibrate.measure.netbench.profile_kernels --out "$out/network_kernels.jsonl" \
    --models "$PROFILE_MODELS" --batch 1,16,128 2>"$out/profile.log"
  echo "profile exit $? ($(wc -l <"$out/network_kernels.jsonl") records)"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
