"""calibrate/fit/fit_all.py (docs/calibration.md "Calibrating a GPU in two commands"): every scope
fitted from one run.py folder, both files written through the one writers with their provenance,
and one error line, no file, for a folder it cannot use."""
import glob
import gzip
import json
import os
import subprocess
import sys

import pytest

import tilewave

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = os.path.join(ROOT, "calibrate", "data", "h200", "measure_run")
DATASHEET = os.path.join(ROOT, "calibrate", "data", "h200", "h200_datasheet.json")


def cli():
    return os.environ.get("TILEWAVE_CLI", os.path.join(ROOT, "build", "analyzer", "tilewave"))


def fit_all(folder, out, *extra):
    r = subprocess.run([sys.executable, "-m", "calibrate.fit.fit_all", str(folder), "--gpu", DATASHEET, "-o", str(out / "new.json"),
                        "--host-out", str(out / "host.json"), "--tilewave", cli(), *extra],
                       capture_output=True, text=True, cwd=ROOT, timeout=900)
    return r.returncode, r.stdout, r.stderr


def rows(name):
    with gzip.open(os.path.join(RUN, name + ".jsonl.gz"), "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def write(path, lines):
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))


def slice_of_run(folder, families, layers):
    """A run.py folder holding `families`' networks of measure_run/ and its first `layers` layers."""
    folder.mkdir()
    bench = [r for r in rows("bench_median") if r.get("header") or r["family"] in families]
    models = {r["model"] for r in bench if not r.get("header")}
    write(folder / "bench_median.jsonl", bench)
    write(folder / "kernels.jsonl", [k for k in rows("kernels") if k["model"] in models])
    write(folder / "measured.jsonl", rows("measured")[:layers])
    (folder / "host_micro.jsonl").write_text(open(os.path.join(RUN, "host_micro.jsonl")).read())
    return models


def test_a_slice_of_a_run_gives_files_analyze_reads_with_their_provenance(tmp_path):
    slice_of_run(tmp_path / "run", {"convnext", "mnasnet", "dpn", "gernet", "repvgg"}, 600)
    code, out, err = fit_all(tmp_path / "run", tmp_path, "--holdout", "0.4")
    assert code == 0, err
    for stage in ("1/6 layers", "2/6 network terms", "3/6 runtime set", "4/6 kernel paths",
                  "5/6 layout and precision sets", "6/6 host"):
        assert stage in out
    assert "| whole step | AMP NCHW, plain loop |" in out  # the held-out table
    gpu = json.load(open(tmp_path / "new.json"))
    stamp = gpu["fit_all"]
    assert stamp["data"] == "run" and stamp["command"].startswith("python3 -m calibrate.fit.fit_all")
    assert len(stamp["families_held_out"]) == 2 and stamp["commit"]
    assert set(gpu["runtime_params"]) == {"eager", "eager nchw amp", "eager nhwc amp"}
    assert gpu["runtime_params"]["eager nchw amp"]["fitted_on"]["commit"] == stamp["commit"]
    # Stage 4: the elementwise paths from the fit families' kernel pairs; no GroupNorm here, so no moments terms.
    eager = gpu["runtime_params"]["eager"]
    assert eager["params"]["strided_element_ps"] > 0
    # The unrolled terms join them where the slice's AMP forwards mix types.
    assert any({"eltwise_bw_efficiency", "fixed_us_strided_extra", "strided_element_ps"} <= set(k.split(", "))
               for k in eager["fitted_on"]), eager["fitted_on"]
    assert "no fit-family forward with RowwiseMomentsCUDAKernel kernels" in out and "row_block_us" not in eager["params"]
    assert str(tmp_path) not in json.dumps(gpu)  # no temporary or machine path in the provenance
    host = json.load(open(tmp_path / "host.json"))
    assert host["params"]["host_conv_us"] > 0
    a = tilewave.analyze(os.path.join(ROOT, "onnx_models", "resnet18.onnx"), gpu=str(tmp_path / "new.json"),
                         host=str(tmp_path / "host.json"), batch=1)
    assert a["total"]["time_us"] > 0


