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
# Under the sanitizers (below) this report validates against a data folder holding the shipped
# catalog and groups and just the two reference scenarios it runs: AddressSanitizer still sees the
# report's validation code, and the golden test validates every reference row in that build.
validation_data=""
if [ "${TIERSIM_SANITIZED:-0}" = 1 ]; then
  mkdir -p "$work/data/validation" "$work/data/reference"
  cp -r "$src/scenarios/catalog" "$work/data/"
  cp "$src/scenarios/validation/groups.yaml" "$work/data/validation/"
  echo "derived_constants: []" >"$work/data/validation/derivations.yaml"
  cp "$ref/llama3-70b-a100-4x-gen4-aio.yaml" "$ref/opt30b-a6000-quant-kvoffload.yaml" "$work/data/reference/"
  validation_data="--data-dir $work/data"
fi
# shellcheck disable=SC2086
"$bin" report --db "$db" --out "$work/report" $validation_data >/dev/null

for f in index.html report.md metrics.csv; do
  [ -s "$work/report/$f" ] || { echo "FAIL: report/$f missing or empty"; exit 1; }
done
# Self-contained: no script or stylesheet is loaded from anywhere.
if grep -Eq '<script[^>]+src=|<link[^>]+href=' "$work/report/index.html"; then
  echo "FAIL: index.html loads external resources"; exit 1
fi

# Under the sanitizers (TIERSIM_SANITIZED=1, set by CTest in that build) every tiersim command
# still runs, so AddressSanitizer sees the report code, but the browser does not: what it checks
# does not depend on how tiersim was compiled, the Release run of this test renders the same pages,
# and four renders took about two minutes of the sanitizer suite. The checks then read the HTML as
# written; only the plots drawn by script are not counted (check_plots).
sanitized=${TIERSIM_SANITIZED:-0}

render() {  # render FILE.html into FILE.dom
  if [ "$sanitized" = 1 ]; then cp "$1" "$1.dom"; return; fi
  "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --virtual-time-budget=5000 --window-size=1280,900 \
    --dump-dom "file://$1" >"$1.dom" 2>"$work/chromium.log" || {
    echo "FAIL: chromium exited with an error:"; tail -20 "$work/chromium.log"; exit 1; }
}

check_plots() {  # check_plots DOM EXPECTED
  if [ "$sanitized" = 1 ]; then
    charts=$(grep -o '<div class="plot" id="plot[0-9]*">' "${1%.dom}" | wc -l)
    echo "page has $charts plots (expected at least $2; not rendered in the sanitizer build)"
    [ "$charts" -ge "$2" ] || { echo "FAIL: plots missing"; exit 1; }
    return
  fi
  # Each rendered plot is an <svg ... class="marks"> (vega's SVG renderer) inside a container that
  # vega marks role="graphics-document"; neither exists before the scripts ran.
  rendered=$(grep -o '<svg[^>]*class="marks"' "$1" | wc -l)
  documents=$(grep -o '<div[^>]*role="graphics-document"' "$1" | wc -l)
  # A plot whose spec failed gets class plot-error (see reports/report.cpp).
  failed=$(grep -o 'class="plot plot-error"' "$1" | wc -l)
  # Every chart the page holds (one <div class="plot"> each in the HTML as written) must draw.
  charts=$(grep -o '<div class="plot" id="plot[0-9]*">' "${1%.dom}" | wc -l)
  echo "rendered $rendered plots in $documents containers (page has $charts, expected at least $2), $failed failed"
  if [ "$failed" -ne 0 ] || [ "$rendered" -lt "$2" ] || [ "$documents" -lt "$2" ] ||
     [ "$rendered" -ne "$charts" ] || [ "$documents" -ne "$charts" ]; then
    echo "FAIL: plots did not render"; grep -o 'class="plot plot-error"[^<]*' "$1" | head; exit 1
  fi
}

check_winner() {  # check_winner DOM: the decision summary names one of the configurations
  winner=$(grep -o 'class="recommendation">Recommendation: [^<]* has the' "$1" |
    sed 's/.*Recommendation: //; s/ has the$//')
  if [ -z "$winner" ] || ! grep -qF "<li><b>$winner</b>" "$1"; then
    echo "FAIL: the decision summary names no configuration as the winner"
    grep -o 'class="recommendation">[^<]*' "$1" | head -3; exit 1
  fi
  echo "winner: $winner"
}

