#!/usr/bin/env python3
"""A Chrome trace (the format torch.profiler's export_chrome_trace writes)
from one profiled kernel list of runtime_bench.py's kernels.jsonl: the test
data of `tilewave check --trace` (tests/data/traces/README.md).

runtime_bench.py keeps, per network, runtime and batch, the kernels one
profiled forward ran on the H200: names (cut at 160 characters) and device
durations, in launch order. This writes them as "X" events of category
"kernel", each starting where the one before ended; the profiler's own
export also holds CPU events and real start times, which `check` does not
need. (calibrate/measure/capture_trace.py exports a trace directly on the
GPU machine.)

usage: python3 -m calibrate.measure.kernels_to_trace KERNELS.jsonl.gz MODEL RUNTIME BATCH > TRACE.json
"""
import json
import sys

from calibrate import jsonl


def main():
    path, model, runtime, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    for r in jsonl.read(path):
        if r.get("model") == model and r.get("runtime") == runtime and r.get("batch") == batch:
            break
    else:
        sys.exit("%s: no kernel list for %s %s batch %d" % (path, model, runtime, batch))
    events, ts = [], 0.0
    for name, us in r["list"]:
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": round(ts, 3),
                       "dur": us, "args": {"device": 0}})
        ts += us
    json.dump({"traceEvents": events, "displayTimeUnit": "us",
               "tilewave_source": {"kernels_file": path, "model": model, "runtime": runtime, "batch": batch,
                                   "kernels": r["kernels"], "kernel_sum_us": r["kernel_sum_us"]}},
              sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
