"""tests/doc_records.py, the check that every figure in the docs is checked or pinned, on small docs of its own."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "doc_records.py")
ROOT = os.path.join(HERE, "..", "..")


def run(tmp_path, text):
    doc = tmp_path / "doc.md"
    doc.write_text(text, encoding="utf-8")
    r = subprocess.run([sys.executable, SCRIPT, ROOT, str(doc)], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout


def head_commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=9", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


@pytest.mark.parametrize("line", ["The median error is 12.3%.", "GEMMs run at 0.78× of measured.",
                                  "A kernel of 130 µs.", "Kendall tau 0.82 on held-out.", "moves 2.5 TB/s"])
def test_a_bare_figure_fails(tmp_path, line):
    rc, out = run(tmp_path, f"# Doc\n\n{line}\n")
    assert rc == 1 and "doc.md:3:" in out and "neither checked nor recorded" in out


@pytest.mark.parametrize("line", ["A 3×3 convolution over 56×56 maps.", "Targets: median ≤ 10%, p90 ≤ 25%.",
                                  "It warns when at least 1% repeat.", "Each prediction has an 80% interval.",
                                  "20% of the layers are held out <!-- setting: the fit's hold-out share -->",
                                  "batch 16 and 256 on 132 SMs"])
def test_shapes_thresholds_and_settings_pass(tmp_path, line):
    assert run(tmp_path, f"# Doc\n\n{line}\n") == (0, "")


def test_blocks_and_fences_pass(tmp_path):
    text = ("<!-- doc_figures.py some-figure -->\n| a | 12.0% |\n<!-- /doc_figures.py -->\n"
            "```\n$ tilewave analyze x.onnx\ntotal 467.2 µs\n```\n")
    assert run(tmp_path, text) == (0, "")


def test_a_record_pins_its_figures_to_a_commit(tmp_path):
    commit = head_commit()
    if commit is None:
        pytest.skip("no git metadata")
    rc, out = run(tmp_path, f"<!-- record {commit}: tilewave check --graph -->\nwas 7471.8 µs (−67.7%)\n<!-- /record -->\n")
    assert (rc, out) == (0, "")


@pytest.mark.parametrize("text,problem", [
    ("<!-- record: no commit -->\n1.5×\n<!-- /record -->\n", "must open as"),
    ("<!-- record zzzzzzz: a command -->\n1.5×\n<!-- /record -->\n", "must open as"),
    ("<!-- record 0123abc: a command -->\n1.5×\n", "never closes"),
    ("text\n<!-- /record -->\n", "closes that never opened"),
])
def test_bad_records_fail(tmp_path, text, problem):
    rc, out = run(tmp_path, text)
    assert rc == 1 and problem in out


def test_a_commit_this_repository_lacks_fails(tmp_path):
    if head_commit() is None:
        pytest.skip("no git metadata")
    shallow = subprocess.run(["git", "-C", ROOT, "rev-parse", "--is-shallow-repository"], capture_output=True, text=True)
    if shallow.stdout.strip() == "true":
        pytest.skip("a shallow clone cannot say which commits exist")
    rc, out = run(tmp_path, "<!-- record 0000000deadbeef: a command -->\n1.5×\n<!-- /record -->\n")
    assert rc == 1 and "lacks" in out


def test_an_unreadable_doc_is_one_line(tmp_path):
    doc = tmp_path / "bad.md"
    doc.write_bytes(b"\xff\xfe 12%\n")
    r = subprocess.run([sys.executable, SCRIPT, ROOT, str(doc)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "bad.md" in r.stderr


@pytest.mark.parametrize("kind", ["directory", "fifo", "missing"])
def test_a_path_that_is_not_a_regular_file_is_one_line(tmp_path, kind):
    path = tmp_path / "doc.md"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    r = subprocess.run([sys.executable, SCRIPT, ROOT, str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "doc.md" in r.stderr and r.stdout == ""
