"""calibrate/fit/softmax_rows.py: the softmax kernel a name shows, the width bands, and the robust fit recovers
the three terms that made synthetic kernel times, beside a few pairs no term explains."""
import pytest

from calibrate.fit import softmax_rows as fit

BOUNDS = {"softmax_warp_value_ns": {"min": 0.0, "max": 10.0}, "softmax_warp_shuffle_ns": {"min": 0.0, "max": 10.0},
          "softmax_warp_chain_ns": {"min": 0.0, "max": 500.0}}


def test_path_of_names_pytorchs_softmax_kernels():
    assert fit.path_of("void (anonymous namespace)::softmax_warp_forward<c10::Half, float, float, 6, false, false>"
                       "(float*, c10::Half const*, int, int, int, bool const*, int, bool)") == "warp"
    assert fit.path_of("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::Half, float>") == "block"
    assert fit.path_of("void at::native::(anonymous namespace)::cunn_SpatialSoftMaxForward<c10::Half, float>") \
        == "spatial"
    assert fit.path_of("void at::native::vectorized_layer_norm_kernel<float, float, false>") == "other"


def test_band_of_covers_every_warp_width():
    assert fit.band_of(1) == "1-32"
    assert fit.band_of(49) == "33-64"
    assert fit.band_of(1024) == "513-1024"
    with pytest.raises(StopIteration):
        fit.band_of(1025)


def kernel(warps, values, shuffles, traffic=0.5, fixed=1.3):
    return {"fixed_us": fixed, "memory_us": traffic, "warps": warps, "values_per_thread": values,
            "shuffles_per_warp": shuffles}


def test_the_fit_recovers_the_terms_that_made_the_times():
    value_ns, shuffle_ns, chain_ns = 0.04, 0.006, 110.0
    shapes = [(2, 10), (4, 20), (8, 10), (16, 10), (32, 10)]  # (values a thread, shuffles a warp)
    data = []
    for values, shuffles in shapes:
        for warps in (1, 4, 1 << 12, 1 << 16, 1 << 19, 1 << 21):
            k = kernel(warps, values, shuffles)
            issue = warps * (values * value_ns + shuffles * shuffle_ns) * 1e-3
            data.append(({}, k["fixed_us"] + max(k["memory_us"], issue, values * chain_ns * 1e-3), k))
    # Pairs no term explains (unlike kernels paired): the robust loss keeps them from moving the fit.
    data += [({}, 40.0 * (i + 1), kernel(1 << 10, 4, 20)) for i in range(3)]
    assert list(fit.solve(data, BOUNDS)) == pytest.approx([value_ns, shuffle_ns, chain_ns], rel=0.05)
