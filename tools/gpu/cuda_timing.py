"""Timing shared by the GPU probes: median of repeats, by CUDA events or by the wall clock, and
CUDA graphs of repeated work, so that a replay times the GPU without the host's dispatch."""
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


def graph_of(step, count):
    """A CUDA graph that calls step(i) for i in range(count), captured after two warm-up passes
    on a side stream (cuBLAS and the caching allocator set up their workspaces outside the
    capture)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            for i in range(count):
                step(i)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(count):
            step(i)
    return g
