// The planner's pruning is safe: on a small space it finds exactly what brute force finds, and the
// optimistic bounds hold for every simulated point.
#include <catch2/catch.hpp>

#include <cmath>

#include <map>
#include <set>

#include "config/catalog.hpp"
#include "model/errors.hpp"
#include "model/units.hpp"
#include "sim/simulate.hpp"
#include "study/planner.hpp"
#include "tests/support.hpp"

namespace study_planner_test {

using namespace tiersim;
using namespace tiersim::plan;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
const std::string kFile = kData + "/plans/test-plan.yaml";

const config::Catalog& catalog() {
  static const config::Catalog c = config::Catalog::load(kData);  // read-only after first use
  return c;
}

// 3 GPUs x 2 DRAM x 4 placements x 2 bits x 3 batches x 2 drive counts = 288 points; 8 layers
// and 4 generated tokens keep each simulation short.
std::string space_text(const std::string& tail) {
  return "name: test-plan\n"
         "base: opt66b-base.yaml\n"
         "set: {model.layers: 8, workload.gen_tokens: 4}\n"
         "grid:\n"
         "  hardware.gpu.model: [RTX-A6000, A100-80GB, H200]\n"
         "  hardware.host.dram_gb: [64, 256]\n"
         "  policy.weights: [gpu, cpu, nvme, {gpu: 0.5, cpu: 0.5}]\n"
         "  policy.weight_bits: [16, 4]\n"
         "  workload.batch: [4, 16, 64]\n"
         "  hardware.nvme.count: [1, 2]\n" +
         tail;
}

std::set<std::string> labels(const std::vector<Candidate>& cs) {
  std::set<std::string> out;
  for (const auto& c : cs) out.insert(c.point.label);
  return out;
}

void check_same_as_brute_force(const PlanSpec& spec) {
  PlanOptions pruned, brute;
  pruned.threads = brute.threads = 2;
  brute.prune = false;
  std::vector<Candidate> all;
  brute.on_simulated = [&](const Candidate& c) { all.push_back(c); };
  const PlanResult a = run_plan(spec, catalog(), pruned);
  const PlanResult b = run_plan(spec, catalog(), brute);
  INFO("pruned: simulated " << a.stats.simulated << " of " << a.stats.considered);
  REQUIRE(!b.best.empty());
  REQUIRE(a.best.size() == b.best.size());
  for (std::size_t k = 0; k < a.best.size(); ++k)
    CHECK(*metric_value(a.best[k].scenario, a.best[k].result, spec.objective.metric) ==
          *metric_value(b.best[k].scenario, b.best[k].result, spec.objective.metric));
  if (!spec.pareto.empty()) CHECK(labels(a.pareto) == labels(b.pareto));
  // The search must actually prune something, and the bounds must hold everywhere.
  std::size_t pruned_count = a.stats.pruned_objective;
  for (const auto& [m, n] : a.stats.pruned_constraint) pruned_count += n;
  CHECK(pruned_count > 0);
  CHECK(a.stats.simulated < b.stats.simulated);
  CHECK(a.stats.bound_violations == 0);
  CHECK(b.stats.bound_violations == 0);
  for (const auto& c : all) {
    if (!c.result.fits) continue;
    CHECK(c.result.get("throughput_tokens_per_s") <= c.bounds.throughput_ub * (1 + 1e-9));
    CHECK(c.result.get("ttft_s") >= c.bounds.ttft_s_lb * (1 - 1e-9));
    CHECK(c.result.get("total_s") >= c.bounds.total_s_lb * (1 - 1e-9));
  }
}

}  // namespace

TEST_CASE("planner: cheapest per token under a throughput floor matches brute force", "[plan]") {
  const PlanSpec spec = parse_plan_text(
      space_text("constraints: {throughput_tokens_per_s: {min: 40}, capex_usd: {max: 60000}}\n"
                 "objective: {minimize: usd_per_million_tokens}\n"
                 "pareto: [throughput_tokens_per_s, usd_per_million_tokens]\n"
                 "top: 3\n"),
      kFile);
  check_same_as_brute_force(spec);
}

