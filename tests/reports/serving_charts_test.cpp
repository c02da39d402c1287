// The report's serving charts: grouping of runs by configuration, the run each CDF shows, and the
// Vega-Lite specs drawn from them. tests/reports/check_report.sh renders them in Chromium.
#include <catch2/catch.hpp>


#include "reports/serving_charts.hpp"

namespace tiersim::reports_serving_charts_test {
namespace {

store::StoredRun serving_run(std::int64_t id, const std::string& name, double rate,
                               double attainment, double ttft_p50_s) {
  store::StoredRun r;
  r.id = id;
  r.scenario_name = name;
  r.workload = "serving";
  r.metrics = {{"offered_rate_requests_per_s", rate, "requests/s"},
               {"slo_attainment_pct", attainment, "%"},
               {"ttft_p50_s", ttft_p50_s, "s"},
               {"ttft_p90_s", 2 * ttft_p50_s, "s"},
               {"ttft_p99_s", 4 * ttft_p50_s, "s"},
               {"ttft_max_s", 5 * ttft_p50_s, "s"},
               {"tpot_p50_s", 0.05, "s"},
               {"tpot_p99_s", 0.08, "s"}};
  return r;
}

}  // namespace

TEST_CASE("serving charts group runs by configuration and order them by rate",
          "[reports][serving]") {
  std::vector<store::StoredRun> runs = {
      serving_run(1, "a", 4, 50, 3.0),
      serving_run(2, "b", 1, 100, 0.2),
      serving_run(3, "a", 1, 100, 0.1),
      serving_run(4, "a", 2, 95, 0.4),
  };
  store::StoredRun other;
  other.workload = "inference";
  other.scenario_name = "c";
  runs.push_back(other);
  const auto series = reports::serving_series(runs);
  REQUIRE(series.size() == 2);
  CHECK(series[0].label == "a");
  REQUIRE(series[0].by_rate.size() == 3);
  CHECK(series[0].by_rate[0]->id == 3);
  CHECK(series[0].by_rate[2]->id == 1);
  // The CDF shows the highest rate with 90% within the targets: 2 requests/s, not 4.
  CHECK(reports::cdf_run(series[0])->id == 4);
  CHECK(reports::cdf_run(series[1])->id == 2);

  const auto parts = reports::serving_chart_parts(runs);
  // The heading, then TTFT and TPOT against load and the two distributions.
  REQUIRE(parts.size() == 5);
  CHECK_THAT(parts[0].html, Catch::Contains("<h2>Serving</h2>"));
  const auto& ttft = parts[1].spec;
  CHECK(ttft["title"] == "Time to first token vs load");
  CHECK(ttft["encoding"]["y"]["scale"]["type"] == "log");
  // "a p50": three points in rate order, latency rising with the rate.
  std::vector<double> xs, ys;
  for (const auto& v : ttft["data"]["values"])
    if (v["series"] == "a p50") {
      xs.push_back(v["x"]);
      ys.push_back(v["y"]);
    }
  CHECK(xs == std::vector<double>{1, 2, 4});
  CHECK(ys == std::vector<double>{0.1, 0.4, 3.0});
  CHECK(parts[3].spec["title"] == "TTFT distribution");
  CHECK(parts[3].spec["data"]["values"][0]["config"] == "a at 2 requests/s");
  // A configuration that meets the targets at no rate: its lowest rate, said to be no operating
  // point.
  const auto none = reports::serving_chart_parts({serving_run(1, "c", 5e-8, 0, 5.2), serving_run(2, "c", 0.05, 0, 9)});
  CHECK(none[3].spec["data"]["values"][0]["config"] ==
        "c at 5e-08 requests/s (lowest rate tried; none meets the targets)");
}

TEST_CASE("serving charts are left out without serving runs and keep names out of the HTML",
          "[reports][serving]") {
  CHECK(reports::serving_chart_parts({}).empty());
  // Names are chart data, inlined as escaped JSON by the report; the HTML holds none.
  const std::vector<store::StoredRun> runs = {serving_run(1, "<b>x</b>", 1, 100, 0.1),
                                                serving_run(2, "<b>x</b>", 2, 100, 0.2)};
  const auto parts = reports::serving_chart_parts(runs);
  for (const auto& p : parts) CHECK_THAT(p.html, !Catch::Contains("<b>x"));
  CHECK(parts[1].spec["data"]["values"][0]["config"] == "<b>x</b>");
}

TEST_CASE("the charts against load draw each configuration's latency targets as rules",
          "[reports][serving]") {
  const std::vector<store::StoredRun> runs = {serving_run(1, "a", 1, 100, 0.1),
                                              serving_run(2, "a", 2, 95, 0.4),
                                              serving_run(3, "b", 1, 100, 0.2)};
  // Without targets: no rule layer, the plain line chart.
  const auto plain = reports::serving_chart_parts(runs);
  CHECK_FALSE(plain[1].spec.contains("layer"));
  std::map<std::string, reports::SloTargets> targets = {{"a", {2.0, 0.2}}, {"b", {2.0, 0.2}}};
  auto parts = reports::serving_chart_parts(runs, targets);
  const auto& ttft = parts[1].spec;
  REQUIRE(ttft.contains("layer"));
  REQUIRE(ttft["layer"].size() == 3);
  CHECK(ttft["layer"][0]["mark"]["type"] == "line");
  // The lines keep the log scale; the rule shares it.
  CHECK(ttft["layer"][0]["encoding"]["y"]["scale"]["type"] == "log");
  const auto& rule = ttft["layer"][1];
  CHECK(rule["name"] == "slo_target");
  CHECK(rule["mark"]["type"] == "rule");
  // One target shared by both: one rule, not named after either.
  REQUIRE(rule["data"]["values"].size() == 1);
  CHECK(rule["data"]["values"][0]["target"] == 2.0);
  CHECK(rule["data"]["values"][0]["what"] == "TTFT target 2 s");
  CHECK(parts[2].spec["layer"][1]["data"]["values"][0]["what"] == "TPOT target 0.2 s");
  // Different targets: one rule each, naming its configurations.
  targets["b"].ttft_s = 5.0;
  const auto rows = reports::slo_rules(targets, "TTFT", &reports::SloTargets::ttft_s);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["what"] == "TTFT target 2 s (a)");
  CHECK(rows[1]["what"] == "TTFT target 5 s (b)");
}

