// Engine and scenario speed: simulated events per second on a synthetic load, and the time to
// simulate the Llama-3-70B H200 scenario end to end (loading excluded).
#include <benchmark/benchmark.h>

#include "config/scenario_loader.hpp"
#include "sim/engine/engine.hpp"
#include "sim/simulate.hpp"

namespace {

using tiersim::sim::Engine;
using tiersim::sim::Resource;
using tiersim::sim::ResourceRole;
using tiersim::sim::Task;
using tiersim::sim::WorkUnit;

Task worker(Resource& link, Resource& gpu, int steps) {
  for (int i = 0; i < steps; ++i) {
    co_await link.use(1e6);
    co_await gpu.use(1e-3);
  }
}

// Many processes contending for two resources: every co_await is one scheduled event.
void BM_EngineEvents(benchmark::State& state) {
  const int processes = static_cast<int>(state.range(0));
  const int steps = 1000;
  std::uint64_t events = 0;
  for (auto _ : state) {
    Engine engine;
    Resource& link = engine.add_resource({ResourceRole::kPcieH2d, "link"}, WorkUnit::kBytes, 25e9);
    Resource& gpu = engine.add_resource({ResourceRole::kGpu, "gpu"}, WorkUnit::kSeconds, 1.0, 4);
    for (int p = 0; p < processes; ++p) engine.spawn(worker(link, gpu, steps));
    engine.run();
    events += engine.events_processed();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineEvents)->Arg(1)->Arg(16)->Arg(256)->Unit(benchmark::kMillisecond);

void BM_SimulateScenario(benchmark::State& state, const char* file) {
  const tiersim::Scenario scenario =
      tiersim::config::load_scenario(std::string(TIERSIM_SOURCE_DIR) + "/" + file);
  std::uint64_t events = 0;
  for (auto _ : state) {
    auto result = tiersim::sim::simulate(scenario);
    events += result.events;
    benchmark::DoNotOptimize(result);
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_scenario"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
}
BENCHMARK_CAPTURE(BM_SimulateScenario, llama3_70b_h200_4x_gen5,
                  "scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulateScenario, opt30b_6xl40s, "scenarios/inference/opt30b-6xl40s-no-offload.yaml")
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
