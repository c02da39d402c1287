"""Timing shared by the GPU probes: median of repeats, by CUDA events or by the wall clock."""
import statistics
import time

import torch


def median_ms(fn, reps=20, warmups=2):
    """Median milliseconds of fn() over `reps` runs, after `warmups` untimed runs."""
    for _ in range(warmups):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        ms.append(start.elapsed_time(end))
    return statistics.median(ms)


def median_wall_s(fn, reps=7, warmups=1):
    """Median wall-clock seconds of fn() until the device is idle, over `reps` runs after
    `warmups` untimed runs: for work whose host side counts (dispatch, blocking copies)."""
    for _ in range(warmups):
        fn()
        torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)
