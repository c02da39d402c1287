#!/usr/bin/env bash
# One GPU machine's measurements in one go, for a session that has a GPU for a few minutes:
# FlexGen's codec (flexgen_codec_probe.py, timed and under Nsight Compute), GEMM rates
# (gemm_probe.py), host<->device copy rates (copy_bandwidth.cu), and the local disk
# (tiersim calibrate --quick, then tiersim validate --hardware on it).
# Needs a built build/app/tiersim, PyTorch with CUDA, nvcc and ncu. Results go to $OUT
# (default probe-out/). Each step has its own time limit, so one failing step does not stop the rest.
set -u
OUT=${OUT:-probe-out}
mkdir -p "$OUT"
log="$OUT/log.txt"
{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit,pcie.link.gen.max,pcie.link.width.current --format=csv
  python3 -c 'import torch; print("torch", torch.__version__)'
  nproc; free -g | head -2
  echo "== codec"; timeout 150 python3 tools/gpu/flexgen_codec_probe.py --json "$OUT/codec.json"
  echo "== gemm"; timeout 120 python3 tools/gpu/gemm_probe.py --json "$OUT/gemm.json"
} >"$log" 2>&1
echo "== ncu" >>"$log"
timeout 150 ncu --csv --clock-control none \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
  python3 tools/gpu/flexgen_codec_probe.py --ncu >"$OUT/ncu.csv" 2>>"$log"
echo "ncu rc $?" >>"$log"
{
  echo "== copy"
  nvcc -O2 -o /tmp/copy_bandwidth tools/gpu/copy_bandwidth.cu && timeout 60 /tmp/copy_bandwidth >"$OUT/copy.csv"
  echo "== disk"
  mkdir -p .calib; df -h .; lsblk 2>/dev/null; cat /sys/block/*/queue/rotational 2>/dev/null | head -3
  timeout 120 build/app/tiersim calibrate --quick --target .calib --out "$OUT/disk-profile.yaml"
  echo "calibrate rc $?"
  timeout 150 build/app/tiersim validate --hardware --target .calib --profile "$OUT/disk-profile.yaml" >"$OUT/hw.txt" 2>&1
  echo "validate rc $?"; tail -30 "$OUT/hw.txt"
  rm -rf .calib
} >>"$log" 2>&1
tail -c 9000 "$log"