namespace {

// A prefix-caching run of scenario `name` at `rate` with DRAM and NVMe tiers of `host_gb` and
// `nvme_gb`; `other` stands for any other key of the resolved scenario.
store::StoredRun tier_run(std::int64_t id, const std::string& name, double rate, double host_gb,
                          double nvme_gb, double hit_pct, const std::string& other = "x") {
  store::StoredRun r = serving_run(id, name, rate, 100, 0.1 * (100 - hit_pct));
  r.scenario_yaml = "name: " + name + "\nworkload:\n  arrival_rate: " + std::to_string(rate) +
                    "\n  kv_host_cache: " + std::to_string(host_gb * 1e9) +
                    "\n  kv_nvme_cache: " + std::to_string(nvme_gb * 1e9) + "\n  other: " + other +
                    "\n";
  r.metrics.push_back({"kv_hit_pct", hit_pct, "%"});
  r.metrics.push_back({"kv_hit_host_pct", hit_pct / 2, "%"});
  r.metrics.push_back({"kv_hit_nvme_pct", nvme_gb > 0 ? hit_pct / 4 : 0, "%"});
  r.metrics.push_back({"kv_host_tier_bytes", host_gb * 1e9, "bytes"});
  r.metrics.push_back({"kv_nvme_tier_bytes", nvme_gb * 1e9, "bytes"});
  return r;
}

}  // namespace

