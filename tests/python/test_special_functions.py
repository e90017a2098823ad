"""calibrate/fit/special_functions.py: the grid fit recovers the rate that made synthetic kernel times, where
traffic bounds some kernels and arithmetic others, beside pairs no rate explains (mispaired kernels)."""
import pytest

from calibrate.fit import special_functions as fit

BOUNDS = {fit.PARAM: {"min": 0.0, "max": 50.0}}


def pair(elems, functions, traffic_us, rate_ps, fixed=1.3, measured=None):
    """(row, measured us, predicted kernel JSON with the term at 0) of a kernel of `elems` outputs."""
    made = fixed + max(traffic_us, elems * functions * rate_ps * 1e-6)
    layer = {"op": "eltwise", "elems": elems, "special_functions": functions}
    return ({"model": "m"}, measured if measured is not None else made,
            {"fixed_us": fixed, "memory_us": traffic_us, "time_us": fixed + traffic_us, "layer": layer})


def test_the_fit_recovers_the_rate_that_made_the_times():
    rate = 1.27
    # Traffic at 0.8 ps a value: kernels of one function are bound by the rate, those of 3 bytes a value
    # more by their traffic; Mish's two functions by the rate again.
    data = [pair(elems, functions, elems * ps_traffic * 1e-6, rate) for elems in (2 ** 16, 2 ** 20, 2 ** 24, 2 ** 27)
            for functions in (1, 2) for ps_traffic in (0.8, 2.4)]
    assert fit.solve(data, BOUNDS) == pytest.approx(rate, abs=fit.GRID_PS)
    # Pairs predicted at 4x their measured time before the term (a group PyTorch runs as two kernels): no
    # rate fixes them, and they do not drag it down.
    data += [pair(2 ** 24, 1, 2 ** 24 * 2.4e-6, rate, measured=2 ** 24 * 0.6e-6) for _ in range(4)]
    assert fit.solve(data, BOUNDS) == pytest.approx(rate, abs=fit.GRID_PS)


def test_a_rate_no_kernel_needs_is_the_least_that_fits():
    # Every kernel bound by its traffic: any rate below it fits; the grid's first, the bound, is returned.
    data = [pair(2 ** 24, 1, 2 ** 24 * 2.4e-6, 0.0) for _ in range(3)]
    assert fit.solve(data, BOUNDS) == 0.0