render "$work/report/index.html"
# Four summary plots (throughput, latency, energy, cost), the time breakdown and one timeline per
# run.
check_plots "$work/report/index.html.dom" 7
check_winner "$work/report/index.html.dom"

# The default report (scripts/demo.sh, README's first command): the recommendation, the headline
# chart with error bands and the two tornado charts, besides the plots above.
"$bin" compare "$src/scenarios/cost/opt30b-l40s.yaml" --db "$work/demo.sqlite" >/dev/null
# Under the sanitizers this report skips the validation: the first report above validates every
# reference scenario under them already (about 35 s of CPU there, a second time for nothing), and
# the Release run checks this report's bands.
demo_validation=
[ "$sanitized" = 1 ] && demo_validation=--no-validation
"$bin" report --db "$work/demo.sqlite" --out "$work/demo" $demo_validation >/dev/null
# Rendered from a copy with a probe script at its end, which records after layout how far the
# comparison table reaches past a 1280-pixel screen (render() draws at 1280 x 900): the five
# configurations must all be in view, none scrolled sideways out of it.
sed 's#^</body></html>$#<script>var w=document.querySelector(".tablewrap");document.documentElement.setAttribute("data-table-overflow",String(w.scrollWidth-w.clientWidth));</script></body></html>#' \
  "$work/demo/index.html" >"$work/demo/probe.html"
render "$work/demo/probe.html"
ddom="$work/demo/probe.html.dom"
# 4 summary plots + 3 timelines (the configuration that does not fit has none) + the headline
# chart + 2 tornadoes + the 2 cost charts + the time breakdown; check_plots also requires every
# chart on the page to draw.
check_plots "$ddom" 13
check_winner "$ddom"
# The runs are labelled by the compare file's variant names (stored in runs.variant), not by
# their scenario names: every variant heads a column of the comparison table.
variants=$(sed -n 's/^    - name: *//p' "$src/scenarios/cost/opt30b-l40s.yaml")
[ -n "$variants" ] || { echo "FAIL: no variant names found in scenarios/cost/opt30b-l40s.yaml"; exit 1; }
for v in $variants; do
  grep -qF "<th>$v</th>" "$ddom" ||
    { echo "FAIL: variant $v labels no column of the comparison table"; exit 1; }
