#!/usr/bin/env bash
# Smoke test on a GPU machine: self-test, then smoke.jsonl (and build/scale.jsonl
# if present), then a summary table. Logs and outputs go to $OUT (default build/).
#   calibrate/measure/runner/smoke.sh
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here/build}"
bin="$here/build/tilewave-calibrate"
. "$here/gpu_env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
ldd "$bin" | grep -E "cudnn|cublas|not found"

timeout 100 "$bin" --self-test 2>&1 | tee "$out/selftest.log"
echo "self-test exit: ${PIPESTATUS[0]}"
t0=$(date +%s.%N)
# TW_DEBUG_AUTOTUNE=1 logs every timed cuDNN candidate to stderr (kept in measure.log).
TW_DEBUG_AUTOTUNE=1 timeout 100 "$bin" measure "$here/smoke.jsonl" -o "$out/smoke_measured.jsonl" 2> "$out/measure.log"
status=$?; tail -2 "$out/measure.log"; echo "measure exit: $status  wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
if [[ -f "$here/build/scale.jsonl" ]]; then
  t0=$(date +%s.%N)
  timeout 120 "$bin" measure "$here/build/scale.jsonl" -o "$out/scale_measured.jsonl"
  echo "scale exit: $?  wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
fi

python3 - "$out" <<'PY'
import json, sys, collections
def work(l):  # (flops, bytes) for a throughput column
    op = l["op"]; g = l.get
    if op == "gemm": return 2 * l["M"] * l["N"] * l["K"] * g("batch", 1), None
    if op in ("conv", "conv_transpose"):
        n, c, h, w, k, r, s = (l[x] for x in "NCHWKRS")
        st, pd, dl = g("stride", [1, 1]), g("pad", [0, 0]), g("dilation", [1, 1])
        if op == "conv":
            p = (h + 2 * pd[0] - dl[0] * (r - 1) - 1) // st[0] + 1; q = (w + 2 * pd[1] - dl[1] * (s - 1) - 1) // st[1] + 1
            return 2 * n * k * p * q * (c // g("groups", 1)) * r * s, None
        return 2 * n * c * h * w * (k // g("groups", 1)) * r * s, None
    es = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "int8": 1}[g("dtype", "fp16")]
    if op == "eltwise": return None, es * l["elems"] * (l["inputs"] + 1)
    if op == "copy": return None, es * (l["elems_in"] + l["elems_out"])
    if op == "reduce": return None, es * l["outer"] * (l["inner"] + 1)
    if op == "softmax": return None, es * 2 * l["outer"] * l["inner"]
    if op == "pool":
        st, pd = g("stride", [1, 1]), g("pad", [0, 0])
        p = (l["H"] + 2 * pd[0] - l["R"]) // st[0] + 1; q = (l["W"] + 2 * pd[1] - l["S"]) // st[1] + 1
        return None, es * l["N"] * l["C"] * (l["H"] * l["W"] + p * q)
    return None, None
out = sys.argv[1]
lines = [json.loads(x) for x in open(out + "/smoke_measured.jsonl")]
print(json.dumps(lines[0]))
for l in lines[1:]:
    f, b = work(l); t = l.get("measured_us")
    rate = "" if not t else (f"{f / t / 1e6:8.1f} TFLOP/s" if f else (f"{b / t / 1e3:8.0f} GB/s" if b else ""))
    print(f'{l.get("name", l["op"]):22s} {l.get("dtype", "fp16"):5s} {l["status"]:11s} {t if t is not None else "-":>10} us  '
          f'spread {l.get("spread")}  {rate:>16s}  {l.get("algo", "")}  [{l.get("timing", l.get("reason", l.get("error", "")))}]')
try:
    sc = [json.loads(x) for x in open(out + "/scale_measured.jsonl")]
    print("scale:", len(sc) - 1, "layers", collections.Counter(x.get("status") for x in sc[1:]))
    for x in sc[1:]:
        if x["status"] != "ok": print("  ", json.dumps(x)[:400])
except FileNotFoundError:
    pass
PY
