// Sweep throughput: scenarios simulated per second on one core and on all cores (load + simulate,
// as a sweep does it), and how the time per scenario grows with layers, generated tokens (passes)
// and batch. Llama-3-70B on one H200 with its weights streamed from NVMe.
//
//   build-swp/bench/bench_sweep --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
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

// The base scenario (4 Gen5 drives, 32 tokens) by I/O path: AIO bounces each read through a
// pinned buffer (InferenceSim's fetch loop with bounce copies), GDS reads straight into the GPU.
// Arg: 0 = gds, 1 = aio.
void BM_SimulateIoPath(benchmark::State& state) {
  simulate_loop(state,
                scenario({std::string("policy.io_path=") + (state.range(0) ? "aio" : "gds")}));
}
BENCHMARK(BM_SimulateIoPath)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

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

// The catalogs as every process reads them once (`tiersim run` pays this on each start).
void BM_LoadCatalog(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(config::Catalog::load(kData));
}
BENCHMARK(BM_LoadCatalog)->Unit(benchmark::kMicrosecond);

// What `tiersim run` does before simulating: read the catalogs and load the scenario file.
void BM_LoadRunScenario(benchmark::State& state) {
  const std::string file = kData + "/inference/llama3-70b-h200-4x-gen5-gds.yaml";
  config::LoadOptions o;
  o.data_dir = kData;
  for (auto _ : state) benchmark::DoNotOptimize(config::load_scenario(file, o));
}
BENCHMARK(BM_LoadRunScenario)->Unit(benchmark::kMicrosecond);

const sweep::SweepSpec& drives_sweep() {
  static const sweep::SweepSpec spec =
      sweep::parse_sweep_file(kData + "/sweeps/llama3-70b-drives.yaml");  // read-only after
  return spec;
}

// One sweep point's scenario (base plus axis overrides), cycling through the drives sweep.
void BM_LoadPoint(benchmark::State& state) {
  const sweep::SweepSpec& spec = drives_sweep();
  std::size_t i = 0;
  for (auto _ : state) {
    const sweep::Point p = sweep::point_at(spec.space, i++ % spec.space.point_count());
    benchmark::DoNotOptimize(sweep::load_point(spec.space, p, catalog()));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LoadPoint)->Unit(benchmark::kMicrosecond);

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

// The whole `tiersim sweep` minus process start: the drives sweep into a fresh results database
// (one commit per point), as run_sweep does it. Arg: threads (0 = all).
void BM_SweepStore(benchmark::State& state) {
  const sweep::SweepSpec& spec = drives_sweep();
  const auto db = std::filesystem::temp_directory_path() /
                  ("tiersim-bench-sweep-" + std::to_string(::getpid()) + ".db");
  sweep::RunOptions opts;
  opts.threads = static_cast<int>(state.range(0));
  std::size_t points = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + ext);
    state.ResumeTiming();
    sweep::SweepStore store(db.string());
    const auto sum = sweep::run_sweep(spec, store, catalog(), opts, "bench", nullptr);
    points += sum.points;
  }
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + ext);
  state.SetItemsProcessed(static_cast<std::int64_t>(points));  // items/s = points per second
}
BENCHMARK(BM_SweepStore)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
