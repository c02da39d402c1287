#!/usr/bin/env python3
"""The small kernels of a decode step, timed inside CUDA graphs: their floor and their bandwidth.

Why: tiersim prices a layer's elementwise kernels (norms, residual adds, the rotary embedding,
the MLP's activation) by their bytes at the memory rate and its decode attention by the KV bytes
it reads (model/perf.cpp layer_kernel, layer_elementwise_bytes), with no floor per kernel. At a
decode batch such a kernel moves a few megabytes, which at 4 TB/s is about a microsecond: a
fixed cost per kernel would be most of it. gemm_graph_sweep.py found the GEMMs of a decode batch
about 3 us slower each than their streaming time; this probe asks the same of the other kernels.

Each point is a CUDA graph of the operation repeated on rotating inputs (larger than the L2 in
all), replayed; the time per operation is the GPU's. Operations, for M tokens of a hidden size H
(bf16): RMSNorm (torch.nn.functional.rms_norm), a residual add, SiLU(gate) * up, and the decode
attention of torch's scaled_dot_product_attention (one query per sequence, grouped query heads,
a bf16 KV cache of C positions) for batch B.

Needs PyTorch with CUDA. Not run in CI (no GPU there). Usage:
  python3 tools/gpu/decode_kernel_probe.py --csv out.csv
"""
import argparse
import math

import torch
import torch.nn.functional as F

from cuda_timing import graph_of, median_ms

L2_DEFEAT_BYTES = 256 << 20
TARGET_GRAPH_S = 2e-3


def time_op(make_inputs, op, bytes_moved, reps=7):
    """us per call of op(inputs) over rotating copies of the inputs; and GB/s of bytes_moved."""
    per_copy = max(1, bytes_moved)
    copies = max(2, min(32, math.ceil(L2_DEFEAT_BYTES / per_copy)))
    ins = [make_inputs() for _ in range(copies)]
    step = lambda i: op(*ins[i % copies])
    g1 = graph_of(step, copies)
    est = median_ms(g1.replay, 3, warmups=0) * 1e-3 / copies
    del g1
    count = copies * max(1, math.ceil(min(512, TARGET_GRAPH_S / max(est, 1e-7)) / copies))
    g = graph_of(step, count)
    us = median_ms(g.replay, reps, warmups=0) / count * 1e3
    del g, ins
    torch.cuda.empty_cache()
    return us, bytes_moved / (us * 1e-6) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv")
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    bf = torch.bfloat16
    rows = []

    def record(op, shape, us, gbps, nbytes):
        rows.append((op, shape, us, gbps, nbytes))
        print(f"{op:10s} {shape:28s} {us:8.2f} us {gbps:8.0f} GB/s {nbytes / 1e6:9.2f} MB", flush=True)

    for h, ffn in ((4096, 14336), (8192, 28672)):
        w = torch.ones(h, device=dev, dtype=bf)
        for m in (1, 8, 32, 64, 128, 192, 256, 512, 1024, 2048, 4096):
            nb = 2 * m * h * 2
            us, gbps = time_op(lambda: (torch.randn(m, h, device=dev, dtype=bf),),
                               lambda x: F.rms_norm(x, (h,), w, 1e-5), nb)
            record("rmsnorm", f"M={m} H={h}", us, gbps, nb)
            nb = 3 * m * h * 2
            us, gbps = time_op(lambda: (torch.randn(m, h, device=dev, dtype=bf),
                                        torch.randn(m, h, device=dev, dtype=bf)),
                               lambda a, b: a + b, nb)
            record("add", f"M={m} H={h}", us, gbps, nb)
            nb = 3 * m * ffn * 2
            us, gbps = time_op(lambda: (torch.randn(m, ffn, device=dev, dtype=bf),
                                        torch.randn(m, ffn, device=dev, dtype=bf)),
                               lambda g_, u: F.silu(g_) * u, nb)
            record("silu*mul", f"M={m} F={ffn} (2 kernels)", us, gbps, nb)
    # Decode attention: one query per sequence over a KV cache of C positions.
    for heads, kv_heads in ((32, 8), (64, 8)):
        for b in (1, 8, 32, 64, 128, 192, 256):
            for c in (128, 512, 1152, 2048, 4096):
                if b * c * kv_heads * 128 * 2 * 2 > (8 << 30):
                    continue
                nb = 2 * b * c * kv_heads * 128 * 2  # K and V read once
                try:
                    us, gbps = time_op(
                        lambda: (torch.randn(b, heads, 1, 128, device=dev, dtype=bf),
                                 torch.randn(b, kv_heads, c, 128, device=dev, dtype=bf),
                                 torch.randn(b, kv_heads, c, 128, device=dev, dtype=bf)),
                        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                        nb)
                except RuntimeError as e:
                    print(f"sdpa b={b} c={c}: {str(e).splitlines()[0]}", flush=True)
                    continue
                record("sdpa", f"B={b} C={c} Hq={heads} Hkv={kv_heads}", us, gbps, nb)
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("op,shape,us,gbps,bytes\n")
            for op, shape, us, gbps, nb in rows:
                f.write(f"{op},{shape},{us:.3f},{gbps:.1f},{nb}\n")


if __name__ == "__main__":
    main()