done
echo "variants labelled: $(echo $variants)"
[ "$(grep -o '"title":"Sensitivity of ' "$work/demo/index.html" | wc -l)" -eq 2 ] ||
  { echo "FAIL: the default report lacks its two tornado charts"; exit 1; }
# Cost charts (Vega-Lite, reports/cost_charts.cpp; check_plots above saw every chart draw): capex
# by component for each configuration with prices, and throughput vs cost per million tokens with
# the Pareto front. Four of the five variants fit and have every price (6x-l40s-1mb does not fit:
# no breakdown, no point). The counts are read from the specs inlined in the page.
dh="$work/demo/index.html"
cost_charts=$(grep -Eo '"title":"(Capex by component \(USD\)|Throughput vs cost per million tokens \(log scales\))"' "$dh" | wc -l)
bars=$(grep -o '"total":"[^"]*"' "$dh" | sort -u | wc -l)
segments=$(grep -o '"part_order":' "$dh" | wc -l)
points=$(grep -o '"front_order":' "$dh" | wc -l)
front=$(grep -o '"front":"Pareto front"' "$dh" | wc -l)
echo "cost: $cost_charts charts, $segments capex segments of about $bars bars, $points points, $front on the front"
if [ "$cost_charts" -ne 2 ] || [ "$segments" -lt 12 ] || [ "$points" -ne 4 ] || [ "$front" -lt 1 ]; then
  echo "FAIL: cost charts missing (expected 2 charts, 12+ capex segments, 4 points, a front)"
  exit 1
fi
if [ "$sanitized" != 1 ]; then
  overflow=$(sed -n 's/.*data-table-overflow="\(-\{0,1\}[0-9]*\)".*/\1/p' "$ddom" | head -1)
  echo "comparison table at 1280 px: ${overflow:-?} px past the screen"
  if [ -z "$overflow" ] || [ "$overflow" -gt 0 ]; then
    echo "FAIL: the comparison table does not fit a 1280 px screen"; exit 1
  fi
fi
# Where the time goes (reports/breakdown_section.cpp): one stacked bar of phases per configuration
# that fits (drawn: check_plots above), its table in the page and in report.md, each phase
# labelled for people ("prefill: ...", "decode: ..."), and every fitting variant in the chart.
[ "$(grep -o '"title":"Where the time goes: wall time on the critical path by phase"' "$dh" | wc -l)" -eq 1 ] ||
  { echo "FAIL: the demo report has no time-breakdown chart"; exit 1; }
grep -q '<h2 id="time-breakdown">Where the time goes</h2>' "$ddom" ||
  { echo "FAIL: the demo report has no time-breakdown section"; exit 1; }
phase_rows=$(grep -Eo '<tr><td class="name">(prefill|decode): [^<]*</td>' "$ddom" | wc -l)
phase_bars=$(grep -Eo '"phase":"(prefill|decode): [^"]*","run":"[^"]*","seconds":' "$dh" | wc -l)
echo "time breakdown: $phase_rows table rows, $phase_bars bar segments"
if [ "$phase_rows" -lt 3 ] || [ "$phase_bars" -lt 8 ]; then
  echo "FAIL: time breakdown missing phases (expected 3+ rows and 8+ segments over 4 configurations)"
  exit 1
fi
for v in $variants; do
  [ "$v" = 6x-l40s-1mb ] && continue  # does not fit: no phases
  grep -qE "\"phase\":\"[^\"]*\",\"run\":\"$v\",\"seconds\":" "$dh" ||
    { echo "FAIL: variant $v has no bar in the time breakdown"; exit 1; }
done
grep -q '^## Where the time goes' "$work/demo/report.md" ||
  { echo "FAIL: report.md has no time-breakdown section"; exit 1; }
if [ "$sanitized" != 1 ]; then
  grep -q 'out-of-sample validation error of group' "$ddom" ||
    { echo "FAIL: the recommendation quotes no out-of-sample error band"; exit 1; }
fi
# The header quotes the error of the validation group each configuration belongs to, out of
# sample (leave-one-source-out), and says that the bands use that figure.
grep -Eq 'Model validation by the group each configuration belongs to \(error bands use the out-of-sample, leave-one-source-out error\): [^<]*(out-of-sample mean absolute error [0-9.]+% over [0-9]+ published measurements|no out-of-sample measurement|no published case covers it)' "$work/report/index.html.dom" ||
  { echo "FAIL: validation sentence missing from the header"; exit 1; }

# Serving: a capacity comparison of the three OPT-30B chatbot servers (scenarios/serving/
# opt30b-chatbot-*.yaml), every rate each search tries stored. The report must show one entry per
# configuration (not one per load point), the latency targets as lines on the charts against
# load, why a configuration sustains no rate, and the summary in words for both uses; the four
# serving charts (Vega-Lite) all drawn, with p50 and p99 lines over several rates.
configs=0
for f in "$src"/scenarios/serving/opt30b-chatbot-*.yaml; do
  "$bin" capacity "$f" --db "$work/serving.sqlite" -q >/dev/null
  configs=$((configs + 1))
done
[ "$configs" -eq 3 ] || { echo "FAIL: expected 3 OPT-30B chatbot scenarios, found $configs"; exit 1; }
"$bin" report --db "$work/serving.sqlite" --out "$work/serving-report" --no-validation >/dev/null
render "$work/serving-report/index.html"
sdom="$work/serving-report/index.html.dom"
check_plots "$sdom" 4
sh="$work/serving-report/index.html"
charts=$(grep -Eo '"title":"(Time to first token vs load|Time per output token vs load|TTFT distribution|TPOT distribution)"' "$sh" | wc -l)
p50=$(grep -o '"dash":"p50"' "$sh" | wc -l)
p99=$(grep -o '"dash":"p99"' "$sh" | wc -l)
echo "serving: $charts charts, $p50 p50 and $p99 p99 points"
if [ "$charts" -ne 4 ] || [ "$p50" -lt 4 ] || [ "$p99" -lt 4 ]; then
  echo "FAIL: serving charts missing (expected 4 charts and p50/p99 lines of 2+ points each)"; exit 1
fi
entries() {  # entries DOM: the configurations listed in the decision summary, one per line
  sed -n 's/.*<ul class="configurations">\(.*\)/\1/p' "$1" | sed 's#</ul>.*##' |
    grep -o '<li><b>[^<]*</b>' | sed 's#<li><b>##; s#</b>##'
}
listed=$(entries "$sdom" | wc -l)
columns=$(sed -n '/<h2>Comparison<\/h2>/,/<\/thead>/p' "$sdom" | grep -o '<th>[^<]*</th>' | wc -l)
echo "serving: $listed configurations listed, $columns columns in the comparison table"
if [ "$listed" -ne 3 ] || [ "$columns" -ne 3 ]; then
  echo "FAIL: expected one entry per configuration (3), not one per load point"; entries "$sdom"; exit 1
fi
# The SLO: a rule layer on both charts against load (TTFT 2 s, TPOT 0.2 s), drawn by vega (its
# marks carry the layer's name).
rules=$(grep -o '"name":"slo_target"' "$sh" | wc -l)
drawn=$(grep -o 'class="mark-rule role-mark slo_target_marks"' "$sdom" | wc -l)
echo "serving: $rules SLO rule layers in the specs, $drawn drawn"
if [ "$rules" -ne 2 ] || { [ "$sanitized" != 1 ] && [ "$drawn" -ne 2 ]; }; then
  echo "FAIL: the charts against load draw no SLO line"; exit 1
fi
grep -q '"what":"TTFT target 2 s"' "$sh" && grep -q '"what":"TPOT target 0.2 s"' "$sh" ||
  { echo "FAIL: the SLO lines are not at the scenarios' targets (TTFT 2 s, TPOT 200 ms)"; exit 1; }
# The two one-GPU servers miss the TTFT target with no queue at all: said in words, with the
# zero-load figure, instead of a rate found after 21 halvings.
reasons=$(grep -o 'cannot meet the SLO at any load, because zero-load TTFT p90 [0-9.]* s &gt; 2 s target' "$sdom" | sort -u | wc -l)
echo "serving: $reasons configurations with a stated reason for sustaining no rate"
[ "$reasons" -eq 2 ] || { echo "FAIL: expected the reason for each of the 2 failing servers"; exit 1; }
grep -q '<h3>Offline use: cost per token, throughput, energy</h3>' "$sdom" &&
  grep -q '<h3>Interactive use: requests within the SLO</h3>' "$sdom" &&
  grep -Eq '<li>opt30b-chatbot-6xl40s has the highest sustained rate within the SLO, [0-9.]+ requests/s \((\+-[0-9.]+ %|no error band|unvalidated)\)' "$sdom" ||
  { echo "FAIL: the summary in words for offline and interactive use is missing"; exit 1; }

# KV cache tiers (reports/serving_charts.cpp, tier_size_chart_parts): the shipped sweep of the
# Llama-3-70B multi-turn chatbot over the DRAM and the NVMe tier's size at one rate (11 points,
# about 2 s in Release). The report draws hit rate and TTFT against each tier's size, every point
# of each curve in its chart, and the curves rise (hit rate) or fall (TTFT p99) with the size.
# Under the sanitizers the sweep is left out (11 runs of 6,000 multi-turn requests, about 13 s of
# CPU there; CI must stay under 12 minutes): its report code runs under them in the unit tests
# (tests/reports/serving_charts_test.cpp), and the Release run checks the curves.
if [ "$sanitized" != 1 ]; then
  "$bin" sweep "$src/scenarios/sweeps/llama3-70b-multiturn-kv-tiers.yaml" --db "$work/tiers.sqlite" -q -j 2 >/dev/null
  "$bin" report --db "$work/tiers.sqlite" --out "$work/tiers-report" --no-validation --no-sensitivity >/dev/null
  render "$work/tiers-report/index.html"
  tdom="$work/tiers-report/index.html.dom"
  th="$work/tiers-report/index.html"
  check_plots "$tdom" 4
  grep -q '<h2 id="kv-tiers">KV cache tiers</h2>' "$tdom" ||
    { echo "FAIL: the KV tier report has no KV cache tiers section"; exit 1; }
  tier_charts=$(grep -Eo '"title":"(KV prefix hit rate|Time to first token) vs (DRAM|NVMe) tier size"' "$th" | sort -u | wc -l)
  # Points of the hit-rate curves: the DRAM curve's 7 sizes (none to 512 GB) and the NVMe curve's 5
  # (none to 10 TB under the 128 GB DRAM tier), one "any tier" row each.
  any_points=$(grep -o '"dash":"any tier"' "$th" | wc -l)
  echo "kv tiers: $tier_charts tier-size charts, $any_points hit-rate points"
  if [ "$tier_charts" -ne 4 ] || [ "$any_points" -ne 12 ]; then
    echo "FAIL: expected 4 tier-size charts and 12 hit-rate points (7 DRAM sizes, 5 NVMe sizes)"; exit 1
  fi
  # The hit rate at the largest DRAM tier is above that with none (read from the inlined data).
  hits=$(grep -o '"config":"[^"]*","dash":"any tier","series":"[^"]*","x":[0-9.e+]*,"y":[0-9.e+]*' "$th" |
    grep -v 'DRAM tier 128' | grep -v 'NVMe tier' | sed 's/.*"y"://')
  first=$(echo "$hits" | head -1)
  last=$(echo "$hits" | tail -1)
  echo "kv tiers: DRAM curve hit rate $first% with no DRAM tier, $last% at 512 GB"
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b > a) }' ||
    { echo "FAIL: the hit rate does not rise with the DRAM tier"; exit 1; }