@pytest.mark.parametrize("make, says", [
    (lambda d: None, "no bench_median.jsonl"),
    (lambda d: (d / "bench_median.jsonl").write_text("{not json\n"), "not a JSON-lines file"),
    (lambda d: (d / "bench_median.jsonl").write_bytes(b"\xff\xfe\n"), "not a JSON-lines file"),
    (lambda d: (d / "bench_median.jsonl").write_text('{"model": "resnet18"}\n'), "row 1 has no layout"),
    (lambda d: (d / "bench_median.jsonl").write_text(
        '{"model": "m", "layout": "nchw", "batch": 1, "precision": "half", "graph_ms": -1}\n'), "not a time"),
    (lambda d: (d / "bench_median.jsonl").write_text('{"header": true}\n'), "no measured rows"),
    (lambda d: (d / "bench_median.jsonl").mkdir(), "not a regular file"),
    (lambda d: os.mkfifo(d / "bench_median.jsonl"), "not a regular file"),
    (lambda d: os.symlink("/dev/zero", d / "bench_median.jsonl.gz"), "not a regular file"),
])
def test_a_folder_it_cannot_use_is_one_line_and_no_file(tmp_path, make, says):
    (tmp_path / "run").mkdir()
    make(tmp_path / "run")
    code, _, err = fit_all(tmp_path / "run", tmp_path)
    assert code == 1, err
    assert len(err.strip().splitlines()) == 1 and says in err and "run" in err
    assert not (tmp_path / "new.json").exists() and not (tmp_path / "host.json").exists()


@pytest.mark.parametrize("micro, says", [
    ('{"case": "relu_module", "host_us_median": 5.0}\n', "no cast_to_fp16"),
    ('{"case": "cast_to_fp16", "host_us_median": -1}\n', "not a time"),
    ("not json\n", "line 1 is not JSON"),
])
def test_a_host_micro_file_it_cannot_use_is_one_line_before_any_fit(tmp_path, micro, says):
    slice_of_run(tmp_path / "run", {"convnext", "mnasnet", "dpn"}, 10)
    (tmp_path / "run" / "host_micro.jsonl").write_text(micro)
    code, out, err = fit_all(tmp_path / "run", tmp_path)
    assert code == 1 and len(err.strip().splitlines()) == 1 and says in err and "host_micro.jsonl" in err, err
    assert "1/5 layers" not in out and not (tmp_path / "new.json").exists()


def test_too_few_families_to_hold_any_out_is_one_line(tmp_path):
    slice_of_run(tmp_path / "run", {"convnext", "mnasnet"}, 10)
    code, _, err = fit_all(tmp_path / "run", tmp_path)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "too few" in err, err
    assert not (tmp_path / "new.json").exists()


def test_bad_usage_exits_2(tmp_path):
    code, _, err = fit_all(tmp_path, tmp_path, "--holdout", "1.5")
    assert code == 2 and "--holdout" in err


def test_write_gpu_refuses_a_file_analyze_would_refuse(tmp_path):
    g = json.load(open(os.path.join(ROOT, "gpu_models", "h200.json")))
    g["params"]["tc_efficiency"] = 7.0  # outside tilewave params' bounds
    with pytest.raises(Exception, match="tc_efficiency"):
        tilewave.write_gpu(g, tmp_path / "h200.json")
    assert not (tmp_path / "h200.json").exists()
    del g["params"]["tc_efficiency"]
    tilewave.write_gpu(g, tmp_path / "h200.json")
    assert json.load(open(tmp_path / "h200.json"))["sms"] == g["sms"]


