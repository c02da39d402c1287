#!/usr/bin/env bash
# Compares tiersim's io_uring engine with fio's on the same file, block size, queue depth and
# direction, and prints the ratio. Targets: >= 95% of fio's bandwidth on 1 MiB sequential reads
# and writes at QD 32, >= 90% of fio's IOPS on 4 KiB random reads at QD 64.
#
# usage: calibrate/bench/fio_vs_tiersim.sh DIR [TIERSIM_BINARY]
#   env: SIZE (default 4GiB, region measured), SECONDS_PER_RUN (default 10), WARMUP (default 1)
#
# tiersim creates the file (with its ownership header, kept with --keep) and measures the region
# after its first MiB; fio is pointed at exactly that region (--offset 1048576 --size SIZE, in bytes). Both use
# O_DIRECT, so the page cache is out of the picture on both sides.
set -euo pipefail

dir=${1:?usage: fio_vs_tiersim.sh DIR [TIERSIM_BINARY]}
tiersim=${2:-build/app/tiersim}
size=${SIZE:-4GiB}
secs=${SECONDS_PER_RUN:-10}
warmup=${WARMUP:-1}
file="$dir/tiersim-fio-bench-$$.dat"

command -v fio >/dev/null || { echo "fio is not installed" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read fio's JSON" >&2; exit 2; }
[ -x "$tiersim" ] || { echo "no tiersim binary at $tiersim" >&2; exit 2; }
trap 'rm -f "$file"' EXIT INT TERM

run_tiersim() {  # rw bs qd -> "bandwidth_gbps iops"
  "$tiersim" calibrate --target "$file" --file-size "$size" --keep --point --rw "$1" --bs "$2" --qd "$3" \
    --threads 1 --seconds "$secs" --warmup "$warmup" --json |
    python3 -c 'import json,sys; p=json.load(sys.stdin); print(p["bandwidth_gbps"], p["iops"])'
}

# fio reads "1MiB" as 10^6 bytes (its kb_base quirk): hand it plain byte counts.
bytes() {
  python3 -c '
import re, sys
m = re.fullmatch(r"(\d+)\s*([kmgt]?)(i?b)?", sys.argv[1].strip().lower())
if not m: sys.exit("bad size " + sys.argv[1])
print(int(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " "))' "$1"
}

run_fio() {  # rw bs qd -> "bandwidth_gbps iops"
  fio --name=cmp --filename="$file" --offset=1048576 --size="$(bytes "$size")" --ioengine=io_uring --direct=1 \
    --fixedbufs --registerfiles --rw="$1" --bs="$(bytes "$2")" --iodepth="$3" --numjobs=1 --time_based \
    --runtime="$secs" --ramp_time="$warmup" --norandommap --randrepeat=0 --output-format=json |
    python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
d = j["read"] if j["read"]["io_bytes"] > 0 else j["write"]
print(d["bw_bytes"] / 1e9, d["iops"])'
}

# Create the file once (random data, tiersim header) with a short tiersim run.
"$tiersim" calibrate --target "$file" --file-size "$size" --keep --point --rw read --bs 1MiB --qd 8 \
  --seconds 1 --warmup 0 --json >/dev/null

printf '%-10s %-6s %-4s %14s %14s %14s %14s %8s %8s\n' rw bs qd "fio GB/s" "tiersim GB/s" "fio IOPS" \
  "tiersim IOPS" ratio target
status=0
for c in "read 1MiB 32 0.95" "write 1MiB 32 0.95" "randread 4KiB 64 0.90"; do
  set -- $c
  read -r fbw fiops < <(run_fio "$1" "$2" "$3")
  read -r tbw tiops < <(run_tiersim "$1" "$2" "$3")
  ratio=$(python3 -c "print(f'{$tbw / $fbw:.3f}')")
  ok=$(python3 -c "print('ok' if $tbw / $fbw >= $4 else 'LOW')")
  [ "$ok" = ok ] || status=1
  printf '%-10s %-6s %-4s %14.3f %14.3f %14.0f %14.0f %8s %5s %s\n' "$1" "$2" "$3" "$fbw" "$tbw" "$fiops" "$tiops" \
    "$ratio" "$4" "$ok"
done
exit $status
