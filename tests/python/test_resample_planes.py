"""calibrate/fit/resample_planes.py: the least-squares fit recovers the two per-plane latencies and the three
per-value times that made a synthetic sweep's times (tilewave's own, at known values), each call's L2 state read
from its bytes."""
import json
import os
import subprocess
import sys

import pytest

from calibrate.fit import resample_planes as fit
from calibrate.module import ROOT, tilewave_module


def call(mode, layout, side, planes):
    return {"case": "%s %s %d %d" % (mode, layout, side, planes), "mode": mode, "layout": layout,
            "input": [planes // 64, 64, side // 2, side // 2], "output": [planes // 64, 64, side, side],
            "planes": planes, "error": None}


def test_the_fit_recovers_the_latencies_that_made_the_times(tmp_path):
    tw = tilewave_module(None)
    calls = [call(mode, layout, side, planes) for mode in ("bilinear_f32", "bilinear_half", "nearest_half")
             for layout in ("nchw", "channels_last") for side in (14, 28, 56, 112) for planes in (256, 4096, 32768)]
    assert [fit.value_kernel(c) for c in calls[::12]] == [None, "linear_nhwc", None, "linear_nhwc",
                                                           "nearest_nchw", "nearest_nhwc"]
    for c in calls:
        c["state"] = fit.l2_state(c, "h100")
    # Both states among the fit sides, and a call between them that the fit leaves out.
    assert {"l2", "dram", None} <= {c["state"] for c in calls if c["output"][2] in fit.FIT_SIDES}
    known = [c for c in calls if c["state"]]
    truth = [410.0, 160.0, 3.1, 7.3, 11.2]  # fit.PARAMS' order, each far from its default
    made = fit.tilewave_times(tw, known, "h100", truth)
    with open(tmp_path / "resize_kernels.jsonl", "w") as f:
        f.write(json.dumps({"header": True, "gpu": "synthetic", "torch": "none"}) + "\n")
        for c, us in zip(known, made):
            row = {k: v for k, v in c.items() if k != "state"}
            row["kernels"] = [["void at::native::upsample_%s2d_out_frame<float>" % c["mode"].split("_")[0], 1, us]]
            f.write(json.dumps(row) + "\n")
    lines, fitted = fit.table_lines(str(tmp_path), tw, "h100")
    assert [n for n, _ in fitted] == list(fit.PARAMS)
    # The per-value times move only the calls whose values outlast their bytes: near, not exact.
    assert [v for _, v in fitted] == pytest.approx(truth, rel=0.02)
    # The held-out sides are judged with the fitted values: near zero error.
    held = [line for line in lines if line.startswith("| held out")]
    assert len(held) == 5 and all(float(line.split(" | ")[6].rstrip("%")) < 1.0 for line in held)


@pytest.mark.parametrize("make, says", [
    (lambda d: None, "No such file"),
    (lambda d: (d / "resize_kernels.jsonl").write_text(""), "no header row"),
    (lambda d: (d / "resize_kernels.jsonl").mkdir(), "not a regular file"),
    (lambda d: os.mkfifo(d / "resize_kernels.jsonl"), "not a regular file"),
    (lambda d: (d / "resize_kernels.jsonl").write_bytes(b"\xff\xfe{\n"), "not UTF-8"),
    (lambda d: (d / "resize_kernels.jsonl").write_text('{"gpu": "g", "torch": "t"}\n{"mode": "nearest_half"}\n'),
     "row 2 is not a sweep row"),
    (lambda d: (d / "resize_kernels.jsonl").write_text(
        '{"gpu": "g", "torch": "t"}\n' + json.dumps(dict(call("bilinear_half", "nchw", 14, 256), output="ab",
                                                         kernels=[["upsample", 1, 3.0]])) + "\n"),
     "row 2 is not a resize_kernels row"),
    (lambda d: (d / "resize_kernels.jsonl").write_text(
        '{"gpu": "g", "torch": "t"}\n' + json.dumps(dict(call("bilinear_half", "nchw", 28, 256),
                                                         kernels=[["upsample", 1, 3.0]])) + "\n"),
     "no NCHW bilinear call of output side 14 or 56"),
])
def test_a_bad_sweep_is_one_line_naming_it_and_exit_1(tmp_path, make, says):
    make(tmp_path)
    done = subprocess.run([sys.executable, "-m", "calibrate.fit.resample_planes", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              filter(None, [ROOT, os.environ.get("PYTHONPATH")]))))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("resample_planes.py: ") and says in done.stderr
    assert "resize_kernels.jsonl" in done.stderr or str(tmp_path) in done.stderr
