// The time breakdown (sim/breakdown.hpp): critical-path time per phase from the engine's busy
// intervals, busy time per phase, and the bottleneck resource of each.
#include "sim/breakdown.hpp"

#include <catch2/catch.hpp>
#include <numeric>

#include "config/scenario_loader.hpp"
#include "sim/metrics.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/checkpoint/names.hpp"
#include "sim/workloads/inference/metrics.hpp"
#include "sim/workloads/inference/names.hpp"
#include "sim/workloads/names.hpp"
#include "tests/support.hpp"

namespace sim_breakdown_test {

using namespace tiersim;
using namespace tiersim::sim;

namespace {

constexpr Activity kCompute = activity::kCompute;
constexpr Activity kWrite = activity::kKvOffload;
constexpr Activity kFetch = activity::kWeightsNvme;

config::LoadOptions source_tree() {
  config::LoadOptions o;
  o.data_dir = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
  return o;
}

const PhaseTime* find_phase(const std::vector<PhaseTime>& phases, Stage stage, Activity a,
                            bool waiting = false) {
  for (const auto& p : phases)
    if (p.stage == stage && p.waiting == waiting && (waiting || p.activity == a)) return &p;
  return nullptr;
}

double path_sum(const std::vector<PhaseTime>& phases) {
  return std::accumulate(phases.begin(), phases.end(), 0.0,
                         [](double s, const PhaseTime& p) { return s + p.path_s; });
}

// Computes one layer (1 s), then writes its KV cache out (3 s) while the next layer computes:
// the writes queue on the link, and the run ends when the last one does.
Task layers_with_writes(Engine& e, Resource& gpu, Resource& link, int layers) {
  for (int i = 0; i < layers; ++i) {
    co_await gpu.use(1.0, Tag{kCompute, 0, i, 1.0, Stage::kPrefill});
    e.spawn([](Resource& l, int item) -> Task {
      co_await l.use(3.0, Tag{kWrite, 0, item, 1.0, Stage::kPrefill});
    }(link, i));
  }
}

}  // namespace

TEST_CASE("breakdown: a write-back queue the run waits on is charged the wall time",
          "[sim][breakdown]") {
  Engine e;
  e.keep_spans(true);
  Resource& gpu = e.add_resource(resource::kGpu.at(), WorkUnit::kSeconds, 1.0);
  Resource& link = e.add_resource(resource::kPcieD2h.at(), WorkUnit::kSeconds, 1.0);
  e.spawn(layers_with_writes(e, gpu, link, 4));
  e.run();
  // Compute ends at 4 s; the writes start at 1 s and run back to back: 1 + 4 x 3 = 13 s.
  REQUIRE(e.now() == Approx(13.0));
  const auto phases = time_breakdown(e, e.now());
  const PhaseTime* write = find_phase(phases, Stage::kPrefill, kWrite);
  const PhaseTime* compute = find_phase(phases, Stage::kPrefill, kCompute);
  REQUIRE(write);
  REQUIRE(compute);
  // The chain back from the end: four writes (12 s), then the first layer's compute (1 s).
  CHECK(write->path_s == Approx(12.0));
  CHECK(compute->path_s == Approx(1.0));
  CHECK(path_sum(phases) == Approx(e.now()));
  // Busy counts all of compute's work, hidden or not.
  CHECK(compute->busy_s == Approx(4.0));
  CHECK(write->busy_s == Approx(12.0));
  CHECK(write->bottleneck == "pcie-d2h");
  CHECK(compute->bottleneck == "gpu");
  // Largest first.
  CHECK(&phases.front() == write);
}

TEST_CASE("breakdown: time no resource is busy is waiting, in the stage of the work after it",
          "[sim][breakdown]") {
  Engine e;
  e.keep_spans(true);
  Resource& gpu = e.add_resource(resource::kGpu.at(), WorkUnit::kSeconds, 1.0);
  e.spawn([](Engine& en, Resource& g) -> Task {
    co_await g.use(1.0, Tag{kCompute, 0, 0, 1.0, Stage::kPrefill});
    co_await en.delay(2.0);  // a latency on no resource
    co_await g.use(1.0, Tag{kCompute, 1, 0, 1.0, Stage::kDecode});
  }(e, gpu));
  e.run();
  const auto phases = time_breakdown(e, e.now());
  const PhaseTime* wait = find_phase(phases, Stage::kDecode, {}, true);
  REQUIRE(wait);
  CHECK(wait->path_s == Approx(2.0));
  CHECK(wait->bottleneck.empty());
  CHECK(find_phase(phases, Stage::kPrefill, kCompute)->path_s == Approx(1.0));
  CHECK(find_phase(phases, Stage::kDecode, kCompute)->path_s == Approx(1.0));
  CHECK(path_sum(phases) == Approx(4.0));
}

TEST_CASE("breakdown: a flow's bottleneck is its narrowest resource, overlapped work is off the path",
          "[sim][breakdown]") {
  Engine e;
  e.keep_spans(true);
  Resource& nvme = e.add_resource(resource::kNvme.at(), WorkUnit::kBytes, 1.0);
  Resource& h2d = e.add_resource(resource::kPcieH2d.at(), WorkUnit::kBytes, 4.0);
  Resource& gpu = e.add_resource(resource::kGpu.at(), WorkUnit::kSeconds, 1.0);
  e.spawn([](Engine& en, Resource& n, Resource& l, Resource& g) -> Task {
    // 0.5 s of compute runs alongside a 2 s fetch (NVMe 2 s, the link 0.5 s), then 1 s of
    // compute needs the fetched weights.
    en.spawn([](Resource& gg) -> Task {
      co_await gg.use(0.5, Tag{kCompute, 0, 0, 1.0, Stage::kDecode});
    }(g));
    co_await en.use_pair({&n, 2.0}, {&l, 2.0}, Tag{kFetch, 0, 1, 1.0, Stage::kDecode});
    co_await g.use(1.0, Tag{kCompute, 0, 1, 1.0, Stage::kDecode});
  }(e, nvme, h2d, gpu));
  e.run();
  const auto phases = time_breakdown(e, e.now());
  const PhaseTime* fetch = find_phase(phases, Stage::kDecode, kFetch);
  REQUIRE(fetch);
  CHECK(fetch->path_s == Approx(2.0));
  CHECK(fetch->bottleneck == "nvme");
  CHECK(fetch->busy_s == Approx(2.5));  // 2 s on the drive, 0.5 s on the link
  // The first compute step hid behind the fetch: busy, but not on the path.
  CHECK(find_phase(phases, Stage::kDecode, kCompute)->path_s == Approx(1.0));
  CHECK(find_phase(phases, Stage::kDecode, kCompute)->busy_s == Approx(1.5));
}

TEST_CASE("breakdown: nothing without kept spans",
          "[sim][breakdown]") {
  Engine plain;
  Resource& g = plain.add_resource(resource::kGpu.at(), WorkUnit::kSeconds, 1.0);
  plain.spawn([](Resource& r) -> Task { co_await r.use(1.0); }(g));
  plain.run();
  CHECK(time_breakdown(plain, plain.now()).empty());
  CHECK(plain.trace().empty());
}

TEST_CASE("breakdown: phase metric names", "[sim][breakdown][metrics]") {
  PhaseTime p;
  p.stage = Stage::kPrefill;
  p.activity = activity::kKvOffload;
  CHECK(phase_metric_name(p) == "phase_prefill_kv_offload_s");
  CHECK(phase_label(p) == "KV cache write-back to host");
  p.waiting = true;
  p.stage = Stage::kDecode;
  CHECK(phase_metric_name(p) == "phase_decode_waiting_s");
  p.waiting = false;
  p.stage = Stage::kNone;
  p.activity = activity::kCheckpointWrite;
  CHECK(phase_metric_name(p) == "phase_checkpoint_write_s");
  for (const char* name : {"phase_prefill_kv_offload_s", "phase_decode_waiting_s",
                           "phase_checkpoint_write_s", "phase_untagged_s",
                           "phase_decode_weights_nvme_s"}) {
    INFO(name);
    CHECK(is_phase_metric_name(name));
    REQUIRE(find_metric(name) != nullptr);
    CHECK(find_metric(name)->unit == "s");
  }
  for (const char* name : {"phase_s", "phase_prefill_s", "phase_nonsense_s", "prefill_s",
                           "phase_prefill_kv_offload"})
    CHECK_FALSE(is_phase_metric_name(name));
}

TEST_CASE("breakdown: every shipped scenario's phases add up to total_s and change no metric",
          "[sim][breakdown][slow]") {
  int runs = 0;
  for (const std::string& file : test::shipped_scenario_files()) {
    INFO(file);
    const Scenario s = config::load_scenario(file, source_tree());
    SimOptions with;
    with.breakdown = true;
    const RunResult plain = simulate(s);
    const RunResult r = simulate(s, with);
    if (!r.fits) continue;
    CHECK(plain.phases.empty());
    REQUIRE_FALSE(r.phases.empty());
    // The makespan: total_s, where the workload reports one (training reports per iteration; its
    // breakdown covers the iterations it simulated).
    // FlexGen's fewer_batch mode simulates the prefill and part of one decode step and projects
    // the rest into total_s: its phases cover what was simulated.
    if (const auto total = r.find(metric::kTotalS); total && s.policy.flexgen.debug_fewer_batch)
      CHECK(path_sum(r.phases) < *total);
    else if (total)
      CHECK(path_sum(r.phases) == Approx(*total).epsilon(1e-9).margin(1e-12));
    else
      CHECK(path_sum(r.phases) > 0);
    // The same run otherwise: every metric of the plain run, with the same value.
    for (const auto& m : plain.metrics) {
      INFO(m.name);
      REQUIRE(r.find(m.name));
      CHECK(*r.find(m.name) == m.value);
    }
    // Each phase is a metric of its own.
    for (const auto& p : r.phases) CHECK(r.get(phase_metric_name(p)) == p.path_s);
    ++runs;
  }
  CHECK(runs > 40);
}

TEST_CASE("breakdown: OPT-30B on one L40S with the KV cache in DRAM spends prefill writing it",
          "[sim][breakdown]") {
  // The case of issue 33: the prompt's KV cache written to host memory is most of prefill.
  const Scenario s = config::load_scenario(
      std::string(TIERSIM_SOURCE_DIR) + "/scenarios/inference/opt30b-l40s-dram.yaml", source_tree());
  SimOptions o;
  o.breakdown = true;
  const RunResult r = simulate(s, o);
  REQUIRE(r.fits);
  const PhaseTime* write = find_phase(r.phases, Stage::kPrefill, activity::kKvOffload);
  REQUIRE(write);
  const double prefill = r.get(metric::kPrefillS);
  double prefill_path = 0;
  for (const auto& p : r.phases)
    if (p.stage == Stage::kPrefill) prefill_path += p.path_s;
  INFO("prefill " << prefill << " s, KV write-back " << write->path_s << " s");
  CHECK(write->path_s > 0.5 * prefill);
  // ZeRO-Inference's copy of the prompt's K/V into pageable host memory is bound by the CPU
  // thread that faults the pages in (sim/workloads/inference/inference.cpp), not by the link.
  CHECK(write->bottleneck == "cpu");
  for (const auto& p : r.phases)
    if (p.stage == Stage::kPrefill) CHECK(p.path_s <= write->path_s);
}

TEST_CASE("breakdown: a phase reads back from its metric name", "[sim][breakdown][metrics]") {
  for (const Stage stage : {Stage::kNone, Stage::kPrefill, Stage::kDecode})
    for (const Activity a : declared_activities())
      for (const bool waiting : {false, true}) {
        PhaseTime p;
        p.stage = stage;
        p.activity = waiting ? Activity{} : a;
        p.waiting = waiting;
        const std::string name = phase_metric_name(p);
        INFO(name);
        const auto back = parse_phase_metric_name(name);
        REQUIRE(back);
        CHECK(back->stage == stage);
        CHECK(back->waiting == waiting);
        CHECK(back->activity == p.activity);
      }
}
}  // namespace sim_breakdown_test
