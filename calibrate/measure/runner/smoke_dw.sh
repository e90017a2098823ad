#!/usr/bin/env bash
# Conv graph-API vs legacy-API smoke test on a GPU machine: self-test, then
# smoke_dw.jsonl (legacy_us vs backend_us per line), then a timed sample of the
# H200 layer set's convs (all of ConvNeXt-T, RegNetX-3.2GF, ResNeXt-50,
# MobileNetV2, EfficientNet-B0 at batch 1, plus every 25th other conv) for the
# per-conv autotune cost. Logs and outputs go to $OUT (default build/).
#   calibrate/measure/runner/smoke_dw.sh [SAMPLE_SECONDS]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${OUT:-$here/build}"
sample_s="${1:-90}"
bin="$here/build/tilewave-calibrate"
. "$here/gpu_env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
ldd "$bin" | grep -E "cudnn|cublas|not found"
ls "$cudnn_lib" | grep -E "engines|nvrtc" ; ls /usr/local/cuda-13.0/targets/x86_64-linux/lib 2>/dev/null | grep -i nvrtc | head -3

TW_DEBUG_AUTOTUNE=1 timeout 50 "$bin" --self-test >"$out/selftest.log" 2>"$out/selftest_autotune.log"
echo "self-test exit: $?"
grep -E "^(FAIL|SELF)" "$out/selftest.log"; grep -c "^PASS" "$out/selftest.log"
grep -E "rel_err.*\"(fp16|fp32)\".*groups" "$out/selftest.log" | cut -c1-220

t0=$(date +%s.%N)
TW_DEBUG_AUTOTUNE=1 timeout 55 "$bin" measure "$here/smoke_dw.jsonl" -o "$out/dw_measured.jsonl" 2>"$out/dw_measure.log"
echo "smoke_dw exit: $?  wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
tail -1 "$out/dw_measure.log"

python3 - "$root/calibrate/data/h200/layers.jsonl" "$out/sample.jsonl" <<'PY'
import json, sys
rows = [json.loads(x) for x in open(sys.argv[1]) if x.strip() and not x.startswith("#")]
conv = [r for r in rows if r["op"] == "conv"]
keep = ("convnext_tiny@1", "regnet_x_3_2gf@1", "resnext50_32x4d@1", "mobilenet_v2@1", "efficientnet_b0@1")
sel = [r for i, r in enumerate(conv) if i % 25 == 0 or any(m in keep for m in r.get("models", []))]
open(sys.argv[2], "w").write("".join(json.dumps(r) + "\n" for r in sel))
print(len(sel), "sample convs")
PY
t0=$(date +%s.%N)
TW_DEBUG_AUTOTUNE=1 timeout "$sample_s" "$bin" measure "$out/sample.jsonl" -o "$out/sample_measured.jsonl" 2>"$out/sample_measure.log"
echo "sample exit: $?  wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s  lines $(( $(wc -l <"$out/sample_measured.jsonl") - 1 ))"

python3 - "$out" <<'PY'
import json, sys, re, collections, math
out = sys.argv[1]
def load(p):
    try: return [json.loads(x) for x in open(p)][1:]
    except FileNotFoundError: return []
def f(v): return "-" if v is None else f"{v:9.2f}"
dw = load(out + "/dw_measured.jsonl")
print(f'{"name":30s} {"dt":4s} {"legacy_us":>9s} {"backend_us":>10s} {"x":>6s}  winner')
for l in dw:
    lg, bk = l.get("legacy_us"), l.get("backend_us")
    x = f"{lg / bk:6.2f}" if lg and bk else "     -"
    print(f'{l.get("name", "")[:30]:30s} {l["dtype"]:4s} {f(lg)} {f(bk):>10s} {x}  {l["status"]} {l.get("algo", "")} '
          f'{l.get("backend_note", l.get("backend_error", l.get("error", "")))[:150]}')
# autotune cost from the debug logs: per-plan build times, rtc engines
for log in ("dw_measure.log", "sample_measure.log"):
    try: text = open(out + "/" + log).read()
    except FileNotFoundError: continue
    builds = [float(m) for m in re.findall(r"build ([0-9.]+) ms", text)]
    tunes = [float(m) for m in re.findall(r"timed, ([0-9.]+) ms", text)]
    noplan = len(re.findall(r": no plan \(", text))
    if builds:
        builds.sort(); tunes.sort()
        print(f"{log}: {len(builds)} plans built, build ms median {builds[len(builds)//2]:.1f} max {builds[-1]:.1f}; "
              f"{noplan} configs without plan; graph-API tune per problem ms median {tunes[len(tunes)//2]:.0f} "
              f"p90 {tunes[int(len(tunes)*0.9)]:.0f} max {tunes[-1]:.0f}; rtc plans timed {text.count(' rtc ws=')}")
sm = load(out + "/sample_measured.jsonl")
if sm:
    st = collections.Counter(l["status"] for l in sm)
    both = [l for l in sm if l.get("legacy_us") and l.get("backend_us")]
    wins = sum(1 for l in both if l["backend_us"] < l["legacy_us"])
    gm = math.exp(sum(math.log(l["legacy_us"] / l["backend_us"]) for l in both) / max(len(both), 1))
    print(f"sample: {len(sm)} lines {dict(st)}; both paths {len(both)}, backend faster on {wins}, "
          f"geo-mean legacy/backend {gm:.2f}")
    grp = [l for l in both if l.get("groups", 1) > 1]
    if grp:
        gm = math.exp(sum(math.log(l["legacy_us"] / l["backend_us"]) for l in grp) / len(grp))
        print(f"  grouped/depthwise: {len(grp)}, backend faster on {sum(1 for l in grp if l['backend_us'] < l['legacy_us'])}, geo-mean {gm:.2f}")
    for model in ("convnext_tiny@1", "regnet_x_3_2gf@1", "resnext50_32x4d@1", "mobilenet_v2@1", "efficientnet_b0@1"):
        ls = [l for l in sm if model in l.get("models", []) and l["status"] == "ok"]
        lg = sum(l.get("legacy_us") or l["measured_us"] for l in ls); ms = sum(l["measured_us"] for l in ls)
        print(f"  {model:20s} {len(ls):3d} distinct convs: sum legacy {lg:8.1f} us -> measured {ms:8.1f} us")
    for l in sm:
        if l["status"] != "ok" or l.get("backend_us") is None or l.get("backend_error"):
            print("  ", json.dumps({k: l.get(k) for k in ("N", "C", "H", "K", "R", "stride", "groups", "dtype", "status",
                                                       "algo", "backend_note", "backend_error", "legacy_note", "error")})[:400])
    print("depthwise/grouped sample lines:")
    for l in sm:
        if l.get("groups", 1) > 1 and l["status"] == "ok":
            print(f'  N={l["N"]:<3d} C={l["C"]:<4d} H={l["H"]:<3d} K={l["K"]:<4d} {l["R"]}x{l["S"]} s{l.get("stride", [1])[0]} '
                  f'g={l["groups"]:<4d} {l["dtype"]} legacy {f(l.get("legacy_us"))} backend {f(l.get("backend_us"))}  {l["algo"][:60]}')
PY
grep -E "^\[" "$out/sample_measure.log" | tail -2
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