TEST_CASE("tier-size curves join runs that differ only in one tier's size", "[reports][serving]") {
  const std::vector<store::StoredRun> runs = {
      tier_run(1, "a", 4, 256, 0, 80),  tier_run(2, "a", 4, 0, 0, 60),
      tier_run(3, "a", 4, 128, 0, 70),  tier_run(4, "a", 8, 128, 0, 65),  // another rate: alone
      tier_run(5, "a", 4, 64, 0, 66, "y"),                                // another key: alone
      tier_run(6, "a", 4, 128, 1000, 90), tier_run(7, "a", 4, 128, 250, 75),
      tier_run(8, "b", 4, 128, 0, 50),  // another name: alone
  };
  const auto curves = reports::tier_curves(runs);
  REQUIRE(curves.size() == 2);
  // The DRAM curve: the three points at 4 requests/s with no NVMe tier, in size order (run 4 is at
  // another rate, run 5 differs in another key; neither has a second size to make a curve).
  CHECK(curves[0].tier == reports::KvTier::kHost);
  CHECK(curves[0].label == "a at 4 requests/s");
  REQUIRE(curves[0].by_size.size() == 3);
  CHECK(curves[0].by_size[0]->id == 2);
  CHECK(curves[0].by_size[1]->id == 3);
  CHECK(curves[0].by_size[2]->id == 1);
  // The NVMe curve under the 128 GB DRAM tier starts at the run without an NVMe tier (run 3).
  CHECK(curves[1].tier == reports::KvTier::kNvme);
  CHECK(curves[1].label == "a at 4 requests/s, DRAM tier 128 GB");
  REQUIRE(curves[1].by_size.size() == 3);
  CHECK(curves[1].by_size[0]->id == 3);
  CHECK(curves[1].by_size[1]->id == 7);
  CHECK(curves[1].by_size[2]->id == 6);

  const auto parts = reports::tier_size_chart_parts(runs);
  // The heading, then hit rate and TTFT against each tier's size.
  REQUIRE(parts.size() == 5);
  CHECK_THAT(parts[0].html, Catch::Contains("<h2 id=\"kv-tiers\">KV cache tiers</h2>"));
  CHECK(parts[1].spec["title"] == "KV prefix hit rate vs DRAM tier size");
  CHECK(parts[2].spec["title"] == "Time to first token vs DRAM tier size");
  CHECK(parts[3].spec["title"] == "KV prefix hit rate vs NVMe tier size");
  CHECK(parts[4].spec["title"] == "Time to first token vs NVMe tier size");
  // Hit rate on any tier in GB order, from the runs' metrics; the DRAM tier's own share dashed.
  std::vector<double> xs, any, own;
  for (const auto& v : parts[1].spec["data"]["values"]) {
    if (v["dash"] == "any tier") {
      xs.push_back(v["x"]);
      any.push_back(v["y"]);
    }
    if (v["dash"] == "from DRAM") own.push_back(v["y"]);
  }
  CHECK(xs == std::vector<double>{0, 128, 256});
  CHECK(any == std::vector<double>{60, 70, 80});
  CHECK(own == std::vector<double>{30, 35, 40});
  // TTFT p50 and p99 per point, on a log axis.
  CHECK(parts[2].spec["data"]["values"].size() == 6);
  CHECK(parts[2].spec["encoding"]["y"]["scale"]["type"] == "log");
}

TEST_CASE("no tier-size curve without two sizes of a tier", "[reports][serving]") {
  CHECK(reports::tier_size_chart_parts({}).empty());
  // Serving runs without prefix caching (no hit rate), and one size only: nothing to draw.
  CHECK(reports::tier_size_chart_parts({serving_run(1, "a", 1, 100, 0.1), serving_run(2, "a", 2, 100, 0.2)})
            .empty());
  CHECK(reports::tier_size_chart_parts({tier_run(1, "a", 4, 128, 0, 70), tier_run(2, "a", 4, 128, 0, 70)})
            .empty());
}

}  // namespace tiersim
