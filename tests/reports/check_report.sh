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

render() {  # render FILE.html into FILE.dom
  "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --virtual-time-budget=5000 \
    --dump-dom "file://$1" >"$1.dom" 2>"$work/chromium.log" || {
    echo "FAIL: chromium exited with an error:"; tail -20 "$work/chromium.log"; exit 1; }
}

check_plots() {  # check_plots DOM EXPECTED
  # Each rendered plot is an <svg ... class="marks"> (vega's SVG renderer) inside a container that
  # vega marks role="graphics-document"; neither exists before the scripts ran.
  rendered=$(grep -o '<svg[^>]*class="marks"' "$1" | wc -l)
  documents=$(grep -o '<div[^>]*role="graphics-document"' "$1" | wc -l)
  # A plot whose spec failed gets class plot-error (see reports/report.cpp).
  failed=$(grep -o 'class="plot plot-error"' "$1" | wc -l)
  echo "rendered $rendered plots in $documents containers (expected $2), $failed failed"
  if [ "$failed" -ne 0 ] || [ "$rendered" -lt "$2" ] || [ "$documents" -lt "$2" ]; then
    echo "FAIL: plots did not render"; grep -o 'class="plot plot-error"[^<]*' "$1" | head; exit 1
  fi
}

render "$work/report/index.html"
# Four summary plots (throughput, latency, energy, cost) and one timeline per run.
check_plots "$work/report/index.html.dom" 6
# The header quotes the error of the validation group each configuration belongs to.
grep -Eq 'Model validation by the group each configuration belongs to: [^<]*([0-9]+ published measurements, mean absolute error|no published case covers it)' "$work/report/index.html.dom" ||
  { echo "FAIL: validation sentence missing from the header"; exit 1; }

# Serving: the runs of a capacity search give the latency-vs-load and latency-distribution charts
# (inline SVG): four charts, each line drawn through at least two points.
"$bin" capacity "$src/scenarios/serving/opt30b-chatbot-6xl40s.yaml" --db "$work/serving.sqlite" -q >/dev/null
"$bin" report --db "$work/serving.sqlite" --out "$work/serving-report" --no-validation >/dev/null
render "$work/serving-report/index.html"
sdom="$work/serving-report/index.html.dom"
charts=$(grep -o '<svg class="serving-chart"' "$sdom" | wc -l)
lines=$(grep -Eo '<polyline class="series"[^>]*points="[0-9.]+,[0-9.]+ [0-9.]+,[0-9.]+' "$sdom" | wc -l)
echo "serving: $charts charts, $lines lines"
if [ "$charts" -ne 4 ] || [ "$lines" -lt 6 ]; then
  echo "FAIL: serving charts missing (expected 4 charts and 6 lines)"; exit 1
fi

# Scenario names that try to break out of HTML, attributes and the inlined JSON
# (tests/reports/payload_names.txt, one YAML scalar per line): the page still draws every plot and
# runs none of their markup or script (two of them would mark <html data-pwned=...>).
grep -v '^#' "$src/tests/reports/payload_names.txt" >"$work/payloads"
n=0
files=""
while IFS= read -r line; do
  n=$((n + 1))
  NAME_LINE="name: $line" awk '!done && /^name: / { print ENVIRON["NAME_LINE"]; done = 1; next } { print }' \
    "$ref/opt30b-a6000-quant-kvoffload.yaml" >"$work/p$n.yaml"
  files="$files $work/p$n.yaml"
done <"$work/payloads"
# shellcheck disable=SC2086  # one word per file; mktemp paths have no spaces
"$bin" compare $files --db "$work/payloads.sqlite" >/dev/null
"$bin" report --db "$work/payloads.sqlite" --out "$work/payload-report" --no-validation >/dev/null
render "$work/payload-report/index.html"
dom="$work/payload-report/index.html.dom"
check_plots "$dom" $((4 + n))
if grep -q 'data-pwned=' "$dom"; then
  echo "FAIL: a payload name ran as script"; grep -o '<html[^>]*>' "$dom"; exit 1
fi
if grep -Eq '<img[^>]*src="x"|<svg[^>]*onload' "$dom"; then
  echo "FAIL: a payload name became markup"; exit 1
fi
echo "PASS"
