#!/usr/bin/env python3
"""In-process speed of the Python module (docs/python.md "Speed"): candidates
scored per second through Scorer.score_many and Scorer.score, and layer-list
networks analysed per second. Run with PYTHONPATH at the module:

  PYTHONPATH=build/analyzer/python python3 tests/bench/python_bench.py
"""
import time

import tilewave


def rate(n, fn):
    start = time.perf_counter()
    fn()
    return n / (time.perf_counter() - start)


def main():
    for name in ("mobilenetv2", "regnet", "resnet"):
        space = tilewave.Space(name)
        scorer = space.scorer(gpu="h200", batch=1)
        warm = [space.sample(1, i) for i in range(20000)]
        scorer.score_many(warm)  # fill the block table, as a long search would
        encodings = [space.sample(2, i) for i in range(100000)]
        many = rate(len(encodings), lambda: scorer.score_many(encodings))
        one = rate(20000, lambda: [scorer.score(e) for e in encodings[:20000]])
        print(f"{name:12s} score_many {many:9.0f}/s   score {one:9.0f}/s   ({scorer.distinct_blocks} blocks)")
    layers = [{"op": "conv", "out": 32, "kernel": 3, "stride": 2, "act": "relu"}]
    for c in (64, 128, 256):
        layers += [{"op": "conv", "out": c, "kernel": 3, "stride": 2, "act": "relu"},
                   {"op": "conv", "out": c, "kernel": 3, "act": "relu"}]
    layers += [{"op": "global_avg_pool"}, {"op": "linear", "out": 1000}]
    print(f"analyze_layers (8-conv network) {rate(200, lambda: [tilewave.analyze_layers(layers) for _ in range(200)]):.0f}/s")


if __name__ == "__main__":
    main()
