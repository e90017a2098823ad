"""calibrate/fit/partial_vectors.py: it fits on the GEMMs whose first misaligned dimension is even, and a row out
of range is one error naming the file."""
import json

import pytest

from calibrate.cli import InputError
from calibrate.fit import partial_vectors


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in [{"header": True}] + rows))
    return str(path)


def gemm(m, n, k, us=5.0):
    return {"op": "gemm", "dtype": "fp16", "M": m, "N": n, "K": k, "measured_us": us, "status": "ok"}


def test_only_gemms_with_an_even_misaligned_dimension_are_fitted(tmp_path):
    layers, measured = partial_vectors.sweep_gemms(write(tmp_path / "m.jsonl", [
        gemm(64, 196, 1024), gemm(64, 197, 1024), gemm(64, 200, 1024), gemm(64, 200, 1022, 7.0),
        gemm(64, 196, 1023)]))
    assert [(x["N"], x["K"]) for x in layers] == [(196, 1024), (200, 1022)]
    assert measured == [5.0, 7.0]


@pytest.mark.parametrize("bad", [-1.0, 1e308, "fast"])
def test_a_time_out_of_range_is_an_error_naming_the_file(tmp_path, bad):
    path = write(tmp_path / "m.jsonl", [gemm(64, 196, 1024, bad)])
    with pytest.raises(InputError, match="m.jsonl: row 2"):
        partial_vectors.sweep_gemms(path)


def test_no_such_gemm_is_an_error(tmp_path):
    with pytest.raises(InputError, match="no fp16 GEMM"):
        partial_vectors.sweep_gemms(write(tmp_path / "m.jsonl", [gemm(64, 200, 1024)]))


def test_the_held_out_sweep_is_read_through_the_views_reader(tmp_path):
    rows = [{"header": True},
            {"case": "a", "layout": "nchw", "batch": 16, "side": 14, "C": 64, "K": 64, "error": None,
             "kernels": [["copy_kernel", 1.0], ["cutlass_80_gemm_align2", 4.0]]},
            {"case": "b", "layout": "nchw", "batch": 16, "side": 14, "C": 64, "K": 128, "error": None,
             "kernels": [["void cudnn::engines_precompiled::nchwToNhwcKernel<__half>", 1.0], ["xmma", 4.0]]},
            {"case": "c", "layout": "nchw", "batch": 16, "side": 7, "C": 64, "K": 64, "error": None,
             "kernels": [["cutlass_75_gemm_align1", 3.0]]}]
    (tmp_path / "pointwise_paths.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    layers, measured = partial_vectors.direct_pointwise(str(tmp_path))
    assert [(x["K"], x["H"], x["nchw"]) for x in layers] == [(64, 14, True)] and measured == [4.0]
    (tmp_path / "pointwise_paths.jsonl").write_text(json.dumps(dict(rows[1], kernels=[["x", -1.0]])) + "\n")
    with pytest.raises(InputError, match="row 1"):
        partial_vectors.direct_pointwise(str(tmp_path))
