"""calibrate/validate/pointwise_paths.py: a case that ran through layout transforms is marked T, one that did not
`.`; a row without the sweep's fields is one line naming the file, and exit 1."""
import json
import os
import subprocess
import sys

from calibrate.module import ROOT
from calibrate.validate import pointwise_paths


def row(layout, c, k, kernels):
    return {"case": "x", "layout": layout, "batch": 16, "side": 7, "C": c, "K": k, "kernels": kernels, "error": None}


def test_transformed_cases_are_marked_and_counted(tmp_path):
    moved = [["void cudnn::engines_precompiled::nchwToNhwcKernel<__half>(int", 2.0], ["sm90_xmma_fprop_nhwc", 6.0],
             ["void cudnn::engines_precompiled::nhwcToNchwKernel<__half>(int", 2.0]]
    direct = [["nvjet_sm90_hsh_64x64_NNN", 5.0]]
    with open(tmp_path / "pointwise_paths.jsonl", "w") as f:
        for r in ({"header": True}, row("nchw", 64, 64, direct), row("nchw", 64, 128, moved),
                  row("nchw", 128, 64, direct), row("nchw", 128, 128, moved)):
            f.write(json.dumps(r) + "\n")
    lines = pointwise_paths.lines_of(str(tmp_path))
    assert any(line.startswith("nchw") and line.endswith(".T .T") for line in lines)
    assert "NCHW: 2 of 4 cases transformed; their transforms took 40% of those calls' kernel time" in lines
    # The direct cases' kernels by family; no channels_last case to compare their time with.
    assert lines[-1] == "| 7 | 2 | nvjet sm90 2 | - |"


def test_a_row_without_the_fields_is_one_line_and_exit_1(tmp_path):
    (tmp_path / "pointwise_paths.jsonl").write_text('{"header": true}\n{"layout": "nchw", "kernels": []}\n')
    done = subprocess.run([sys.executable, "-m", "calibrate.validate.pointwise_paths", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              filter(None, [ROOT, os.environ.get("PYTHONPATH")]))))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "row 2 is not a pointwise_paths row" in done.stderr
    assert "pointwise_paths.jsonl" in done.stderr


def test_absurd_kernel_times_are_refused(tmp_path):
    for bad in (1e308, -2.0, True):
        (tmp_path / "pointwise_paths.jsonl").write_text(json.dumps(row("nchw", 64, 64, [["nvjet_NNN", bad]])) + "\n")
        try:
            pointwise_paths.lines_of(str(tmp_path))
        except pointwise_paths.InputError as e:
            assert "row 1 is not a pointwise_paths row" in str(e)
        else:
            raise AssertionError("a kernel time of %r was accepted" % bad)


def test_the_direct_gemm_alone_is_set_against_cudnns_call_and_tilewave(tmp_path):
    from calibrate.module import tilewave_module
    with open(tmp_path / "pointwise_paths.jsonl", "w") as f:
        for r in ({"header": True}, row("nchw", 64, 64, [["nvjet_sm90_hsh_64x64_NNN", 5.0]]),
                  row("nchw_matmul", 64, 64, [["nvjet_sm90_hsh_64x64_NNN", 10.0]])):
            f.write(json.dumps(r) + "\n")
    lines = pointwise_paths.lines_of(str(tmp_path), tilewave_module(None), "h200")
    assert lines[-1].startswith("| 7 | direct | 1 | 2.00 | ")


def run_view(folder):
    return subprocess.run([sys.executable, "-m", "calibrate.validate.pointwise_paths", str(folder)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              filter(None, [ROOT, os.environ.get("PYTHONPATH")]))))


def test_hostile_files_are_one_line_and_exit_1(tmp_path):
    cases = {"empty": "", "not_utf8": b"\xff\xfe\n", "absurd_size": json.dumps(dict(row("nchw", 64, 64, [[
        "nvjet_NNN", 5.0]]), K=10 ** 12)) + "\n", "bad_layout": json.dumps(row("nhwc?", 64, 64, [["nvjet", 1.0]])) + "\n",
             "no_time": json.dumps(row("nchw", 64, 64, [["copy_kernel", 5.0]])) + "\n",
             "size_text": json.dumps(dict(row("nchw", 64, 64, [["nvjet", 1.0]]), side="7")) + "\n"}
    for name, text in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        path = folder / "pointwise_paths.jsonl"
        path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
        done = run_view(folder)
        assert done.returncode == 1 and done.stdout == "" and done.stderr.count("\n") == 1, (name, done.stderr)
        assert "pointwise_paths" in done.stderr, name
    # A directory and a FIFO where the file should be: refused, never read (a FIFO would block).
    (tmp_path / "dir" / "pointwise_paths.jsonl").mkdir(parents=True)
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "pointwise_paths.jsonl")
    for name in ("dir", "fifo"):
        done = run_view(tmp_path / name)
        assert done.returncode == 1 and "not a regular file" in done.stderr, (name, done.stderr)