else
  echo "kv tiers: left out under the sanitizers"
fi

# A plan report: the points are labelled by what varies among them (not by the base file's name),
# and each rejected configuration says why. A small plan over the shipped OPT-66B base (18 points,
# a fraction of a second, also under the sanitizers): one GPU cannot hold the weights (memory),
# the H200s are over the budget (budget), the rest simulated, the Pareto front drawn.
abs_src=$(cd "$src" && pwd)
cat >"$work/plan.yaml" <<EOF
name: report-check
base: $abs_src/scenarios/plans/opt66b-base.yaml
set: {workload.gen_tokens: 4, workload.batch: 8}
grid:
  hardware.gpu.model: [RTX-A6000, A100-80GB, H200]
  policy.weights: [gpu, cpu, nvme]
  hardware.nvme.count: [1, 2]
constraints:
  capex_usd: {max: 50000}
  throughput_tokens_per_s: {min: 0.5}
objective: {minimize: usd_per_million_tokens}
pareto: [throughput_tokens_per_s, usd_per_million_tokens]
EOF
"$bin" plan "$work/plan.yaml" --db "$work/plan.sqlite" --out "$work/plan-out" -j 2 >/dev/null
"$bin" report --db "$work/plan.sqlite" --out "$work/plan-report" --no-validation --no-sensitivity >/dev/null
render "$work/plan-report/index.html"
pdom="$work/plan-report/index.html.dom"
check_plots "$pdom" 6
if entries "$pdom" | grep -q 'opt66b-base'; then
  echo "FAIL: plan configurations labelled by the base file's name"; entries "$pdom" | head -3; exit 1
