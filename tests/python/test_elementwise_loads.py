"""calibrate/fit/elementwise_loads.py: it fits on the direct GEMMs over 7 x 7 positions alone, judges on the batched
GEMMs whose first misaligned dimension is odd, and a row out of range is one error naming the file."""
import json

import pytest

from calibrate.cli import InputError
from calibrate.fit import elementwise_loads


def case(layout, side, us):
    return {"case": "x", "layout": layout, "batch": 16, "side": side, "C": 64, "K": 64, "error": None,
            "kernels": [["cutlass_75_gemm_align1", us]]}


def test_only_the_direct_gemms_over_7x7_positions_are_fitted(tmp_path):
    rows = [{"header": True}, case("nchw_matmul", 7, 3.0), case("nchw_matmul", 14, 4.0), case("nchw", 7, 5.0)]
    (tmp_path / "pointwise_paths.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    layers, measured = elementwise_loads.direct_gemms(str(tmp_path))
    assert [(x["H"], x["nchw"]) for x in layers] == [(7, True)] and measured == [3.0]
    (tmp_path / "pointwise_paths.jsonl").write_text(json.dumps(case("nchw", 7, 5.0)) + "\n")
    with pytest.raises(InputError, match="no nchw_matmul case"):
        elementwise_loads.direct_gemms(str(tmp_path))


def gemm(n, k, batch, us=5.0, dtype="fp16"):
    return {"op": "gemm", "dtype": dtype, "M": 64, "N": n, "K": k, "batch": batch, "measured_us": us, "status": "ok"}


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in [{"header": True}] + rows))
    return str(path)


def test_the_sweep_check_takes_batched_gemms_with_an_odd_misaligned_dimension(tmp_path):
    layers, measured = elementwise_loads.batched_odd_gemms(write(tmp_path / "m.jsonl", [
        gemm(197, 64, 8, 1.0), gemm(197, 64, 1), gemm(196, 64, 8), gemm(200, 63, 8, 2.0, "bf16"), gemm(197, 62, 8),
        gemm(197, 64, 8, dtype="fp32")]))
    assert [(x["N"], x["K"], x["dtype"]) for x in layers] == [(197, 64, "fp16"), (200, 63, "bf16")]
    assert measured == [1.0, 2.0]


@pytest.mark.parametrize("bad", [0, 1e308, "fast"])
def test_a_time_out_of_range_is_an_error_naming_the_file(tmp_path, bad):
    with pytest.raises(InputError, match="m.jsonl: row 2"):
        elementwise_loads.batched_odd_gemms(write(tmp_path / "m.jsonl", [gemm(197, 64, 8, bad)]))
