#!/bin/sh
# Renders a report in headless Chromium and checks that every plot drew.
# usage: check_report.sh TIERSIM_BINARY SOURCE_DIR
# Exit 77 (CTest SKIP_RETURN_CODE) when no Chromium is installed.
set -eu
bin=${1:?usage: check_report.sh TIERSIM_BINARY SOURCE_DIR}
src=${2:?usage: check_report.sh TIERSIM_BINARY SOURCE_DIR}

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  echo "SKIP: no chromium on PATH (apt-get install chromium) - report page not rendered"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/results.sqlite"
ref="$src/scenarios/reference"
"$bin" run "$ref/llama3-70b-a100-4x-gen4-aio.yaml" --db "$db" >/dev/null
"$bin" run "$ref/opt30b-a6000-quant-kvoffload.yaml" --db "$db" >/dev/null
"$bin" report --db "$db" --out "$work/report" >/dev/null

for f in index.html report.md metrics.csv; do
  [ -s "$work/report/$f" ] || { echo "FAIL: report/$f missing or empty"; exit 1; }
done
# Self-contained: no script or stylesheet is loaded from anywhere.
if grep -Eq '<script[^>]+src=|<link[^>]+href=' "$work/report/index.html"; then
  echo "FAIL: index.html loads external resources"; exit 1
fi

"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --virtual-time-budget=5000 \
  --dump-dom "file://$work/report/index.html" >"$work/dom.html" 2>"$work/chromium.log" || {
  echo "FAIL: chromium exited with an error:"; tail -20 "$work/chromium.log"; exit 1; }

# Four summary plots (throughput, latency, energy, cost) and one timeline per run.
expected=6
# Each rendered plot is an <svg ... class="marks"> (vega's SVG renderer) inside a container that
# vega marks role="graphics-document"; neither exists before the scripts ran.
rendered=$(grep -o '<svg[^>]*class="marks"' "$work/dom.html" | wc -l)
documents=$(grep -o '<div[^>]*role="graphics-document"' "$work/dom.html" | wc -l)
# A plot whose spec failed gets class plot-error (see reports/report.cpp).
failed=$(grep -o 'class="plot plot-error"' "$work/dom.html" | wc -l)
echo "rendered $rendered plots in $documents containers (expected $expected), $failed failed"
if [ "$failed" -ne 0 ] || [ "$rendered" -lt "$expected" ] || [ "$documents" -lt "$expected" ]; then
  echo "FAIL: plots did not render"; grep -o 'class="plot plot-error"[^<]*' "$work/dom.html" | head; exit 1
fi
# The header quotes the error of the validation group each configuration belongs to.
grep -Eq 'Model validation by the group each configuration belongs to: [^<]*([0-9]+ published measurements, mean absolute error|no published case covers it)' "$work/dom.html" ||
  { echo "FAIL: validation sentence missing from the header"; exit 1; }
echo "PASS"
