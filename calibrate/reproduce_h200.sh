#!/bin/sh
# Rebuilds the calibrated GPU files and every figure in docs/calibration.md and
# docs/validation.md from the committed H200 measurements (calibrate/data/h200).
# CPU only; about a minute.
#   calibrate/reproduce_h200.sh [build/analyzer/tilewave]
set -eu
tw=${1:-build/analyzer/tilewave}
data=calibrate/data/h200
report=$data/report
mkdir -p "$report"

echo "== 0. layers to fit: the runner's (layer set + grouped-width sweep), with pooling and LayerNorm as"
echo "   PyTorch runs them (its own kernels, not cuDNN's pooling or the runner's row kernel)"
python3 -m calibrate.pair.framework_layers "$tw" "$data/network_kernels.jsonl.gz" "$data/framework_pytorch.jsonl"
# A derived file in the report folder (not committed), so the GPU file's provenance names a repository path.
cat "$data/measured.jsonl" "$data/grouped_measured.jsonl" | grep -v '"op":"pool"' | grep -v '"op":"softmax"' \
  >"$report/measured_runner.jsonl"
layers="$report/measured_runner.jsonl $data/framework_pytorch.jsonl"

echo "== 1. fit the layer-scope parameters (fp16, 20% of layers held out, seed 1)"
"$tw" calibrate fit $layers --gpu "$data/h200_datasheet.json" --dtype fp16 \
  -o "$report/h200_layers.json" 2>&1 | tee "$report/fit_layers.txt"

echo "== 2. fit the network-scope parameters, 12 networks held out (seed 1): the L2 terms on elementwise"
echo "   kernels timed inside the fitted networks, the launch gap on their latencies"
python3 -m calibrate.pair.eltwise_in_network "$tw" "$data/network_kernels.jsonl.gz" "$data/eltwise_in_network.jsonl"
"$tw" calibrate fit-networks "$data/netbench.jsonl" --gpu "$report/h200_layers.json" \
  --kernel-times "$data/eltwise_in_network.jsonl" -o gpu_models/h200.json 2>&1 | tee "$report/fit_networks.txt"

echo "== 3. held-out layers per op class and precision (parameters fitted on fp16 only)"
for dt in fp16 bf16 tf32 fp32 int8; do
  "$tw" calibrate validate $layers --gpu h200 --dtype "$dt" \
    --predictions "$report/heldout_$dt.jsonl"
done 2>&1 | tee "$report/validate_layers.txt"

echo "== 4. whole networks: predicted vs measured, ranking against FLOPs"
python3 -m calibrate.validate.compare_networks "$tw" "$data/netbench.jsonl" --gpu h200 --markdown \
  --json "$report/networks.json" | tee "$report/networks.md"

echo "== 4b. the validation-only networks (onnx_models/<set>; docs/validation.md: in which order they met the model)"
pooled=""
for set in heldout_variants heldout_variants_more heldout_largest heldout_segmentation; do
  echo "-- $set"
  python3 -m calibrate.validate.compare_networks "$tw" "$data/netbench_$set.jsonl" --gpu h200 --markdown \
    --models-dir "onnx_models/$set" --json "$report/networks_$set.json" | tee "$report/networks_$set.md"
  pooled="$pooled $report/networks_$set.json"
done
echo "-- all of them pooled"
python3 -m calibrate.validate.pool_validation $pooled | tee "$report/networks_heldout_pooled.md"

echo "== 5. the 4095^3 vs 4096^3 fp16 GEMM cliff"
grep -h '"M":409[56],"N":409[56],"K":409[56]' "$data/measured.jsonl" | grep '"dtype":"fp16"' >"$report/cliff.jsonl"
"$tw" layers "$report/cliff.jsonl" --gpu h200 --format table | tee "$report/cliff.txt"
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    print("gemm %d^3 fp16: measured %.1f us" % (o["M"], o["measured_us"]))' "$report/cliff.jsonl" | tee -a "$report/cliff.txt"

echo "== 6. carry the calibration to the other GPU files"
for g in h100 h100-pcie a100 a10 l4 l40s t4 v100; do  # rtx3090/4090/5090, pro-6000: calibrate/validate/other_gpus.py --write
  # the target is also an input, so the new file is written beside it and then replaces it
  "$tw" calibrate carry --gpu h200 --to "$g" -o "gpu_models/$g.json.new" \
    --made-by "tilewave calibrate carry --gpu h200 --to $g -o gpu_models/$g.json"
  mv "gpu_models/$g.json.new" "gpu_models/$g.json"
done

echo "== 7. plot held-out fp16 layers"
python3 -m calibrate.validate.plot_pred_vs_meas "$report/heldout_fp16.jsonl" docs/img/h200_heldout_fp16.svg \
  --title "H200, fp16: held-out layers, predicted vs measured"