fi
entries "$pdom" | head -1 | grep -Eq '^gpu\.model=[^,]+, weights=[a-z]+, nvme\.count=[0-9]$' ||
  { echo "FAIL: plan configurations not labelled by their axis values"; entries "$pdom" | head -3; exit 1; }
for kind in memory budget; do
  grep -Eq "<li>$kind \([0-9]+ points?\), e\.g\. [^<]*: $kind: " "$pdom" ||
    { echo "FAIL: the points rejected for $kind are not listed with their reason"; exit 1; }
done
grep -q 'budget: capex_usd [0-9]* &gt; max 50000' "$pdom" ||
  { echo "FAIL: a budget rejection does not name the budget"; exit 1; }
grep -q 'Ties on a metric are broken by the lower purchase price' "$pdom" ||
  { echo "FAIL: the tie-break is not stated"; exit 1; }
grep -q '"front":"Pareto front"' "$work/plan-report/index.html" ||
  { echo "FAIL: the plan report draws no Pareto front"; exit 1; }
# Points that differ only in drives their runs do not read (weights in host DRAM, nvme.count 1 or
# 2) are one entry, the cheaper, with what the other adds (as the plan's own list has them).
grep -Eq 'the same timings, with hardware it does not use: nvme\.count=2 \(capex \+\$[0-9,]+\)' "$pdom" ||
  { echo "FAIL: plan points with the same timings are not listed as one entry"; entries "$pdom"; exit 1; }
if entries "$pdom" | grep -q 'weights=cpu, nvme\.count=2'; then
  echo "FAIL: a point with a drive it does not read has an entry of its own"; exit 1
fi
echo "plan: $(entries "$pdom" | wc -l) configurations labelled by what varies, rejections with reasons"

