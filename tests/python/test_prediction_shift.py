"""calibrate/validate/prediction_shift.py: families ranked by how much their |error| moved between two prediction
files, over the runs both hold and the filters asked for."""
import json
import os
import subprocess
import sys

from pytest import approx

from calibrate.validate import prediction_shift

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def run(model, family, pred, subset="held-out", kind="cnn"):
    return {"source": "benchmark-infer-amp-nchw-x.csv", "model": model, "img_size": 224, "batch": 256,
            "family": family, "subset": subset, "kind": kind, "measured_us": 100.0, "before_us": pred, "after_us": pred}


def test_families_ranked_by_summed_change_of_error(tmp_path):
    before = write(tmp_path / "b.jsonl", [run("a1", "a", 100.0), run("a2", "a", 110.0), run("b1", "b", 80.0),
                                          run("f1", "f", 500.0, subset="fit"), run("gone", "c", 100.0)])
    after = write(tmp_path / "a.jsonl", [run("a1", "a", 140.0), run("a2", "a", 130.0), run("b1", "b", 95.0),
                                         run("f1", "f", 100.0, subset="fit")])
    b = prediction_shift.rows_by_run(before, "before_us", "held-out", "cnn", "")
    a = prediction_shift.rows_by_run(after, "before_us", "held-out", "cnn", "")
    (n, med_b, med_a), rows = prediction_shift.shift(b, a, "before_us")
    assert n == 3  # the fit run and the run only one file holds are left out
    assert [r[0] for r in rows] == ["a", "b"]
    assert rows[0][4] == approx(0.4 - 0.0 + 0.3 - 0.1)
    assert rows[1][4] == approx(0.05 - 0.2)
    assert (med_b, med_a) == (approx(0.1), approx(0.3))



def test_no_common_run_is_one_error_line(tmp_path):
    before = write(tmp_path / "b.jsonl", [run("a1", "a", 100.0)])
    after = write(tmp_path / "a.jsonl", [run("z9", "a", 100.0)])
    p = subprocess.run([sys.executable, "-m", "calibrate.validate.prediction_shift", before, after],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 1
    assert p.stderr.strip() == "prediction_shift: no run is in both files under these filters"


def test_a_line_that_is_not_json_names_the_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    good = write(tmp_path / "a.jsonl", [run("a1", "a", 100.0)])
    p = subprocess.run([sys.executable, "-m", "calibrate.validate.prediction_shift", str(bad), good],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 1
    assert p.stderr.strip() == f"prediction_shift: {bad}:1: not a JSON line"


def test_model_filter_keeps_one_variant_across_families(tmp_path):
    rows = [run("regnetz_b16", "regnetz", 100.0), run("regnetz_b16_evos", "regnetz", 190.0), run("other", "b", 100.0)]
    b = prediction_shift.rows_by_run(write(tmp_path / "b.jsonl", rows), "before_us", "held-out", "cnn", "", "_evos")
    assert [k[1] for k in b] == ["regnetz_b16_evos"]


def test_a_fifo_is_refused_not_read(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    good = write(tmp_path / "a.jsonl", [run("a1", "a", 100.0)])
    p = subprocess.run([sys.executable, "-m", "calibrate.validate.prediction_shift", str(fifo), good],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 1
    assert p.stderr.strip() == f"prediction_shift: {fifo}: not a regular file"
