"""calibrate/validate/host_passes.py: the spread of a setting's passes, and the host ratio per call."""
import collections
import gzip
import json
import os

import pytest

from calibrate.validate import host_passes
from calibrate.cli import InputError

Prediction = collections.namedtuple("Prediction", "loop graph loop_interval graph_interval")


def test_passes_give_max_over_min_and_median_over_min_per_batch(tmp_path):
    rows = [{"header": True}]
    for p, (host, step) in enumerate([(1.0, 2.0), (2.0, 3.0), (1.5, 4.0)]):
        rows.append({"model": "m", "precision": "amp_fp16", "layout": "nchw", "batch": 1, "pass": p,
                     "status": "ok", "host_ms": host, "step_ms": step})
    rows.append({"model": "m", "precision": "amp_fp16", "layout": "nchw", "batch": 64, "pass": 0, "status": "ok",
                 "host_ms": 9.0, "step_ms": 9.0})
    with gzip.open(tmp_path / "bench.jsonl.gz", "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    lines = host_passes.pass_lines(host_passes.pass_rows(tmp_path))
    assert lines[2:] == ["| 1 | 1 | 2.00 | 2.00 | 1.50 | 1.50 | 2.00 | 2.00 |"]


def test_a_folder_without_a_bench_file_is_one_error(tmp_path):
    with pytest.raises(InputError, match="bench.jsonl"):
        host_passes.pass_rows(tmp_path)


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_text(""), "no pass rows"),
    (lambda p: p.write_text('{"header": true}\n{"status": "ok", "batch": 64, "pass": 0}\n'), "no pass rows"),
    (lambda p: p.write_text('{"status": "ok", "batch": 1, "pass": 0, "model": "m"}\n'), "row 1 is not a run.py pass row"),
    (lambda p: p.write_text('{"status": "ok", "batch": 1, "pass": 0, "model": "m", "precision": "amp_fp16", '
                            '"layout": "nchw", "host_ms": "x", "step_ms": 1}\n'), "row 1 is not a run.py pass row"),
    (lambda p: p.write_bytes(b"\xff\xfe\n"), "not a readable JSON-lines file"),
    (lambda p: p.mkdir(), "not a readable JSON-lines file"),
    (lambda p: os.mkfifo(p), "not a readable JSON-lines file"),
])
def test_a_hostile_bench_file_is_one_error_naming_it(tmp_path, make, message):
    make(tmp_path / "bench.jsonl")
    with pytest.raises(InputError, match=message):
        host_passes.pass_rows(tmp_path)


def test_calls_give_the_median_host_ratio_of_their_networks_and_of_their_cnns():
    rows = [{"model": m, "precision": "amp_fp16", "layout": "nchw", "batch": 1, "host_ms": 1.0, "call": c}
            for m, c in (("a", 1), ("b", 1), ("c", 2))]
    rows.append(dict(rows[0], layout="channels_last"))   # not AMP NCHW: left out
    predicted = {(m, "amp_fp16", "nchw", 1): Prediction({"host_busy_us": us}, None, None, None)
                 for m, us in (("a", 500.0), ("b", 700.0), ("c", 1100.0))}
    lines = host_passes.call_lines(rows, predicted, {"a": "cnn", "b": "vit", "c": "vit"})
    assert "| 1 | 2 | 0.60 | 1 | 0.50 |" in lines
    assert "| 2 | 1 | 1.10 | 0 | - |" in lines
    assert lines[-1] == "2 calls; their median host ratios run from 0.60 to 1.10 (median 0.85)."
