#!/bin/sh
# The CLI's contract: exit 0 on success, 1 on bad input with one line naming
# the file, 2 on bad usage; output files are never left half-written.
# Usage: cli_test.sh path/to/tilewave REPO_ROOT
set -u
tw=$1
root=$2
data=$root/tests/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect CODE PATTERN -- command...: exit code and (for errors) a one-line
# stderr that matches PATTERN.
expect() {
  code=$1 pattern=$2
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  # The top-level handler keeps the contract, but reaching it is a bug.
  if grep -q "internal error" "$tmp/err"; then
    echo "FAIL (reached the internal-error handler): $*"; cat "$tmp/err"; fails=$((fails + 1)); return
  fi
  if [ "$got" != "$code" ]; then
    echo "FAIL (exit $got, wanted $code): $*"; cat "$tmp/err"; fails=$((fails + 1)); return
  fi
  if [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/err"; then
    echo "FAIL (stderr lacks '$pattern'): $*"; cat "$tmp/err"; fails=$((fails + 1)); return
  fi
  if [ "$code" = 1 ] && [ "$(grep -c 'error' "$tmp/err")" != 1 ]; then
    echo "FAIL (wanted exactly one error line): $*"; cat "$tmp/err"; fails=$((fails + 1))
  fi
  # Bad usage is one line too, and no note comes before an error (issue 20).
  if [ "$code" != 0 ] && [ "$(wc -l <"$tmp/err")" != 1 ]; then
    echo "FAIL (wanted stderr of one line): $*"; cat "$tmp/err"; fails=$((fails + 1))
  fi
}

expect 0 "" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --gpu h200
grep -q "predicted latency" "$tmp/out" || { echo "FAIL: analyze table lacks the summary"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 3 --format json
grep -q '"batch": 3' "$tmp/out" || { echo "FAIL: json lacks the batch"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 3 --format csv --fusion trt --dtype int8 --gpu a100
grep -q "fusion is deprecated" "$tmp/err" || { echo "FAIL: --fusion gives no deprecation note"; fails=$((fails + 1)); }
# A model whose compute tilewave cannot model is an error, not a zero;
# --allow-unmodelled gives totals marked partial.
expect 1 "conv3d.onnx: node 'conv3d' (Conv) does tensor-core work" -- "$tw" analyze "$data/conv3d.onnx" --batch 2
expect 1 "conv3d.onnx" -- "$tw" sweep "$data/conv3d.onnx" --batch 1,2
expect 0 "" -- "$tw" analyze "$data/conv3d.onnx" --batch 2 --allow-unmodelled --format json
grep -q '"partial": true' "$tmp/out" || { echo "FAIL: partial totals are not marked partial"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" ops
grep -q "GroupNormalization" "$tmp/out" || { echo "FAIL: ops lacks GroupNormalization"; fails=$((fails + 1)); }
# Inputs that are not what they claim (issue 9): one line, exit 1, never a
# number that is infinite, negative or wrapped around.
sed 's/"eltwise_bw_efficiency": [0-9.]*/"eltwise_bw_efficiency": 0/' "$root/gpu_models/h200.json" >"$tmp/zero_eff.json"
expect 1 "zero_eff.json: parameter 'eltwise_bw_efficiency' is 0, outside its range" -- \
  "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$tmp/zero_eff.json"
sed 's/"fixed_us_gemm": [0-9.]*/"fixed_us_gemm": -5/' "$root/gpu_models/h200.json" >"$tmp/negative_fixed.json"
expect 1 "parameter 'fixed_us_gemm' is -5" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$tmp/negative_fixed.json"
expect 1 "is a directory, not an ONNX file" -- "$tw" analyze "$data"
expect 1 "is a directory, not a GPU file" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$data"
expect 1 "is a directory, not a layer set" -- "$tw" layers "$data"
expect 1 "more than 2^50 elements" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --batch 2147483647
expect 1 "more than 2^50 elements" -- "$tw" sweep "$root/onnx_models/resnet50.onnx" --batch 1,9223372036854775807
expect 0 "" -- "$tw" analyze "$data/odd_names.onnx" --format json
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/out" 2>/dev/null ||
  { command -v python3 >/dev/null && { echo "FAIL: JSON with odd names does not parse"; fails=$((fails + 1)); }; }
# Names with control characters stay escaped in the table and the warnings too.
"$tw" analyze "$data/odd_names.onnx" --allow-unmodelled >"$tmp/out" 2>"$tmp/err"
"$tw" analyze "$root/tests/fuzz/corpus/onnx/found_binary_op_one_input" >>"$tmp/out" 2>>"$tmp/err"
python3 - "$tmp/out" "$tmp/err" <<'PY' || { echo "FAIL: a control character reached the terminal"; fails=$((fails + 1)); }
import sys
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    assert not any(b < 0x20 and b not in (0x0a, 0x09) or b == 0x7f for b in data), path
PY
expect 1 "x0a.x07na2!*' (Conv): input has 4 channels" -- "$tw" analyze "$data/odd_names_mismatch.onnx"
[ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: an error with a newline in a name is not one line"; fails=$((fails + 1)); }
printf '{"header":1}\n' >"$tmp/header.jsonl"
expect 1 "header.jsonl:1: field 'header' must be true or false" -- "$tw" layers "$tmp/header.jsonl"
printf '{"op":"eltwise","elems":100,"inputs":1,"dtype":"fp16","extra_bytes":-5000}\n' >"$tmp/extra.jsonl"
expect 1 "extra.jsonl:1: field 'extra_bytes' must be a non-negative integer" -- "$tw" layers "$tmp/extra.jsonl"
printf '{"op":"gemm","M":4000000000,"N":4000000000,"K":4000000000,"dtype":"fp16"}\n' >"$tmp/huge.jsonl"
expect 1 "huge.jsonl:1: its FLOPs or bytes exceed 2^60" -- "$tw" layers "$tmp/huge.jsonl"
expect 1 "--input gives 'x' 3 dimensions; the graph declares 4" -- "$tw" analyze "$data/tiny_cnn.onnx" --input x=1x3x32
expect 0 "does not fit in the NVIDIA H200" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --batch 100000
[ "$(grep -c 'does not fit' "$tmp/err")" = 1 ] || { echo "FAIL: the memory note is not one line"; fails=$((fails + 1)); }
for rt in eager inductor tensorrt; do
  expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 2 --runtime "$rt" --format json
  grep -q "\"runtime\": \"$rt\"" "$tmp/out" || { echo "FAIL: json lacks runtime $rt"; fails=$((fails + 1)); }
done
expect 2 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --runtime jax
expect 2 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --runtime eager --fusion trt
# --top counts table rows: a negative count is bad usage, as in Python's analyze_text(top=-1).
expect 2 "--top: Value -1 not in range" -- "$tw" analyze "$data/tiny_cnn.onnx" --top -1
expect 2 "--top: Value -1 not in range" -- "$tw" check "$data/tiny_cnn.onnx" --trace "$data/traces/resnet18_b1_eager_h200.trace.json" --top -1
expect 0 "" -- "$tw" gpus
expect 0 "" -- "$tw" sweep "$data/tiny_cnn.onnx" --batch 1,8,64
# report and compare (docs/report.md).
expect 0 "" -- "$tw" report "$data/tiny_cnn.onnx" --batches 1,4 --compare a100 -o "$tmp/r.html"
grep -q '<svg id="roofline"' "$tmp/r.html" && grep -q 'id="compare"' "$tmp/r.html" ||
  { echo "FAIL: the report lacks its roofline or comparison"; fails=$((fails + 1)); }
expect 2 "" -- "$tw" report "$data/tiny_cnn.onnx"
expect 1 "unknown GPU 'z9'" -- "$tw" report "$data/tiny_cnn.onnx" --compare a100,z9 -o "$tmp/r2.html"
[ ! -e "$tmp/r2.html" ] || { echo "FAIL: a failed report left a file"; fails=$((fails + 1)); }
expect 1 "conv3d.onnx" -- "$tw" report "$data/conv3d.onnx" -o "$tmp/r3.html"
# Two networks on one page (docs/report.md "Two networks"): the depthwise
# model's grouped convolutions are ringed and named in the findings.
expect 0 "" -- "$tw" report "$data/tiny_cnn.onnx" --vs "$data/depthwise.onnx" --batches 1,4 -o "$tmp/vs.html"
grep -q 'Which is faster' "$tmp/vs.html" && grep -q 'id="split-op"' "$tmp/vs.html" &&
  grep -q 'id="batch-throughput"' "$tmp/vs.html" &&
  grep -q 'id="roofline-b-memory"' "$tmp/vs.html" && grep -q 'class="pt ring"' "$tmp/vs.html" &&
  grep -q 'Conv (depthwise)' "$tmp/vs.html" ||
  { echo "FAIL: report --vs lacks its findings, step split, second roofline or depthwise marks"; fails=$((fails + 1)); }
expect 1 "nope.onnx" -- "$tw" report "$data/tiny_cnn.onnx" --vs "$tmp/nope.onnx" -o "$tmp/vs2.html"
[ ! -e "$tmp/vs2.html" ] || { echo "FAIL: a failed report --vs left a file"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" compare "$data/tiny_cnn.onnx" "$data/depthwise.onnx" --gpu h200
grep -q '^tiny_cnn ' "$tmp/out" && grep -q '^depthwise ' "$tmp/out" && grep -q 'Which is faster, and why' "$tmp/out" &&
  grep -Eq '^  (tiny_cnn|depthwise) is [0-9.]+x as fast as (tiny_cnn|depthwise): [0-9]+ samples/s against [0-9]+' "$tmp/out" ||
  { echo "FAIL: compare of two models lacks a model's row or the findings"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" compare "$data/tiny_cnn.onnx" "$data/depthwise.onnx" --gpu h200 --format json
grep -q '"findings"' "$tmp/out" && grep -q '"faster"' "$tmp/out" && grep -q '"depthwise"' "$tmp/out" ||
  { echo "FAIL: compare json of two models lacks the findings"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" compare "$data/tiny_cnn.onnx" --gpu h200,a100 --runtime eager,inductor --batch 1,8
[ "$(grep -c '^h200\|^a100' "$tmp/out")" = 8 ] || { echo "FAIL: compare lacks a row"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" compare "$data/tiny_cnn.onnx" --gpu h200,a100 --format json
grep -q '"gpu_trust"' "$tmp/out" || { echo "FAIL: compare json lacks the trust"; fails=$((fails + 1)); }
# Bad usage is exit 2 on every command (docs/cli.md): list values outside
# their choices, lists that name nothing, a batch of 0.
expect 2 "'fp13' is not one of" -- "$tw" compare "$data/tiny_cnn.onnx" --dtype fp13
expect 2 "names nothing" -- "$tw" compare "$data/tiny_cnn.onnx" --gpu ,
for cmd in analyze sweep compare report annotate advise; do
  expect 2 "a batch is a positive integer" -- "$tw" $cmd "$data/tiny_cnn.onnx" --batch 0 -o "$tmp/b0.out"
done
expect 2 "a batch is a positive integer" -- "$tw" sweep "$data/tiny_cnn.onnx" --batch 1,0,4
[ ! -e "$tmp/b0.out" ] || { echo "FAIL: a usage error left an output"; fails=$((fails + 1)); }
# -o and --format on the commands that print (docs/cli.md "Formats").
expect 0 "" -- "$tw" sweep "$data/tiny_cnn.onnx" --batch 1,8 --format csv -o "$tmp/sweep.csv"
sed -n 2p "$tmp/sweep.csv" | grep -q '^model,gpu,gpu_trust,execution,batch,' && [ "$(wc -l < "$tmp/sweep.csv")" = 4 ] ||
  { echo "FAIL: sweep --format csv -o is not a plain CSV with a row per batch"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" gpus -o "$tmp/gpus.txt"
grep -q '^h200 ' "$tmp/gpus.txt" || { echo "FAIL: gpus -o wrote no table"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" ops --format json -o "$tmp/ops.json"
grep -q '"op": "Conv"' "$tmp/ops.json" || { echo "FAIL: ops -o wrote no JSON"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --format csv
sed -n 2p "$tmp/out" | grep -q '^model,gpu,gpu_trust,batch,execution,name,op,shape,kernel,' ||
  { echo "FAIL: analyze CSV does not start with its header"; fails=$((fails + 1)); }
# The version in every output (docs/report.md "Version"): each JSON document's
# tilewave_version, each CSV's first line "# tilewave VERSION" (pandas:
# comment='#'), the report's generator and source line.
twv=$("$tw" --version | cut -d' ' -f2)
for args in "analyze --format csv" "analyze --format csv --by node" "sweep --batch 1,2 --format csv" \
            "compare --gpu h200,a100 --format csv" "rank --format csv"; do
  expect 0 "" -- "$tw" $args "$data/tiny_cnn.onnx"
  [ "$(head -1 "$tmp/out")" = "# tilewave $twv" ] || { echo "FAIL: $args: no version line first"; head -2 "$tmp/out"; fails=$((fails + 1)); }
done
for args in "analyze --format json" "sweep --batch 1,2 --format json" "compare --gpu h200,a100 --format json" \
            "rank --format json" "advise --format json"; do
  expect 0 "" -- "$tw" $args "$data/tiny_cnn.onnx"
  python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["tilewave_version"] == sys.argv[2]' "$tmp/out" "$twv" ||
    { echo "FAIL: $args: no tilewave_version"; fails=$((fails + 1)); }
done
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --trace-out "$tmp/v_trace.json"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["tilewave_version"] == sys.argv[2]' "$tmp/v_trace.json" "$twv" ||
  { echo "FAIL: the trace has no tilewave_version"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" report "$data/tiny_cnn.onnx" --batches 1,2 -o "$tmp/v_report.html"
grep -q "<meta name=\"generator\" content=\"tilewave $twv\">" "$tmp/v_report.html" && grep -q "predicted by tilewave $twv from" "$tmp/v_report.html" ||
  { echo "FAIL: the report does not name the version"; fails=$((fails + 1)); }
python3 - "$data/tiny_cnn.onnx" "$tw" <<'PY' || { echo "FAIL: pandas cannot read a CSV with comment='#'"; fails=$((fails + 1)); }
import io, subprocess, sys
try:
    import pandas
except ImportError:
    sys.exit(0)
text = subprocess.run([sys.argv[2], "analyze", sys.argv[1], "--format", "csv"], capture_output=True, text=True, check=True).stdout
assert len(pandas.read_csv(io.StringIO(text), comment="#")) == text.count("\n") - 2
PY
# --by node --format csv: a row per ONNX node (not per kernel), with both
# shares named apart (docs/report.md "Shares"); --by op: a row per op group.
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 2 --format csv --by node
cp "$tmp/out" "$tmp/by_node.csv"
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 2 --format json
python3 - "$tmp/by_node.csv" "$tmp/out" <<'PY' || { echo "FAIL: --by node --format csv is not a row per node"; fails=$((fails + 1)); }
import csv, json, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
doc = json.load(open(sys.argv[2]))
nodes = doc["node_fates"]
assert [r["name"] for r in rows] == [n["name"] for n in nodes], (len(rows), len(nodes))
assert [r["fate"] for r in rows] == [n["fate"] for n in nodes]
assert "share" not in rows[0] and "share" not in nodes[0] and "share" not in doc["by_op"][0]
for r, n in zip(rows, nodes):
    assert abs(float(r["step_share"]) - n["step_share"]) < 1e-5 and abs(float(r["gpu_busy_share"]) - n["gpu_busy_share"]) < 1e-5
    assert abs(n["step_share"] - n["time_us"] / doc["total"]["time_us"]) < 1e-9
    assert abs(n["gpu_busy_share"] - n["time_us"] / doc["total"]["gpu_busy_us"]) < 1e-6
# A host-bound loop: the two shares differ, and each sums to what it says.
assert doc["total"]["bound_by"] == "host"
assert abs(sum(n["gpu_busy_share"] for n in nodes) - 1) < 1e-6
assert abs(sum(g["step_share"] for g in doc["by_op"]) - doc["total"]["gpu_busy_us"] / doc["total"]["time_us"]) < 1e-6
PY
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 2 --format csv --by op
sed -n 2p "$tmp/out" | grep -q '^model,gpu,gpu_trust,batch,execution,name,kernels,time_us,step_share,gpu_busy_share,' ||
  { echo "FAIL: --by op --format csv is not a row per op"; fails=$((fails + 1)); }
for by in node op; do
  expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 2 --by $by
  grep -q " step_share " "$tmp/out" && ! grep -q " share " "$tmp/out" ||
    { echo "FAIL: the --by $by table's share is not named step_share"; fails=$((fails + 1)); }
done
expect 0 "" -- "$tw" compare "$data/tiny_cnn.onnx" --gpu h200,l4
grep -q '^l4\*' "$tmp/out" && grep -q '^\*  carried-over' "$tmp/out" ||
  { echo "FAIL: compare does not mark the carried-over GPU"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" sweep "$data/tiny_cnn.onnx" --gpu l4 --batch 1,2
grep -q 'NVIDIA L4\*' "$tmp/out" && grep -q 'carried-over' "$tmp/out" ||
  { echo "FAIL: sweep on a carried-over GPU shows no mark"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" report "$data/tiny_cnn.onnx" --gpu h200,a100 --batches 1,2 -o "$tmp/r4.html"
grep -q 'id="compare"' "$tmp/r4.html" || { echo "FAIL: report --gpu h200,a100 compares nothing"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" annotate "$data/tiny_cnn.onnx" --batch 4 -o "$tmp/a.onnx"
grep -aq "\[tilewave\] h200, batch 4: " "$tmp/a.onnx" || { echo "FAIL: annotate wrote no doc strings"; fails=$((fails + 1)); }
grep -aq "tilewave.utilization" "$tmp/a.onnx" || { echo "FAIL: annotate wrote no node metadata"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$tmp/a.onnx" --batch 4
expect 2 "" -- "$tw" annotate "$data/tiny_cnn.onnx"
expect 0 "" -- "$tw" advise "$root/onnx_models/resnet50.onnx" --batch 16
grep -q "run it with tensorrt instead of eager.*: predicted +" "$tmp/out" || { echo "FAIL: advise gave no runtime advice"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" advise "$root/onnx_models/regnet_y_400mf.onnx" --batch 16
grep -q "capture the forward in a CUDA graph" "$tmp/out" || { echo "FAIL: advise did not suggest a CUDA graph for a host-bound step"; fails=$((fails + 1)); }
# Issue 33: a host-bound batch gain says so; an engine is priced as one, marked where nothing was fitted on it.
grep -q "the step is host-bound at batch 16" "$tmp/out" || grep -q "the step stays host-bound" "$tmp/out" || { echo "FAIL: advise's batch advice on a host-bound step does not say the host bounds it"; fails=$((fails + 1)); }
grep -q "fuller tiles and waves" "$tmp/out" && { echo "FAIL: advise credits tiles and waves for a host-bound step's batch gain"; fails=$((fails + 1)); }
grep -q "run it with tensorrt instead of eager, launched as an engine is" "$tmp/out" || { echo "FAIL: advise priced tensorrt in a Python loop"; fails=$((fails + 1)); }
grep -q "not fitted: no parameters fitted on tensorrt" "$tmp/out" || { echo "FAIL: advise's tensorrt figure lacks the not-fitted mark"; fails=$((fails + 1)); }
# Under graph replay the step is the GPU's: padding channels pays there.
expect 0 "" -- "$tw" advise "$root/onnx_models/regnet_y_400mf.onnx" --batch 16 --layout nhwc --no-amp --graph --format json
grep -q '"kind": "channels"' "$tmp/out" || { echo "FAIL: advise found no channels to pad in RegNetY"; fails=$((fails + 1)); }
grep -q '"gain": -' "$tmp/out" && { echo "FAIL: advise advised a change predicted slower"; fails=$((fails + 1)); }
expect 1 "conv3d.onnx" -- "$tw" advise "$data/conv3d.onnx"
expect 0 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$data/traces/resnet18_b1_eager_h200.profiler.json.gz" --batch 1 --layout nhwc --no-amp
grep -q "108 kernels paired" "$tmp/out" || { echo "FAIL: check did not pair torch.profiler's ResNet-18 trace"; fails=$((fails + 1)); }
grep -q "shapes     21 of 21 paired" "$tmp/out" || { echo "FAIL: check did not pair the trace's convolutions by shape"; fails=$((fails + 1)); }
grep -q "MISMATCH" "$tmp/out" && { echo "FAIL: check saw a mismatch where the flags are the trace's"; fails=$((fails + 1)); }
# Issue 33: check reads what the trace ran and names the flags that differ.
expect 0 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$data/traces/resnet18_b16_inductor_h200.profiler.json.gz" --batch 1
for want in "batch 16 (predicted 1): the input \[16, 3, 224, 224\]" "set --batch 16" "set --runtime inductor"; do
  grep -q "$want" "$tmp/out" || { echo "FAIL: check of a batch-16 inductor trace at batch 1 lacks '$want'"; fails=$((fails + 1)); }
done
# Traces of timm's configuration (autocast over fp32 weights, NCHW), of compiled autocast, and of fp32: their own flags match.
for t in "resnet18_b16_eager_amp_nchw_h200.profiler --batch 16" "resnet18_b16_inductor_amp_nchw_h200.profiler --batch 16 --runtime inductor" "resnet18_b1_eager_fp32_nchw_h200.profiler --batch 1 --dtype fp32"; do
  set -- $t
  name=$1
  shift
  expect 0 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$data/traces/$name.json.gz" "$@"
  grep -q "MISMATCH" "$tmp/out" && { echo "FAIL: check of $name with its own flags saw a mismatch"; fails=$((fails + 1)); }
done
expect 0 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$data/traces/resnet18_b1_eager_h200.profiler.json.gz" --batch 1 --format json
grep -q '"option": "amp"' "$tmp/out" && grep -q '"predicted": "on"' "$tmp/out" || { echo "FAIL: check json lacks the amp mismatch of a model.half() trace"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" check "$root/onnx_models/runtime/efficientnet_b0.onnx" --trace "$data/traces/efficientnet_b0_b1_eager_h200.profiler.json.gz" --batch 1 --layout nhwc --no-amp
grep -q "3 memcpy/memset events not counted" "$tmp/out" || { echo "FAIL: check counted EfficientNet-B0's copies as kernels"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --runtime inductor --trace "$data/traces/resnet18_b16_inductor_h200.profiler.json.gz" --batch 16 --layout nhwc --no-amp
grep -q "shapes     21 of 21 paired" "$tmp/out" || { echo "FAIL: check did not pair torch.compile's ResNet-18 convolutions by shape"; fails=$((fails + 1)); }
grep -q "Ran, but not predicted (1)" "$tmp/out" || { echo "FAIL: check did not list inductor's unpredicted stem kernel"; fails=$((fails + 1)); }
# A kernel list (one row of run.py's kernels.jsonl) is a trace too; a bad one is one line.
printf '%s\n' '{"model": "resnet18", "list": [["sm90_xmma_fprop_implicit_gemm_f16", 12.5], ["vectorized_elementwise_kernel", 2.0]]}' >"$tmp/row.json"
expect 0 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$tmp/row.json" --batch 1
grep -q "^  conv  " "$tmp/out" || { echo "FAIL: check of a kernel list has no conv class row"; fails=$((fails + 1)); }
printf '%s\n' '{"list": [["k", 0]]}' >"$tmp/row0.json"
expect 1 "row0.json: kernel 'k' lasts 0 us" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$tmp/row0.json"
trace=$data/traces/resnet18_b1_eager_h200.trace.json
expect 0 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$trace" --batch 1 --layout nhwc --no-amp
grep -q "108 kernels paired" "$tmp/out" || { echo "FAIL: check did not pair the ResNet-18 trace"; fails=$((fails + 1)); }
gzip -c "$trace" > "$tmp/trace.json.gz"
expect 0 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$tmp/trace.json.gz" --batch 1 --layout nhwc --no-amp
grep -q "108 kernels paired" "$tmp/out" || { echo "FAIL: check did not read the gzipped trace"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$trace" --batch 1 --layout nhwc --no-amp --format json
grep -q '"measured_kernels": 108' "$tmp/out" || { echo "FAIL: check json lacks the count"; fails=$((fails + 1)); }
expect 2 "" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx"
expect 1 "not_onnx.onnx" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$data/not_onnx.onnx"
expect 1 "is a directory, not a trace" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$data"
echo '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "ts": 1, "dur": 2}]}' > "$tmp/cpu.json"
expect 1 "no GPU kernel events" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$tmp/cpu.json"
echo '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2}]}' > "$tmp/neg.json"
awk 'BEGIN { printf "{\"traceEvents\": ["; for (i = 0; i < 200000; i++) printf "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": %d, \"dur\": 1}", (i ? "," : ""), i; print "]}" }' > "$tmp/many.json"
expect 1 "too many to pair" -- "$tw" check "$root/onnx_models/resnet50.onnx" --trace "$tmp/many.json"
expect 1 "negative or non-finite duration" -- "$tw" check "$root/onnx_models/runtime/resnet18.onnx" --trace "$tmp/neg.json"
expect 1 "truncated.onnx" -- "$tw" annotate "$data/truncated.onnx" -o "$tmp/a2.onnx"
[ ! -e "$tmp/a2.onnx" ] || { echo "FAIL: a failed annotate left a file"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" rank "$root/onnx_models/resnet18.onnx" "$root/onnx_models/mobilenet_v2.onnx" --batch 4
expect 0 "unmodelled" -- "$tw" analyze "$data/unknown_op.onnx" --batch 1

# Bad input: exit 1, one line naming the file.
expect 1 "not_onnx.onnx: not an ONNX model" -- "$tw" analyze "$data/not_onnx.onnx"
expect 1 "truncated.onnx" -- "$tw" analyze "$data/truncated.onnx"
expect 1 "cycle.onnx: the graph has a cycle" -- "$tw" analyze "$data/cycle.onnx" --batch 1
expect 1 "dangling.onnx.*ghost" -- "$tw" analyze "$data/dangling.onnx" --batch 1
expect 1 "unknown shape" -- "$tw" analyze "$data/unknown_shape.onnx"
expect 0 "symbolic batch.*using 1" -- "$tw" analyze "$data/tiny_cnn.onnx"
expect 1 "no_such.onnx: no such file" -- "$tw" analyze "$tmp/no_such.onnx"
expect 1 "unknown GPU 'z80'" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 1 --gpu z80
expect 1 "no int8 path" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 1 --gpu v100 --dtype int8
expect 1 "not a graph input" -- "$tw" analyze "$data/tiny_cnn.onnx" --input nope=1x3x32x32
expect 1 "NAME=1x3x224x224" -- "$tw" analyze "$data/tiny_cnn.onnx" --input x=1xx3

# Bad usage: exit 2.
expect 2 "" -- "$tw"
expect 2 "" -- "$tw" analyze
expect 2 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --format yaml
expect 2 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --dtype fp64
expect 2 "" -- "$tw" frobnicate

# Layer sets: predictions in input order; a bad line names its number.
printf '%s\n' '{"op":"gemm","M":4096,"N":4096,"K":4096,"tag":"a"}' '{"op":"gemm","M":4095,"N":4095,"K":4095,"tag":"b"}' >"$tmp/set.jsonl"
expect 0 "" -- "$tw" layers "$tmp/set.jsonl" --gpu h200
[ "$(head -1 "$tmp/out" | grep -c '"tag":"a"')" = 1 ] || { echo "FAIL: layers lost order or fields"; fails=$((fails + 1)); }
grep -q '"time_us"' "$tmp/out" && grep -q '"pred_us"' "$tmp/out" || { echo "FAIL: layers lacks time_us or its former name pred_us"; fails=$((fails + 1)); }
printf '%s\n' '{"op":"gemm","M":1,"N":1,"K":1}' '{"op":"gemm","M":1}' >"$tmp/bad.jsonl"
expect 1 "bad.jsonl:2: missing field 'N'" -- "$tw" layers "$tmp/bad.jsonl"
expect 2 "" -- "$tw" layers

# Extract then predict: the round trip works on a real model.
expect 0 "" -- "$tw" layers --extract "$root/onnx_models/resnet18.onnx" --batch 2 -o "$tmp/r18.jsonl"
[ "$(wc -l <"$tmp/r18.jsonl")" -gt 20 ] || { echo "FAIL: extract wrote too few layers"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" layers "$tmp/r18.jsonl" --format table

# Calibration commands: validate a measured set, carry a calibrated file.
printf '%s\n' '{"header":true}' '{"op":"gemm","M":4096,"N":4096,"K":4096,"measured_us":200,"status":"ok"}' \
  '{"op":"eltwise","elems":1000000,"inputs":2,"measured_us":3.5,"status":"ok"}' \
  '{"op":"gemm","M":8,"N":8,"K":8,"status":"unsupported"}' >"$tmp/measured.jsonl"
expect 0 "" -- "$tw" calibrate validate "$tmp/measured.jsonl" --gpu h200 --holdout 0
grep -q "^all  *2 " "$tmp/out" || { echo "FAIL: validate should count the 2 ok layers"; cat "$tmp/out"; fails=$((fails + 1)); }
printf '%s\n' '{"op":"gemm","M":1,"N":1,"K":1,"status":"ok"}' >"$tmp/unmeasured.jsonl"
expect 1 "unmeasured.jsonl:1: no numeric 'measured_us'" -- "$tw" calibrate validate "$tmp/unmeasured.jsonl" --gpu h200
expect 0 "" -- "$tw" calibrate carry --gpu h200 --to a100 -o "$tmp/a100.json"
grep -q '"trust": "carried-over"' "$tmp/a100.json" || { echo "FAIL: carry did not mark the file"; fails=$((fails + 1)); }
expect 1 "needs a calibrated GPU file" -- "$tw" calibrate carry --gpu "$tmp/a100.json" --to t4
grep -q '"eltwise_bw_efficiency": "h200: same memory family (hbm' "$tmp/a100.json" || { echo "FAIL: carry did not record each parameter's rule"; fails=$((fails + 1)); }
# docs/calibration.md "Provenance": what a calibrate command writes names the
# command as typed and the commit built from.
grep -q '"command": "tilewave calibrate carry --gpu h200 --to a100 -o ' "$tmp/a100.json" &&
  grep -q '"commit": "' "$tmp/a100.json" || { echo "FAIL: carry did not stamp the command and commit"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" calibrate carry --gpu h200 --to a100 -o "$tmp/a100_by.json" --made-by 'python3 -m some.script --write'
grep -q '"command": "python3 -m some.script --write"' "$tmp/a100_by.json" || { echo "FAIL: --made-by is not the stamped command"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" calibrate carry --gpu h200 --to a100 -o "$tmp/a100_odd.json" --made-by "$(printf 'bad \377 bytes')"
grep -q '"command": "bad � bytes"' "$tmp/a100_odd.json" || { echo "FAIL: --made-by's bytes that are not UTF-8 are not U+FFFD"; fails=$((fails + 1)); }

# Output files (docs/errors.md "Output files"): the mode of a file replaced
# is kept, a link stays a link with the file it names rewritten, a folder is
# refused, and no temporary is left beside the target.
mkdir -p "$tmp/outdir"
: > "$tmp/outdir/private.csv"
chmod 600 "$tmp/outdir/private.csv"
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --format csv -o "$tmp/outdir/private.csv"
[ "$(stat -c %a "$tmp/outdir/private.csv")" = 600 ] || { echo "FAIL: -o changed the file's mode to $(stat -c %a "$tmp/outdir/private.csv")"; fails=$((fails + 1)); }
[ -s "$tmp/outdir/private.csv" ] || { echo "FAIL: -o wrote nothing"; fails=$((fails + 1)); }
ln -s private.csv "$tmp/outdir/link.csv"
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --format json -o "$tmp/outdir/link.csv"
[ -L "$tmp/outdir/link.csv" ] || { echo "FAIL: -o replaced a symbolic link by a file"; fails=$((fails + 1)); }
grep -q '"execution"' "$tmp/outdir/private.csv" || { echo "FAIL: -o through a link did not write the file it names"; fails=$((fails + 1)); }
expect 1 "is a directory, not an output file" -- "$tw" analyze "$data/tiny_cnn.onnx" -o "$tmp/outdir"
[ "$(ls -A "$tmp/outdir" | grep -c tmp)" = 0 ] || { echo "FAIL: a temporary file was left beside the output"; fails=$((fails + 1)); }

# Only regular files are read (docs/errors.md): a FIFO nobody writes is
# refused at once, not waited on; a layer set can still come from a pipe as "-".
mkfifo "$tmp/fifo"
expect 1 "fifo: is not a regular file" -- timeout 10 "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$tmp/fifo"
expect 1 "fifo: is not a regular file" -- timeout 10 "$tw" analyze "$tmp/fifo"
expect 1 "fifo: is not a regular file" -- timeout 10 "$tw" check "$data/tiny_cnn.onnx" --trace "$tmp/fifo"
expect 1 "fifo: is not a regular file" -- timeout 10 "$tw" layers "$tmp/fifo"
expect 1 "fifo: is not a regular file" -- timeout 10 "$tw" nas "$tmp/fifo"
expect 1 "fifo: is not a regular file" -- timeout 10 "$tw" nas-merge "$tmp/fifo"
echo '{"op":"eltwise","elems":1000,"inputs":1,"dtype":"fp16"}' | "$tw" layers - >"$tmp/piped.jsonl" 2>"$tmp/err" ||
  { echo "FAIL: a layer set from stdin ('-')"; fails=$((fails + 1)); }
grep -q '"time_us"' "$tmp/piped.jsonl" || { echo "FAIL: no prediction for the piped layer set"; fails=$((fails + 1)); }
rm -f "$tmp/fifo"

# from-benchmark (docs/calibration.md "From a published benchmark"): a
# datasheet GPU carried from the H200, fitted to a timm results file.
bench=$data/timm_results
expect 0 "" -- "$tw" calibrate from-benchmark "$bench/benchmark-infer-amp-nchw-test.csv" --gpu rtx3090 --models "$bench" -o "$tmp/rtx3090.json"
grep -q '"trust": "fitted-from-benchmark"' "$tmp/rtx3090.json" || { echo "FAIL: from-benchmark did not mark the file"; fails=$((fails + 1)); }
grep -q '"held_out_families"' "$tmp/rtx3090.json" || { echo "FAIL: from-benchmark did not record its split"; fails=$((fails + 1)); }
! grep -q "lowering\|$(printf '\r')" "$tmp/err" || { echo "FAIL: from-benchmark printed progress into a file"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$tmp/rtx3090.json"
expect 0 "" -- "$tw" calibrate carry --gpu "$tmp/rtx3090.json,h200" --to rtx5090 -o "$tmp/rtx5090.json"
grep -q 'rtx3090: same instruction family (mma-sm80)' "$tmp/rtx5090.json" || { echo "FAIL: the fitted GPU did not give the main loop to its instruction family"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" calibrate from-benchmark "$bench/benchmark-infer-amp-nchw-test.csv" --gpu rtx3090 --models "$bench" --no-fit --predictions "$tmp/pred.jsonl"
[ "$(wc -l <"$tmp/pred.jsonl")" = 2 ] || { echo "FAIL: --predictions wrote $(wc -l <"$tmp/pred.jsonl") rows, wanted 2"; fails=$((fails + 1)); }
cp "$bench/benchmark-infer-amp-nchw-test.csv" "$tmp/results.csv"
expect 1 "results.csv: the file name says neither -nchw- nor -nhwc-" -- "$tw" calibrate from-benchmark "$tmp/results.csv" --gpu rtx3090 --models "$bench"
mkdir -p "$tmp/bad"
printf 'model,infer_img_size\ntiny_cnn,32\n' > "$tmp/bad/benchmark-infer-amp-nhwc-x.csv"
expect 1 "no column 'infer_step_time'" -- "$tw" calibrate from-benchmark "$tmp/bad/benchmark-infer-amp-nhwc-x.csv" --gpu rtx3090 --models "$bench"
printf 'model,infer_img_size,infer_step_time,infer_batch_size,infer_gmacs\ntiny_cnn,32,-1,16,1\n' > "$tmp/bad/benchmark-infer-amp-nhwc-y.csv"
expect 1 "benchmark-infer-amp-nhwc-y.csv:2: '-1' is not a positive number" -- "$tw" calibrate from-benchmark "$tmp/bad/benchmark-infer-amp-nhwc-y.csv" --gpu rtx3090 --models "$bench"
# Found by adversarial_ops (issue 32): a batch past int64 became -2^63, under the range check.
expect 1 "batch-past-int64.csv:3: '18446744073709551616' is not a whole number up to 1048576 (infer_batch_size)" -- "$tw" calibrate from-benchmark "$root/tests/fuzz/corpus/benchmark_csv/benchmark-infer-amp-nhwc-batch-past-int64.csv" --gpu rtx3090 --models "$bench"
expect 1 "step-time-1e308.csv:2: 'infer_step_time' must be a positive time, got inf" -- "$tw" calibrate from-benchmark "$root/tests/fuzz/corpus/benchmark_csv/benchmark-infer-amp-nchw-step-time-1e308.csv" --gpu rtx3090 --models "$bench"
printf 'model,infer_img_size,infer_step_time,infer_batch_size,infer_gmacs\ntiny_cnn,32,0.4,2.5,1\n' > "$tmp/bad/benchmark-infer-amp-nhwc-z.csv"
expect 1 "benchmark-infer-amp-nhwc-z.csv:2: '2.5' is not a whole number up to 1048576 (infer_batch_size)" -- "$tw" calibrate from-benchmark "$tmp/bad/benchmark-infer-amp-nhwc-z.csv" --gpu rtx3090 --models "$bench"
expect 1 "manifest.jsonl: no such manifest" -- "$tw" calibrate from-benchmark "$bench/benchmark-infer-amp-nchw-test.csv" --gpu rtx3090 --models "$tmp/bad"

# fit-networks: bad inputs are one line naming the file and line; nothing is written.
printf '%s\n' '{"model":"resnet18","batch":1,"latency_ms":0.2,"status":"ok"}' >"$tmp/net.jsonl"
printf '%s\n' '{"model":"resnet18"' >"$tmp/badnet.jsonl"
expect 1 "badnet.jsonl:1: not valid JSON" -- "$tw" calibrate fit-networks "$tmp/badnet.jsonl" --gpu h200 \
  --models-dir "$root/onnx_models" -o "$tmp/fit.json"
printf '%s\n' '{"model":"resnet18","batch":1}' >"$tmp/kt.jsonl"
expect 1 "kt.jsonl:1: needs model, batch, node and measured_us" -- "$tw" calibrate fit-networks "$tmp/net.jsonl" \
  --gpu h200 --models-dir "$root/onnx_models" --holdout 0 --kernel-times "$tmp/kt.jsonl" -o "$tmp/fit.json"
printf '%s\n' '{"model":"resnet18","batch":1,"node":"nope","measured_us":1.0}' >"$tmp/kt.jsonl"
expect 1 "no kernel 'nope' in resnet18" -- "$tw" calibrate fit-networks "$tmp/net.jsonl" \
  --gpu h200 --models-dir "$root/onnx_models" --holdout 0 --kernel-times "$tmp/kt.jsonl" -o "$tmp/fit.json"
printf '%s\n' '{"model":"resnet18","batch":1,"latency_ms":0.2,"status":5}' >"$tmp/typed.jsonl"
expect 1 "typed.jsonl:1: a field has the wrong type" -- "$tw" calibrate fit-networks "$tmp/typed.jsonl" --gpu h200 \
  --models-dir "$root/onnx_models" -o "$tmp/fit.json"
[ ! -e "$tmp/fit.json" ] || { echo "FAIL: fit-networks wrote a file after an error"; fails=$((fails + 1)); }

# The committed bad-input corpus (tests/fuzz/corpus: empty, random,
# bit-flipped, truncated and hand-made edge files) through the CLI itself:
# each is accepted (exit 0) or rejected with one error line naming the file
# (exit 1); never another code, a signal or the internal-error handler.
either() {
  file=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" = 0 ]; then return; fi
  if [ "$got" != 1 ] || grep -q "internal error" "$tmp/err" || [ "$(grep -c 'error' "$tmp/err")" != 1 ] ||
     ! grep -q "$(basename "$file")" "$tmp/err"; then
    echo "FAIL (exit $got, wanted 0, or 1 with one line naming the file): $*"; cat "$tmp/err"; fails=$((fails + 1))
  fi
}
for f in "$root"/tests/fuzz/corpus/onnx/*; do either "$f" "$tw" analyze "$f" --format json; done
for f in "$root"/tests/fuzz/corpus/gpu/*; do either "$f" "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$f"; done
for f in "$root"/tests/fuzz/corpus/layer_set/*; do either "$f" "$tw" layers "$f"; done
for f in "$root"/tests/fuzz/corpus/space/*; do either "$f" "$tw" nas "$f" --samples 3 -o "$tmp/space_rows.csv"; done
for f in "$root"/tests/fuzz/corpus/trace/*; do either "$f" "$tw" check "$data/tiny_cnn.onnx" --trace "$f"; done

# rank: files, folders and list files; with --keep-going a bad model is a row saying why, not a stop.
abs_root=$(cd "$root" && pwd)
printf '%s\n' "# one good, one broken" "$abs_root/onnx_models/resnet18.onnx" "$abs_root/tests/data/cycle.onnx" >"$tmp/models.txt"
expect 0 "" -- "$tw" rank "$tmp/models.txt" "$root/onnx_models/heldout_variants" "$data/conv3d.onnx" --threads 2 --format json --keep-going -o "$tmp/rank.json"
python3 - "$tmp/rank.json" <<'PY' || { echo "FAIL: rank over a list, a folder and bad models"; fails=$((fails + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["models"]) == 17, len(d["models"])
failed = {f["model"].rsplit("/", 1)[-1]: f["error"] for f in d["failed"]}
assert set(failed) == {"cycle.onnx", "conv3d.onnx"}, failed
assert "cycle" in failed["cycle.onnx"] and "tensor-core work" in failed["conv3d.onnx"]
PY
expect 1 "no model could be ranked" -- "$tw" rank "$data/cycle.onnx"
# Without --keep-going a failure is exit 1: one error line per failed model
# (the last says how many failed and what ranks the rest), no ranking written.
r18=$root/onnx_models/resnet18.onnx
"$tw" rank "$r18" "$data/cycle.onnx" "$data/conv3d.onnx" -o "$tmp/rank_failed.txt" >"$tmp/out" 2>"$tmp/err"
got=$?
if [ "$got" != 1 ] || [ "$(wc -l <"$tmp/err")" != 2 ] || [ "$(grep -c '^tilewave: error: .*\(cycle\|conv3d\)\.onnx: ' "$tmp/err")" != 2 ] ||
   ! tail -1 "$tmp/err" | grep -q "(2 of 3 models failed; --keep-going ranks the rest)$" || [ -e "$tmp/rank_failed.txt" ]; then
  echo "FAIL: rank with broken files (exit $got, wanted 1, one line per failure, no output)"; cat "$tmp/err"; fails=$((fails + 1))
fi
expect 0 "" -- "$tw" rank "$r18" "$data/cycle.onnx" "$data/conv3d.onnx" --keep-going
grep -q "^   1 resnet18 " "$tmp/out" && grep -q "^2 models not ranked:" "$tmp/out" && grep -q "cycle.onnx: " "$tmp/out" &&
  grep -q "conv3d.onnx: " "$tmp/out" || { echo "FAIL: rank --keep-going lists the failures and ranks the rest"; cat "$tmp/out"; fails=$((fails + 1)); }
# What bounds each row: under timm's harness at batch 1 every model is
# host-bound and one note says so, naming what ranks the GPU's work; CUDA
# graphs at a large batch rank the GPU's work, and no note.
mbv2=$root/onnx_models/mobilenet_v2.onnx
expect 0 "" -- "$tw" rank "$r18" "$mbv2" --batch 1
[ "$(grep -c "^Note: 2 of 2 models are host-bound" "$tmp/out")" = 1 ] && grep -q -- "--graph, or a larger --batch" "$tmp/out" &&
  [ "$(awk '$1 ~ /^[12]$/ && $2 != "models" && $4 == "host"' "$tmp/out" | wc -l)" = 2 ] ||
  { echo "FAIL: rank at batch 1 under the default configuration: host-bound rows and their note"; cat "$tmp/out"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" rank "$r18" "$mbv2" --batch 64 --graph
! grep -q "host-bound" "$tmp/out" && [ "$(awk '$1 ~ /^[12]$/ && $2 != "models" && $4 != "host"' "$tmp/out" | wc -l)" = 2 ] ||
  { echo "FAIL: rank under --graph at batch 64: GPU-bound rows, no host-bound note"; cat "$tmp/out"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" rank "$r18" "$mbv2" --batch 1 --format json
python3 - "$tmp/out" <<'PY' || { echo "FAIL: rank JSON bound fields and note"; fails=$((fails + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert [m["bound"] for m in d["models"]] == ["host", "host"], d["models"]
assert d["host_bound_models"] == 2 and len(d["notes"]) == 1 and "--graph" in d["notes"][0], d["notes"]
PY
# CSV: the bound column, and the note on stderr.
expect 0 "host-bound" -- "$tw" rank "$r18" "$mbv2" --batch 1 --format csv
python3 - "$tmp/out" <<'PY' || { echo "FAIL: rank CSV bound column"; fails=$((fails + 1)); }
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
assert [r["bound"] for r in rows] == ["host", "host"], rows
PY
# A partial model (unmodelled kernels under --allow-unmodelled) is marked in the table.
expect 0 "" -- "$tw" rank "$r18" "$data/conv3d.onnx" --batch 1 --allow-unmodelled
grep -q "conv3d (partial)" "$tmp/out" && grep -q "^(partial): 1 model with unmodelled kernels" "$tmp/out" ||
  { echo "FAIL: rank marks a partial model"; cat "$tmp/out"; fails=$((fails + 1)); }

# nas (docs/nas.md): shards merged are the unsharded run, row for row; so are
# several threads; a missing or doubled shard is an error.
sp=$root/onnx_models/spaces/mobilenetv2.json
expect 0 "" -- "$tw" nas "$sp" --samples 300 --seed 4 -o "$tmp/all.csv"
for i in 0 1 2; do expect 0 "" -- "$tw" nas "$sp" --samples 300 --seed 4 --shard "$i/3" -o "$tmp/part$i.csv"; done
expect 0 "" -- "$tw" nas-merge "$tmp/part0.csv" "$tmp/part1.csv" "$tmp/part2.csv" -o "$tmp/merged.csv"
tail -n +3 "$tmp/all.csv" >"$tmp/all.rows"
tail -n +3 "$tmp/merged.csv" >"$tmp/merged.rows"
cmp -s "$tmp/all.rows" "$tmp/merged.rows" || { echo "FAIL: merged shards differ from the unsharded run"; fails=$((fails + 1)); }
[ "$(wc -l <"$tmp/all.rows")" = 300 ] || { echo "FAIL: nas wrote $(wc -l <"$tmp/all.rows") rows, wanted 300"; fails=$((fails + 1)); }
# CSV (docs/cli.md "Formats"): the version's comment line, column names, the run's header beside it.
[ "$(head -1 "$tmp/all.csv")" = "# $("$tw" --version)" ] && sed -n 2p "$tmp/all.csv" | grep -q '^index,encoding,' &&
  grep -q "\"tilewave_version\": \"$("$tw" --version | cut -d' ' -f2)\"" "$tmp/all.csv.meta.json" && grep -q '"tool": "tilewave nas"' "$tmp/all.csv.meta.json" &&
  grep -q '"merged_shards": 3' "$tmp/merged.csv.meta.json" ||
  { echo "FAIL: nas CSV is not plain with its header in FILE.meta.json"; fails=$((fails + 1)); }
cp "$tmp/part1.csv" "$tmp/orphan.csv"
expect 1 "orphan.csv: its header is missing" -- "$tw" nas-merge "$tmp/part0.csv" "$tmp/orphan.csv"
# A CSV nas wrote before, with its header as a `# {json}` first line, still merges.
{ printf '# '; python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$tmp/part2.csv.meta.json"
  tail -n +2 "$tmp/part2.csv"; } > "$tmp/legacy2.csv"
expect 0 "" -- "$tw" nas-merge "$tmp/part0.csv" "$tmp/part1.csv" "$tmp/legacy2.csv" -o "$tmp/merged_legacy.csv"
cmp -s "$tmp/merged.csv" "$tmp/merged_legacy.csv" || { echo "FAIL: a legacy shard merges differently"; fails=$((fails + 1)); }
# Shards written before time_us (docs/report.md "Field names"): CSV rows
# without the last two columns (latency_us, bound), JSON rows with
# latency_us alone, merge into today's rows; so do CSV rows from before
# bound. Their bound is empty (not known), the rest the same.
{ sed -n 2p "$tmp/part2.csv" | sed 's/,latency_us,bound$//; s/,time_us,/,latency_us,/'; tail -n +3 "$tmp/part2.csv" | sed 's/,[^,]*,[^,]*$//'; } > "$tmp/former2.csv"
{ sed -n 2p "$tmp/part2.csv" | sed 's/,bound$//'; tail -n +3 "$tmp/part2.csv" | sed 's/,[^,]*$//'; } > "$tmp/nobound2.csv"
# nas-merge reads columns by name: a shard whose columns come in another order merges the same.
python3 -c 'import csv, sys
lines = open(sys.argv[1]).read().splitlines()
rows = list(csv.reader(lines[1:]))
order = list(reversed(range(len(rows[0]))))
open(sys.argv[2], "w").write("\n".join([lines[0]] + [",".join(r[i] for i in order) for r in rows]) + "\n")' "$tmp/part2.csv" "$tmp/reordered2.csv"
cp "$tmp/part2.csv.meta.json" "$tmp/reordered2.csv.meta.json"
expect 0 "" -- "$tw" nas-merge "$tmp/part0.csv" "$tmp/part1.csv" "$tmp/reordered2.csv" -o "$tmp/merged_reordered.csv"
cmp -s "$tmp/merged.csv" "$tmp/merged_reordered.csv" || { echo "FAIL: a shard with its columns reordered merges differently"; fails=$((fails + 1)); }
sed '2s/,flops,/,gflops,/' "$tmp/part2.csv" >"$tmp/noflops2.csv"; cp "$tmp/part2.csv.meta.json" "$tmp/noflops2.csv.meta.json"
expect 1 "noflops2.csv:2: the nas column 'flops' is missing" -- "$tw" nas-merge "$tmp/part0.csv" "$tmp/part1.csv" "$tmp/noflops2.csv"
for f in former2 nobound2; do
  cp "$tmp/part2.csv.meta.json" "$tmp/$f.csv.meta.json"
  expect 0 "" -- "$tw" nas-merge "$tmp/part0.csv" "$tmp/part1.csv" "$tmp/$f.csv" -o "$tmp/merged_$f.csv"
  # Merged again, a row with an empty bound stays as it is.
  expect 0 "" -- "$tw" nas-merge "$tmp/merged_$f.csv" -o "$tmp/remerged_$f.csv"
  sed 's/,[^,]*$//' "$tmp/merged.csv" >"$tmp/a.rows"; sed 's/,[^,]*$//' "$tmp/merged_$f.csv" >"$tmp/b.rows"
  cmp -s "$tmp/a.rows" "$tmp/b.rows" &&
    [ "$(grep -c ',$' "$tmp/merged_$f.csv")" = 100 ] && cmp -s "$tmp/merged_$f.csv" "$tmp/remerged_$f.csv" ||
    { echo "FAIL: a shard from before $f merges differently"; fails=$((fails + 1)); }
done
for i in 0 1; do expect 0 "" -- "$tw" nas "$sp" --samples 40 --seed 4 --pareto --format json --shard "$i/2" -o "$tmp/jpart$i.jsonl"; done
python3 -c 'import json, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [json.loads(l) for l in lines[1:]]
for r in rows: del r["time_us"]
open(sys.argv[2], "w").write("\n".join([lines[0]] + [json.dumps(r) for r in rows]) + "\n")' "$tmp/jpart1.jsonl" "$tmp/jformer1.jsonl"
expect 0 "" -- "$tw" nas-merge "$tmp/jpart0.jsonl" "$tmp/jpart1.jsonl" -o "$tmp/jmerged.jsonl"
expect 0 "" -- "$tw" nas-merge "$tmp/jpart0.jsonl" "$tmp/jformer1.jsonl" -o "$tmp/jmerged_former.jsonl"
python3 -c 'import json, sys
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[1:])
assert len(a) > 1 and a == b, "differ"
assert all(r["time_us"] == r["latency_us"] for r in b[1:])' "$tmp/jmerged.jsonl" "$tmp/jmerged_former.jsonl" ||
  { echo "FAIL: a JSON shard from before time_us merges differently"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" nas "$sp" --samples 300 --seed 4 --threads 3 -o "$tmp/threads.csv"
tail -n +3 "$tmp/threads.csv" >"$tmp/threads.rows"
cmp -s "$tmp/all.rows" "$tmp/threads.rows" || { echo "FAIL: --threads changes the rows"; fails=$((fails + 1)); }
expect 1 "shard 2/3 is missing" -- "$tw" nas-merge "$tmp/part0.csv" "$tmp/part1.csv"
expect 1 "shard 1/3 given twice" -- "$tw" nas-merge "$tmp/part0.csv" "$tmp/part1.csv" "$tmp/part1.csv"
expect 1 "differs from the first file" -- "$tw" nas-merge "$tmp/part0.csv" "$tmp/all.csv"
# Fields of the wrong type are bad input, not internal errors.
echo '{"header": "yes", "shard": "0/1"}' > "$tmp/bad_header.jsonl"
expect 1 "bad_header.jsonl: not a \`tilewave nas\` output" -- "$tw" nas-merge "$tmp/bad_header.jsonl"
printf '{"header": true, "shard": "0/1"}\n{"index": 0, "latency_us": "x"}\n' > "$tmp/bad_row.jsonl"
expect 1 "bad_row.jsonl:2: field .latency_us. is not a nas figure" -- "$tw" nas-merge "$tmp/bad_row.jsonl"
expect 2 "" -- "$tw" nas "$sp" --shard 3/3
expect 0 "" -- "$tw" nas "$sp" --samples 300 --seed 4 --pareto --min-utilization 0.0005 --layout nhwc --no-amp --graph --format json -o "$tmp/front.jsonl"
python3 - "$tmp/front.jsonl" <<'PY' || { echo "FAIL: --pareto/--min-utilization rows"; fails=$((fails + 1)); }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])][1:]
assert rows and all(r["utilization"] >= 0.0005 for r in rows)
rows.sort(key=lambda r: r["time_us"])
assert all(b["flops"] > a["flops"] for a, b in zip(rows, rows[1:])), "not a front"
PY
expect 0 "" -- "$tw" nas "$sp" --samples 20 --export-onnx "$tmp/top" --export-top 2 -o "$tmp/few.csv"
[ "$(ls "$tmp/top" | wc -l)" = 2 ] || { echo "FAIL: --export-onnx --export-top 2 wrote $(ls "$tmp/top" | wc -l) files"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$(ls "$tmp"/top/*.onnx | head -n 1)"
# --unique (docs/nas.md "Sampling"): every row a distinct candidate, the same
# seed the same rows, shards merged the unsharded run; --enumerate: each
# candidate of a small space exactly once. The default repeats candidates.
rows_distinct() { tail -n +3 "$1" | cut -d, -f2 | sort -u | wc -l; }
rows_count() { tail -n +3 "$1" | wc -l; }
rg=$root/onnx_models/spaces/regnet.json
expect 0 "of the 20000 samples (35%) are expected to repeat" -- "$tw" nas "$rg" --samples 20000 --seed 4 -o "$tmp/repl.csv"
# Without --threads, nas takes every core, as rank does.
grep -q "on $(nproc) thread" "$tmp/err" || { echo "FAIL: nas did not default to the $(nproc) cores"; cat "$tmp/err"; fails=$((fails + 1)); }
[ "$(rows_distinct "$tmp/repl.csv")" -lt 20000 ] || { echo "FAIL: the default sampling has no repeats"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" nas "$rg" --samples 20000 --seed 4 --unique -o "$tmp/uniq.csv"
grep -q "expected to repeat" "$tmp/err" && { echo "FAIL: --unique warned of repeats"; fails=$((fails + 1)); }
[ "$(rows_count "$tmp/uniq.csv")" = 20000 ] && [ "$(rows_distinct "$tmp/uniq.csv")" = 20000 ] ||
  { echo "FAIL: --unique gave $(rows_distinct "$tmp/uniq.csv") distinct of $(rows_count "$tmp/uniq.csv") rows"; fails=$((fails + 1)); }
grep -q '"sampling": "unique"' "$tmp/uniq.csv.meta.json" || { echo "FAIL: the header lacks the sampling"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" nas "$rg" --samples 20000 --seed 4 --unique --threads 2 -o "$tmp/uniq_again.csv"
cmp -s "$tmp/uniq.csv" "$tmp/uniq_again.csv" || { echo "FAIL: --unique differs between runs of one seed"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" nas "$rg" --samples 20000 --seed 5 --unique -o "$tmp/uniq5.csv"
cmp -s "$tmp/uniq.csv" "$tmp/uniq5.csv" && { echo "FAIL: --unique ignores the seed"; fails=$((fails + 1)); }
for i in 0 1; do expect 0 "" -- "$tw" nas "$rg" --samples 20000 --seed 4 --unique --shard "$i/2" -o "$tmp/upart$i.csv"; done
expect 0 "" -- "$tw" nas-merge "$tmp/upart0.csv" "$tmp/upart1.csv" -o "$tmp/umerged.csv"
[ "$(tail -n +3 "$tmp/umerged.csv")" = "$(tail -n +3 "$tmp/uniq.csv")" ] ||
  { echo "FAIL: --unique shards merged differ from the unsharded run"; fails=$((fails + 1)); }
expect 1 "differs from the first file" -- "$tw" nas-merge "$tmp/upart0.csv" "$tmp/repl.csv"
expect 1 "regnet.json: --unique: --samples 21505 is more than the 21504 candidates" -- \
  "$tw" nas "$rg" --samples 21505 --unique
printf '{"family": "resnet", "stages": [{"depth": [1, 2], "width": [16, 32], "bottleneck": [0, 1], "stride": [1, 2]},
  {"depth": [1, 2, 3], "width": [32], "bottleneck": [0, 1], "stride": [2]}]}' >"$tmp/small_space.json"
expect 0 "" -- "$tw" nas "$tmp/small_space.json" --enumerate -o "$tmp/enum.csv"
[ "$(rows_count "$tmp/enum.csv")" = 96 ] && [ "$(rows_distinct "$tmp/enum.csv")" = 96 ] ||
  { echo "FAIL: --enumerate gave $(rows_distinct "$tmp/enum.csv") distinct of $(rows_count "$tmp/enum.csv") rows, wanted 96"; fails=$((fails + 1)); }
for i in 0 1 2; do expect 0 "" -- "$tw" nas "$tmp/small_space.json" --enumerate --shard "$i/3" -o "$tmp/epart$i.csv"; done
expect 0 "" -- "$tw" nas-merge "$tmp/epart0.csv" "$tmp/epart1.csv" "$tmp/epart2.csv" -o "$tmp/emerged.csv"
[ "$(tail -n +3 "$tmp/emerged.csv")" = "$(tail -n +3 "$tmp/enum.csv")" ] ||
  { echo "FAIL: --enumerate shards merged differ from the unsharded run"; fails=$((fails + 1)); }
expect 1 "mobilenetv2.json: --enumerate: the space holds 8.569e+13 candidates, more than the 10000000" -- \
  "$tw" nas "$sp" --enumerate
expect 2 "excludes" -- "$tw" nas "$tmp/small_space.json" --enumerate --samples 5
expect 2 "excludes" -- "$tw" nas "$tmp/small_space.json" --enumerate --unique
# Progress (docs/errors.md "Progress"): none when stderr is not a terminal,
# only the two summary lines (and the note that the candidates are
# host-bound, at batch 1 in a plain loop); a rewritten line under a pseudo-terminal.
expect 0 "" -- "$tw" nas "$sp" --samples 300000 --threads 2 -o "$tmp/big.csv"
if grep -q "$(printf '\r')" "$tmp/err" || [ "$(grep -vc '^tilewave: note: 300000 of 300000 candidates are host-bound' "$tmp/err")" != 2 ]; then
  echo "FAIL: nas printed progress into a file"; cat "$tmp/err"; fails=$((fails + 1))
fi
if command -v script >/dev/null; then
  script -qec "'$tw' nas '$sp' --samples 300000 --threads 2 -o '$tmp/big_tty.csv'" /dev/null </dev/null >"$tmp/tty.out" 2>&1
  grep -aq "$(printf '\r')tilewave nas: candidates [0-9]* / 300000" "$tmp/tty.out" ||
    { echo "FAIL: nas on a terminal shows no progress"; cat "$tmp/tty.out"; fails=$((fails + 1)); }
  cmp -s "$tmp/big.csv" "$tmp/big_tty.csv" || { echo "FAIL: progress changed nas's rows"; fails=$((fails + 1)); }
fi
printf '{"family": "resnet", "stages": [{"depth": [1], "width": [64], "bottleneck": [1]}]}' >"$tmp/bad_space.json"
expect 1 "bad_space.json: stages\[0\]: missing choice 'stride'" -- "$tw" nas "$tmp/bad_space.json"

# Issue 18: the execution configuration's options (docs/model.md "Execution configuration").
expect 0 "" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --batch 1 --layout nchw --amp --no-graph
grep -q "schedule           host-bound" "$tmp/out" || { echo "FAIL: a batch-1 loop is not host-bound"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --batch 1
grep -q "eager nchw amp-fp16 loop" "$tmp/out" || { echo "FAIL: the table does not name the default configuration"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --batch 1 --runtime tensorrt
grep -q "tensorrt nhwc fp16 graph" "$tmp/out" || { echo "FAIL: tensorrt does not default to its engine's configuration"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --batch 1 --dtype fp32
grep -q "eager nchw fp32 loop" "$tmp/out" || { echo "FAIL: --dtype fp32 is not PyTorch's fp32"; fails=$((fails + 1)); }
expect 2 "--layout" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --layout nwhc
expect 1 "amp autocasts to fp16 or bf16" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --amp --dtype int8
expect 1 "no_such_host.json: no such host description" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --no-graph --host "$tmp/no_such_host.json"
printf '{"params": {"host_op_us": "fast"}}' >"$tmp/bad_host.json"
expect 1 "bad_host.json: host parameter 'host_op_us'" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --no-graph --host "$tmp/bad_host.json"
expect 1 "not a host id" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --no-graph --host "a b"
: >"$tmp/empty_host.json"
expect 1 "empty_host.json: not valid JSON" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --no-graph --host "$tmp/empty_host.json"
mkfifo "$tmp/fifo_host.json"
expect 1 "fifo_host.json: not a regular file" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --no-graph --host "$tmp/fifo_host.json"
mkdir "$tmp/dir_host.json"
expect 1 "dir_host.json: not a regular file" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --no-graph --host "$tmp/dir_host.json"
head -c 1100000 /dev/zero | tr '\0' ' ' >"$tmp/huge_host.json"
expect 1 "huge_host.json: larger than 1 MB" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --no-graph --host "$tmp/huge_host.json"
python3 -c "print('[' * 100000)" >"$tmp/deep_host.json"
expect 1 "deep_host.json: JSON nested deeper than 32 levels" -- "$tw" analyze "$root/onnx_models/resnet50.onnx" --no-graph --host "$tmp/deep_host.json"
"$tw" analyze "$root/onnx_models/resnet50.onnx" --batch 1 --layout nchw --amp --no-graph --format json -o "$tmp/loop.json"
python3 - "$tmp/loop.json" <<'PY' || { echo "FAIL: --no-graph JSON schedule"; fails=$((fails + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
s = d["schedule"]
assert d["execution"] == {"runtime": "eager", "dtype": "fp16", "amp": True, "layout": "nchw", "launch": "loop",
                          "attention": "fused"}
assert s["host_bound"] and d["total"]["bound_by"] == "host" and d["host"]["id"] == "h200-vm"
assert len(s["timeline"]) == d["total"]["kernels"] and abs(s["step_us"] - d["total"]["time_us"]) < 1e-6
assert all(r[1] <= r[2] <= r[3] <= r[4] for r in s["timeline"]), "a kernel starts before its issue ends"
t = d["total"]
assert t["time_low_us"] <= t["time_us"] < t["time_high_us"], "a host-bound step has no machine range"
assert d["host"]["machine_spread"]["low"] <= 1 <= d["host"]["machine_spread"]["high"]
PY
# The host is an axis of its own (docs/cli.md "Host"): a GPU file cannot choose it, every GPU gets the
# one named, and every parameter of both files is listed with its bounds.
python3 -c "import json,sys; g=json.load(open(sys.argv[1])); g['host']='h200-vm'; json.dump(g, open(sys.argv[2],'w'))" \
  "$root/gpu_models/h200.json" "$tmp/h200_with_host.json"
cp -r "$root/gpu_models/arch" "$tmp/arch"
expect 1 "h200_with_host.json: a GPU file does not choose the host" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$tmp/h200_with_host.json"
expect 0 "" -- "$tw" compare "$data/tiny_cnn.onnx" --gpu h200,l4 --batch 1 --host builtin
grep -q "Plain loops issued by host builtin (not calibrated) on every GPU" "$tmp/out" ||
  { echo "FAIL: compare does not name the one host"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" params --format json
python3 - "$tmp/out" <<'PY' || { echo "FAIL: params lists both tables"; fails=$((fails + 1)); }
import json, sys
rows = json.load(open(sys.argv[1]))
assert {r["file"] for r in rows} == {"gpu", "host"} and all(r["min"] <= r["default"] <= r["max"] for r in rows)
assert {"tc_efficiency", "host_op_us", "sync_us"} <= {r["name"] for r in rows}
PY

# A failed run leaves no output file behind.
expect 1 "" -- "$tw" analyze "$data/cycle.onnx" --batch 1 -o "$tmp/never.json"
[ ! -e "$tmp/never.json" ] || { echo "FAIL: half-written output left behind"; fails=$((fails + 1)); }
[ -z "$(ls "$tmp" | grep '\.tmp\.')" ] || { echo "FAIL: temporary file left behind"; fails=$((fails + 1)); }

# Names from input files never become paths or raw terminal codes (issue 20):
# a space named "../../escaped" exports inside its folder; control
# characters in a space's or a GPU's name are refused.
sed 's|"name": "mobilenetv2"|"name": "../../escaped"|' "$root/onnx_models/spaces/mobilenetv2.json" >"$tmp/dots.json"
mkdir -p "$tmp/deep/er"
expect 0 "" -- "$tw" nas "$tmp/dots.json" --samples 20 --export-onnx "$tmp/deep/er/top" --export-top 1 -o "$tmp/dots.csv"
[ "$(find "$tmp" -name '*escaped*' | wc -l)" = 1 ] && [ -n "$(ls "$tmp/deep/er/top" | grep 'escaped_[0-9]*\.onnx$')" ] ||
  { echo "FAIL: an export name left its folder: $(find "$tmp" -name '*escaped*')"; fails=$((fails + 1)); }
printf '%s' "$(sed 's|"name": "mobilenetv2"|"name": "red\\u001b[31m"|' "$root/onnx_models/spaces/mobilenetv2.json")" >"$tmp/esc_space.json"
expect 1 "esc_space.json: field 'name' ('red.x1b\[31m') holds a control character" -- "$tw" nas "$tmp/esc_space.json" --samples 5
sed 's|"name": "NVIDIA H200[^"]*"|"name": "H200\\u0007"|' "$root/gpu_models/h200.json" >"$tmp/esc_gpu.json"
expect 1 "esc_gpu.json: field 'name' ('H200.x07') holds a control character" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$tmp/esc_gpu.json"

# Budgets (issue 20): a 300 KB gzip that inflates past the trace budget, and
# a GPU file past its own, are one error each, not gigabytes of memory.
head -c 300000000 /dev/zero | tr '\0' ' ' | gzip -1 >"$tmp/bomb.json.gz"
expect 1 "bomb.json.gz: gzip content larger than 256 MB" -- "$tw" check "$data/tiny_cnn.onnx" --trace "$tmp/bomb.json.gz"
{ cat "$root/gpu_models/h200.json"; head -c 5000000 /dev/zero | tr '\0' ' '; } >"$tmp/big_gpu.json"
expect 1 "big_gpu.json: is 4.8 MB, more than a GPU file may be (4.0 MB)" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$tmp/big_gpu.json"

# Hostile paths for --gpu and the model (issue 20): a loop of links, an id of
# 300 characters, a file whose reads fail; -1 candidates is bad usage.
ln -s "$tmp/loop_b" "$tmp/loop_a" && ln -s "$tmp/loop_a" "$tmp/loop_b"
expect 1 "loop_a: cannot be read (Too many levels of symbolic links)" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$tmp/loop_a"
expect 1 "is neither a GPU id" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu "$(printf 'a%.0s' $(seq 300))"
if [ -r /proc/self/mem ]; then
  expect 1 "/proc/self/mem: cannot read a GPU file" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu /proc/self/mem
  expect 1 "/proc/self/mem: cannot read an ONNX file" -- "$tw" analyze /proc/self/mem
fi
expect 2 "not in range" -- "$tw" nas "$root/onnx_models/spaces/mobilenetv2.json" --samples -1
# Every candidate unbuildable (a batch past 2^50 elements) is an error, not
# an empty table; a filter that keeps nothing is an answer.
expect 1 "mobilenetv2.json: none of the 5 candidates could be built; the first: graph input 'input' would have more than 2^50" -- \
  "$tw" nas "$root/onnx_models/spaces/mobilenetv2.json" --samples 5 --batch 100000000000 -o "$tmp/none.csv"
[ ! -e "$tmp/none.csv" ] || { echo "FAIL: nas wrote a table of no candidates"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" nas "$root/onnx_models/spaces/mobilenetv2.json" --samples 5 --min-utilization 0.99 -o "$tmp/filtered.csv"

# A kernel shorter than a profiler's resolution is no measurement: one error,
# not "+inf%" (issue 20).
printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1e-310}]}' >"$tmp/tiny_dur.json"
expect 1 "tiny_dur.json: kernel 'k' lasts 1e-310 us, below a profiler's 1 ns resolution" -- \
  "$tw" check "$data/tiny_cnn.onnx" --batch 1 --trace "$tmp/tiny_dur.json"

# --trace-out (issue 21): the predicted step as Chrome trace JSON, with a GPU
# lane and, for a plain loop, a host lane; `check` reads it back as if it
# were measured and pairs every kernel with 0% error.
expect 0 "" -- "$tw" analyze "$root/onnx_models/resnet18.onnx" --batch 2 --trace-out "$tmp/pred_trace.json" --format json -o "$tmp/pred.json"
python3 - "$tmp/pred_trace.json" "$tmp/pred.json" <<'PY' || { echo "FAIL: --trace-out is not the Chrome trace of the prediction"; fails=$((fails + 1)); }
import json, sys
t, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev = t["traceEvents"]
for e in ev:  # the Trace Event Format's required fields
    assert e["ph"] in ("X", "M") and isinstance(e["pid"], int) and isinstance(e["name"], str)
    if e["ph"] == "X":
        assert isinstance(e["tid"], int) and e["ts"] >= 0 and e["dur"] >= 0
gpu = [e for e in ev if e.get("cat") == "kernel"]
host = [e for e in ev if e.get("cat") == "cpu_op"]
assert len(gpu) == a["total"]["kernels"] == len(host)
assert all(g["ts"] >= h["ts"] + h["dur"] - 1e-6 for g, h in zip(gpu, host)), "a kernel starts before its op is issued"
assert abs(t["otherData"]["step_us"] - a["total"]["time_us"]) < 1e-6
assert abs(sum(g["dur"] for g in gpu) - a["total"]["gpu_busy_us"]) < 1e-3 * a["total"]["gpu_busy_us"]
PY
expect 0 "" -- "$tw" check "$root/onnx_models/resnet18.onnx" --batch 2 --trace "$tmp/pred_trace.json"
grep -q "off by +0.0%; 148 kernels paired, median |error| 0.0%" "$tmp/out" ||
  { echo "FAIL: check does not read the predicted trace back"; cat "$tmp/out" | head -5; fails=$((fails + 1)); }
expect 0 "" -- "$tw" analyze "$root/onnx_models/resnet18.onnx" --batch 2 --layout nhwc --no-amp --graph --trace-out "$tmp/graph_trace.json"
[ "$(grep -c '"cpu_op"' "$tmp/graph_trace.json")" = 0 ] || { echo "FAIL: a CUDA graph has a host lane of ops"; fails=$((fails + 1)); }
cp "$data/tiny_cnn.onnx" "$tmp/self_trace.onnx"
expect 1 "is also an input of this command" -- "$tw" analyze "$tmp/self_trace.onnx" --batch 1 --trace-out "$tmp/self_trace.onnx"

# An output that is one of the inputs is refused, and the input is intact (issue 20).
cp "$data/tiny_cnn.onnx" "$tmp/self.onnx"
expect 1 "self.onnx: is also an input of this command" -- "$tw" analyze "$tmp/self.onnx" --batch 1 -o "$tmp/self.onnx"
expect 1 "is also an input of this command" -- "$tw" analyze "$tmp/self.onnx" --batch 1 --output="$tmp/../$(basename "$tmp")/self.onnx"
cmp -s "$tmp/self.onnx" "$data/tiny_cnn.onnx" || { echo "FAIL: -o equal to the model changed it"; fails=$((fails + 1)); }
expect 2 "usage error: model is required" -- "$tw" analyze

# Issue 32 (docs/errors.md "Output files"): one file-identity guard for every
# output against every file the command read, however it was reached (a
# folder's entry, a GPU folder's file, an input named twice), and no output
# left behind by a failed command.
mkdir -p "$tmp/models" "$tmp/gpus"
cp "$data/tiny_cnn.onnx" "$tmp/models/a.onnx"
expect 1 "a.onnx: is also an input of this command" -- "$tw" rank "$tmp/models" -o "$tmp/models/a.onnx"
cmp -s "$tmp/models/a.onnx" "$data/tiny_cnn.onnx" || { echo "FAIL: rank -o over a model of its folder changed it"; fails=$((fails + 1)); }
cp -r "$root/gpu_models/." "$tmp/gpus/"
expect 1 "h200.json: is also an input of this command" -- "$tw" calibrate carry --gpu h200 --to a100 --gpu-dir "$tmp/gpus" -o "$tmp/gpus/h200.json"
cmp -s "$tmp/gpus/h200.json" "$root/gpu_models/h200.json" || { echo "FAIL: carry -o over its donor changed it"; fails=$((fails + 1)); }
printf '%s\n' '{"op":"gemm","M":64,"N":64,"K":64,"dtype":"fp16","measured_us":5.0,"status":"ok"}' >"$tmp/m.jsonl"
cp "$tmp/m.jsonl" "$tmp/m_copy.jsonl"
expect 1 "m.jsonl: is also an input of this command" -- "$tw" calibrate validate "$tmp/m.jsonl" --holdout 0 --predictions "$tmp/m.jsonl"
cmp -s "$tmp/m.jsonl" "$tmp/m_copy.jsonl" || { echo "FAIL: --predictions over the measurements changed them"; fails=$((fails + 1)); }
rm -f "$tmp/left.txt"
expect 1 "nodir/t.json: cannot write output file" -- "$tw" analyze "$data/tiny_cnn.onnx" --batch 1 -o "$tmp/left.txt" --trace-out "$tmp/nodir/t.json"
[ ! -e "$tmp/left.txt" ] || { echo "FAIL: a failed command left its -o file"; fails=$((fails + 1)); }
[ -z "$(find "$tmp" -name '.*.tmp.*')" ] || { echo "FAIL: a temporary was left behind"; fails=$((fails + 1)); }
# A reader of stdout that has gone ends stdout quietly; the side file is whole.
{ "$tw" analyze "$root/onnx_models/resnet50.onnx" --batch 1 --format json --trace-out "$tmp/side.json" 2>"$tmp/err"; echo $? >"$tmp/rc"; } | head -c1 >/dev/null
[ "$(cat "$tmp/rc")" = 0 ] && ! grep -q "error" "$tmp/err" || { echo "FAIL: a closed stdout was an error"; cat "$tmp/err"; fails=$((fails + 1)); }
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/side.json" || { echo "FAIL: the side file of a closed stdout is not whole"; fails=$((fails + 1)); }
# A reader that reads nothing at all: the trace is written before stdout, whole.
rm -f "$tmp/side.json"
{ "$tw" analyze "$root/onnx_models/resnet50.onnx" --batch 1 --format json --trace-out "$tmp/side.json" 2>"$tmp/err"; echo $? >"$tmp/rc"; } | true
[ "$(cat "$tmp/rc")" = 0 ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/side.json" ||
  { echo "FAIL: the trace of a stdout closed before any read is lost"; cat "$tmp/err"; fails=$((fails + 1)); }
ln -sfn "$tmp/loop" "$tmp/loop"
expect 1 "loop: GPU folder cannot be read" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu-dir "$tmp/loop"
expect 1 "/proc/self/mem: cannot be read" -- "$tw" layers /proc/self/mem
: >"$tmp/empty.jsonl"
expect 1 "empty.jsonl: holds no layers" -- "$tw" layers "$tmp/empty.jsonl"
# Calibration inputs: a time is positive, finite and above a timer's resolution.
printf '%s\n' '{"op":"gemm","M":64,"N":64,"K":64,"dtype":"fp16","measured_us":1e-9,"status":"ok"}' >"$tmp/tiny.jsonl"
expect 1 "tiny.jsonl:1: 'measured_us' is 1e-09 us" -- "$tw" calibrate validate "$tmp/tiny.jsonl" --holdout 0
printf '%s\n' '{"op":"gemm","M":64,"N":64,"K":64,"dtype":"fp16","measured_us":-5,"status":"ok"}' >"$tmp/neg.jsonl"
expect 1 "neg.jsonl:1: 'measured_us' must be a positive time" -- "$tw" calibrate fit "$tmp/neg.jsonl" -o "$tmp/neg.json"
expect 2 "usage error: --holdout" -- "$tw" calibrate fit "$tmp/m.jsonl" --holdout 1.5 -o "$tmp/h.json"
expect 2 "usage error: --min-utilization" -- "$tw" nas "$root/onnx_models/spaces/resnet.json" --samples 3 --min-utilization nan
expect 2 "usage error: --shard" -- "$tw" nas "$root/onnx_models/spaces/resnet.json" --samples 3 --shard 1/-1
: >"$tmp/a_file"
expect 1 "cannot create the --export-onnx folder" -- "$tw" nas "$root/onnx_models/spaces/resnet.json" --samples 2 --export-onnx "$tmp/a_file/sub"
# Issue 33: annotate keeps external data reachable, or refuses with one line.
mkdir -p "$tmp/ext/models" "$tmp/ext/other" && cp "$data/stripped.onnx" "$tmp/ext/models/"
expect 0 "" -- "$tw" annotate "$tmp/ext/models/stripped.onnx" --batch 2 -o "$tmp/ext/up.onnx"
grep -q "models/stripped.weights" "$tmp/ext/up.onnx" || { echo "FAIL: annotate -o in the parent folder did not rewrite the weights' location"; fails=$((fails + 1)); }
expect 1 "stripped.onnx: tensor .* could reach it only through '..'" -- "$tw" annotate "$tmp/ext/models/stripped.onnx" --batch 2 -o "$tmp/ext/other/x.onnx"
[ -e "$tmp/ext/other/x.onnx" ] && { echo "FAIL: a refused annotate left its output"; fails=$((fails + 1)); }
# Issue 33: --help shows no default a flag does not have (CLI11 printed "--amp,--no-amp{false}"
# while AMP is eager's default); the two spellings of one axis exclude each other.
"$tw" analyze --help >"$tmp/help" 2>&1
grep -q "{false}" "$tmp/help" && { echo "FAIL: analyze --help shows a {false} default"; fails=$((fails + 1)); }
grep -q "the default for eager and inductor at fp16 or bf16" "$tmp/help" || { echo "FAIL: --help does not say AMP's default"; fails=$((fails + 1)); }
expect 2 "usage error: --amp excludes --no-amp" -- "$tw" analyze "$data/tiny_cnn.onnx" --amp --no-amp
expect 2 "usage error: --graph excludes --no-graph" -- "$tw" analyze "$data/tiny_cnn.onnx" --graph --no-graph
# Issue 33 item 7: compare spells launch as every command does (--graph/--no-graph); --launch is the
# old spelling for one release, with a one-line note; both at once is bad usage.
expect 0 "" -- "$tw" compare "$data/tiny_cnn.onnx" --gpu h200 --batch 2 --graph --format json -o "$tmp/cmp_graph.json"
grep -q '"launch": "graph"' "$tmp/cmp_graph.json" || { echo "FAIL: compare --graph did not replay a graph"; fails=$((fails + 1)); }
expect 0 "--launch is deprecated and goes in the next release; --launch graph means --graph" -- "$tw" compare "$data/tiny_cnn.onnx" --gpu h200 --batch 2 --launch graph --format json -o "$tmp/cmp_launch.json"
[ "$(grep -c deprecated "$tmp/err")" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: --launch's note is not one line"; fails=$((fails + 1)); }
cmp -s "$tmp/cmp_graph.json" "$tmp/cmp_launch.json" || { echo "FAIL: compare --launch graph differs from --graph"; fails=$((fails + 1)); }
expect 0 "--launch loop means --no-graph" -- "$tw" compare "$data/tiny_cnn.onnx" --gpu h200 --batch 2 --launch loop --format json
grep -q '"launch": "loop"' "$tmp/out" || { echo "FAIL: compare --launch loop did not issue a loop"; fails=$((fails + 1)); }
expect 2 "usage error: --graph excludes --launch" -- "$tw" compare "$data/tiny_cnn.onnx" --launch graph --graph
expect 2 "usage error: --no-graph excludes --launch" -- "$tw" compare "$data/tiny_cnn.onnx" --launch loop --no-graph
expect 2 "--launch" -- "$tw" compare "$data/tiny_cnn.onnx" --launch graph,loop
expect 0 "" -- "$tw" compare "$data/tiny_cnn.onnx" --gpu h200 --attention unfused --format json
grep -q '"attention": "unfused"' "$tmp/out" || { echo "FAIL: compare does not take --attention"; fails=$((fails + 1)); }
expect 2 "--dtype" -- "$tw" compare "$data/tiny_cnn.onnx" --dtype fp16,fp13
# Issue 34 item 1: the type stub's option dicts and docs/python.md's table are the option table's
# (`tilewave options`), generated, not copied: each block equals what the command prints now.
expect 0 "" -- "$tw" options --format pyi -o "$tmp/options.pyi"
sed -n '/^# BEGIN tilewave options --format pyi$/,/^# END tilewave options --format pyi$/p' "$root/analyzer/python/tilewave.pyi" | sed '1d;$d' >"$tmp/stub_block"
cmp -s "$tmp/options.pyi" "$tmp/stub_block" || { echo "FAIL: analyzer/python/tilewave.pyi's option block is not 'tilewave options --format pyi' (regenerate it)"; fails=$((fails + 1)); }
expect 0 "" -- "$tw" options --format md -o "$tmp/options.md"
python_doc=$root/docs/python.md
sed -n '/^<!-- tilewave options --format md -->$/,/^<!-- \/tilewave options -->$/p' "$python_doc" | sed '1d;$d' >"$tmp/doc_block"
cmp -s "$tmp/options.md" "$tmp/doc_block" || { echo "FAIL: docs/python.md's option table is not 'tilewave options --format md' (regenerate it)"; fails=$((fails + 1)); }
# Every option the table gives a command is a flag of it, and no other (an option missing from the CLI fails here).
"$tw" options --format json >"$tmp/options.json"
for cmd in analyze layers rank sweep report compare annotate advise check nas; do
  "$tw" $cmd --help >"$tmp/help_$cmd" 2>&1
  /usr/bin/python3 - "$tmp/options.json" "$tmp/help_$cmd" "$cmd" <<'PY' || fails=$((fails + 1))
import json, re, sys
table, help_text, cmd = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3]
for e in table:
    for flag in [e["flag"]] + ([e["off_flag"]] if "off_flag" in e else []):
        if (re.search(re.escape(flag) + r"\b(?!-)", help_text) is not None) != (cmd in e["commands"]):
            print(f"FAIL: {cmd} --help and the option table disagree on {flag}")
            sys.exit(1)
PY
done
# Issue 33: a mistyped command or GPU id names the one meant.
expect 2 "usage error: unknown command 'analyse'; did you mean 'analyze'?" -- "$tw" analyse "$data/tiny_cnn.onnx"
expect 2 "usage error: unknown command 'frobnicate' (--help" -- "$tw" frobnicate
expect 1 "unknown GPU 'H200'; did you mean 'h200'?" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu H200
expect 1 "unknown GPU 'a1000'; did you mean 'a100'?" -- "$tw" analyze "$data/tiny_cnn.onnx" --gpu a1000
# advise's trials are bounded (docs/errors.md "Budgets"): a huge batch stops at the GPU's memory.
expect 0 "" -- timeout 120 "$tw" advise "$data/tiny_cnn.onnx" --batch 1000000
# nas-merge takes no figure that nas could not have written (NaN, negative).
"$tw" nas "$root/onnx_models/spaces/resnet.json" --samples 4 --shard 0/2 -o "$tmp/part0.csv" 2>/dev/null
"$tw" nas "$root/onnx_models/spaces/resnet.json" --samples 4 --shard 1/2 -o "$tmp/part1.csv" 2>/dev/null
sed '3s/,[0-9.]*,\([0-9.]*\),\([0-9.]*\),idle/,nan,\1,\2,idle/' "$tmp/part0.csv" >"$tmp/nan0.csv"
cp "$tmp/part0.csv.meta.json" "$tmp/nan0.csv.meta.json"
expect 1 "nan0.csv:3: time_us 'nan' is not a nas figure" -- "$tw" nas-merge "$tmp/nan0.csv" "$tmp/part1.csv" -o "$tmp/merged.csv"
# The generator's findings (tests/fuzz/corpus/nas_merge, issue 32): a figure
# out of range, a fraction where nas writes an integer, a number's type
# wrong, or an escape sequence in a text cell, in CSV or JSON Lines: one
# line naming the file and row, exit 1, no output written.
for f in "$root"/tests/fuzz/corpus/nas_merge/*.csv "$root"/tests/fuzz/corpus/nas_merge/*.jsonl; do
  rm -f "$tmp/corpus_merged"
  expect 1 "$(basename "$f"):[0-9]*: .* is not a nas" -- "$tw" nas-merge "$f" -o "$tmp/corpus_merged"
  [ ! -e "$tmp/corpus_merged" ] || { echo "FAIL: nas-merge of $f left its output"; fails=$((fails + 1)); }
done
expect 2 "usage error: .*--bogus" -- "$tw" ops --bogus

# When the system refuses threads (here 1 GB stacks in a 3 GB address
# space: two threads at most), nas and rank run on fewer and print the same
# rows. ASan reserves more address space than that: skipped under it.
if ! grep -q AddressSanitizer "$tw"; then
  space=$root/onnx_models/spaces/mobilenetv2.json
  "$tw" nas "$space" --samples 3000 --threads 1 -o "$tmp/nas_1.csv" 2>/dev/null
  (ulimit -s 1000000 && ulimit -v 3000000 && "$tw" nas "$space" --samples 3000 --threads 64 -o "$tmp/nas_many.csv" 2>"$tmp/err") ||
    { echo "FAIL: nas with threads refused"; cat "$tmp/err"; fails=$((fails + 1)); }
  cmp -s "$tmp/nas_1.csv" "$tmp/nas_many.csv" || { echo "FAIL: nas rows differ when threads are refused"; fails=$((fails + 1)); }
  "$tw" rank "$data/tiny_cnn.onnx" "$root/onnx_models/resnet18.onnx" --threads 1 >"$tmp/rank_1.txt" 2>/dev/null
  (ulimit -s 1000000 && ulimit -v 3000000 && "$tw" rank "$data/tiny_cnn.onnx" "$root/onnx_models/resnet18.onnx" --threads 64 >"$tmp/rank_many.txt" 2>"$tmp/err") ||
    { echo "FAIL: rank with threads refused"; cat "$tmp/err"; fails=$((fails + 1)); }
  cmp -s "$tmp/rank_1.txt" "$tmp/rank_many.txt" || { echo "FAIL: rank rows differ when threads are refused"; fails=$((fails + 1)); }
fi

if [ "$fails" -ne 0 ]; then echo "$fails CLI check(s) failed"; exit 1; fi
echo "all CLI checks passed"
