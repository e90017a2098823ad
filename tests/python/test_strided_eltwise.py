"""calibrate/fit/strided_eltwise.py: the measured path a kernel's name shows, and the two linear fits recover
the parameters that made synthetic kernel times."""
import numpy as np
from pytest import approx
from scipy.optimize import lsq_linear

from calibrate.fit import strided_eltwise as fit

BW = 4800e3  # bytes per us
L2 = 1.5


def kernel(elems, bytes_, hits, strided, fixed=1.3, ramp=0.2):
    return {"bytes": bytes_, "l2_hit_bytes": hits, "fixed_us": fixed, "ramp_us": ramp,
            "layer": {"op": "eltwise", "elems": elems, **({"strided": True} if strided else {})}}


def test_path_of_names_pytorchs_three_elementwise_kernels():
    assert fit.path_of("void at::native::vectorized_elementwise_kernel<8, AddFunctor<c10::Half>>(int)") == "vectorised"
    assert fit.path_of("void at::native::unrolled_elementwise_kernel<direct_copy>(int)") == "unrolled"
    assert fit.path_of("void at::native::elementwise_kernel<128, 4, gpu_kernel_impl_nocast<MulFunctor>>(int)") \
        == "strided"
    assert fit.path_of("sm90_xmma_gemm_f16f16") == "other"


def test_both_fits_recover_the_parameters_that_made_the_times():
    rate, ps, extra = 0.8, 1.6, 0.8
    plain, strided = [], []
    for i, size in enumerate(np.geomspace(1e5, 3e8, 40)):
        k = kernel(size / 4, size, size * (i % 3) / 4, False)
        dram, rest = fit.traffic_us(k, BW, L2)
        plain.append(({}, k["fixed_us"] + dram / rate + rest, "vectorised", k))
        s = kernel(size / 4, size, size * (i % 3) / 4, True, fixed=1.3 + extra)
        strided.append(({}, 1.3 + extra + dram / rate + rest + s["layer"]["elems"] * ps * 1e-6, "strided", s))
    a, b = fit.rate_design(plain, BW, L2)
    assert 1 / lsq_linear(a, b).x[0] == approx(rate)
    # The held floor already holds an extra of `extra`: the fit takes it out and finds it again.
    a, b = fit.strided_design(strided, {"fixed_us_strided_extra": extra}, rate, BW, L2)
    assert lsq_linear(a, b).x == approx([extra, ps])


def test_the_unrolled_fit_recovers_its_terms_after_the_rate():
    rate, ps, extra = 0.8, 0.7, 1.2
    unrolled = []
    for i, size in enumerate(np.geomspace(1e5, 3e8, 30)):
        k = kernel(size / 10, size, size * (i % 3) / 4, False, fixed=1.3 + extra)
        k["layer"]["unrolled"] = True
        dram, rest = fit.traffic_us(k, BW, L2)
        unrolled.append(({}, 1.3 + extra + dram / rate + rest + k["layer"]["elems"] * ps * 1e-6, "unrolled", k))
    a, b = fit.strided_design(unrolled, {fit.UNROLLED_EXTRA: extra}, rate, BW, L2, fit.UNROLLED_EXTRA)
    assert lsq_linear(a, b).x == approx([extra, ps])
