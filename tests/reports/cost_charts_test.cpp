// The cost charts' Pareto front, and that the charts appear only with the data they draw.
#include <catch2/catch.hpp>

#include "reports/cost_charts.hpp"

namespace reports_cost_charts_test {

namespace store = tiersim::store;

using namespace tiersim;
using namespace tiersim::reports;

TEST_CASE("cost Pareto front: higher throughput and lower cost, dominated points left out",
          "[report][cost]") {
  // (throughput, usd_per_million_tokens)
  const std::vector<std::pair<double, double>> pts = {
      {100, 2.0},  // 0: front
      {50, 3.0},   // 1: beaten by 0 on both
      {10, 0.5},   // 2: front (cheapest)
      {100, 2.5},  // 3: same throughput as 0, dearer: beaten
      {200, 4.0},  // 4: front (fastest)
      {10, 0.5}};  // 5: identical to 2: 2 stands for it
  CHECK(cost_pareto_front(pts) == std::vector<std::size_t>{2, 0, 4});
  CHECK(cost_pareto_front({}).empty());
}

TEST_CASE("cost charts: capex bars and the scatter only when runs carry the metrics",
          "[report][cost]") {
  auto run = [](double gpu_usd, double tps, double usd_mtok) {
    store::StoredRun r;
    r.metrics = {{"capex_usd", gpu_usd + 1000, "USD"},
                 {"capex_usd_gpu", gpu_usd, "USD"},
                 {"capex_usd_platform", 1000, "USD"},
                 {"throughput_tokens_per_s", tps, "tokens/s"},
                 {"usd_per_million_tokens", usd_mtok, "USD/Mtoken"}};
    return r;
  };
  CHECK(cost_chart_parts({store::StoredRun{}}, {"no prices"}).empty());
  // One run: the capex chart only (one point is no comparison).
  const auto one = cost_chart_parts({run(5000, 10, 2)}, {"a"});
  REQUIRE(one.size() == 1);
  CHECK_THAT(one[0].html, Catch::Contains("<h2>Cost</h2>"));
  const auto& capex = one[0].spec;
  REQUIRE(capex.is_object());
  CHECK(capex["title"] == "Capex by component (USD)");
  // Two stacked segments (GPUs, platform) in the order of the components.
  REQUIRE(capex["data"]["values"].size() == 2);
  CHECK(capex["data"]["values"][0]["part"] == "GPUs");
  CHECK(capex["data"]["values"][0]["usd"] == 5000);
  CHECK(capex["data"]["values"][1]["part"] == "platform");
  CHECK(capex["data"]["values"][1]["total"] == "$6.0k");

  // Two runs: the scatter with its front and the numbered list, names escaped in the HTML.
  const auto two = cost_chart_parts({run(5000, 10, 2), run(9000, 100, 1)}, {"a", "b<x>"});
  REQUIRE(two.size() == 3);
  const auto& points = two[1].spec["data"]["values"];
  REQUIRE(points.size() == 2);
  CHECK(points[0]["front"] == "beaten on both");  // slower and dearer than b
  CHECK(points[1]["front"] == "Pareto front");
  CHECK(points[1]["run"] == "b<x>");  // data, not markup: the page inlines it as escaped JSON
  CHECK(two[1].spec["layer"][1]["encoding"]["x"]["scale"]["type"] == "log");
  CHECK_THAT(two[2].html, Catch::Contains("b&lt;x&gt;: 100 tokens/s, $1/Mtoken (Pareto front)") &&
                              !Catch::Contains("b<x>"));
}
}  // namespace reports_cost_charts_test
