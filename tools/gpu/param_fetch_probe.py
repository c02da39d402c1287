#!/usr/bin/env python3
"""Host cost of fetching a layer's parameters to the GPU one tensor at a time, as ZeRO-3 does.

Why: tiersim charges each fetched parameter tensor a fixed host cost on top of its bytes at the
link's rate (ExecutionModel::fetch_overhead_s, model/perf.hpp: module hooks, buffer allocation,
stream synchronisation), a constant set from published ZeRO-Inference rows, not measured. This
probe measures the part that PyTorch itself costs, without DeepSpeed's hooks: an OPT-30B decoder
layer's 16 parameter tensors (hidden 7168, FFN 28672, fp16) copied host-to-device
  blocking      each with a blocking .to("cuda") (DeepSpeed v0.7's one-GPU partition copy)
  non_blocking  each with non_blocking=True, one synchronisation per layer
  flat          the layer's tensors already in one pinned flat buffer, one copy
from pinned and from pageable memory, plus the small tensors alone (biases and layer norms,
whose time is all fixed cost). Fixed cost per tensor = (time - bytes / rate of the flat copy)
/ tensors. Medians of repeats, wall clock around a synchronisation.

Needs PyTorch with CUDA. Not run in CI (no GPU there). Usage:
  python3 tools/gpu/param_fetch_probe.py [--json out.json]
"""
import argparse
import json

import torch

from cuda_timing import median_wall_s as median_s

H, F = 7168, 28672
# OPT decoder layer (transformers OPTDecoderLayer): q, k, v, out projections with biases, the
# attention and final layer norms (weight, bias), fc1 and fc2 with biases.
SHAPES = [(H, H), (H,), (H, H), (H,), (H, H), (H,), (H, H), (H,), (H,), (H,),
          (F, H), (F,), (H, F), (H,), (H,), (H,)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for pinned in (True, False):
        src = [torch.randn(s, dtype=torch.float16).pin_memory() if pinned
               else torch.randn(s, dtype=torch.float16) for s in SHAPES]
        small = [t for t in src if t.dim() == 1]
        nbytes = sum(t.numel() * 2 for t in src)
        flat = torch.empty(nbytes // 2, dtype=torch.float16)
        flat = flat.pin_memory() if pinned else flat
        cases = {
            "blocking": lambda: [t.to("cuda") for t in src],
            "non_blocking": lambda: [t.to("cuda", non_blocking=True) for t in src],
            "flat": lambda: flat.to("cuda", non_blocking=pinned),
            "small_blocking": lambda: [t.to("cuda") for t in small],
        }
        res = {k: median_s(fn) for k, fn in cases.items()}
        rate = nbytes / res["flat"]
        for k, s in res.items():
            n = len(small) if k == "small_blocking" else (1 if k == "flat" else len(src))
            b = sum(t.numel() * 2 for t in small) if k == "small_blocking" else nbytes
            fixed = (s - b / rate) / n
            row = {"pinned": pinned, "case": k, "tensors": n, "bytes": b, "s": s,
                   "gbps": b / s / 1e9, "fixed_us_per_tensor": fixed * 1e6}
            rows.append(row)
            print(f"{'pinned' if pinned else 'pageable':8s} {k:14s} {n:2d} tensors "
                  f"{b / 1e6:8.1f} MB {s * 1e3:8.2f} ms {b / s / 1e9:6.2f} GB/s  fixed "
                  f"{fixed * 1e6:7.1f} us/tensor", flush=True)
        del src, flat
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
