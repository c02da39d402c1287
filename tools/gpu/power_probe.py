#!/usr/bin/env python3
"""A GPU's power idle with a CUDA context, streaming device memory, and at full math rate.

Why: tiersim's power model (model/power.hpp) draws a GPU's idle power (catalog idle_w) for the
whole run and, while a kernel runs, a share of the range up to the board's limit (tdp_w): all of
it at full math rate, `memory_power_fraction` of it while streaming device memory at the achieved
rate. The fraction was derived from one published row (an H100 under vLLM, ML.ENERGY) and the
idle power of most boards is an estimate. This probe reads both off the board itself, and the SM
clock, so that a board's entry can carry measured values.

Each phase runs for --seconds while another thread samples NVML's power reading and SM clock
every 100 ms; the phase's figure is the median of the samples after its first --settle seconds.
Phases: idle (a context open, nothing running), memory (a sum and a copy over 4 GiB, replayed from
a CUDA graph), bf16 GEMM (8192^3) and FP8 GEMM (8192^3, torch._scaled_mm). The achieved rate of
each busy phase is printed with it. Needs PyTorch with CUDA and nvidia-ml-py (pynvml). Not run in
CI (no GPU there). Usage:
  python3 tools/gpu/power_probe.py --json out.json [--seconds 8] [--settle 3]
"""
import argparse
import json
import statistics
import threading
import time

import pynvml
import torch

from cuda_timing import graph_of


def sample(handle, stop, out):
    while not stop.is_set():
        out.append((time.perf_counter(),
                    pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
                    pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)))
        time.sleep(0.1)


def phase(handle, name, seconds, settle, work=None):
    """Runs work() (one batch of GPU work, enqueued) until `seconds` pass; returns the medians."""
    samples, stop = [], threading.Event()
    t = threading.Thread(target=sample, args=(handle, stop, samples))
    start = time.perf_counter()
    t.start()
    calls = 0
    while time.perf_counter() - start < seconds:
        if work is None:
            time.sleep(0.05)
            continue
        work()
        calls += 1
        if calls % 4 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    stop.set()
    t.join()
    kept = [s for s in samples if s[0] - start >= settle]
    out = {"phase": name, "seconds": elapsed, "calls": calls,
           "power_w": statistics.median(s[1] for s in kept),
           "power_w_max": max(s[1] for s in kept),
           "sm_mhz": statistics.median(s[2] for s in kept), "samples": len(kept)}
    print(out, flush=True)
    return out


def busy_phase(handle, name, args, g, work_per_replay, scale, first_key, sustained_key):
    """A phase replaying graph `g`, which does `work_per_replay` units (bytes or FLOPs) a replay:
    the rate of its first replay (the boost clock's, as short benchmarks see it) under
    `first_key` (none where it is None) and over the phase under `sustained_key`, in units of
    `scale` (1e9: GB/s, 1e12: TFLOP/s)."""
    t0 = time.perf_counter()
    g.replay()
    torch.cuda.synchronize()
    first = work_per_replay / (time.perf_counter() - t0) / scale
    p = phase(handle, name, args.seconds, args.settle, g.replay)
    if first_key:
        p[first_key] = first
    p[sustained_key] = p["calls"] * work_per_replay / p["seconds"] / scale
    return p


def decode_phases(handle, args):
    """Kernels of a decode step, each replayed: 16-token bf16 products streaming 16 distinct
    8192 x 8192 weight matrices (2.1 GB, past the L2), and decode attention (torch SDPA, bf16) of
    64 sequences of 2,048 positions over 8 KV heads."""
    out = []
    k = n = 8192
    ws = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(16)]
    a = torch.randn(16, k, device="cuda", dtype=torch.bfloat16)
    g = graph_of(lambda i: torch.matmul(a, ws[i % 16]), 16)
    out.append(busy_phase(handle, "bf16 decode GEMM M=16 8192x8192, 16 weights", args, g,
                          16 * k * n * 2, 1e9, None, "sustained_weight_gbps"))
    del ws, a, g
    torch.cuda.empty_cache()
    b, c, hq, hkv = 64, 2048, 64, 8
    q = torch.randn(b, hq, 1, 128, device="cuda", dtype=torch.bfloat16)
    kv = [(torch.randn(b, hkv, c, 128, device="cuda", dtype=torch.bfloat16),
           torch.randn(b, hkv, c, 128, device="cuda", dtype=torch.bfloat16)) for _ in range(2)]
    g = graph_of(lambda i: torch.nn.functional.scaled_dot_product_attention(
        q, kv[i % 2][0], kv[i % 2][1], enable_gqa=True), 8)
    out.append(busy_phase(handle, "decode attention 64 x 2048, bf16 KV", args, g,
                          8 * 2 * b * hkv * c * 128 * 2, 1e9, None, "sustained_kv_gbps"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--settle", type=float, default=3.0)
    ap.add_argument("--decode", action="store_true",
                    help="only the decode kernels: thin bf16 products streaming their weights and "
                         "decode attention over a KV cache (with the idle phase)")
    args = ap.parse_args()
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    info = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "power_limit_w": pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0}
    torch.zeros(1, device="cuda")  # the context
    time.sleep(2.0)
    phases = [phase(handle, "idle", args.seconds, args.settle)]
    if args.decode:
        phases += decode_phases(handle, args)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({**info, "phases": phases}, f, indent=1)
        return

    n = (4 << 30) // 2
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    g = graph_of(lambda i: torch.sum(x, dtype=torch.float32), 20)
    phases.append(busy_phase(handle, "memory read (sum)", args, g, 20 * n * 2, 1e9, "read_gbps",
                             "sustained_read_gbps"))
    g = graph_of(lambda i: y.copy_(x), 20)
    phases.append(busy_phase(handle, "memory copy", args, g, 20 * 2 * n * 2, 1e9,
                             "read_plus_write_gbps", "sustained_read_plus_write_gbps"))
    del x, y, g
    torch.cuda.empty_cache()

    s = 8192
    a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    g = graph_of(lambda i: torch.matmul(a, b), 10)
    phases.append(busy_phase(handle, "bf16 GEMM 8192^3", args, g, 10 * 2 * s**3, 1e12,
                             "tflops_first_replay", "sustained_tflops"))
    one = torch.ones((), device="cuda")
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
    g = graph_of(lambda i: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one,
                                            out_dtype=torch.bfloat16), 10)
    phases.append(busy_phase(handle, "FP8 GEMM 8192^3", args, g, 10 * 2 * s**3, 1e12,
                             "tflops_first_replay", "sustained_tflops"))
    phases.append(phase(handle, "idle after", args.seconds, args.settle))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**info, "phases": phases}, f, indent=1)


if __name__ == "__main__":
    main()
