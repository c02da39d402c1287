#!/usr/bin/env bash
# Compares tiersim's io_uring engine with fio's on the same file, region, block size, queue depth,
# direction and buffer pages, and checks that the two agree within a two-sided tolerance: the
# bandwidth ratio tiersim / fio, and the p50 and p99 completion latency ratios. Either engine being
# much faster than the other means one of them measures something else, so "faster" fails too.
#
# usage: calibrate/bench/fio_vs_tiersim.sh DIR [TIERSIM_BINARY]
#   DIR must be an existing directory: the script writes only its own scratch file in it
#   (tiersim-fio-bench-<pid>.dat, tiersim's ownership header, removed at exit), never a device.
#   env: SIZE (default 2GiB, region measured), SECONDS_PER_RUN (default 3), WARMUP (default 1),
#        REPEATS (default 2), LAYOUTS (default "4k huge"), BW_TOL and P50_TOL (default 0.15),
#        P99_TOL (default 0.30)
#
# Each case runs REPEATS times per tool in alternating order (fio first, then tiersim first, ...),
# so a drift of the disk over the run falls on both tools alike; ratios compare the medians. When
# one tool's own runs spread by more than the tolerance, the disk is too noisy to judge the ratio:
# the case says NOISY instead of ok or OUTSIDE.
#
# Buffer pages decide how many scatter-gather segments a request needs (a 1 MiB request over 4 KiB
# pages is 256 segments, over 2 MiB pages one or two), and a queue with a small segment limit
# (virtio-blk: max_segments 254) splits 4 KiB-page requests in two. tiersim on huge pages against fio
# on 4 KiB pages came out 1.3-2.4x "faster" on such a disk for that reason alone, so each layout is
# run on both sides:
#   4k:   tiersim --buffer-pages 4k (MADV_NOHUGEPAGE); fio --iomem=malloc. Both run with transparent
#         huge pages disabled for the process (prctl PR_SET_THP_DISABLE, inherited across exec), so
#         a system with THP "always" cannot hand either side huge pages.
#   huge: tiersim --buffer-pages huge (transparent huge pages, checked in /proc/self/smaps and
#         reported as buffer_huge_fraction); fio --iomem=shmhuge (hugetlb pages, SHM_HUGETLB). Both
#         are 2 MiB physically contiguous pages. fio needs free hugetlb pages; without them the
#         layout is skipped and the script says how many to reserve (it changes no system setting).
#
# Latency: tiersim times a request from when it is queued for submission to when its completion is
# reaped; fio's total latency (lat_ns, submission + completion, --lat_percentiles=1) is the same span.
# p99 gets a wider default tolerance: it rests on the slowest 1% of a few-second run, which on a
# shared or virtual disk moves between back-to-back runs of the same tool.
#
# Exit status: 0 all within tolerance, 1 some outside, 2 cannot run, 3 a case was skipped or too
# noisy to judge (and none outside).
set -euo pipefail

dir=${1:?usage: fio_vs_tiersim.sh DIR [TIERSIM_BINARY]}
tiersim=${2:-build/app/tiersim}
size=${SIZE:-2GiB}
secs=${SECONDS_PER_RUN:-3}
warmup=${WARMUP:-1}
repeats=${REPEATS:-2}
layouts=${LAYOUTS:-4k huge}
bw_tol=${BW_TOL:-0.15}
p50_tol=${P50_TOL:-0.15}
p99_tol=${P99_TOL:-0.30}

