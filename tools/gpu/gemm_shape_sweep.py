#!/usr/bin/env python3
"""GEMM rate against shape on a CUDA GPU: how far a layer's GEMMs fall below the square case.

Why: tiersim prices a layer's GEMMs at one achieved rate per board and precision (the stack's
gemm_efficiency or fp8_gemm_efficiency x the dense peak, model/stack.cpp), taken from large square
products. LLM layers of a 4096-wide model multiply by K = 4096 and produce N = 4096-14336 columns;
on an H100 the 2048 x 14336 x 4096 product ran 17-20% below the 8192-cube one
(tools/gpu/h100-2026-11-26.md). This sweep times M x N x K over the ranges a transformer layer
has, in bf16 (torch.matmul; fp16 with --dtypes) and FP8 e4m3 (torch._scaled_mm, per-tensor scales, bf16 output), so
that a shape rule (waves of output tiles over the SMs, the K loop's fixed cost per tile) can be
checked against measurements of one board rather than fitted to published runs.

Each shape: CUDA-event median of 20 runs after 3 warm-ups, random data. Needs PyTorch with CUDA.
Not run in CI (no GPU there). Usage:
  python3 tools/gpu/gemm_shape_sweep.py [--json out.json] [--csv out.csv]
"""
import argparse
import json

import torch

from cuda_timing import median_ms

MS = (128, 512, 1024, 2048, 4096, 8192, 16384)
NS = (1024, 4096, 6144, 14336, 28672)
KS = (1024, 4096, 8192, 14336)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--csv")
    ap.add_argument("--dtypes", default="bf16,fp8", help="any of fp16, bf16, fp8")
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = []
    one = torch.ones((), device="cuda")
    for dtype in args.dtypes.split(","):
        for k in KS:
            for n in NS:
                if dtype == "fp8":
                    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
                else:
                    dt = torch.float16 if dtype == "fp16" else torch.bfloat16
                    b = torch.randn(k, n, device="cuda", dtype=dt)
                for m in MS:
                    if dtype == "fp8":
                        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
                        fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                      out_dtype=torch.bfloat16)
                    else:
                        a = torch.randn(m, k, device="cuda", dtype=b.dtype)
                        fn = lambda: torch.matmul(a, b)
                    try:
                        ms = median_ms(fn, 20, warmups=3)
                    except RuntimeError as e:
                        print(f"{dtype} {m}x{n}x{k}: {e}", flush=True)
                        continue
                    tflops = 2.0 * m * n * k / (ms * 1e-3) / 1e12
                    rows.append({"dtype": dtype, "m": m, "n": n, "k": k, "ms": ms,
                                 "tflops": tflops})
                    del a
                del b
            print(dtype, "k", k, " ".join(f"{r['m']}x{r['n']}:{r['tflops']:.0f}"
                                         for r in rows if r["dtype"] == dtype and r["k"] == k),
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "rows": rows}, f, indent=1)
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("dtype,m,n,k,ms,tflops\n")
            for r in rows:
                f.write(f"{r['dtype']},{r['m']},{r['n']},{r['k']},{r['ms']:.5f},{r['tflops']:.1f}\n")


if __name__ == "__main__":
    main()
