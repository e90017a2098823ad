#!/bin/sh
# One bounded libFuzzer run of a harness (docs/robustness.md).
# Usage: run_harness.sh HARNESS_BINARY SECONDS WORK_DIR SEED...
# Fuzzes for SECONDS from the seeds, keeping new inputs in WORK_DIR/corpus and
# any finding in WORK_DIR/findings (both emptied first); prints one summary line and exits 1 when
# an input crashed, hung (10 s), leaked or broke the contract.
set -u
bin=$1 seconds=$2 work=$3
shift 3
name=$(basename "$bin")
# Each run starts from the seeds alone, as on a clean clone: inputs kept by an
# earlier run would make this run differ from CI's with the same seed.
rm -rf "$work/corpus" "$work/findings"
mkdir -p "$work/corpus" "$work/findings"
start=$(date +%s)
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=262144 \
  -print_final_stats=1 -artifact_prefix="$work/findings/" "$work/corpus" "$@" >"$work/log" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
stat() { sed -n "s/^stat::$1: *//p" "$work/log" | tail -n 1; }
done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/log" | tail -n 1)
cov=$(echo "$done_line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
findings=$(find "$work/findings" -type f | wc -l)
echo "$name: $(stat number_of_executed_units) executions in ${elapsed} s ($(stat average_exec_per_sec)/s)," \
  "coverage ${cov:-?} edges, ${ft:-?} features, corpus $(find "$work/corpus" -type f | wc -l) new inputs," \
  "slowest input $(stat slowest_unit_time_sec) s, peak RSS $(stat peak_rss_mb) MB, findings $findings"
if [ "$rc" != 0 ] || [ "$findings" != 0 ]; then
  echo "$name: FINDING (exit $rc); the log ends:"; tail -n 40 "$work/log"
  ls "$work/findings"
  exit 1
fi
