// RunResult's metric reads and writes by handle: the name and unit come from the declaration, and
// a metric the run did not report is absent, never 0.

#include <catch2/catch.hpp>

#include "sim/metrics.hpp"
#include "sim/result.hpp"
#include "sim/workloads/serving/metrics.hpp"
#include "sim/workloads/training/metrics.hpp"
#include "store/results_store.hpp"

namespace tiersim::sim_result_test {

TEST_CASE("set takes a metric's name and unit from its declaration", "[sim][result]") {
  sim::RunResult r;
  r.set(sim::metric::kThroughputTokensPerS, 12.5);
  r.set(sim::metric::kTotalS, 3);
  REQUIRE(r.metrics.size() == 2);
  CHECK(r.metrics[0].name == "throughput_tokens_per_s");
  CHECK(r.metrics[0].unit == "tokens/s");
  CHECK(r.metrics[1].name == "total_s");
  CHECK(r.metrics[1].unit == "s");
  // Setting again replaces the value in place: the order of the output stays that of first set.
  r.set(sim::metric::kThroughputTokensPerS, 20);
  REQUIRE(r.metrics.size() == 2);
  CHECK(r.metrics[0].value == 20);
  CHECK(r.get(sim::metric::kThroughputTokensPerS) == 20);
}

TEST_CASE("a metric the run did not report is absent, not 0", "[sim][result]") {
  sim::RunResult r;
  r.set(sim::metric::kTotalS, 0);
  CHECK(r.has(sim::metric::kTotalS));
  CHECK(r.find(sim::metric::kTotalS) == 0.0);
  CHECK_FALSE(r.has(sim::metric::kGeneratedTokens));
  CHECK_FALSE(r.find(sim::metric::kGeneratedTokens).has_value());
  CHECK_THROWS_AS(r.get(sim::metric::kGeneratedTokens), sim::MissingMetric);
  // A mistyped name read by name is absent too.
  CHECK_FALSE(r.find("total_sec").has_value());
  CHECK_THROWS_WITH(r.get("total_sec"), Catch::Contains("total_sec"));
}

TEST_CASE("stored runs read metrics as run results do", "[sim][result]") {
  store::StoredRun run;
  run.metrics.push_back({"capex_usd", 1000, "USD"});
  CHECK(run.get(sim::metric::kCapexUsd) == 1000);
  CHECK(run.find("capex_usd") == 1000.0);
  CHECK_FALSE(run.has(sim::metric::kCapexUsdGpu));
  CHECK_THROWS_AS(run.get(sim::metric::kCapexUsdGpu), sim::MissingMetric);
}

TEST_CASE("every handle's metric is in the declaration list with its unit", "[sim][result]") {
  // Workload folders declare their own metrics; the list `tiersim schema --metrics` prints must
  // hold them with the same unit and meaning.
  for (const sim::MetricDecl& h :
       {sim::metric::kTotalS, sim::metric::kEnergyJPerToken, sim::metric::kTtftP99S,
        sim::metric::kCapacityRequestsPerS, sim::metric::kTokensPerS,
        sim::metric::tier_memory_metric("nvme")}) {
    INFO(h.name);
    const sim::MetricDecl* d = sim::find_metric(h.name);
    REQUIRE(d != nullptr);
    CHECK(d->unit == h.unit);
    CHECK(d->description == h.description);
  }
  CHECK(sim::metric::tier_memory_metric("gpu").name == "gpu_memory_bytes");
  CHECK_THROWS_AS(sim::metric::tier_memory_metric("disk"), std::logic_error);
}

TEST_CASE("bytes moved per resource role are the amounts of the resources that count bytes",
          "[sim][result]") {
  sim::Engine e;
  using sim::ResourceRole;
  sim::Resource& h2d0 =
      e.add_resource({ResourceRole::kPcieH2d, "pcie-h2d0"}, sim::WorkUnit::kBytes, 2.0);
  sim::Resource& h2d1 =
      e.add_resource({ResourceRole::kPcieH2d, "pcie-h2d1"}, sim::WorkUnit::kBytes, 2.0);
  sim::Resource& gpu = e.add_resource({ResourceRole::kGpu, "gpu0"}, sim::WorkUnit::kSeconds, 1.0);
  e.reserve_from(0, sim::Demand{&h2d0, 6.0}, sim::Tag{}, 0.0);
  e.reserve_from(0, sim::Demand{&h2d1, 4.0}, sim::Tag{}, 0.0);
  e.reserve_from(0, sim::Demand{&gpu, 1.5}, sim::Tag{}, 0.0);
  sim::RunResult r;
  sim::collect_usage(e, 3.0, r);
  CHECK(sim::bytes_moved(r, ResourceRole::kPcieH2d) == 10.0);
  CHECK(sim::bytes_moved(r, ResourceRole::kPcieD2h) == 0.0);
  CHECK(sim::bytes_moved(r, ResourceRole::kGpu) == 0.0);  // seconds, not bytes
}

}  // namespace tiersim
