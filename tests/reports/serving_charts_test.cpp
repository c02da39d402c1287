// The report's serving charts: grouping of runs by configuration, the run each CDF shows, and the
// SVG drawn from them. tests/reports/check_report.sh renders them in Chromium.
#include <catch2/catch.hpp>

#include <regex>

#include "reports/serving_charts.hpp"

namespace tiersim {
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

// The y coordinates of one polyline's points, in drawing order.
std::vector<double> ys(const std::string& points) {
  std::vector<double> out;
  std::regex pair("([0-9.]+),([0-9.]+)");
  for (auto it = std::sregex_iterator(points.begin(), points.end(), pair);
       it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[2]));
  return out;
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

  const std::string html = reports::serving_charts_html(runs);
  std::regex svg("<svg class=\"serving-chart\"");
  CHECK(std::distance(std::sregex_iterator(html.begin(), html.end(), svg),
                      std::sregex_iterator()) == 4);
  // "a p50" on the TTFT chart: three points, latency rising with the rate, so y (downwards) falls.
  std::smatch m;
  REQUIRE(std::regex_search(
      html, m, std::regex("<polyline class=\"series\"[^>]*points=\"([^\"]*)\"><title>a p50<")));
  const auto y = ys(m[1]);
  REQUIRE(y.size() == 3);
  CHECK(y[0] > y[1]);
  CHECK(y[1] > y[2]);
  CHECK_THAT(html, Catch::Contains("a at 2 requests/s"));
}

TEST_CASE("serving charts are left out without serving runs and escape names",
          "[reports][serving]") {
  CHECK(reports::serving_charts_html({}).empty());
  const std::vector<store::StoredRun> runs = {serving_run(1, "<b>x</b>", 1, 100, 0.1),
                                                serving_run(2, "<b>x</b>", 2, 100, 0.2)};
  const std::string html = reports::serving_charts_html(runs);
  CHECK_THAT(html, !Catch::Contains("<b>x"));
  CHECK_THAT(html, Catch::Contains("&lt;b&gt;x"));
}

}  // namespace tiersim
