#!/usr/bin/env python3
"""Times FlexGen's 4-bit group-wise codec and the kernels around it on a CUDA GPU.

Why: tiersim prices FlexGen's decompression (model/perf.hpp, flexgen_decompress_bytes_per_elem)
as a count of memory passes at the board's streaming rate. This probe measures what the same
sequence of PyTorch operations costs on a real GPU, so that the count can be checked kernel by
kernel: each phase is timed with CUDA events (median of repeats), and in --ncu mode each phase runs
once, separated by spin kernels, so that Nsight Compute's per-kernel DRAM bytes can be read off.

The operation sequence follows flexgen/compression.py (FMInference/FlexiGen,
TorchCompressedDevice.compress and .decompress): num_bits 4, group_size 64, asymmetric; weights
grouped along dim 0, the KV cache along dim 2 (head_dim). It is written out here op by op, in the
same order, because the order and the temporaries are what is being measured.

Needs PyTorch with CUDA. Not run in CI (no GPU there). Usage:
  python3 tools/gpu/flexgen_codec_probe.py [--json out.json]
  ncu --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      python3 tools/gpu/flexgen_codec_probe.py --ncu
"""
import argparse
import json

import torch

from cuda_timing import median_ms

GROUP = 64  # flexgen/flex_opt.py: CompressionConfig(num_bits=4, group_size=64, ...)


def compress(t, group_dim):
    """The op sequence of TorchCompressedDevice.compress for a CUDA fp16 tensor."""
    shape = t.shape
    num_groups = (shape[group_dim] + GROUP - 1) // GROUP
    assert shape[group_dim] % GROUP == 0  # the shapes probed need no padding
    data = t.view(shape[:group_dim] + (num_groups, GROUP) + shape[group_dim + 1:])
    mn = torch.min(data, dim=group_dim + 1, keepdim=True)[0]
    mx = torch.max(data, dim=group_dim + 1, keepdim=True)[0]
    scale = 15 / (mx - mn)
    data = data - mn
    data.mul_(scale)
    data = data.clamp_(0, 15).round_().to(torch.uint8)
    lead = tuple(slice(0, x) for x in data.shape[:group_dim + 1])
    left = lead + (slice(0, data.shape[group_dim + 1], 2),)
    right = lead + (slice(1, data.shape[group_dim + 1], 2),)
    data = torch.bitwise_or(data[left].bitwise_left_shift(4), data[right])
    data = data.view(shape[:group_dim] + (num_groups * (GROUP // 2),) + shape[group_dim + 1:])
    scale = torch.cat([scale, mn], dim=group_dim + 1).view(
        shape[:group_dim] + (num_groups, 2) + shape[group_dim + 1:])
    return data, scale, shape


def decompress(packed_all, group_dim):
    """The op sequence of TorchCompressedDevice.decompress on a GPU base device."""
    data, scale, orig_shape = packed_all
    gc = GROUP // 2
    shape = data.shape
    num_groups = shape[group_dim] // gc
    packed = data.view(shape[:group_dim] + (num_groups, gc) + shape[group_dim + 1:])
    out = torch.empty(shape[:group_dim] + (num_groups, GROUP) + shape[group_dim + 1:],
                      dtype=torch.float16, device=data.device)
    lead = tuple(slice(0, x) for x in out.shape[:group_dim + 1])
    left = lead + (slice(0, out.shape[group_dim + 1], 2),)
    right = lead + (slice(1, out.shape[group_dim + 1], 2),)
    out[left] = packed.bitwise_right_shift(4)
    out[right] = packed.bitwise_and(0xF)
    sc, mn = scale.split(1, dim=group_dim + 1)
    out.div_(sc)
    out.add_(mn)
    return out.view(orig_shape)


def phases():
    """(name, elements, builder) per probed case; builder returns a zero-argument callable."""
    dev = "cuda"
    out = []

    def weight_case(rows, cols):
        w = torch.randn(rows, cols, dtype=torch.float16, device=dev)
        packed = compress(w, 0)
        del w
        return lambda: decompress(packed, 0)

    def cache_dec_case(s, bn, hd):
        k = torch.randn(s, bn, hd, dtype=torch.float16, device=dev)
        packed = compress(k, 2)
        del k
        return lambda: decompress(packed, 2)

    def cache_comp_case(s, bn, hd):
        k = torch.randn(s, bn, hd, dtype=torch.float16, device=dev)
        return lambda: compress(k, 2)

    def copy_case(n):
        a = torch.randn(n, dtype=torch.float16, device=dev)
        b = torch.empty_like(a)
        return lambda: b.copy_(a)

    def add_case(n):
        a = torch.randn(n, dtype=torch.float16, device=dev)
        return lambda: a.add_(1.0)

    def attn_case(s, bn, hd):
        # mha_gen's GPU path (flexgen/pytorch_backend.py): q (b*n_head, 1, head_dim) against the
        # cache (s, b*n_head, head_dim) permuted to (b*n_head, head_dim, s) as a view.
        k = torch.randn(s, bn, hd, dtype=torch.float16, device=dev)
        q = torch.randn(bn, 1, hd, dtype=torch.float16, device=dev)
        kt = k.permute(1, 2, 0)
        return lambda: torch.bmm(q, kt)

    # OPT-175B: hidden 12288, 96 heads x 128; FlexGen T4 175B batch 48 (x 3), prompt 512 + 32 - 1.
    out.append(("copy_fp16", 512 << 20, lambda: copy_case(512 << 20)))
    out.append(("add_fp16", 512 << 20, lambda: add_case(512 << 20)))
    out.append(("wdec_175b_wq", 12288 * 12288, lambda: weight_case(12288, 12288)))
    out.append(("wdec_175b_wi", 4 * 12288 * 12288, lambda: weight_case(4 * 12288, 12288)))
    out.append(("wdec_30b_wq", 7168 * 7168, lambda: weight_case(7168, 7168)))
    out.append(("cdec_175b_b48", 543 * 48 * 96 * 128, lambda: cache_dec_case(543, 48 * 96, 128)))
    out.append(("cdec_30b_b48", 543 * 48 * 56 * 128, lambda: cache_dec_case(543, 48 * 56, 128)))
    out.append(("ccomp_175b_prefill_b48", 512 * 48 * 96 * 128,
                lambda: cache_comp_case(512, 48 * 96, 128)))
    out.append(("ccomp_175b_token_b48", 1 * 48 * 96 * 128,
                lambda: cache_comp_case(1, 48 * 96, 128)))
    out.append(("attn_bmm_175b_b48", 543 * 48 * 96 * 128, lambda: attn_case(543, 48 * 96, 128)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncu", action="store_true", help="one run per phase, spin kernels between")
    ap.add_argument("--json", help="write results here")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    torch.manual_seed(0)
    results = []
    for name, elements, build in phases():
        fn = build()
        torch.cuda.synchronize()
        if args.ncu:
            torch.cuda._sleep(1000)  # separator kernel in the profile
            print(f"phase {name}", flush=True)
            fn()
            torch.cuda._sleep(1000)
            torch.cuda.synchronize()
        else:
            ms = median_ms(fn, args.reps, warmups=2)
            results.append({"phase": name, "elements": elements, "ms": ms,
                            "ns_per_elem": ms * 1e6 / elements})
            print(f"{name:26s} {elements:>12d} elem  {ms:9.3f} ms  {ms * 1e6 / elements:8.4f} ns/elem",
                  flush=True)
        del fn
        torch.cuda.empty_cache()
    if args.json and results:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
