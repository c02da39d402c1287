#!/usr/bin/env python3
"""Achievable GEMM rates on a CUDA GPU, for the GPU catalog's *_achieved_tflops fields.

Times torch.matmul in fp16 and bf16 and torch._scaled_mm in FP8 (e4m3, per-tensor scales, bf16
output) at the shapes an LLM layer has: a square reference, prefill (thousands of tokens) and
decode (one row per sequence in the batch, so weight-bandwidth-bound). Each shape is timed with
CUDA events, median of repeats after warm-ups, on random data (zeros run faster on some boards).
Prints TFLOP/s and the bytes-per-second view for the memory-bound decode shapes.

Needs PyTorch with CUDA. Not run in CI (no GPU there). Usage:
  python3 tools/gpu/gemm_probe.py [--json out.json]
"""
import argparse
import json

import torch

from cuda_timing import median_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.manual_seed(0)
    shapes = [("square", 8192, 8192, 8192),
              ("prefill-qkv-70b", 4096, 10240, 8192),
              ("prefill-down-70b", 4096, 8192, 28672),
              ("prefill-up-8b", 2048, 14336, 4096)]
    for m in (1, 16, 32, 64, 128, 256, 512):
        shapes.append((f"decode-m{m}-70b-up", m, 28672, 8192))
    results = []
    for dtype_name in ("fp16", "bf16", "fp8"):
        for name, m, n, k in shapes:
            if dtype_name == "fp8" and m % 16:
                continue  # _scaled_mm needs every dimension a multiple of 16
            if dtype_name == "fp8":
                a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
                b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
                one = torch.ones((), device="cuda")
                fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                              out_dtype=torch.bfloat16)
                elem = 1
            else:
                dt = torch.float16 if dtype_name == "fp16" else torch.bfloat16
                a = torch.randn(m, k, device="cuda", dtype=dt)
                b = torch.randn(k, n, device="cuda", dtype=dt)
                fn = lambda: torch.matmul(a, b)
                elem = 2
            try:
                ms = median_ms(fn, 20, warmups=3)
            except RuntimeError as e:  # an op the installed build lacks: say so, go on
                print(f"{dtype_name} {name}: {e}")
                continue
            tflops = 2.0 * m * n * k / (ms * 1e-3) / 1e12
            weight_gbps = n * k * elem / (ms * 1e-3) / 1e9
            results.append({"dtype": dtype_name, "shape": name, "m": m, "n": n, "k": k,
                            "ms": ms, "tflops": tflops, "weight_gbps": weight_gbps})
            print(f"{dtype_name:5s} {name:22s} m={m:5d} n={n:6d} k={k:6d} {ms:8.3f} ms "
                  f"{tflops:8.1f} TFLOP/s  weights {weight_gbps:7.0f} GB/s", flush=True)
            del a, b
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
