#!/usr/bin/env bash
# Fixed costs of a PyTorch process on one GPU machine, in one go: the GPU memory a process holds
# beyond its tensors (context_memory_probe.py), eager Hugging Face dispatch per op, layer and step
# and full-size models resident on the GPU (eager_overhead_probe.py), and the host's fresh-page
# rates (tools/host/fresh_pages.cpp). Needs PyTorch with CUDA, transformers, nvidia-smi and g++.
# Results go to $OUT (default probe-out/). Each step has its own time limit.
set -u
OUT=${OUT:-probe-out}
mkdir -p "$OUT"
log="$OUT/log.txt"
{
  date -u; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)|Hypervisor|MHz" ; free -g | head -2; uname -r
  python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
  echo "== context"; timeout 120 python3 tools/gpu/context_memory_probe.py --json "$OUT/context.json"
  echo "== fresh pages"
  g++ -O2 -o /tmp/fresh_pages tools/host/fresh_pages.cpp && timeout 60 /tmp/fresh_pages
  echo "== eager"; PYTHONUNBUFFERED=1 timeout 270 python3 tools/gpu/eager_overhead_probe.py --json "$OUT/eager.json"
  echo "eager rc $?"
} >"$log" 2>&1
tail -c 11000 "$log"
