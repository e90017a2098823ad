"""calibrate/validate/kernel_classes.py and corpus_networks.py: profiled forwards paired in process, class sums
that add up to the measured kernels, forwards tilewave cannot analyse left out by name, and the per-split table."""
import gzip
import json
import os

import pytest

from calibrate.validate import kernel_classes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEASURE_RUN = os.path.join(ROOT, "calibrate", "data", "h200", "measure_run", "kernels.jsonl.gz")


def forwards(model, n):
    with gzip.open(MEASURE_RUN, "rt") as f:
        rows = [json.loads(line) for line in f]
    return [r for r in rows if r["model"] == model][:n]


def test_pairs_every_measured_kernel_into_one_class(tmp_path):
    rows = forwards("convnext_tiny", 3)
    assert len(rows) == 3
    onnx = {"convnext_tiny": os.path.join(ROOT, "onnx_models", "runtime", "convnext_tiny.onnx")}
    results, failed = kernel_classes.checks(os.environ.get("TILEWAVE_CLI"), rows, onnx, "h200", str(tmp_path))
    assert failed == [] and len(results) == 3
    for row, check in results:
        measured = sum(us for _, us in row["list"])
        assert sum(c["measured_us"] for c in check["by_class"]) == pytest.approx(measured, rel=1e-9)
        assert sum(c["measured"] for c in check["by_class"]) == len(row["list"])
        assert check["batch"] == row["batch"]
    assert os.listdir(tmp_path) == []  # the per-forward traces are removed
    lines = kernel_classes.lines_of(results, failed, "none")
    assert lines[0] == "3 profiled forwards of 1 networks paired by `tilewave check`"


def test_forwards_tilewave_cannot_analyse_are_left_out_by_file_name(tmp_path):
    rows = forwards("convnext_tiny", 2)
    bad = tmp_path / "onnx" / "convnext_tiny.onnx"
    bad.parent.mkdir()
    bad.write_bytes(b"not a protobuf")
    results, failed = kernel_classes.checks(os.environ.get("TILEWAVE_CLI"), rows, {"convnext_tiny": str(bad)}, "h200",
                                            str(tmp_path))
    assert results == [] and len(failed) == 2
    for (model, batch, error), row in zip(failed, rows):
        assert (model, batch) == ("convnext_tiny", row["batch"])
        assert error.startswith("convnext_tiny.onnx: ") and str(tmp_path) not in error
    lines = kernel_classes.left_out_lines(failed)
    assert len(lines) == 1 and lines[0].startswith("  left out (2 forwards): convnext_tiny: convnext_tiny.onnx: ")
    assert kernel_classes.lines_of(results, failed, "none")[0].endswith(
        "; 2 left out (tilewave could not analyse them)")


def test_corpus_networks_table_reads_step_gpu_and_host_per_split():
    from calibrate.validate import corpus_networks
    rows, predicted = [], {}
    # The step's 80% intervals: m0's holds its measurement, m1 has none, m2's misses it.
    intervals = [{"measured": True, "low_us": 800.0, "high_us": 1100.0}, {"measured": False},
                 {"measured": True, "low_us": 4100.0, "high_us": 5000.0}]
    for i, (measured_ms, predicted_us) in enumerate([(1.0, 900.0), (2.0, 2400.0), (4.0, 4000.0)]):
        r = {"model": "m%d" % i, "precision": "amp_fp16", "layout": "nchw", "batch": 16,
             "step_ms_median": measured_ms, "graph_ms": measured_ms / 2, "host_ms": measured_ms}
        rows.append(r)
        predicted[(r["model"], "amp_fp16", "nchw", 16)] = corpus_networks.Prediction(
            {"time_us": predicted_us, "flops": 10 - i, "host_busy_us": predicted_us / 2},
            {"time_us": measured_ms * 500}, intervals[i], None)
    body, misses = corpus_networks.table(rows, predicted, {"m0": "held_out", "m1": "held_out", "m2": "held_out"})
    assert body == [["held_out", "AMP NCHW", "16", "3", "10.0%", "18.0%", "1.00", "1.00 (-1.00)", "0.0%", "1.00",
                     "1.00", "0.50", "50%", "-"]]
    assert sorted(round(e, 2) for e, *_ in misses) == [-0.1, 0.0, 0.2]