# A serving plan report (scenarios/plans/opt30b-chatbot-capacity.yaml, the three OPT-30B chatbot
# servers judged at capacity): one entry per configuration, the plan's SLO drawn on the charts
# against load (the plan stores its targets with its runs: store plan_capacity), the reason each
# failing configuration sustains no rate, and the summary in words. The shipped file as it is, but
# with its base path made absolute and, under the sanitizers, 1,000 requests instead of 10,000
# (the answers the checks read do not depend on it: each 1-GPU server misses the TTFT target with
# nothing queued).
requests=10000
[ "$sanitized" = 1 ] && requests=1000
sed -e "s#^base: \.\./#base: $abs_src/scenarios/#" \
  -e "s/^  workload.requests: 10000$/  workload.requests: $requests/" \
  "$src/scenarios/plans/opt30b-chatbot-capacity.yaml" >"$work/serving-plan.yaml"
grep -q "workload.requests: $requests" "$work/serving-plan.yaml" ||
  { echo "FAIL: scenarios/plans/opt30b-chatbot-capacity.yaml no longer sets workload.requests: 10000"; exit 1; }
"$bin" plan "$work/serving-plan.yaml" --db "$work/splan.sqlite" --out "$work/splan-out" -j 2 >/dev/null
"$bin" report --db "$work/splan.sqlite" --out "$work/splan-report" --no-validation --no-sensitivity >/dev/null
render "$work/splan-report/index.html"
spdom="$work/splan-report/index.html.dom"
sph="$work/splan-report/index.html"
check_plots "$spdom" 4
listed=$(entries "$spdom" | wc -l)
columns=$(sed -n '/<h2>Comparison<\/h2>/,/<\/thead>/p' "$spdom" | grep -o '<th>[^<]*</th>' | wc -l)
echo "serving plan: $listed configurations listed, $columns columns in the comparison table"
if [ "$listed" -ne 3 ] || [ "$columns" -ne 3 ]; then
  echo "FAIL: expected one entry per configuration of the serving plan (3)"; entries "$spdom"; exit 1
fi
if entries "$spdom" | grep -q 'opt30b-chatbot'; then
  echo "FAIL: serving plan configurations labelled by the base file's name"; exit 1
fi
rules=$(grep -o '"name":"slo_target"' "$sph" | wc -l)
drawn=$(grep -o 'class="mark-rule role-mark slo_target_marks"' "$spdom" | wc -l)
echo "serving plan: $rules SLO rule layers in the specs, $drawn drawn"
if [ "$rules" -ne 2 ] || { [ "$sanitized" != 1 ] && [ "$drawn" -ne 2 ]; }; then
  echo "FAIL: the serving plan report draws no SLO line"; exit 1
fi
grep -q '"what":"TTFT target 2 s"' "$sph" && grep -q '"what":"TPOT target 0.2 s"' "$sph" ||
  { echo "FAIL: the serving plan's SLO lines are not at its targets (TTFT 2 s, TPOT 200 ms)"; exit 1; }
reasons=$(sed -n 's/.*<ul class="configurations">\(.*\)/\1/p' "$spdom" | sed 's#</ul>.*##' |
  grep -o 'cannot meet the SLO at any load, because zero-load TTFT p90 [0-9.]* s &gt; 2 s target[^<]*(rejected)' | wc -l)
echo "serving plan: $reasons configurations with a stated reason for sustaining no rate"
[ "$reasons" -eq 2 ] || { echo "FAIL: expected the reason for each of the 2 failing servers of the plan"; exit 1; }
grep -q '<h3>Interactive use: requests within the SLO</h3>' "$spdom" &&
  grep -q '90% of requests within TTFT 2 s and TPOT 200 ms' "$spdom" &&
  grep -Eq '<li>[^<]*gpu\.count=6[^<]* has the highest sustained rate within the SLO, [0-9.]+ requests/s' "$spdom" &&
  grep -q 'class="recommendation">Recommendation: ' "$spdom" ||
  { echo "FAIL: the serving plan's summary in words is missing"; exit 1; }

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
check_plots "$dom" $((5 + n))
if grep -q 'data-pwned=' "$dom"; then
  echo "FAIL: a payload name ran as script"; grep -o '<html[^>]*>' "$dom"; exit 1
fi
if grep -Eq '<img[^>]*src="x"|<svg[^>]*onload' "$dom"; then
  echo "FAIL: a payload name became markup"; exit 1
fi
echo "PASS"
