#!/usr/bin/env python3
"""GPU memory a PyTorch process holds beyond its tensors, as nvidia-smi reports it.

Why: tiersim's GPU tier (model/capacity.cpp gpu_tier) charges the driver's reserve, a CUDA context
(a base plus cudaLimitStackSize for every resident thread, ExecutionModel::cuda_context_base_bytes
in model/perf.hpp, solved from one published RTX 6000 Ada figure) and a cuBLAS workspace per
architecture. This probe measures each step on the GPU at hand, in a fresh process per mode
(CUDA_MODULE_LOADING=LAZY, PyTorch's default, and EAGER):
  context   after torch.cuda.init() and a one-element tensor
  cublas    after a first bf16 GEMM (cuBLAS handle and workspace)
  allocator what the caching allocator reserves beyond what tensors ask for, for a few sizes
"used" is nvidia-smi's per-process used memory (--query-compute-apps), which is what a capacity
check must leave room for; memory.reserved is the driver's own reserve, outside any process.

Needs PyTorch with CUDA and nvidia-smi. Not run in CI (no GPU there). Usage:
  python3 tools/gpu/context_memory_probe.py [--json out.json]
"""
import argparse
import json
import os
import subprocess
import sys

MIB = 1024 * 1024


def smi(query):
    """nvidia-smi's value of each comma-separated field, or "nan" for one it does not know."""
    vals = []
    for field in query.split(","):
        p = subprocess.run(["nvidia-smi", "--query-gpu=" + field, "--format=csv,noheader,nounits"],
                           capture_output=True, text=True)
        vals.append(p.stdout.strip().splitlines()[0].strip() if p.returncode == 0 else "nan")
    return vals


def process_used_mib():
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                          "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.strip().splitlines():
        pid, used = [x.strip() for x in line.split(",")][:2]
        if pid.isdigit() and int(pid) == os.getpid():
            return float(used)
    # Inside some containers the PID namespace hides the process: fall back to the board's
    # used memory (the probe is the only process on the GPU).
    return float(smi("memory.used")[0])


def child():
    import torch
    r = {"mode": os.environ.get("CUDA_MODULE_LOADING", "(unset)")}
    r["board_used_before_mib"] = float(sys.argv[sys.argv.index("--before") + 1])
    torch.cuda.init()
    x = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    r["context_used_mib"] = process_used_mib()
    r["context_torch_reserved_mib"] = torch.cuda.memory_reserved() / MIB
    free, total = torch.cuda.mem_get_info()
    r["mem_get_info_total_mib"] = total / MIB
    r["mem_get_info_free_mib"] = free / MIB
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    (a @ a).sum().item()
    torch.cuda.synchronize()
    r["after_gemm_used_mib"] = process_used_mib()
    r["after_gemm_torch_reserved_mib"] = torch.cuda.memory_reserved() / MIB
    b = torch.randn(8, 4096, device="cuda", dtype=torch.float16)
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    (b @ w).sum().item()
    torch.cuda.synchronize()
    r["after_fp16_gemm_used_mib"] = process_used_mib()
    r["after_fp16_gemm_torch_reserved_mib"] = torch.cuda.memory_reserved() / MIB
    del a, b, w, x
    torch.cuda.empty_cache()
    sizes = [1, 512 * 1024 + 1, 1 * MIB + 1, 10 * MIB + 1, 100 * MIB + 1, 1000 * MIB + 1]
    alloc = []
    for s in sizes:
        base = torch.cuda.memory_reserved()
        t = torch.empty(s, dtype=torch.uint8, device="cuda")
        alloc.append({"asked_bytes": s, "allocated_bytes": torch.cuda.memory_allocated(),
                      "reserved_delta_bytes": torch.cuda.memory_reserved() - base})
        del t
        torch.cuda.empty_cache()
    r["allocator"] = alloc
    props = torch.cuda.get_device_properties(0)
    r["device"] = props.name
    r["total_memory_bytes"] = props.total_memory
    r["sm_count"] = props.multi_processor_count
    r["max_threads_per_sm"] = getattr(props, "max_threads_per_multi_processor", None)
    print(json.dumps(r), flush=True)


def main():
    if "--child" in sys.argv:
        return child()
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    total, reserved, used = smi("memory.total,memory.reserved,memory.used")
    board = {"memory_total_mib": float(total), "memory_reserved_mib": float(reserved),
             "memory_used_idle_mib": float(used),
             "name": smi("name")[0], "driver": smi("driver_version")[0]}
    print(json.dumps(board), flush=True)
    runs = []
    for mode in ("LAZY", "EAGER"):
        env = dict(os.environ, CUDA_MODULE_LOADING=mode)
        p = subprocess.run([sys.executable, __file__, "--child", "--before", used], env=env,
                           capture_output=True, text=True, timeout=240)
        if p.returncode != 0:
            print(f"{mode}: FAILED rc {p.returncode}: {p.stderr[-2000:]}", flush=True)
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        runs.append(r)
        print(f"{mode}: context {r['context_used_mib']:.0f} MiB (torch reserved "
              f"{r['context_torch_reserved_mib']:.0f}); after bf16 GEMM {r['after_gemm_used_mib']:.0f}"
              f" MiB (torch reserved {r['after_gemm_torch_reserved_mib']:.0f}); after fp16 GEMM "
              f"{r['after_fp16_gemm_used_mib']:.0f} MiB; mem_get_info total "
              f"{r['mem_get_info_total_mib']:.0f} MiB", flush=True)
        for a in r["allocator"]:
            print(f"  asked {a['asked_bytes']} B -> reserved +{a['reserved_delta_bytes']} B",
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"board": board, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
