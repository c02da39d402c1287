#!/usr/bin/env python3
"""Do two host<->device copies in the same direction, issued on different CUDA streams, share the
link or run one after the other?

Why: FlexGen issues its prefetches (weights, KV cache) on side streams and the hidden-state copies
on the default stream just after them (flexgen/flex_opt.py); whether the small default-stream copy
waits for the large prefetch decides whether compute waits for it. tiersim's PCIe resources serve
copies in the order issued (sim/engine/engine.hpp); this checks that on real hardware.

A large pinned copy (1 GiB) is issued on stream A, then a small one (8 MiB) on stream B; CUDA
events give each copy's completion time from the large copy's start. If the small copy completes
after the large one, same-direction copies run in issue order. Pinned memory throughout.
Needs PyTorch with CUDA. Not run in CI. Usage: python3 tools/gpu/copy_order_probe.py
"""
import statistics

import torch


def trial(big_dir, small_dir, big_h, big_d, small_h, small_d, sa, sb):
    torch.cuda.synchronize()
    e0 = torch.cuda.Event(enable_timing=True)
    eb = torch.cuda.Event(enable_timing=True)
    es = torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(sa):
        e0.record(sa)
        if big_dir == "h2d":
            big_d.copy_(big_h, non_blocking=True)
        else:
            big_h.copy_(big_d, non_blocking=True)
        eb.record(sa)
    with torch.cuda.stream(sb):
        if small_dir == "h2d":
            small_d.copy_(small_h, non_blocking=True)
        else:
            small_h.copy_(small_d, non_blocking=True)
        es.record(sb)
    torch.cuda.synchronize()
    return e0.elapsed_time(eb), e0.elapsed_time(es)


def main():
    big_h = torch.empty(1 << 30, dtype=torch.uint8).pin_memory()
    small_h = torch.empty(8 << 20, dtype=torch.uint8).pin_memory()
    big_d = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    small_d = torch.empty(8 << 20, dtype=torch.uint8, device="cuda")
    sa = torch.cuda.Stream()
    sb = torch.cuda.Stream()
    print("device", torch.cuda.get_device_name(0))
    for big_dir, small_dir in (("h2d", "h2d"), ("d2h", "d2h"), ("h2d", "d2h")):
        for name, s2 in (("B", sb), ("default", torch.cuda.default_stream()), ("A", sa)):
            runs = [trial(big_dir, small_dir, big_h, big_d, small_h, small_d, sa, s2)
                    for _ in range(7)]
            big_ms = statistics.median(r[0] for r in runs)
            small_ms = statistics.median(r[1] for r in runs)
            print(f"big {big_dir} on A, small {small_dir} on {name}: "
                  f"big done at {big_ms:7.2f} ms, small done at {small_ms:7.2f} ms", flush=True)


if __name__ == "__main__":
    main()
