"""One way the GPU machine's sweeps time a call: warm it up (3 calls; cudnn.benchmark times its algorithms on the
first), then REPS calls in one torch.profiler session, its CUDA kernels in launch order. sdpa_paths, row_kernels,
eltwise_paths, resize_kernels, attention_sweep and pointwise_paths read their kernels through it."""
import statistics

import torch

REPS = 5
WARM_UP = 3


def kernel_events(fn, reps=REPS):
    """[(kernel name, device µs)] of the kernels `reps` calls of fn launched, in launch order, after the warm-up;
    ([], the first line of the error) where a warm-up call raised."""
    try:
        for _ in range(WARM_UP):
            fn()
        torch.cuda.synchronize()
    except RuntimeError as e:
        return [], str(e).splitlines()[0][:200]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    events = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                    key=lambda e: e.time_range.start)
    return [(e.name, e.device_time) for e in events], None


def profile(fn, reps=REPS):
    """{kernel name: [µs of each launch]} over `reps` calls of fn, names in launch order (a name's list holds its
    launches of the first call, then the second's, ...), and the error if it raised."""
    events, error = kernel_events(fn, reps)
    times = {}
    for name, us in events:
        times.setdefault(name, []).append(us)
    return times, error


def call_sequence(fn, reps=REPS):
    """[[kernel name, median µs over the calls]] of one call in launch order, and the error if it raised or the
    calls did not launch the same kernels (then every launch is listed)."""
    events, error = kernel_events(fn, reps)
    if error:
        return [], error
    if not events or len(events) % reps:
        return [[n, us] for n, us in events], "%d kernels over %d calls" % (len(events), reps)
    per_call = len(events) // reps
    calls = [events[i * per_call:(i + 1) * per_call] for i in range(reps)]
    if any(c[j][0] != calls[0][j][0] for c in calls for j in range(per_call)):
        return [[n, us] for n, us in events], "the calls launched different kernels"
    return [[calls[0][j][0], statistics.median(c[j][1] for c in calls)] for j in range(per_call)], None


def main_kernel(times, reps):
    """(name, [us of each call]) of the kernel launched once a call with the most time in `times` (profile's
    dict over `reps` calls), or (None, []) where no kernel ran once a call."""
    once = [n for n, us in times.items() if len(us) == reps]
    if not once:
        return None, []
    name = max(once, key=lambda n: sum(times[n]))
    return name, times[name]
