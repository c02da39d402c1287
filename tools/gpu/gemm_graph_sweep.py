#!/usr/bin/env python3
"""GEMM time against the token count M on the shapes of LLM layers, timed inside CUDA graphs.

Why: tiersim prices a layer's GEMMs as their math at the board's achieved rate plus the weight
bytes the pipeline does not hide, never below the weight stream from device memory
(model/perf.cpp layer_kernel; the rates were fitted on gemm_shape_sweep.py's timings of an H100,
tools/gpu/h100-2026-11-27.md). That sweep timed each product alone from Python, so every small
product carried the host's dispatch of one operation (20-41 us) and said little about products of
a decode batch (M = 1-1024 tokens), which serving engines launch back to back or from CUDA graphs.
Here each point is a CUDA graph of several products replayed, so the time per product is the
GPU's. The weights rotate over enough copies to exceed the L2 cache, as a model's layers do.

Shapes: the layers of Llama-2/3 70B (hidden 8192, FFN 28672, 8 KV heads) and Llama-3 8B (hidden
4096, FFN 14336): QKV, output, fused gate/up and down projections. bf16 by torch.matmul, FP8 e4m3
by torch._scaled_mm (per-tensor scales, bf16 output). Also the device memory's read and copy
rates (a sum and a copy of 4 GiB), the ceilings the memory-bound products meet.

Needs PyTorch with CUDA. Not run in CI (no GPU there). Usage:
  python3 tools/gpu/gemm_graph_sweep.py --csv out.csv [--json out.json] [--dtypes bf16,fp8]
"""
import argparse
import json
import math

import torch

from cuda_timing import graph_of, median_ms

MS = (1, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192)
# (layer, N, K): output columns and reduction depth of each projection.
SHAPES = (
    ("70b-qkv", 10240, 8192),
    ("70b-o", 8192, 8192),
    ("70b-gate-up", 57344, 8192),
    ("70b-down", 8192, 28672),
    ("8b-qkv", 6144, 4096),
    ("8b-o", 4096, 4096),
    ("8b-gate-up", 28672, 4096),
    ("8b-down", 4096, 14336),
)
L2_DEFEAT_BYTES = 256 << 20  # weight copies rotated per graph: several times the L2 (50-60 MB)
TARGET_GRAPH_S = 2e-3        # products per graph: at least this long a replay


def memory_rates():
    n = (4 << 30) // 2
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    out = {}
    g = graph_of(lambda i: torch.sum(x, dtype=torch.float32), 1)
    ms = median_ms(g.replay, 10, warmups=0)
    out["read_gbps"] = x.numel() * 2 / (ms * 1e-3) / 1e9
    g = graph_of(lambda i: y.copy_(x), 1)
    ms = median_ms(g.replay, 10, warmups=0)
    out["copy_read_plus_write_gbps"] = 2 * x.numel() * 2 / (ms * 1e-3) / 1e9
    del x, y
    torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv")
    ap.add_argument("--json")
    ap.add_argument("--dtypes", default="bf16,fp8", help="any of bf16, fp16, fp8")
    ap.add_argument("--reps", type=int, default=7, help="graph replays timed per point")
    args = ap.parse_args()
    torch.manual_seed(0)
    info = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "sms": torch.cuda.get_device_properties(0).multi_processor_count}
    info.update(memory_rates())
    print(info, flush=True)
    one = torch.ones((), device="cuda")
    csv = open(args.csv, "w") if args.csv else None
    if csv:
        csv.write("dtype,layer,m,n,k,us,tflops,weight_gbps,copies,per_graph\n")
        csv.flush()
    rows = []
    for dtype in args.dtypes.split(","):
        elem = 1 if dtype == "fp8" else 2
        for layer, n, k in SHAPES:
            wbytes = n * k * elem
            copies = max(1, min(16, math.ceil(L2_DEFEAT_BYTES / wbytes)))
            if dtype == "fp8":
                bs = [torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
                      for _ in range(copies)]
            else:
                dt = torch.float16 if dtype == "fp16" else torch.bfloat16
                bs = [torch.randn(k, n, device="cuda", dtype=dt) for _ in range(copies)]
            line = []
            for m in MS:
                try:
                    if dtype == "fp8":
                        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
                        step = lambda i: torch._scaled_mm(a, bs[i % copies], scale_a=one,
                                                          scale_b=one, out_dtype=torch.bfloat16)
                    else:
                        a = torch.randn(m, k, device="cuda", dtype=bs[0].dtype)
                        step = lambda i: torch.matmul(a, bs[i % copies])
                    # One product untimed in a graph of its own, to size the graph.
                    g1 = graph_of(step, 1)
                    est_s = median_ms(g1.replay, 3, warmups=0) * 1e-3
                    del g1
                    count = max(copies, min(256, math.ceil(TARGET_GRAPH_S / max(est_s, 1e-7))))
                    count = copies * math.ceil(count / copies)
                    g = graph_of(step, count)
                    ms = median_ms(g.replay, args.reps, warmups=0) / count
                    del g
                except RuntimeError as e:
                    print(f"{dtype} {layer} m={m}: {e}".splitlines()[0], flush=True)
                    continue
                r = {"dtype": dtype, "layer": layer, "m": m, "n": n, "k": k,
                     "us": ms * 1e3, "tflops": 2.0 * m * n * k / (ms * 1e-3) / 1e12,
                     "weight_gbps": wbytes / (ms * 1e-3) / 1e9, "copies": copies,
                     "per_graph": count}
                rows.append(r)
                line.append(f"{m}:{r['us']:.1f}us/{r['tflops']:.0f}T")
                if csv:
                    csv.write(f"{dtype},{layer},{m},{n},{k},{r['us']:.3f},{r['tflops']:.1f},"
                              f"{r['weight_gbps']:.1f},{copies},{count}\n")
                    csv.flush()
                del a
            print(dtype, layer, " ".join(line), flush=True)
            del bs
            torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**info, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
