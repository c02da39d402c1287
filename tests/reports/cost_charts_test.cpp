// The cost charts' Pareto front, and that the charts appear only with the data they draw.
#include <catch2/catch.hpp>

#include "reports/cost_charts.hpp"

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
  CHECK(cost_charts_html({store::StoredRun{}}, {"no prices"}).empty());
  const std::string one = cost_charts_html({run(5000, 10, 2)}, {"a"});
  CHECK_THAT(one, Catch::Contains("id=\"capex-chart\""));
  CHECK_THAT(one, !Catch::Contains("id=\"pareto-chart\""));  // one point is no comparison
  const std::string two = cost_charts_html({run(5000, 10, 2), run(9000, 100, 1)}, {"a", "b<x>"});
  CHECK_THAT(two, Catch::Contains("id=\"pareto-chart\"") && Catch::Contains("b&lt;x&gt;") &&
                      !Catch::Contains("b<x>"));
  CHECK_THAT(two, Catch::Contains("b&lt;x&gt;: 100 tokens/s, $1/Mtoken (Pareto front)"));
}
