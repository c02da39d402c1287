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

// Every shipped scenario whose workload names such keys, with its twins at other values of them
// (the host's DRAM doubled and halved, the drives it reads nothing from doubled and one more, and
// both at once: a twin may not fit, which is simulated as such).
TEST_CASE("simulate_like gives what simulate gives, for every shipped scenario with a twin",
          "[sim][slow][every-scenario]") {
  int twins = 0, drive_twins = 0;
  for (const std::string& file : test::shipped_scenario_files()) {
    Scenario s;
    try {
      s = load(file);
    } catch (const Error&) {
      continue;  // a scenario shipped to show an error (tested elsewhere)
    }
    const std::vector<std::string> keys = sim::capacity_only_keys(s);
    if (keys.empty()) continue;
    const bool drives = keys.size() == 2;
    REQUIRE(keys.front() == "hardware.host.dram_gb");
    if (drives) REQUIRE(keys.back() == "hardware.nvme.count");
    sim::RunResult expected;
    try {
      expected = sim::simulate(s);
    } catch (const ModelError&) {
      continue;  // the model refuses it alone: nothing to share
    }
    const std::string dram = "hardware.host.dram_gb=";
    const std::string count = "hardware.nvme.count=";
    std::vector<std::vector<std::string>> variations = {
        {dram + std::to_string(s.hardware.host.dram_gb * 2.0)},
        {dram + std::to_string(s.hardware.host.dram_gb * 0.5)}};
    if (drives) {
      variations.push_back({count + std::to_string(s.hardware.nvme.count * 2)});
      variations.push_back({count + std::to_string(s.hardware.nvme.count + 1)});
      variations.push_back({dram + std::to_string(s.hardware.host.dram_gb * 0.5),
                            count + std::to_string(s.hardware.nvme.count + 3)});
    }
    for (const auto& sets : variations) {
      INFO(file << " with " << sets.front() << (sets.size() > 1 ? " and " + sets.back() : ""));
      const Scenario twin = load(file, sets);
      REQUIRE(sim::capacity_only_keys(twin) == keys);
      check_identical(sim::simulate_like(s, sim::run_workload(twin)), expected);
      ++twins;
      drive_twins += sets.back().rfind(count, 0) == 0;
    }
  }
  CHECK(twins > 20);
  CHECK(drive_twins >= 3);
}

// Drives a run reads nothing from, across the schedule's paths: weights resident, streamed from
// DRAM (pinned and pageable), split, with tensor and data parallelism and with the KV cache in
// host DRAM; each with twins of more drives (and less DRAM), which must share its run exactly.
TEST_CASE("drives a run reads nothing from are a capacity-only key", "[sim]") {
  const std::string base = R"(
name: idle-drives
hardware: {gpu: {model: A100-80GB}, host: {model: generic-2s-ddr5, dram_gb: 512}, nvme: {model: generic-gen5, count: 2}}
model: {name: opt-30b, layers: 8}
workload: {kind: inference, batch: 8, prompt_tokens: 128, gen_tokens: 4}
)";
  // Each policy, with the GPUs it needs.
  const std::vector<std::pair<std::string, std::vector<std::string>>> policies = {
      {"policy: {weights: gpu}", {}},
      {"policy: {weights: cpu}", {}},
      {"policy: {weights: cpu, pin_memory: false}", {}},
      {"policy: {weights: {gpu: 0.5, cpu: 0.5}}", {}},
      {"policy: {weights: cpu, parallelism: {tensor: 2}}", {"hardware.gpu.count=2"}},
      {"policy: {weights: cpu, parallelism: {data: 2}}", {"hardware.gpu.count=2"}},
      {"policy: {weights: cpu, kv_cache: cpu}", {}},
  };
  for (const auto& [policy, gpus] : policies) {
    INFO(policy);
    const std::string yaml = base + policy + "\n";
    const Scenario s = test::load_yaml(yaml, gpus);
    REQUIRE(sim::capacity_only_keys(s) ==
            std::vector<std::string>{"hardware.host.dram_gb", "hardware.nvme.count"});
    const sim::RunResult expected = sim::simulate(s);
    const std::vector<std::vector<std::string>> twins = {
        {"hardware.nvme.count=4"},
        {"hardware.nvme.count=1"},
        {"hardware.nvme.count=3", "hardware.host.dram_gb=256"}};
    for (auto sets : twins) {
      INFO(sets.front());
      sets.insert(sets.end(), gpus.begin(), gpus.end());
      const Scenario twin = test::load_yaml(yaml, sets);
      check_identical(sim::simulate_like(s, sim::run_workload(twin)), expected);
    }
  }
  // Weights on the drives: their count is the array's rate, part of the timeline.
  const Scenario on_drives = test::load_yaml(base + "policy: {weights: nvme}\n");
  CHECK(sim::capacity_only_keys(on_drives) == std::vector<std::string>{"hardware.host.dram_gb"});
}

TEST_CASE("FlexGen's schedule reads the host's DRAM size in its timeline: no keys to share",
          "[sim]") {
  const Scenario s = load(std::string(TIERSIM_SOURCE_DIR) + "/scenarios/reference/" +
                          "flexgen-t4-opt6.7b-p256.yaml");
  CHECK(sim::capacity_only_keys(s).empty());
}
}  // namespace sim_simulate_test
