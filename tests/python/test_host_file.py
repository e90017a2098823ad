"""calibrate/fit/host_file.py (docs/calibration.md "Your own host"): a host file from a machine's
forward-call times, and one error line, no file, for a folder it cannot use."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def host_file(folder, out):
    r = subprocess.run([sys.executable, "-m", "calibrate.fit.host_file", str(folder), "-o", str(out)], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    return r.returncode, r.stderr


def row(host_ms, model="resnet18"):
    return json.dumps({"model": model, "layout": "nchw", "batch": 1, "precision": "amp_fp16", "pass": 0,
                       "host_ms": host_ms, "status": "ok"}) + "\n"


def test_a_machine_twice_as_slow_gets_twice_the_issue_costs(tmp_path):
    import gzip
    calibration = [json.loads(l) for l in gzip.open(os.path.join(
        ROOT, "calibrate/data/h200/timm_harness/fit_heldout/bench.jsonl.gz"), "rt") if l.strip()]
    base = next(r["host_ms"] for r in calibration if r.get("model") == "resnet18" and r.get("layout") == "nchw"
                and r.get("batch") == 1 and r.get("status") == "ok")
    (tmp_path / "host_networks.jsonl").write_text(row(2 * base))
    code, err = host_file(tmp_path, tmp_path / "mine.json")
    assert code == 0, err
    mine = json.load(open(tmp_path / "mine.json"))["params"]
    shipped = json.load(open(os.path.join(ROOT, "gpu_models/hosts/h200-vm.json")))["params"]
    assert mine["host_conv_us"] == pytest.approx(2 * shipped["host_conv_us"], abs=0.01)
    assert mine["sync_us"] == shipped["sync_us"]  # not an issue cost


@pytest.mark.parametrize("make, says", [
    (lambda d: None, "no forward-call times"),                                   # empty folder
    (lambda d: (d / "host_networks.jsonl").write_text("not json\n"), "not an output folder"),
    (lambda d: (d / "host_networks.jsonl").mkdir(), "not an output folder"),     # a directory as the file
    (lambda d: (d / "host_networks.jsonl").write_text(row("fast")), "not an output folder"),
    (lambda d: (d / "host_networks.jsonl").write_text(row(1e9)), "host_cast_us"),  # absurd: out of bounds
])
def test_a_folder_it_cannot_use_is_one_line_and_no_file(tmp_path, make, says):
    folder = tmp_path / "run"
    folder.mkdir()
    make(folder)
    code, err = host_file(folder, tmp_path / "out.json")
    assert code == 1 and len(err.strip().splitlines()) == 1 and says in err
    assert not (tmp_path / "out.json").exists()


def test_not_a_folder(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for path in (tmp_path / "fifo", tmp_path / "missing"):
        code, err = host_file(path, tmp_path / "out.json")
        assert code == 1 and "not a folder" in err