TEST_CASE("planner: highest throughput under a budget and a TTFT cap matches brute force", "[plan]") {
  const PlanSpec spec = parse_plan_text(
      space_text("constraints: {ttft_s: {max: 2}, capex_usd: {max: 50000}}\n"
                 "objective: {maximize: throughput_tokens_per_s}\n"
                 "top: 2\n"),
      kFile);
  check_same_as_brute_force(spec);
}

TEST_CASE("planner: points that differ only in the host's DRAM share one run, bit for bit",
          "[plan]") {
  const PlanSpec spec = parse_plan_text(
      space_text("constraints: {throughput_tokens_per_s: {min: 1}}\n"
                 "objective: {minimize: usd_per_million_tokens}\n"),
      kFile);
  PlanOptions brute;
  brute.threads = 2;
  brute.prune = false;
  std::size_t checked = 0;
  brute.on_simulated = [&](const Candidate& c) {
    const sim::RunResult alone = sim::simulate(c.scenario);
    REQUIRE(alone.metrics.size() == c.result.metrics.size());
    for (std::size_t k = 0; k < alone.metrics.size(); ++k) {
      INFO(c.point.label << " " << alone.metrics[k].name);
      CHECK(alone.metrics[k].value == c.result.metrics[k].value);
    }
    REQUIRE(alone.memory.size() == c.result.memory.size());
    for (std::size_t k = 0; k < alone.memory.size(); ++k)
      CHECK(alone.memory[k].capacity_bytes == c.result.memory[k].capacity_bytes);
    ++checked;
  };
  const PlanResult r = run_plan(spec, catalog(), brute);
  CHECK(checked == r.stats.simulated);
  CHECK(r.stats.shared > 0);
  CHECK(r.stats.shared < r.stats.simulated);
}

TEST_CASE("a plan past the point limit is refused when read, naming the axis", "[plan]") {
  // A plan holds every candidate in memory: 1,000 x 1,000 points used to be allocated first.
  try {
    parse_plan_text("name: big\nbase: opt66b-base.yaml\ngrid:\n"
                    "  workload.batch: {from: 1, to: 1000, step: 1}\n"
                    "  workload.gen_tokens: {from: 1, to: 1000, step: 1}\n"
                    "objective: {minimize: usd_per_million_tokens}\n",
                    kFile);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("test-plan.yaml:5: workload.gen_tokens") &&
                             Catch::Contains("more than 100000 points"));
  }
}

