"""calibrate/fit/harness_host.py: the host fit recovers the per-op scale, the further-launch and step costs
that made synthetic forward-call times, a view costing the single `flatten`'s time at that scale."""
import random

from pytest import approx

from calibrate.fit import harness_host

MICRO = {"op": 9.0, "conv": 50.0, "gemm": 30.0, "norm": 24.0, "cast": 12.0, "view": 2.2}
TABLE = {"host_step_us": {"min": 0, "max": 500}, "host_inner_launch_us": {"min": 0, "max": 30}}


def counts(seed, n=60):
    rnd = random.Random(seed)
    return [{"op": rnd.randint(20, 300), "conv": rnd.randint(0, 120), "gemm": rnd.randint(0, 80),
             "norm": rnd.randint(0, 100), "cast": rnd.randint(0, 200), "inner": rnd.randint(0, 60),
             "view": rnd.randint(0, 150)} for _ in range(n)]


def test_the_fit_gives_back_the_costs_that_made_the_times():
    cs = counts(1)
    runs = [(c, 25.0 + 0.8 * sum(c[k] * MICRO[k] for k in MICRO) + 7.5 * c["inner"], "n%d" % i)
            for i, c in enumerate(cs)]
    scale, params, errs = harness_host.fit(MICRO, runs, TABLE)
    assert scale == approx(0.8, rel=1e-3)
    assert params["host_inner_launch_us"] == approx(7.5, abs=0.01)
    assert params["host_step_us"] == approx(25.0, abs=0.05)
    assert params["host_conv_us"] == approx(40.0, abs=0.01) and params["host_view_us"] == approx(1.76, abs=0.01)
    assert max(errs) < 1e-3
    # errors() predicts with the file's parameters what the fit predicted: views included.
    assert max(harness_host.errors(params, runs)) < 2e-3


def test_views_are_what_tells_two_networks_apart():
    # Same kernels, one with many more views: the fitted file must time the second one longer.
    c = counts(2, 1)[0]
    more = dict(c, view=c["view"] + 500)
    _, params, _ = harness_host.fit(MICRO, [(x, 10.0 + sum(x[k] * MICRO[k] for k in MICRO), "")
                                            for x in counts(3) + [c, more]], TABLE)
    t = lambda x: params["host_step_us"] + sum(x[k] * params.get(harness_host.PARAM[k], 0.0) for k in harness_host.PARAM)
    assert t(more) - t(c) == approx(500 * 2.2, rel=1e-2)