def test_intervals_are_percentiles_of_held_out_and_judged_family_by_family():
    from calibrate.fit import intervals
    S = intervals.Setting
    held = [S("h%d" % i, "fam%d" % (i % 4), "held_out", "AMP NCHW", 16, "graph", "no_attention", 1 + i / 100)
            for i in range(40)]
    fit = [S("f", "other", "fit", "AMP NCHW", 16, "graph", "no_attention", r) for r in (0.5, 1.2, 9.0)]
    fitted = intervals.fit(held + fit, 0.8)
    low, high = fitted[("graph", "no_attention")]
    assert (low, high) == (1.039, 1.351)  # numpy's linear percentiles of 1.00 ... 1.39; the fit rows take no part
    assert fitted[("loop_host", "attention")] is None  # no settings: not stated
    values = intervals.values_of(fitted)
    assert len(values) == 12 and values["interval_graph_no_attention_low"] == 1.039
    assert values["interval_loop_host_attention_high"] == 0.0
    # Each family is judged by the other three's percentiles, never its own.
    judged = intervals.leave_family_out(held, 0.8)
    assert len(judged) == 40 and all(f is not None for _, f in judged)
    lines = []
    intervals.report(held + fit, fitted, 0.8, lines.append)
    assert "| graph | no_attention | 40 (40) | 1.19 | 1.04-1.35x | 75% of 40 |" in lines[2]
    assert lines[2].endswith("| 33% of 3 |")  # of the fit rows only 1.2 lies inside
    assert lines[-1].startswith("all: held_out ") and "(stated: 80%;" in lines[-1]
    # Another coverage spans other percentiles: 0.5 gives the quartiles.
    assert intervals.quantiles(0.5) == (25, 75) and intervals.quantiles(0.8) == (10, 90)


def test_corpus_networks_rejects_a_row_that_is_not_a_network_row(tmp_path):
    from calibrate.validate import corpus_networks
    (tmp_path / "bench_median.jsonl").write_text('{"model": "m", "batch": "16"}\n')
    with pytest.raises(kernel_classes.InputError, match="row 1 is not a run.py network row"):
        corpus_networks.measured_rows(str(tmp_path))


@pytest.mark.parametrize("kind", ["empty", "fifo", "directory"])
def test_corpus_networks_rejects_an_empty_or_special_bench_file(tmp_path, kind):
    from calibrate.validate import corpus_networks
    path = tmp_path / "bench_median.jsonl"
    if kind == "empty":
        path.write_text("")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(kernel_classes.InputError, match="no network row|not a regular file"):
        corpus_networks.measured_rows(str(tmp_path))


def test_corpus_networks_names_a_network_the_folder_never_measured(tmp_path):
    from calibrate.validate import corpus_networks
    (tmp_path / "bench_median.jsonl").write_text(json.dumps(
        {"model": "timm/a", "precision": "amp_fp16", "layout": "nchw", "batch": 1, "status": "ok",
         "step_ms_median": 1.0, "graph_ms": 0.5, "host_ms": 1.0}) + "\n")
    with pytest.raises(kernel_classes.InputError, match="no measured row of timm/b"):
        corpus_networks.network_lines(str(tmp_path), None, ["timm/a", "timm/b"])


def test_corpus_networks_keeps_the_rows_of_the_calls_asked_for(tmp_path):
    """A folder resumed on another machine is judged call by call: --calls 4-6 keeps only those calls' rows."""
    from calibrate.validate import corpus_networks
    row = {"model": "timm/a", "precision": "amp_fp16", "layout": "nchw", "status": "ok", "step_ms_median": 1.0,
           "graph_ms": 0.5, "host_ms": 1.0}
    (tmp_path / "bench_median.jsonl").write_text("".join(
        json.dumps(dict(row, batch=b, call=c)) + "\n" for b, c in ((1, 2), (16, 4), (64, 6), (256, 7))))
    assert corpus_networks.parse_calls("4-6") == {4, 5, 6}
    assert corpus_networks.parse_calls("1, 3") == {1, 3}
    assert [r["batch"] for r in corpus_networks.measured_rows(str(tmp_path), {4, 5, 6})] == [16, 64]
    assert len(corpus_networks.measured_rows(str(tmp_path))) == 4
    with pytest.raises(kernel_classes.InputError, match="in calls 3"):
        corpus_networks.measured_rows(str(tmp_path), {3})
    for bad in ("6-4", "x", "", "4-", "-4", "1.5", "1-999999999"):
        with pytest.raises(kernel_classes.InputError, match="--calls"):
            corpus_networks.parse_calls(bad)


def test_corpus_networks_kind_keeps_that_kind_of_the_corpus(monkeypatch, tmp_path):
    """--kind transformer keeps hybrids and ViTs of networks.json, --kind cnn the CNNs, before anything is
    predicted."""
    from calibrate.validate import corpus_networks
    corpus = tmp_path / "networks.json"
    corpus.write_text(json.dumps({"networks": [{"name": "timm/c", "kind": "cnn"}, {"name": "timm/h", "kind": "hybrid"},
                                               {"name": "timm/v", "kind": "vit"}]}))
    row = {"precision": "amp_fp16", "layout": "nchw", "batch": 1, "status": "ok", "step_ms_median": 1.0,
           "graph_ms": 0.5, "host_ms": 1.0}
    (tmp_path / "bench_median.jsonl").write_text("".join(json.dumps(dict(row, model=m)) + "\n"
                                                         for m in ("timm/c", "timm/h", "timm/v")))
    seen = {}

    def predictions(tilewave, rows, onnx, gpu):  # records what would be predicted
        seen["models"] = sorted(r["model"] for r in rows)
        return {}, {}
    monkeypatch.setattr(corpus_networks, "CORPUS", str(corpus))
    monkeypatch.setattr(corpus_networks, "onnx_files", lambda names, tmp: {n: n for n in names})
    monkeypatch.setattr(corpus_networks, "predictions", predictions)
    corpus_networks.corpus_predictions(str(tmp_path), None, kind="transformer")
    assert seen.pop("models") == ["timm/h", "timm/v"]
    corpus_networks.corpus_predictions(str(tmp_path), None, kind="cnn")
    assert seen.pop("models") == ["timm/c"]
    corpus_networks.corpus_predictions(str(tmp_path), None)
    assert seen.pop("models") == ["timm/c", "timm/h", "timm/v"]


