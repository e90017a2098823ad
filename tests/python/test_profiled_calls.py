"""calibrate/measure/profiled_calls.py, the GPU sweeps' one timing loop, driven by a stand-in for torch (this
machine has none): the kernels come back in launch order, grouped per call or per name, and a call that raises or
launches different kernels each time is said so."""
import sys
import types

import pytest


class Event:
    def __init__(self, name, start, us):
        self.name, self.device_time, self.device_type = name, us, "cuda"
        self.time_range = types.SimpleNamespace(start=start)


def stand_in_torch(launches):
    """A torch module whose profiler reports `launches` (a list of (name, µs) per call of fn, in order), shuffled."""
    torch = types.ModuleType("torch")
    recorded = []

    class Profile:
        def __init__(self, activities):
            pass

        def __enter__(self):
            recorded.clear()
            return self

        def __exit__(self, *exc):
            return False

        def events(self):
            return list(reversed(recorded))  # the profiler's order is not launch order

    torch.profiler = types.SimpleNamespace(profile=Profile, ProfilerActivity=types.SimpleNamespace(CUDA="cuda"))
    torch.autograd = types.SimpleNamespace(DeviceType=types.SimpleNamespace(CUDA="cuda"))
    torch.cuda = types.SimpleNamespace(synchronize=lambda: None)
    calls = iter(launches)

    def fn():
        for name, us in next(calls):
            recorded.append(Event(name, len(recorded), us))
    return torch, fn


@pytest.fixture
def profiled(monkeypatch):
    def load(launches):
        torch, fn = stand_in_torch(launches)
        monkeypatch.setitem(sys.modules, "torch", torch)
        monkeypatch.delitem(sys.modules, "calibrate.measure.profiled_calls", raising=False)
        import calibrate.measure.profiled_calls as module
        return module, fn
    return load


WARM = [[("warm", 1.0)]] * 3


def test_call_sequence_gives_one_call_in_launch_order_with_median_times(profiled):
    module, fn = profiled(WARM + [[("transpose", t), ("gemm", 10 * t)] for t in (1.0, 3.0, 2.0)])
    assert module.call_sequence(fn, reps=3) == ([["transpose", 2.0], ["gemm", 20.0]], None)


def test_profile_groups_launches_by_name(profiled):
    module, fn = profiled(WARM + [[("a", 1.0), ("b", 2.0), ("a", 3.0)]] * 2)
    times, error = module.profile(fn, reps=2)
    assert error is None and list(times) == ["a", "b"] and times == {"a": [1.0, 3.0, 1.0, 3.0], "b": [2.0, 2.0]}
    assert module.main_kernel(times, 2) == ("b", [2.0, 2.0])


def test_calls_that_differ_or_raise_are_said_so(profiled):
    module, fn = profiled(WARM + [[("a", 1.0)], [("b", 1.0)]])
    kernels, error = module.call_sequence(fn, reps=2)
    assert error == "the calls launched different kernels" and kernels == [["a", 1.0], ["b", 1.0]]
    module, fn = profiled(WARM + [[("a", 1.0)], [("a", 1.0), ("b", 1.0)]])
    assert module.call_sequence(fn, reps=2)[1] == "3 kernels over 2 calls"

    def raises():
        raise RuntimeError("CUDA error: out of memory\nmore")
    assert module.call_sequence(raises) == ([], "CUDA error: out of memory")
    assert module.profile(raises) == ({}, "CUDA error: out of memory")
