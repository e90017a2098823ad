#!/bin/bash
# A `tilewave nas` sampling split over a Slurm job array (docs/nas.md).
# Submit from the repository root:
#   jobid=$(sbatch --parsable docs/examples/nas_slurm.sh)
#   sbatch --dependency=afterok:$jobid --wrap "tilewave nas-merge nas_out/part_*.csv -o nas_out/mobilenetv2.csv"
# Each array task is one shard; shards are independent and may run in any
# order or be re-run alone after a failure (same seed, same shard, same rows).
#SBATCH --job-name=tilewave-nas
#SBATCH --array=0-15
#SBATCH --cpus-per-task=8
#SBATCH --mem=2G
#SBATCH --time=00:30:00
#SBATCH --output=nas_out/log_%a.txt
set -euo pipefail
shards=$((SLURM_ARRAY_TASK_MAX - SLURM_ARRAY_TASK_MIN + 1))
shard=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN))
mkdir -p nas_out
tilewave nas onnx_models/spaces/mobilenetv2.json --samples 100000000 --seed 7 \
  --gpu h200 --batch 1 --runtime eager --threads "$SLURM_CPUS_PER_TASK" \
  --shard "$shard/$shards" --min-utilization 0.001 -o "nas_out/part_$shard.csv"