def test_unpaired_time_of_a_class_is_summed_by_network_largest_first():
    """--networks-of: whether a class's unpaired time is one network or many."""
    def sums(cls, missing, measured, predicted):  # a check() by_class row
        row = dict.fromkeys(("measured", "paired_measured_us", "paired_predicted_us", "same_class_measured_us",
                             "same_class_predicted_us", "extra_us"), 0)
        return dict(row, **{"class": cls, "missing_us": missing, "measured_us": measured, "predicted_us": predicted})

    def forward(model, cls, missing, measured, predicted):
        return ({"model": model}, {"measured_kernel_us": measured + 9e6,
                                   "by_class": [sums(cls, missing, measured, predicted), sums("conv", 9e6, 9e6, 0)]})
    results = [forward("timm/a", "gemm", 1000, 4000, 3000), forward("timm/b", "gemm", 3000, 5000, 1000),
               forward("timm/a", "gemm", 1000, 1000, 1000)]
    lines = kernel_classes.unpaired_lines(results, "gemm")
    assert lines[1] == "gemm: 5.0 ms measured with no predicted kernel paired, by network:"
    assert lines[5:] == ["| timm/b | 3.0 | 60.0% | 5.0 | 1.0 |", "| timm/a | 2.0 | 40.0% | 5.0 | 4.0 |"]
    with pytest.raises(kernel_classes.InputError, match="no forward has a kernel of class 'softmax'.*conv, gemm"):
        kernel_classes.unpaired_lines(results, "softmax")


def one_forward_folder(tmp_path):
    """A run.py folder holding convnext_tiny's AMP NCHW forward at batch 16 of measure_run/."""
    row = [r for r in forwards("convnext_tiny", 12) if (r["precision"], r["layout"], r["batch"]) ==
           ("amp_fp16", "nchw", 16)]
    assert len(row) == 1
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "kernels.jsonl").write_text(json.dumps(row[0]) + "\n")
    return str(tmp_path / "run"), row[0]


def test_one_forward_in_launch_order_and_a_block_of_it(tmp_path):
    folder, row = one_forward_folder(tmp_path)
    cli = os.environ.get("TILEWAVE_CLI")
    whole = kernel_classes.forward_lines(cli, folder, "convnext_tiny:amp_fp16:nchw:16", "h200")
    table = [line for line in whole if line.startswith("| ") and not line.startswith(("| predicted kernel", "| ---"))]
    measured = [line for line in table if not line.endswith("| (none ran) |  |")]
    assert len(measured) == len(row["list"])  # every measured kernel is a row, paired or not
    assert sum(float(line.rsplit("|", 2)[1]) for line in measured) == pytest.approx(
        sum(us for _, us in row["list"]), abs=0.05 * len(measured))
    block = kernel_classes.forward_lines(cli, folder, "convnext_tiny:amp_fp16:nchw:16", "h200", nodes="/features.3/")
    rows = [line for line in block if line.startswith("| ") and not line.startswith(("| predicted kernel", "| ---"))]
    named = [line for line in rows if "(nothing predicted)" not in line]
    assert 0 < len(rows) < len(table) and "/features.3/" in named[0] and "/features.3/" in named[-1]


@pytest.mark.parametrize("spec, nodes, says", [
    ("convnext_tiny:amp_fp16:nchw", None, "not MODEL:PRECISION:LAYOUT:BATCH"),
    ("convnext_tiny:fp8:nchw:16", None, "not MODEL:PRECISION:LAYOUT:BATCH"),
    ("convnext_tiny:amp_fp16:nchw:64", None, "no profiled forward convnext_tiny:amp_fp16:nchw:64"),
    ("convnext_tiny:amp_fp16:nchw:16", "no/such/node", "no predicted kernel of convnext_tiny has it"),
])
def test_a_forward_or_block_that_is_not_there_is_one_error(tmp_path, spec, nodes, says):
    folder, _ = one_forward_folder(tmp_path)
    with pytest.raises(kernel_classes.InputError, match=says):
        kernel_classes.forward_lines(os.environ.get("TILEWAVE_CLI"), folder, spec, "h200", nodes)
