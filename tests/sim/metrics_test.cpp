// Every output metric is declared once (sim/metrics.cpp) with its unit and meaning, and the
// declarations are what scenarios/README.md documents.

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "config/catalog.hpp"
#include "config/scenario_loader.hpp"
#include "sim/metrics.hpp"
#include "sim/simulate.hpp"
#include "tests/support.hpp"

namespace tiersim::sim_metrics_test {
namespace {
const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
}

TEST_CASE("metric declarations are unique and complete", "[sim][metrics]") {
  std::set<std::string_view> names;
  for (const auto& m : sim::metric_declarations()) {
    INFO(m.name);
    CHECK(names.insert(m.name).second);
    CHECK_FALSE(m.description.empty());
    CHECK_FALSE(m.workloads.empty());
  }
  CHECK(sim::find_metric("ttft_s")->unit == "s");
  CHECK(sim::find_metric("no_such_metric") == nullptr);
  CHECK_THROWS_WITH(sim::metric_decl("no_such_metric"), Catch::Contains("sim/metrics.cpp"));
}

TEST_CASE("every metric a shipped scenario reports is declared with the unit it carries",
          "[sim][metrics][every-scenario]") {
  const config::Catalog catalog = config::Catalog::load(kData);
  config::LoadOptions opts;
  opts.catalog = &catalog;
  int runs = 0;
  for (const std::string& file : test::shipped_scenario_files()) {
    INFO(file);
    const Scenario s = config::load_scenario(file, opts);
    const sim::RunResult r = sim::simulate(s);
    for (const auto& m : r.metrics) {
      INFO(m.name);
      const sim::MetricDecl* d = sim::find_metric(m.name);
      REQUIRE(d != nullptr);
      CHECK(d->unit == m.unit);
    }
    ++runs;
  }
  CHECK(runs > 40);
}

TEST_CASE("scenarios/README.md holds the current metric table", "[sim][metrics]") {
  std::ifstream in(kData + "/README.md");
  REQUIRE(in);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Regenerate with: tiersim schema --metrics (and paste between the markers).
  const std::string begin = "<!-- generated: tiersim schema --metrics -->\n";
  const std::string end = "<!-- end generated -->";
  const auto b = text.find(begin);
  REQUIRE(b != std::string::npos);
  const auto e = text.find(end, b);
  REQUIRE(e != std::string::npos);
  CHECK(text.substr(b + begin.size(), e - b - begin.size()) == sim::metrics_markdown());
}

}  // namespace tiersim