def newcomer(*args):
    r = subprocess.run([sys.executable, "-m", "calibrate.validate.newcomer", cli(), *map(str, args)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    return r.returncode, r.stdout, r.stderr


def test_newcomer_judges_another_folder_less_the_runs_and_the_shipped_files_families(tmp_path):
    slice_of_run(tmp_path / "run", {"gernet"}, 0)
    judge = tmp_path / "judge"
    judge.mkdir()
    bench = [dict(r, family="Ger_Net") if r.get("family") == "gernet" else r for r in rows("bench_median")
             if r.get("header") or r["family"] in ("gernet", "mnasnet", "dpn")]
    write(judge / "bench_median.jsonl", bench)
    # gernet is the run's family however it is spelt, dpn68 a fit network of the shipped file: mnasnet1_0 is left.
    code, out, err = newcomer("--gpu", os.path.join(ROOT, "gpu_models", "h200.json"), "--host", "h200-vm",
                              "--run-dir", tmp_path / "run", "--judge", judge)
    assert code == 0, err
    assert "settings of 1 networks" in out and str(tmp_path) not in out, out
    graph = [line for line in out.splitlines() if line.startswith("| eager PyTorch, CUDA graph, `.half()`")]
    assert len(graph) == 1 and "batch 1/16/64/256 | 4 |" in graph[0], out
    assert "| eager PyTorch, CUDA graph, AMP NCHW, batch 1/16/64/256 | 4 |" in out
    assert "| host issue time, AMP channels_last, batch 1/16 | 2 |" in out
    # The same files in both columns: no difference, in every row.
    table = [line for line in out.splitlines() if line.startswith("| eager") or line.startswith("| host")]
    assert len(table) == 7 and all(line.endswith("| +0.0 points |") for line in table), out


@pytest.mark.parametrize("args, code, says", [
    (["--shipped", "h200"], 2, "--shipped takes GPU,HOST"),
    (["--judge", "nowhere"], 1, "nowhere: no bench_median.jsonl"),
    (["--gpu", "nonesuch"], 1, "unknown GPU 'nonesuch'"),
])
def test_newcomer_bad_input_is_one_line(tmp_path, args, code, says):
    slice_of_run(tmp_path / "run", {"gernet"}, 0)
    judge = tmp_path / "judge"
    judge.mkdir()
    write(judge / "bench_median.jsonl", [r for r in rows("bench_median") if r.get("family") == "mnasnet"])
    base = {"--gpu": "h200", "--host": "h200-vm", "--run-dir": tmp_path / "run", "--judge": judge}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    got, out, err = newcomer(*[x for kv in base.items() for x in kv])
    assert got == code and says in err and "Traceback" not in err, err
    assert code == 2 or len(err.strip().splitlines()) == 1


def repository_files():
    """(path, kind) of every GPU and host file the repository holds: the database's, the hosts', and those the
    calibration commands wrote under calibrate/data/."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "gpu_models", "**", "*.json"), recursive=True)
                       + glob.glob(os.path.join(ROOT, "calibrate", "data", "**", "*.json"), recursive=True)):
        with open(path) as f:
            try:
                record = json.load(f)
            except ValueError:
                continue
        if isinstance(record, dict) and "sms" in record and "arch" in record:
            out.append((os.path.relpath(path, ROOT), "gpu"))
        elif isinstance(record, dict) and "host_op_us" in record.get("params", {}):
            out.append((os.path.relpath(path, ROOT), "host"))
    return out


REPOSITORY_FILES = repository_files()


def test_the_repository_holds_gpu_and_host_files_of_each_origin():
    paths = {p for p, _ in REPOSITORY_FILES}
    assert {"gpu_models/h200.json", "gpu_models/hosts/h200-vm.json", "calibrate/data/h100/h100_datasheet.json",
            "calibrate/data/h100/two_commands/host.json"} <= paths


@pytest.mark.parametrize("path, kind", REPOSITORY_FILES, ids=[p for p, _ in REPOSITORY_FILES])
def test_every_gpu_and_host_file_is_what_the_one_writer_writes_of_it(tmp_path, path, kind):
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    (tilewave.write_gpu if kind == "gpu" else tilewave.write_host)(json.loads(text), tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == text
