// simulate() in two steps (run_workload, finish_run) and simulate_like: a run shared by scenarios
// that differ only in keys their workload reads through its capacity report gives each exactly
// what simulating it alone gives.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "tests/support.hpp"

namespace sim_simulate_test {

using namespace tiersim;

namespace {

// Bit for bit: every field a result carries (the `!=` of doubles would call -0 and 0 equal).
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_identical(const sim::RunResult& a, const sim::RunResult& b) {
  CHECK(a.workload == b.workload);
  CHECK(a.fits == b.fits);
  CHECK(a.shortfall == b.shortfall);
  CHECK(a.bottleneck == b.bottleneck);
  CHECK(a.events == b.events);
  REQUIRE(a.metrics.size() == b.metrics.size());
  for (std::size_t i = 0; i < a.metrics.size(); ++i) {
    INFO(a.metrics[i].name);
    CHECK(a.metrics[i].name == b.metrics[i].name);
    CHECK(a.metrics[i].unit == b.metrics[i].unit);
    CHECK(same_bits(a.metrics[i].value, b.metrics[i].value));
  }
  REQUIRE(a.memory.size() == b.memory.size());
  for (std::size_t i = 0; i < a.memory.size(); ++i) {
    CHECK(a.memory[i].tier == b.memory[i].tier);
    CHECK(same_bits(a.memory[i].required_bytes, b.memory[i].required_bytes));
    CHECK(same_bits(a.memory[i].capacity_bytes, b.memory[i].capacity_bytes));
  }
  REQUIRE(a.utilization.size() == b.utilization.size());
  for (std::size_t i = 0; i < a.utilization.size(); ++i) {
    CHECK(a.utilization[i].name == b.utilization[i].name);
    CHECK(same_bits(a.utilization[i].busy_s, b.utilization[i].busy_s));
    CHECK(same_bits(a.utilization[i].utilization, b.utilization[i].utilization));
    CHECK(same_bits(a.utilization[i].load_s, b.utilization[i].load_s));
    CHECK(same_bits(a.utilization[i].amount, b.utilization[i].amount));
  }
  CHECK(same_bits(a.work.generated_tokens, b.work.generated_tokens));
  CHECK(same_bits(a.work.allgather_bytes, b.work.allgather_bytes));
  CHECK(same_bits(a.work.nvme_gbps_model, b.work.nvme_gbps_model));
}

Scenario load(const std::string& file, const std::vector<std::string>& sets = {}) {
  config::LoadOptions opts;
  opts.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  opts.overrides = sets;
  return config::load_scenario(file, opts);
}

}  // namespace

TEST_CASE("simulate is run_workload then finish_run", "[sim]") {
  const Scenario s = test::load_yaml(R"(
name: two-steps
hardware: {gpu: {model: A100-80GB}, host: {model: generic-2s-ddr5}, nvme: {model: generic-gen5, count: 2}}
model: {name: opt-30b, layers: 8}
workload: {kind: inference, batch: 8, prompt_tokens: 128, gen_tokens: 4}
policy: {weights: nvme}
)");
  check_identical(sim::finish_run(s, sim::run_workload(s)), sim::simulate(s));
}

// Every shipped scenario whose workload names such keys, with its twin at other values of them
// (the host's DRAM doubled and halved: one of them may not fit, which is simulated as such).
TEST_CASE("simulate_like gives what simulate gives, for every shipped scenario with a twin",
          "[sim][slow][every-scenario]") {
  int twins = 0;
  for (const std::string& file : test::shipped_scenario_files()) {
    Scenario s;
    try {
      s = load(file);
    } catch (const Error&) {
      continue;  // a scenario shipped to show an error (tested elsewhere)
    }
    const std::vector<std::string> keys = sim::capacity_only_keys(s);
    if (keys.empty()) continue;
    REQUIRE(keys == std::vector<std::string>{"hardware.host.dram_gb"});
    for (const double factor : {2.0, 0.5}) {
      INFO(file << " with the host's DRAM x" << factor);
      const Scenario twin =
          load(file, {"hardware.host.dram_gb=" + std::to_string(s.hardware.host.dram_gb * factor)});
      sim::RunResult expected, got;
      try {
        expected = sim::simulate(s);
      } catch (const ModelError&) {
        continue;  // the model refuses it alone: nothing to share
      }
      got = sim::simulate_like(s, sim::run_workload(twin));
      check_identical(got, expected);
      ++twins;
    }
  }
  CHECK(twins > 20);
}

TEST_CASE("FlexGen's schedule reads the host's DRAM size in its timeline: no keys to share",
          "[sim]") {
  const Scenario s = load(std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/" +
                          "flexgen-t4-opt6.7b-p256.yaml");
  CHECK(sim::capacity_only_keys(s).empty());
}
}  // namespace sim_simulate_test
