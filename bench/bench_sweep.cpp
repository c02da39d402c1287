// Sweep throughput: scenarios simulated per second on one core and on all cores (load + simulate,
// as a sweep does it), and how the time per scenario grows with layers, generated tokens (passes)
// and batch. Llama-3-70B on one H200 with its weights streamed from NVMe.
//
//   build-swp/bench/bench_sweep --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <string>
#include <thread>
#include <vector>

#include "config/catalog.hpp"
#include "config/scenario_loader.hpp"
#include "sim/simulate.hpp"
#include "study/sweep.hpp"

namespace {

using namespace tiersim;

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
const std::string kBase = kData + "/sweeps/llama3-70b-h200-base.yaml";

const config::Catalog& catalog() {
  static const config::Catalog c = config::Catalog::load(kData);  // read-only after first use
  return c;
}

Scenario scenario(std::vector<std::string> overrides) {
  config::LoadOptions o;
  o.overrides = std::move(overrides);
  o.catalog = &catalog();
  return config::load_scenario(kBase, o);
}

// Simulation alone (the scenario is loaded once).
void simulate_loop(benchmark::State& state, const Scenario& s) {
  std::uint64_t events = 0;
  for (auto _ : state) {
    auto r = sim::simulate(s);
    events = r.events;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());  // items = scenarios
  state.counters["events"] = double(events);
  state.counters["events/s"] = benchmark::Counter(double(events) * double(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_SimulateLayers(benchmark::State& state) {
  simulate_loop(state, scenario({"model.layers=" + std::to_string(state.range(0))}));
}
BENCHMARK(BM_SimulateLayers)->Arg(10)->Arg(20)->Arg(40)->Arg(80)->Unit(benchmark::kMillisecond);

void BM_SimulateGenTokens(benchmark::State& state) {
  simulate_loop(state, scenario({"workload.gen_tokens=" + std::to_string(state.range(0))}));
}
BENCHMARK(BM_SimulateGenTokens)->Arg(8)->Arg(16)->Arg(32)->Arg(64)->Arg(128)->Unit(benchmark::kMillisecond);

void BM_SimulateBatch(benchmark::State& state) {
  simulate_loop(state, scenario({"workload.batch=" + std::to_string(state.range(0))}));
}
BENCHMARK(BM_SimulateBatch)->Arg(1)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

// Loading alone: the per-point cost a sweep pays before simulating.
void BM_LoadScenario(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(scenario({"workload.batch=32", "hardware.nvme.count=8"}));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LoadScenario)->Unit(benchmark::kMicrosecond);

// A sweep of Llama-3-70B variants as `tiersim sweep` runs it (load + simulate per point on a
// thread pool, results to the calling thread), without the database. Arg: threads (0 = all).
void BM_SweepPoints(benchmark::State& state) {
  const sweep::SweepSpec spec = sweep::parse_sweep_text(
      "name: bench\n"
      "base: llama3-70b-h200-base.yaml\n"
      "grid:\n"
      "  workload.batch: {from: 8, to: 256, factor: 2}\n"
      "  hardware.nvme.count: [1, 2, 4, 8]\n"
      "  hardware.nvme.model: [generic-gen4, generic-gen5]\n"
      "  policy.io_path: [aio, gds]\n",
      kData + "/sweeps/bench.yaml");
  std::vector<std::size_t> idx(spec.space.point_count());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  sweep::RunOptions opts;
  opts.threads = static_cast<int>(state.range(0));
  std::size_t done = 0;
  for (auto _ : state)
    sweep::run_points(spec.space, idx, catalog(), opts, [&](sweep::Outcome&& o) {
      benchmark::DoNotOptimize(o);
      ++done;
    });
  state.SetItemsProcessed(static_cast<std::int64_t>(done));  // items/s = scenarios per second
  state.counters["threads"] = opts.threads > 0 ? opts.threads : double(std::thread::hardware_concurrency());
}
BENCHMARK(BM_SweepPoints)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
