// The time breakdown (sim/breakdown.hpp): critical-path time per phase from the engine's busy
// intervals, busy time per phase, and the bottleneck resource of each.
#include "sim/breakdown.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <numeric>
#include <random>
#include <tuple>

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
          "[sim][breakdown][slow][every-scenario]") {
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

namespace {

// The walk in its defining form (sim/breakdown.hpp): every interval clipped to the run, sorted
// latest end first (then earliest start, most work, first resource), and from the end back each
// moment charged to the first interval in that order that ends by it. time_breakdown walks each
// channel's intervals instead of sorting them all; it must charge exactly the same.
// `recorded`: the spans the engine was given, in the order it was given them.
std::vector<PhaseTime> breakdown_by_sorting(const Engine& e, const std::vector<TraceSpan>& recorded,
                                            double makespan_s) {
  struct Acc {
    double path_s = 0, busy_s = 0;
    std::map<int, double> path_by, busy_by;
  };
  std::map<std::tuple<int, bool, std::string>, Acc> acc;
  auto key = [](Stage st, bool waiting, Activity a) {
    return std::make_tuple(static_cast<int>(st), waiting, std::string(waiting ? "" : a.name()));
  };
  std::vector<TraceSpan> spans;
  for (const TraceSpan& s : recorded) {
    acc[key(s.stage, false, s.activity)].busy_by[s.resource] += s.work_s;
    TraceSpan c = s;
    c.end_s = std::min(s.end_s, makespan_s);
    if (c.end_s > c.start_s) spans.push_back(c);
  }
  std::sort(spans.begin(), spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
    if (a.end_s != b.end_s) return a.end_s > b.end_s;
    if (a.start_s != b.start_s) return a.start_s < b.start_s;
    if (a.work_s != b.work_s) return a.work_s > b.work_s;
    return a.resource < b.resource;
  });
  double t = makespan_s;
  Stage last = spans.empty() ? Stage::kNone : spans.front().stage;
  std::size_t i = 0;
  while (t > 0) {
    while (i < spans.size() && spans[i].end_s > t) ++i;
    if (i == spans.size()) {
      acc[key(last, true, {})].path_s += t;
      break;
    }
    const TraceSpan& s = spans[i];
    if (s.end_s < t) acc[key(last, true, {})].path_s += t - s.end_s;
    Acc& a = acc[key(s.stage, false, s.activity)];
    a.path_s += s.end_s - s.start_s;
    a.path_by[s.resource] += s.end_s - s.start_s;
    last = s.stage;
    t = s.start_s;
  }
  std::vector<PhaseTime> out;
  for (auto& [k, a] : acc) {
    PhaseTime p;
    p.stage = static_cast<Stage>(std::get<0>(k));
    p.waiting = std::get<1>(k);
    p.path_s = a.path_s;
    for (const auto& [r, b] : a.busy_by) p.busy_s += b;
    const auto& by = a.path_by.empty() ? a.busy_by : a.path_by;
    int best = -1;
    double best_s = -1;
    for (const auto& [r, s] : by)
      if (s > best_s) best = r, best_s = s;
    if (best >= 0) {
      p.bottleneck = e.resources()[static_cast<std::size_t>(best)]->name();
      p.bottleneck_path_s = a.path_by.empty() ? 0.0 : best_s;
    }
    // The activity by name: the test's spans use the constants below.
    for (Activity act : {kCompute, kWrite, kFetch})
      if (!p.waiting && std::get<2>(k) == act.name()) p.activity = act;
    if (p.path_s > 0 || p.busy_s > 0) out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const PhaseTime& a, const PhaseTime& b) {
    if (a.path_s != b.path_s) return a.path_s > b.path_s;
    return a.busy_s > b.busy_s;
  });
  return out;
}

void check_same(const std::vector<PhaseTime>& got, const std::vector<PhaseTime>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(i);
    CHECK(got[i].stage == want[i].stage);
    CHECK(got[i].waiting == want[i].waiting);
    CHECK(std::string(got[i].activity.name()) == want[i].activity.name());
    CHECK(got[i].path_s == want[i].path_s);  // exactly: the same sums in the same order
    CHECK(got[i].busy_s == want[i].busy_s);
    CHECK(got[i].bottleneck == want[i].bottleneck);
    CHECK(got[i].bottleneck_path_s == want[i].bottleneck_path_s);
  }
}

}  // namespace

TEST_CASE("breakdown: the per-channel walk charges what sorting every interval charges",
          "[sim][breakdown]") {
  // Random runs on resources of one and several channels, on a coarse time grid so that many
  // intervals end together (the tie rules decide), with and without each channel's intervals in
  // the order they happened (recorded out of order, the walk must still give the sorted answer).
  std::mt19937 rng(29);
  const Activity acts[] = {kCompute, kWrite, kFetch};
  const Stage stages[] = {Stage::kPrefill, Stage::kDecode};
  for (int run = 0; run < 200; ++run) {
    INFO("run " << run);
    Engine e;
    e.keep_spans(true);
    e.add_resource(resource::kGpu.at(), WorkUnit::kSeconds, 1.0);
    e.add_resource(resource::kPcieH2d.at(), WorkUnit::kBytes, 1.0, 2);
    e.add_resource(resource::kNvme.at(), WorkUnit::kSeconds, 1.0, 3);
    std::vector<TraceSpan> spans;
    double makespan = 0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < e.resources()[static_cast<std::size_t>(r)]->channels(); ++c) {
        double t = static_cast<double>(rng() % 3);
        const int n = static_cast<int>(rng() % 12);
        for (int k = 0; k < n; ++k) {
          TraceSpan s;
          s.resource = r;
          s.channel = c;
          s.start_s = t;
          s.end_s = t + static_cast<double>(rng() % 4);  // zero-length ones too
          s.work_s = (s.end_s - s.start_s) * (rng() % 2 ? 1.0 : 0.5);
          s.activity = acts[rng() % 3];
          s.stage = stages[rng() % 2];
          spans.push_back(s);
          makespan = std::max(makespan, s.end_s);
          t = s.end_s + static_cast<double>(rng() % 3);
        }
      }
    if (run % 2) std::shuffle(spans.begin(), spans.end(), rng);
    for (const TraceSpan& s : spans) e.record(s);
    // Now and then a makespan that clips the last intervals.
    const double end = run % 5 == 0 && makespan > 1 ? makespan - 1 : makespan;
    if (end <= 0) continue;
    check_same(time_breakdown(e, end), breakdown_by_sorting(e, spans, end));
  }
}
}  // namespace sim_breakdown_test
