"""Issue 32's contract in the Python module and on bytes (docs/errors.md "Bytes and locales",
"Output files", "Budgets"): names that are not UTF-8 come back with U+FFFD, never an error; an empty
output path writes nothing; lists have a budget; numbers in encodings read the same under any locale."""
import json
import locale
import os
import subprocess

import pytest

import tilewave

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("TILEWAVE_CLI", os.path.join(ROOT, "build", "analyzer", "tilewave"))
TINY = os.path.join(ROOT, "tests", "data", "tiny_cnn.onnx")


@pytest.fixture
def not_utf8(tmp_path):
    """tiny_cnn.onnx with its node 'residual_add' renamed to the bytes residual\\xffadd."""
    data = open(TINY, "rb").read()
    assert data.count(b"residual_add") == 1
    path = tmp_path / "not_utf8.onnx"
    path.write_bytes(data.replace(b"residual_add", b"residual\xffadd"))
    return str(path)


def test_names_that_are_not_utf8_come_back_with_a_replacement_character(not_utf8, tmp_path):
    a = tilewave.analyze(not_utf8, batch=1)
    assert any("residual\ufffdadd" in (layer.get("name") or "") for layer in a["layers"])
    for args in (["analyze", not_utf8, "--batch", "1", "--format", "json"],
                 ["analyze", not_utf8, "--batch", "1", "--trace-out", str(tmp_path / "t.json")]):
        r = subprocess.run([CLI, *args], capture_output=True)
        assert r.returncode == 0 and b"internal error" not in r.stderr, r.stderr
    json.loads(subprocess.run([CLI, "analyze", not_utf8, "--batch", "1", "--format", "json"],
                              capture_output=True).stdout.decode("utf-8"))
    assert "residual\ufffdadd" in (tmp_path / "t.json").read_text(encoding="utf-8")


def test_an_empty_output_path_writes_nothing_anywhere(tmp_path, capfd):
    for call in (lambda: tilewave.annotate(TINY, "", batch=1),
                 lambda: tilewave.report(TINY, "", batch=1),
                 lambda: tilewave.Space("resnet").export_onnx(tilewave.Space("resnet").sample(0, 0), "")):
        with pytest.raises(Exception, match="empty path"):
            call()
    out, _ = capfd.readouterr()
    assert out == ""


def test_a_list_in_memory_has_a_budget():
    space = tilewave.Space("resnet")  # 1.6 million candidates
    assert space.size > 1_000_000
    with pytest.raises(Exception, match="more than enumerate"):
        space.enumerate()
    with pytest.raises(Exception, match="more than a list holds"):
        space.samples(2_000_000)


def test_encodings_read_the_same_under_a_locale_with_a_decimal_comma():
    space = tilewave.Space("mobilenetv2")
    encoding = space.sample(3, 0)
    before = space.scorer().score(encoding)
    for name in ("de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8"):
        try:
            locale.setlocale(locale.LC_ALL, name)
            break
        except locale.Error:
            continue
    else:
        pytest.skip("no locale with a decimal comma is installed")
    try:
        assert locale.localeconv()["decimal_point"] == ","
        assert space.scorer().score(encoding) == before
    finally:
        locale.setlocale(locale.LC_ALL, "C")
