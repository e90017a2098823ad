#!/bin/sh
# The completion calls (session 6) on the 2-GPU H200 machine, from the repository root (docs/nas.md
# "Validation on the H200"). Predictions for every configuration were
# committed before any of these ran (pred_*.jsonl). One call of the device
# tool each:
#   part 1: the eager configurations runs 1-3 left at their deadline
#           (models_eager_fill.txt), then torch.compile at batch 1 and 128 for
#           the first 50 candidates per space (batch 16 was run 2), then
#           candidates 51-100 at batch 1, 16 and 128 until the call's time is spent;
#   part 2: LIST at batch 1, 16 and 128: candidates 101-150
#           (models_inductor_101_150.txt), which part 1 did not reach;
#   part 3: the torch.compile configurations parts 1-2 and run 2 left
#           (models_ind_gaps_b<batches>.txt, written after part 2: each
#           list at the batches its candidates still lacked).
# Usage: sh calibrate/data/h200/nas/measure_completion.sh 1|2|3 [LIST]
# The outputs are committed in completion/, flattened (formerly session6/part1..3,
# with part 2's and 3's folders named ind_part2 and ind_part3_b*, and the lists
# session6/part3_b*.txt); the names above are the committed ones.
set -u
out=${OUT:?run on the device machine, which sets OUT}
nas=calibrate/data/h200/nas
bench="python3 calibrate/measure/runtime_bench.py --workers-per-gpu 10 --timed-s 0.3 --profile-s 3 --no-export"
start=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - start) )); }
if [ "$1" = 1 ]; then
  $bench --out "$out/eager_fill" --models-file $nas/models_eager_fill.txt --runtimes eager --batch 1,16,128 \
    --eager-everywhere --deadline-s 45 > "$out/log_eager_fill.txt" 2>&1
  $bench --out "$out/ind_first50" --models-file $nas/models_inductor.txt --runtimes inductor --batch 1,128 \
    --deadline-s 190 > "$out/log_ind_first50.txt" 2>&1
  $bench --out "$out/ind_51_100" --models-file $nas/models_inductor_51_100.txt --runtimes inductor --batch 1,16,128 \
    --deadline-s "$(left 520)" > "$out/log_ind_51_100.txt" 2>&1
elif [ "$1" = 3 ]; then
  for batches in 1_16_128 1_128 128 16_128; do
    $bench --out "$out/ind_gaps_b$batches" --models-file $nas/models_ind_gaps_b$batches.txt --runtimes inductor \
      --batch "$(echo $batches | tr _ ,)" --deadline-s "$(left 480)" > "$out/log_ind_gaps_b$batches.txt" 2>&1
  done
else
  $bench --out "$out/ind_101_150" --models-file "$2" --runtimes inductor --batch 1,16,128 \
    --deadline-s "$(left 520)" > "$out/log_ind_101_150.txt" 2>&1
fi
# One archive: the device tool brings back at most 8 files (part 1 lost
# ind_first50/bench.jsonl that way; its latencies are in its log).
(cd "$out" && tar czf "part$1.tar.gz" --remove-files ./*/ ./log_*.txt)
echo "part $1 done in $(( $(date +%s) - start )) s"
