"""calibrate/fit/narrow_convs.py: which predicted kernels it fits, and the robust fit recovers the tile and
step terms that made synthetic kernel times, beside a few pairs no term explains (mispaired kernels)."""
import json

import pytest

from calibrate.fit import narrow_convs as fit

NAMES = fit.PARAMS["nchw"]
BOUNDS = {n: {"min": 0.0, "max": 20.0} for n in NAMES}


def test_layout_of_takes_only_the_narrow_channel_kernels():
    assert fit.layout_of({"kernel": "conv_unaligned_nhwc_fp16_128x32x16"}) == "nhwc"
    assert fit.layout_of({"kernel": "conv_unaligned_nchw_bf16_128x32x16"}) == "nchw"
    assert fit.layout_of({"kernel": "conv_tensor_gemm_fp16_64x64x32_padded"}) is None
    assert fit.layout_of({}) is None


def pair(tiles, k_steps, tile_us, step_us, fixed=2.7, measured=None):
    """(measured, JSON at tile 1 us, JSON at step 1 us) of a kernel of `tiles` tiles per SM and `k_steps` steps."""
    made = fixed + tiles * (tile_us + k_steps * step_us)
    return (measured if measured is not None else made,
            {"time_us": fixed + tiles, "fixed_us": fixed}, {"time_us": fixed + tiles * k_steps, "fixed_us": fixed})


def test_the_fit_recovers_the_terms_that_made_the_times():
    tile_us, step_us = 0.8, 0.7
    data = [pair(tiles, k_steps, tile_us, step_us, fixed) for tiles in (0.5, 3, 47, 380, 2000)
            for k_steps in (1, 2, 10, 48) for fixed in (1.3, 2.7, 4.0)]
    assert list(fit.solve(data, NAMES, BOUNDS)) == pytest.approx([tile_us, step_us], rel=1e-3)
    # Pairs no term explains, a tenth of the time they would take (one in 20): the robust loss keeps them from
    # moving the fit much.
    data += [pair(380, 2, tile_us, step_us, measured=60.0 + i) for i in range(3)]
    assert list(fit.solve(data, NAMES, BOUNDS)) == pytest.approx([tile_us, step_us], rel=0.05)


def test_write_puts_the_terms_in_the_eager_and_inductor_sets_with_why(tmp_path, monkeypatch):
    from calibrate.fit import corpus_fit
    gpu = tmp_path / "h200.json"
    gpu.write_text(open(corpus_fit.GPU).read())
    monkeypatch.setattr(corpus_fit, "GPU", str(gpu))
    values = {"narrow_conv_nchw_tile_us": 0.5, "narrow_conv_nchw_step_us": 0.25}
    corpus_fit.stamp_eager(None, values, "the fit's own line", fit.INDUCTOR)
    sets = json.loads(gpu.read_text())["runtime_params"]
    for name in ("eager", "inductor"):
        assert {n: sets[name]["params"][n] for n in values} == values
    key = ", ".join(values)
    assert sets["eager"]["fitted_on"][key] == "the fit's own line"
    assert sets["inductor"]["fitted_on"][key].startswith("the fit's own line; the same cuDNN kernels")
    # Sets that run other kernels (the layout/precision sets of eager PyTorch) are left as they were.
    assert "narrow_conv_nchw_tile_us" not in sets["eager nchw amp"]["params"]


def test_write_drops_the_provenance_of_values_it_replaces_and_keeps_the_rest(tmp_path, monkeypatch):
    from calibrate.fit import corpus_fit
    gpu = tmp_path / "h200.json"
    g = json.load(open(corpus_fit.GPU))
    g["runtime_params"]["eager"]["fitted_on"]["narrow_conv_nchw_tile_us"] = "an older fit of one of them"
    g["runtime_params"]["eager"]["fitted_on"]["narrow_conv_nchw_tile_us, row_ns"] = "a fit of another value too"
    gpu.write_text(json.dumps(g))
    monkeypatch.setattr(corpus_fit, "GPU", str(gpu))
    values = {"narrow_conv_nchw_tile_us": 0.5, "narrow_conv_nchw_step_us": 0.25}
    corpus_fit.stamp_eager(None, values, "the fit's own line")
    fitted_on = json.loads(gpu.read_text())["runtime_params"]["eager"]["fitted_on"]
    assert "narrow_conv_nchw_tile_us" not in fitted_on
    assert fitted_on["narrow_conv_nchw_tile_us, row_ns"] == "a fit of another value too"
    assert fitted_on[", ".join(values)] == "the fit's own line"
