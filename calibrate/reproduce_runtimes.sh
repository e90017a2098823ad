#!/bin/sh
# Rebuilds the runtime parameter sets of gpu_models/h200.json (run after
# calibrate/reproduce_h200.sh, which rewrites that file's base set) and reprints
# every figure of docs/validation.md "Runtimes" from the committed
# measurements of networks as users run them (calibrate/data/h200/runtimes).
# CPU only; about 10 minutes on 2 cores (the two fits run side by side).
#   calibrate/reproduce_runtimes.sh [build/analyzer/tilewave] [--no-fit]
#   --no-fit: validate the committed gpu_models/h200.json as it is.
set -eu
tw=${1:-build/analyzer/tilewave}
fit=yes
[ "${2:-}" = "--no-fit" ] && fit=no
data=calibrate/data/h200/runtimes
derived=$data/derived
report=$data/report
mkdir -p "$derived" "$report" docs/img
runs="$data/fit_heldout/bench.jsonl $data/fit_heldout_remainder/bench.jsonl"
kernels="$data/fit_heldout/kernels.jsonl.gz $data/fit_heldout_remainder/kernels.jsonl.gz"
fresh_runs="$data/fresh/bench.jsonl"
fresh_kernels="$data/fresh/kernels.jsonl.gz"
# Measured after the eager BatchNorm-pass and reduction terms were frozen (5a06275).
fresh2_runs="$data/fresh2/bench.jsonl"
fresh2_kernels="$data/fresh2/kernels.jsonl.gz"

echo "== 1. pair: the fit set's runs, and every profiled forward's kernel time per class"
python3 -m calibrate.fit.select_runs --set fit --kernels "$(echo $kernels | tr ' ' ,)" \
  -o "$derived/fit_runs.jsonl" $runs
python3 -m calibrate.pair.class_times -o "$derived/class_times.jsonl" $kernels

if [ "$fit" = yes ]; then
  echo "== 2. fit each runtime's parameter set on the fit families only (both from the base parameters)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for rt in eager inductor; do
    "$tw" calibrate fit-runtime "$derived/fit_runs.jsonl" --runtime "$rt" --gpu h200 \
      --class-times "$derived/class_times.jsonl" --params launch_gap_us \
      -o "$tmp/$rt.json" >"$report/fit_$rt.txt" 2>&1 &
  done
  wait
  cat "$report/fit_eager.txt" "$report/fit_inductor.txt"
  # Both sets into one file, through tilewave's one GPU-file writer (the module beside the CLI).
  PYTHONPATH="$(dirname "$tw")/python" python3 - "$tmp/eager.json" "$tmp/inductor.json" gpu_models/h200.json <<'EOF'
import json, sys
import tilewave
eager, inductor = (json.load(open(p)) for p in sys.argv[1:3])
eager["runtime_params"]["inductor"] = inductor["runtime_params"]["inductor"]
tilewave.write_gpu(eager, sys.argv[3])
EOF
  echo "== 2b. carry the base and runtime sets to the other GPU files"
  carry_all() {
    for g in h100 h100-pcie a100 a10 l4 l40s t4 v100; do  # rtx3090/4090/5090, pro-6000: calibrate/validate/other_gpus.py --write
      # the target is also an input, so the new file is written beside it and then replaces it
      "$tw" calibrate carry --gpu h200 --to "$g" -o "gpu_models/$g.json.new" \
        --made-by "tilewave calibrate carry --gpu h200 --to $g -o gpu_models/$g.json"
      mv "gpu_models/$g.json.new" "gpu_models/$g.json"
    done
    # The Blackwell files take the H200's eager and inductor sets too (the fitted RTX cards have
    # none); other_gpus.py --write also refits the RTX cards from timm's published results.
    for g in rtx5090 rtx-pro-6000-maxq; do
      "$tw" calibrate carry --gpu rtx4090,rtx3090,h200 --to "$g" -o "gpu_models/$g.json.new" \
        --made-by "tilewave calibrate carry --gpu rtx4090,rtx3090,h200 --to $g -o gpu_models/$g.json"
      mv "gpu_models/$g.json.new" "gpu_models/$g.json"
    done
  }
  carry_all
  # The carried intervals are the H100's misses under the file just carried to it (docs/model.md
  # "Prediction intervals"); they change no prediction, so one more carry hands them on.
  PYTHONPATH="$(dirname "$tw")/python:." python3 -m calibrate.fit.intervals "$tw" --carried --write
  carry_all
fi

echo "== 3. networks: every runtime, set and batch (fit families, held-out families, the fresh set)"
bench="$data/fit_heldout/bench.jsonl,$data/fit_heldout_remainder/bench.jsonl"
kern="$data/fit_heldout/kernels.jsonl.gz,$data/fit_heldout_remainder/kernels.jsonl.gz"
if [ -f "$fresh_runs" ]; then
  bench="$bench,$fresh_runs"
  kern="$kern,$fresh_kernels"
fi
if [ -f "$fresh2_runs" ]; then
  bench="$bench,$fresh2_runs"
  kern="$kern,$fresh2_kernels"
fi
python3 -m calibrate.validate.runtimes --tilewave "$tw" --bench "$bench" --kernels "$kern" \
  --md "$report/networks.md" --json "$report/networks.json" --svg-prefix docs/img/h200_runtime

echo "== 4. convolutions and GEMMs as each runtime runs them, inside held-out and fresh networks"
for set in heldout fresh; do
  echo "-- $set"
  python3 -m calibrate.validate.library_kernels --tilewave "$tw" --kernels "$kern" --set "$set" \
    --md "$report/library_kernels_$set.md"
done

echo "== 5. which library eager PyTorch ran each conv and GEMM in"
python3 -m calibrate.validate.library_choice --tilewave "$tw" --kernels "$kern" | tee "$report/library_choice_eager.md"

echo "== 6. check over every profiled eager forward of the second fresh set: kernel time by kind"
python3 -m calibrate.validate.kernel_kinds "$fresh2_runs" --kernels "$fresh2_kernels" --tilewave "$tw" \
  | tee "$report/kernel_kinds_fresh2.txt"