TEST_CASE("bad plan files name the file, line and key", "[plan]") {
  auto error_of = [](const std::string& text) {
    try {
      parse_plan_text(text, kFile);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "name: p\nbase: opt66b-base.yaml\ngrid: {workload.batch: [1, 2]}\n";
  CHECK_THAT(error_of(head + "objective: {minimise: capex_usd}\n"),
             Catch::Contains("test-plan.yaml:4") && Catch::Contains("did you mean 'minimize'"));
  CHECK_THAT(error_of(head + "objective: throughput\n"), Catch::Contains("did you mean 'throughput_tokens_per_s'"));
  CHECK_THAT(error_of(head + "objective: capex_usd\nconstraints: {ttft_s: {below: 3}}\n"),
             Catch::Contains("test-plan.yaml:5") && Catch::Contains("below"));
  CHECK_THAT(error_of(head + "objective: capex_usd\npareto: [capex_usd]\n"), Catch::Contains("two metrics"));
  // A metric no run reports fails where it is named, when the file is read, not after every point
  // has run.
  CHECK_THAT(error_of(head + "objective: {minimize: usd_per_million_token}\n"),
             Catch::Contains("test-plan.yaml:4") && Catch::Contains("objective.minimize") &&
                 Catch::Contains("did you mean 'usd_per_million_tokens'"));
  CHECK_THAT(error_of(head + "objective: capex_usd\nconstraints: {ttft: {max: 3}}\n"),
             Catch::Contains("test-plan.yaml:5") && Catch::Contains("constraints.ttft") &&
                 Catch::Contains("unknown metric"));
  CHECK(error_of(head + "objective: {maximize: tokens_per_joule}\n") == "no error");
  // A range nothing can meet is a typo, not a plan whose every point fails.
  CHECK_THAT(error_of(head + "objective: capex_usd\nconstraints: {ttft_s: {min: 3, max: 1}}\n"),
             Catch::Contains("test-plan.yaml:5") && Catch::Contains("min (3) is above max (1)"));
}

TEST_CASE("planner: serving points have no roofline bound, so none is reported as beaten", "[plan]") {
  // Regression: the optimistic bounds of a serving point were left at zero (only inference has a
  // roofline), and every simulated serving point "beat" its throughput bound of 0 tokens/s.
  const PlanSpec spec = parse_plan_text(
      "name: test-plan\n"
      "base: ../serving/opt30b-chatbot-6xl40s.yaml\n"
      "grid: {hardware.gpu.count: [2, 6]}\n"
      "objective: {maximize: throughput_tokens_per_s}\n",
      kFile);
  PlanOptions o;
  o.threads = 2;
  const PlanResult r = run_plan(spec, catalog(), o);
  CHECK(r.stats.simulated == 2);
  CHECK(r.stats.bound_violations == 0);
}

TEST_CASE("planner: capacity_search judges each serving point at the rate it sustains", "[plan]") {
  const PlanSpec spec = parse_plan_text(
      "name: test-plan\n"
      "base: ../serving/opt30b-chatbot-6xl40s.yaml\n"
      "grid: {hardware.gpu.count: [2, 6]}\n"
      "capacity_search: {attainment_pct: 90, tolerance: 0.05}\n"
      "objective: {maximize: capacity_requests_per_s}\n"
      "top: 2\n",
      kFile);
  REQUIRE(spec.capacity);
  CHECK(spec.capacity->tolerance == 0.05);
  PlanOptions o;
  o.threads = 2;
  const PlanResult r = run_plan(spec, catalog(), o);
  REQUIRE(r.best.size() == 2);
  // Three replicas sustain more than one.
  CHECK(r.best[0].point.label == "hardware.gpu.count=6");
  const double six = *metric_value(r.best[0].scenario, r.best[0].result, "capacity_requests_per_s");
  const double two = *metric_value(r.best[1].scenario, r.best[1].result, "capacity_requests_per_s");
  CHECK(six > 2 * two);
  // The same search run directly on the point gives the same rate, and the scenario the plan
  // writes out carries it.
  const Scenario base = sweep::load_point(spec.space, r.best[1].point, catalog());
  const capacity::ServingCapacity direct = capacity::search_serving_capacity(
      base, [&](double rate) { return capacity::with_rate(base, rate); }, *spec.capacity);
  CHECK(direct.rate_per_s == two);
  CHECK(r.best[1].scenario.serving.arrival_rate_per_s == two);
  CHECK(r.best[1].result.get("usd_per_request_at_capacity") ==
        Approx(r.best[1].result.get("usd_per_hour") / (two * 3600)));
  // A point that sustains no rate is infeasible, with the reason.
  const PlanSpec none = parse_plan_text(
      "name: test-plan\n"
      "base: ../serving/opt30b-chatbot-1xl40s-dram.yaml\n"
      "grid: {workload.seed: [1]}\n"
      "capacity_search: {}\n"
      "objective: {minimize: usd_per_request_at_capacity}\n",
      kFile);
  const PlanResult n = run_plan(none, catalog(), o);
  CHECK(n.best.empty());
  CHECK(n.stats.simulated == 1);
  CHECK(n.stats.feasible == 0);
  REQUIRE(n.no_capacity.size() == 1);
  CHECK_THAT(n.no_capacity[0].why_not, Catch::Contains("sustains no rate: cannot meet the SLO at any load: zero-load TTFT p90"));
  // The point keeps its search for the report: the targets it was judged by (the scenario's
  // TTFT 2 s and TPOT 200 ms at 90%) and the answer; its run is the zero-load probe, the lowest
  // rate tried (as `tiersim capacity --db` stores it), not the start rate it failed at.
  REQUIRE(n.verdicts.size() == 1);
  REQUIRE(n.verdicts[0].capacity);
  const capacity::SearchAnswer& a = *n.verdicts[0].capacity;
  CHECK(a.attainment_pct == 90);
  CHECK(a.slo_ttft_s == 2.0);
  CHECK(a.slo_tbt_s == Approx(0.2));
  CHECK_FALSE(a.found);
  CHECK(a.zero_load_miss);
  CHECK_FALSE(a.rate_per_s);
  CHECK_THAT(a.limit, Catch::StartsWith("cannot meet the SLO at any load: zero-load TTFT p90"));
  const Scenario dram = sweep::load_point(none.space, n.no_capacity[0].point, catalog());
  CHECK(n.no_capacity[0].scenario.serving.arrival_rate_per_s ==
        Approx(dram.serving.arrival_rate_per_s * capacity::kZeroLoadFraction));
  CHECK(n.verdicts[0].scenario_hash == n.no_capacity[0].scenario.hash);
  // A feasible serving point carries its sustained rate.
  REQUIRE(r.verdicts.size() == 2);
  for (const auto& v : r.verdicts) {
    REQUIRE(v.capacity);
    CHECK(v.capacity->found);
    CHECK(v.capacity->rate_per_s.value_or(0) > 0);
  }
  // A traffic level: the fleet each point needs for it, as metrics the objective can rank.
  const PlanSpec fleet = parse_plan_text(
      "name: test-plan\n"
      "base: ../serving/opt30b-chatbot-6xl40s.yaml\n"
      "grid: {hardware.gpu.count: [2, 6]}\n"
      "capacity_search: {tolerance: 0.05, traffic_requests_per_s: 10}\n"
      "objective: gpus_for_traffic\n",
      kFile);
  REQUIRE(fleet.capacity);
  CHECK(fleet.capacity->traffic_requests_per_s == 10);
  const PlanResult f = run_plan(fleet, catalog(), o);
  REQUIRE(f.best.size() == 2);
  for (const auto& b : f.best)
    CHECK(b.result.get("gpus_for_traffic") ==
          std::ceil(10 / b.result.get("capacity_requests_per_s")) * b.scenario.hardware.gpu_count);
  CHECK(f.best[0].result.get("gpus_for_traffic") <= f.best[1].result.get("gpus_for_traffic"));
  CHECK_THROWS_WITH(parse_plan_text("name: p\nbase: opt66b-base.yaml\ngrid: {workload.batch: [1]}\n"
                                    "objective: capex_usd\ncapacity_search: {target: 90}\n",
                                    kFile),
                    Catch::Contains("test-plan.yaml:5") && Catch::Contains("target"));
}

TEST_CASE("planner: points with the same resolved scenario are simulated once, listed together",
          "[plan]") {
  // policy.io_path only matters for weights on NVMe: with weights on the GPU, aio and gds resolve
  // to one scenario (config/scenario_loader.cpp), so the plan must not run or list it twice.
  const PlanSpec spec = parse_plan_text(
      "name: test-plan\nbase: opt66b-base.yaml\nset: {model.layers: 8, workload.gen_tokens: 4}\n"
      "grid:\n  hardware.gpu.model: [A100-80GB, H200]\n  policy.weights: [gpu, nvme]\n"
      "  policy.io_path: [aio, gds]\n  hardware.nvme.count: [1]\n"
      "objective: {maximize: throughput_tokens_per_s}\ntop: 8\n",
      kFile);
  PlanOptions o;
  o.threads = 2;
  o.prune = false;
  std::size_t progress_calls = 0;
  o.on_progress = [&](std::size_t, std::size_t) { ++progress_calls; };
  const PlanResult r = run_plan(spec, catalog(), o);
  CHECK(progress_calls > 0);
  std::set<std::string> hashes;
  std::size_t listed_equivalents = 0;
  for (const auto& c : r.best) {
    CHECK(hashes.insert(c.scenario.hash).second);  // no configuration twice
    for (const auto& e : c.equivalent) {
      CHECK_THAT(e, Catch::Contains("policy.weights=gpu") && Catch::Contains("policy.io_path=gds"));
      ++listed_equivalents;
    }
  }
  // Weights on the GPU: aio and gds are one configuration for each GPU model (2 collapsed);
  // weights on NVMe: the I/O path matters, and both stay.
  CHECK(r.stats.equivalent == 2);
  CHECK(listed_equivalents == r.stats.equivalent);
  CHECK(r.stats.simulated + r.stats.equivalent + r.stats.pruned_capacity + r.stats.invalid ==
        r.stats.considered);
}

TEST_CASE("planner: the streamed-weight bound holds for a runtime that fetches routed experts only",
          "[plan]") {
  // Mixtral streamed from NVMe by a runtime that loads only the experts a pass's tokens hit
  // (policy.moe_fetch: routed): a decode pass of one sequence reads ~2 of 8 experts per layer.
  // The bound takes each pass's fetch from the weight-stream model, as the simulator does, so it
  // stays below the simulated times (counting every expert in every pass put it above them).
  const Scenario s = test::load_yaml(R"(
name: t
hardware:
  gpu: {model: A100-80GB, count: 1}
  host: {model: generic-2s-ddr5}
  nvme: {model: generic-gen4, count: 2}
model: {name: mixtral-8x7b}
workload: {kind: inference, batch: 1, prompt_tokens: 16, gen_tokens: 8}
policy: {weights: nvme, kv_cache: gpu, io_path: gds, moe_fetch: routed}
)");
  const sim::RunResult r = sim::simulate(s);
  REQUIRE(r.fits);
  const plan::Bounds b = plan::optimistic_bounds(s);
  CHECK(r.get("ttft_s") >= b.ttft_s_lb * (1 - 1e-9));
  CHECK(r.get("total_s") >= b.total_s_lb * (1 - 1e-9));
  CHECK(r.get("throughput_tokens_per_s") <= b.throughput_ub * (1 + 1e-9));
  // And it is not loose for it: the decode passes' reads are most of the run.
  CHECK(b.total_s_lb > 0.5 * r.get("total_s"));
}

TEST_CASE("planner: every point gets a verdict with the kind of its reason", "[plan]") {
  // A budget small enough to rule out H200s before simulation; a throughput floor some simulated
  // points miss; DRAM too small for some placements (capacity).
  const PlanSpec spec = parse_plan_text(
      space_text("constraints: {throughput_tokens_per_s: {min: 40}, capex_usd: {max: 60000}}\n"
                 "objective: {minimize: usd_per_million_tokens}\n"
                 "top: 3\n"),
      kFile);
  PlanOptions o;
  o.threads = 2;
  const PlanResult r = run_plan(spec, catalog(), o);
  REQUIRE(r.verdicts.size() == r.stats.considered);
  std::map<std::string, std::size_t> by_status;
  std::set<std::string> kinds;
  for (const auto& v : r.verdicts) {
    ++by_status[v.status];
    INFO(v.label << ": " << v.status << ", " << v.reason);
    if (v.status == "feasible") {
      CHECK(v.reason.empty());
      continue;
    }
    REQUIRE_FALSE(v.reason.empty());
    kinds.insert(v.reason.substr(0, v.reason.find(':')));
    if (v.reason.rfind("budget: ", 0) == 0) CHECK_THAT(v.reason, Catch::Contains("> max 60000"));
  }
  CHECK(by_status["feasible"] == r.stats.feasible);
  CHECK(by_status["equivalent"] == r.stats.equivalent);
  // Pruned before simulation: by capacity, by the bounds and by the objective.
  std::size_t pruned = r.stats.pruned_capacity + r.stats.pruned_objective;
  for (const auto& [m, n] : r.stats.pruned_constraint) pruned += n;
  CHECK(by_status["pruned"] == pruned);
  CHECK(kinds.count("budget"));
  CHECK(kinds.count("constraint"));
  // OPT-66B's 132 GB of fp16 weights on one 48 GB GPU: rejected for memory, before simulation.
  const PlanSpec big = parse_plan_text(
      "name: test-plan\nbase: opt66b-base.yaml\nset: {workload.gen_tokens: 4}\n"
      "grid:\n  hardware.gpu.model: [RTX-A6000]\n  policy.weights: [gpu]\n"
      "objective: {maximize: throughput_tokens_per_s}\n",
      kFile);
  const PlanResult m = run_plan(big, catalog(), o);
  REQUIRE(m.verdicts.size() == 1);
  CHECK(m.verdicts[0].status == "pruned");
  CHECK_THAT(m.verdicts[0].reason, Catch::StartsWith("memory: does not fit (gpu needs "));
}

TEST_CASE("planner: configurations with the same timings are listed once, the cheaper first",
          "[plan]") {
  // With weights on the GPU the drives carry nothing the run waits for: 0, 1 and 2 drives give
  // the same timings (and the same throughput, the objective). They are one entry of the top
  // list, the cheapest (no drive) standing for the others whichever was simulated first, and the
  // second place goes to a configuration that differs in what it does (the other GPU).
  const PlanSpec spec = parse_plan_text(
      "name: test-plan\nbase: opt66b-base.yaml\nset: {model.layers: 8, workload.gen_tokens: 4}\n"
      "grid:\n  hardware.gpu.model: [H200, A100-80GB]\n  policy.weights: [gpu]\n"
      "  hardware.nvme.count: [2, 1, 0]\n"
      "objective: {maximize: throughput_tokens_per_s}\ntop: 2\n",
      kFile);
  PlanOptions o;
  o.threads = 2;
  o.prune = false;
  const PlanResult r = run_plan(spec, catalog(), o);
  REQUIRE(r.best.size() == 2);
  for (const auto& c : r.best) {
    INFO(c.point.label);
    CHECK_THAT(c.point.label, Catch::Contains("hardware.nvme.count=0"));
    REQUIRE(c.same_timings.size() == 2);
    CHECK_THAT(c.same_timings[0] + c.same_timings[1],
               Catch::Contains("hardware.nvme.count=1 (capex +") &&
                   Catch::Contains("hardware.nvme.count=2 (capex +"));
  }
  CHECK_THAT(r.best[0].point.label, Catch::Contains("H200"));
  CHECK_THAT(r.best[1].point.label, Catch::Contains("A100-80GB"));
  CHECK(r.stats.feasible == 6);
}

// Issue 33: the host platform as a plan axis. A GPU-only run's timings do not depend on the host,
// but another host is another server, not hardware the run leaves unused: each is ranked on its
// own, by its cost (platform price and its DRAM floor).
TEST_CASE("planner: host platforms with the same timings are ranked apart, by cost", "[plan]") {
  const PlanSpec spec = parse_plan_text(
      "name: test-plan\nbase: ../inference/llama3-70b-fp8-1xh200-optimized.yaml\n"
      "set: {workload.gen_tokens: 4}\n"
      "grid:\n  hardware.host.model: [generic-2s-ddr5, generic-2s-ddr4]\n"
      "objective: {minimize: usd_per_million_tokens}\ntop: 2\n",
      kFile);
  PlanOptions o;
  o.threads = 1;
  const PlanResult r = run_plan(spec, catalog(), o);
  REQUIRE(r.best.size() == 2);
  CHECK(r.best[0].result.get("total_s") == r.best[1].result.get("total_s"));
  // DDR4 class: cheaper platform and a smaller floor (16 x 8 GiB against 16 x 16 GiB).
  CHECK(r.best[0].scenario.hardware.host.name == "generic-2s-ddr4");
  CHECK(r.best[1].scenario.hardware.host.name == "generic-2s-ddr5");
  CHECK(r.best[0].result.get("dram_sized_gb") == Approx(2 * 8 * 8 * units::kGiB / units::kGB));
  CHECK(r.best[1].result.get("dram_sized_gb") == Approx(2 * 8 * 16 * units::kGiB / units::kGB));
  for (const auto& c : r.best) CHECK(c.same_timings.empty());
}

TEST_CASE("planner: rent as the objective ranks cloud instances; another instance with the same "
          "GPUs is not unused hardware",
          "[plan]") {
  // Two instances of eight H100-SXM (the same timings, different rents) and one of one H100: a
  // zip whose instance is checked against the GPUs its column sets (a column-blind check refused
  // lambda-1x-h100-sxm against the base's eight GPUs).
  const PlanSpec spec = parse_plan_text(
      "name: test-plan\nbase: llama3-70b-rent-base.yaml\n"
      "set: {model.layers: 4, workload.gen_tokens: 4, workload.prompt_tokens: 128}\n"
      "zip:\n"
      "  - hardware.gpu.count: [8, 8, 1]\n"
      "    policy.parallelism.tensor: [8, 8, 1]\n"
      "    economics.cloud_instance: [aws-p5.48xlarge, lambda-8x-h100-sxm, lambda-1x-h100-sxm]\n"
      "objective: rent_usd_per_million_tokens\ntop: 3\n",
      kFile);
  CHECK(spec.objective.sense == Sense::kMinimize);
  PlanOptions o;
  o.threads = 2;
  const PlanResult r = run_plan(spec, catalog(), o);
  REQUIRE(r.best.size() == 3);
  std::vector<double> rent;
  for (const auto& c : r.best) {
    CHECK(c.same_timings.empty());  // each instance listed on its own
    rent.push_back(*metric_value(c.scenario, c.result, "rent_usd_per_million_tokens"));
  }
  CHECK(rent[0] <= rent[1]);
  CHECK(rent[1] <= rent[2]);
  // The two eight-GPU instances: the same run, ranked by their prices ($31.92/h < $55.04/h).
  const auto at = [&](const std::string& instance) {
    for (const auto& c : r.best)
      if (c.point.label.find(instance) != std::string::npos) return &c;
    return static_cast<const Candidate*>(nullptr);
  };
  const Candidate* lambda = at("lambda-8x-h100-sxm");
  const Candidate* aws = at("aws-p5.48xlarge");
  REQUIRE(lambda);
  REQUIRE(aws);
  CHECK(lambda->result.get("total_s") == aws->result.get("total_s"));
  CHECK(*metric_value(aws->scenario, aws->result, "rent_usd_per_million_tokens") /
            *metric_value(lambda->scenario, lambda->result, "rent_usd_per_million_tokens") ==
        Approx(55.04 / 31.92));
  // A column whose instance does not hold its GPUs is refused at the value, naming both.
  CHECK_THROWS_WITH(
      run_plan(parse_plan_text("name: test-plan\nbase: llama3-70b-rent-base.yaml\n"
                               "zip:\n  - hardware.gpu.count: [4]\n"
                               "    economics.cloud_instance: [aws-p5.48xlarge]\n"
                               "objective: rent_usd_per_hour\n",
                               kFile),
               catalog(), o),
      Catch::Contains("test-plan.yaml:5") && Catch::Contains("aws-p5.48xlarge") &&
          Catch::Contains("same GPUs"));
}

TEST_CASE("planner: points differ in hardware only when every differing key is hardware but the "
          "host",
          "[plan]") {
  CHECK(sweep::differ_in_hardware_only("hardware.nvme.count=0 policy.weights=gpu",
                                       "hardware.nvme.count=2 policy.weights=gpu"));
  CHECK(sweep::differ_in_hardware_only("a=1 hardware.host.dram_gb=256", "a=1 hardware.host.dram_gb=512"));
  CHECK_FALSE(sweep::differ_in_hardware_only("hardware.host.model=x", "hardware.host.model=y"));
  CHECK_FALSE(sweep::differ_in_hardware_only("economics.cloud_instance=a", "economics.cloud_instance=b"));
  CHECK_FALSE(sweep::differ_in_hardware_only("policy.io_path=aio hardware.nvme.count=1",
                                             "policy.io_path=gds hardware.nvme.count=1"));
  CHECK(sweep::label_items_not_in("x=1 y=2 z=3", "y=2") == "x=1 z=3");
}
}  // namespace study_planner_test