command -v fio >/dev/null || { echo "fio is not installed" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON outputs" >&2; exit 2; }
[ -x "$tiersim" ] || { echo "no tiersim binary at $tiersim" >&2; exit 2; }
# Only ever a scratch file inside a directory: a device or an existing file is refused.
[ -d "$dir" ] || { echo "$dir is not a directory (the target must be a directory to create a scratch file in)" >&2; exit 2; }
file="$dir/tiersim-fio-bench-$$.dat"
[ ! -e "$file" ] || { echo "$file already exists; not touching it" >&2; exit 2; }
trap 'rm -f "$file"' EXIT INT TERM

# Runs a command with transparent huge pages disabled for it and its children.
no_thp() {
  python3 -c '
import ctypes, os, sys
PR_SET_THP_DISABLE = 41  # linux/prctl.h
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_THP_DISABLE) failed: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

# fio reads "1MiB" as 10^6 bytes (its kb_base quirk): hand it plain byte counts.
bytes() {
  python3 -c '
import re, sys
m = re.fullmatch(r"(\d+)\s*([kmgt]?)(i?b)?", sys.argv[1].strip().lower())
if not m: sys.exit("bad size " + sys.argv[1])
print(int(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " "))' "$1"
}

run_tiersim() {  # layout rw bs qd -> "bandwidth_gbps p50_us p99_us huge_fraction"
  local wrap=()
  [ "$1" = 4k ] && wrap=(no_thp)
  "${wrap[@]}" "$tiersim" calibrate --target "$file" --file-size "$size" --keep --point --rw "$2" --bs "$3" \
    --qd "$4" --threads 1 --seconds "$secs" --warmup "$warmup" --buffer-pages "$1" --json |
    python3 -c '
import json, sys
p = json.load(sys.stdin)
print(p["bandwidth_gbps"], p["lat_p50_us"], p["lat_p99_us"], p["buffer_huge_fraction"])'
}

run_fio() {  # layout rw bs qd -> "bandwidth_gbps p50_us p99_us"
  local wrap=() iomem=malloc
  if [ "$1" = 4k ]; then wrap=(no_thp); else iomem=shmhuge; fi
  "${wrap[@]}" fio --name=cmp --filename="$file" --offset=1048576 --size="$(bytes "$size")" --ioengine=io_uring \
    --direct=1 --fixedbufs --registerfiles --iomem="$iomem" --rw="$2" --bs="$(bytes "$3")" --iodepth="$4" \
    --numjobs=1 --time_based --runtime="$secs" --ramp_time="$warmup" --norandommap --randrepeat=0 \
    --lat_percentiles=1 --percentile_list=50:99 --output-format=json |
    python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
d = j["read"] if j["read"]["io_bytes"] > 0 else j["write"]
pct = d["lat_ns"]["percentile"]
print(d["bw_bytes"] / 1e9, pct["50.000000"] / 1e3, pct["99.000000"] / 1e3)'
}

# hugetlb pages fio's shmhuge buffer of block x depth needs (2 MiB pages, rounded up, one spare).
huge_pages_short() {  # bs qd -> pages missing (0 when enough are free)
  python3 - "$(bytes "$1")" "$2" <<'EOF'
import sys
need = -(-int(sys.argv[1]) * int(sys.argv[2]) // (2 << 20)) + 1
info = dict(l.split(":", 1) for l in open("/proc/meminfo"))
free = int(info["HugePages_Free"].split()[0]) if info["Hugepagesize"].split()[0] == "2048" else 0
print(max(0, need - free))
EOF
}

# Create the file once (random data, tiersim header) with a short tiersim run.
"$tiersim" calibrate --target "$file" --file-size "$size" --keep --point --rw read --bs 1MiB --qd 8 \
  --seconds 1 --warmup 0 --json >/dev/null

echo "tolerance: tiersim/fio within 1 +- $bw_tol (bandwidth), 1 +- $p50_tol (p50), 1 +- $p99_tol (p99);" \
  "medians of $repeats runs per tool, $secs s each after $warmup s warm-up, region $size"
echo "latency in us; huge: share of tiersim's buffers on huge pages; spread: the larger of the two tools'" \
  "own run-to-run spread, % of the median, for bandwidth/p50/p99"
printf '%-6s %-9s %-6s %-3s %8s %8s %6s %9s %9s %6s %9s %9s %6s %5s %9s  %s\n' pages rw bs qd "fio GB/s" "ts GB/s" \
  ratio "fio p50" "ts p50" ratio "fio p99" "ts p99" ratio huge spread verdict
status=0
for layout in $layouts; do
  [ "$layout" = 4k ] || [ "$layout" = huge ] || { echo "unknown layout $layout (4k or huge)" >&2; exit 2; }
  for c in "read 1MiB 32" "write 1MiB 32" "randread 4KiB 64"; do
    set -- $c
    if [ "$layout" = huge ]; then
      short=$(huge_pages_short "$2" "$3")
      if [ "$short" -gt 0 ]; then
        printf '%-6s %-9s %-6s %-3s  skipped: fio --iomem=shmhuge needs %s more free 2 MiB hugetlb pages' \
          "$layout" "$1" "$2" "$3" "$short"
        echo " (as root: echo \$((\$(cat /proc/sys/vm/nr_hugepages) + $short)) > /proc/sys/vm/nr_hugepages)"
        [ "$status" -ne 0 ] || status=3
        continue
      fi
    fi
    fio_runs=() ts_runs=()
    for ((r = 0; r < repeats; r++)); do
      if ((r % 2 == 0)); then
        fio_runs+=("$(run_fio "$layout" "$1" "$2" "$3")")
        ts_runs+=("$(run_tiersim "$layout" "$1" "$2" "$3")")
      else
        ts_runs+=("$(run_tiersim "$layout" "$1" "$2" "$3")")
        fio_runs+=("$(run_fio "$layout" "$1" "$2" "$3")")
      fi
    done
    rc=0
    python3 - "$layout" "$1" "$2" "$3" "$bw_tol" "$p50_tol" "$p99_tol" "$(printf '%s;' "${fio_runs[@]}")" \
      "$(printf '%s;' "${ts_runs[@]}")" <<'PY' || rc=$?
import statistics, sys
layout, rw, bs, qd = sys.argv[1:5]
bw_tol, p50_tol, p99_tol = map(float, sys.argv[5:8])
fio = [list(map(float, r.split())) for r in sys.argv[8].split(";") if r.strip()]
ts = [list(map(float, r.split())) for r in sys.argv[9].split(";") if r.strip()]
def med(runs, k): return statistics.median(r[k] for r in runs)
def spread(runs, k): return (max(r[k] for r in runs) - min(r[k] for r in runs)) / med(runs, k)
checks = []  # (name, ratio tiersim / fio, tolerance, the larger spread of the two tools' own runs)
for k, name, tol in [(0, "bandwidth", bw_tol), (1, "p50", p50_tol), (2, "p99", p99_tol)]:
    checks.append((name, med(ts, k) / med(fio, k), tol, max(spread(ts, k), spread(fio, k))))
off = [c for c in checks if not 1 - c[2] <= c[1] <= 1 + c[2]]
outside = [f"{n} {r:.2f}" for n, r, tol, sp in off if sp <= tol]
noisy = [f"{n} {r:.2f} (runs spread {100 * sp:.0f}%)" for n, r, tol, sp in off if sp > tol]
# The layout itself must hold: tiersim reports what the kernel gave its buffers.
huge = min(r[3] for r in ts) if layout == "huge" else max(r[3] for r in ts)
if (layout == "4k" and huge > 0) or (layout == "huge" and huge < 0.99):
    outside.append(f"tiersim buffers {100 * huge:.0f}% on huge pages")
verdict = ("OUTSIDE: " + ", ".join(outside + noisy) if outside else
           "NOISY: " + ", ".join(noisy) if noisy else "ok")
spreads = "/".join(f"{100 * c[3]:.0f}" for c in checks)
print(f"{layout:<6} {rw:<9} {bs:<6} {qd:<3} {med(fio, 0):8.3f} {med(ts, 0):8.3f} {checks[0][1]:6.2f} "
      f"{med(fio, 1):9.1f} {med(ts, 1):9.1f} {checks[1][1]:6.2f} {med(fio, 2):9.1f} {med(ts, 2):9.1f} "
      f"{checks[2][1]:6.2f} {100 * huge:4.0f}% {spreads:>9}  {verdict}")
sys.exit(1 if outside else 3 if noisy else 0)
PY
    if [ "$rc" -eq 1 ]; then status=1; elif [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=3; fi
  done
done
exit $status
