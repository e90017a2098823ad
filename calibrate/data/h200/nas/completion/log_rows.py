#!/usr/bin/env python3
"""Rows of bench.jsonl's form recovered from a runtime_bench log, for the run
whose bench.jsonl did not come back (session 6, part 1, ind_first50: the
device tool returns at most 8 files). Each timed configuration's log line
holds its model, runtime, batch and median latency (ms, 4 decimals), as
runtime_bench.py writes it; nothing else of the row is in the log.

usage: python3 calibrate/data/h200/nas/completion/log_rows.py LOG > ROWS.jsonl
"""
import json
import re
import sys

LINE = re.compile(r"^\S+ w\d+ gpu(\d+) (\S+)\s+(\S+)\s+b(\d+)\s+([0-9.]+) ms")

for line in open(sys.argv[1]):
    m = LINE.match(line)
    if m:
        gpu, runtime, model, batch, ms = m.groups()
        print(json.dumps({"model": model, "family": model.rsplit("/", 1)[0], "runtime": runtime, "batch": int(batch),
                          "latency_ms": float(ms), "gpu_index": int(gpu), "status": "ok",
                          "source": "log line (bench.jsonl not returned)"}))
