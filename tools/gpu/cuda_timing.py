"""Timing shared by the GPU probes: CUDA events around each call, median of repeats."""
import statistics

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
