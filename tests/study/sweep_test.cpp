// Sweeps: axis expansion and its errors, resume without duplicates, result serialization.
#include <catch2/catch.hpp>

#include <cstdint>

#include "tests/temp_dir.hpp"
#include "config/catalog.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"
#include "store/results_store.hpp"
#include "study/sweep.hpp"

namespace study_sweep_test {

using namespace tiersim;
using namespace tiersim::sweep;

namespace {

const std::string kData = std::string(TIERSIM_SOURCE_DIR) + "/scenarios";
// Parsed as if it lived next to the shipped sweeps, so `base` resolves there.
const std::string kFile = kData + "/sweeps/test-sweep.yaml";

const config::Catalog& catalog() {
  static const config::Catalog c = config::Catalog::load(kData);  // read-only after first use
  return c;
}

// A small, fast sweep: 4 layers, 4 generated tokens, 2 x 3 x 2 = 12 points.
const char* kSmall =
    "name: test-small\n"
    "base: llama3-70b-h200-base.yaml\n"
    "set: {model.layers: 4, workload.gen_tokens: 4}\n"
    "grid:\n"
    "  workload.batch: [8, 16]\n"
    "  hardware.nvme.count: {from: 1, to: 4, factor: 2}\n"
    "  policy.io_path: [aio, gds]\n";

}  // namespace

TEST_CASE("sweep axes expand as a grid product with zipped groups and ranges", "[sweep]") {
  const SweepSpec s = parse_sweep_text(
      "name: t\n"
      "base: llama3-70b-h200-base.yaml\n"
      "grid:\n"
      "  workload.batch: {from: 16, to: 64, step: 16}\n"      // 16 32 48 64
      "  policy.weights: {split: [gpu, cpu], from: 0, to: 1, step: 0.5}\n"  // 3 values
      "zip:\n"
      "  - {hardware.nvme.count: [2, 4], hardware.nvme.model: [generic-gen4, generic-gen5]}\n",
      kFile);
  REQUIRE(s.space.axes.size() == 3);
  CHECK(s.space.point_count() == 4 * 3 * 2);
  const Point first = point_at(s.space, 0);
  CHECK(first.label ==
        "workload.batch=16 policy.weights={gpu: 0, cpu: 1} hardware.nvme.count=2 hardware.nvme.model=generic-gen4");
  const Point last = point_at(s.space, s.space.point_count() - 1);
  CHECK(last.label ==
        "workload.batch=64 policy.weights={gpu: 1, cpu: 0} hardware.nvme.count=4 hardware.nvme.model=generic-gen5");
  // Last axis fastest.
  CHECK(point_at(s.space, 1).label.find("hardware.nvme.count=4") != std::string::npos);

  const SweepSpec g = parse_sweep_text(
      "name: g\nbase: llama3-70b-h200-base.yaml\ngrid:\n  hardware.nvme.count: {from: 1, to: 8, factor: 2}\n"
      "  policy.weights: {split: [gpu, cpu], from: 0, to: 0.3, step: 0.1}\n",
      kFile);
  CHECK(g.space.axes[0].size() == 4);
  REQUIRE(g.space.axes[1].size() == 4);
  CHECK(g.space.axes[1].values[0][3].yaml == "{gpu: 0.3, cpu: 0.7}");  // no binary noise
  // Every split point loads (fractions sum to 1 within the loader's tolerance).
  for (std::size_t i = 0; i < g.space.point_count(); ++i)
    CHECK_NOTHROW(load_point(g.space, point_at(g.space, i), catalog()));
}

TEST_CASE("an axis over a whole section sets each of its keys, as the sweep README shows",
          "[sweep]") {
  // scenarios/sweeps/README.md documents `hardware.gpu: [{model: H200, count: 2}]`; every point of
  // it used to be invalid ("is a section").
  const SweepSpec s = parse_sweep_text(
      "name: sections\nbase: llama3-70b-h200-base.yaml\ngrid:\n"
      "  hardware.gpu: [{model: H200, count: 1}, {model: H100-SXM, count: 1}]\n",
      kFile);
  REQUIRE(s.space.point_count() == 2);
  const Scenario h100 = load_point(s.space, point_at(s.space, 1), catalog());
  CHECK(h100.hardware.gpu.name == "H100-SXM");
  CHECK(h100.hardware.gpu.memory_mib == 81559);  // the catalog entry, not the base's H200
  CHECK(load_point(s.space, point_at(s.space, 0), catalog()).hardware.gpu.name == "H200");
}

TEST_CASE("bad sweep files name the file, line and key", "[sweep]") {
  auto error_of = [](const std::string& text) {
    try {
      const SweepSpec s = parse_sweep_text(text, kFile);
      check_axis_values(s.space, catalog());
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "name: t\nbase: llama3-70b-h200-base.yaml\ngrid:\n";
  CHECK_THAT(error_of(head + "  workload.bach: [1, 2]\n"),
             Catch::Contains("test-sweep.yaml:4") && Catch::Contains("did you mean 'workload.batch'"));
  CHECK_THAT(error_of(head + "  hardware.nvme.model: [generic-gen4, generic-gen6]\n"),
             Catch::Contains("test-sweep.yaml:4") && Catch::Contains("hardware.nvme.model") &&
                 Catch::Contains("generic-gen6"));
  CHECK_THAT(error_of(head + "  workload.batch: [8,\n    -1]\n"),
             Catch::Contains("test-sweep.yaml:5") && Catch::Contains("workload.batch"));
  CHECK_THAT(error_of(head + "  workload.batch: {from: 8, to: 4, step: 1}\n"), Catch::Contains("`to` must be >="));
  CHECK_THAT(error_of(head + "  workload.batch: {from: 8, to: 16}\n"), Catch::Contains("step"));
  CHECK_THAT(error_of(head + "  workload.batch: {from: 8, to: 16, stride: 2}\n"), Catch::Contains("stride"));
  CHECK_THAT(error_of("name: t\nbase: llama3-70b-h200-base.yaml\nzip:\n"
                      "  - {workload.batch: [1, 2], hardware.nvme.count: [1, 2, 4]}\n"),
             Catch::Contains("same length"));
  // A value twice on one axis, or a row twice in a zip group.
  CHECK_THAT(error_of(head + "  workload.batch: [1, 2,\n    1]\n"),
             Catch::Contains("test-sweep.yaml:5: workload.batch: the value 1 is listed twice"));
  CHECK_THAT(error_of("name: t\nbase: llama3-70b-h200-base.yaml\nzip:\n"
                      "  - {workload.batch: [1, 2, 1], hardware.nvme.count: [1, 2, 1]}\n"),
             Catch::Contains("the value 1, 1 is listed twice"));
  CHECK(error_of("name: t\nbase: llama3-70b-h200-base.yaml\nzip:\n"
                 "  - {workload.batch: [1, 2, 1], hardware.nvme.count: [1, 2, 4]}\n") ==
        "no error");
  // One key on two axes: named where it appears again.
  CHECK_THAT(error_of(head + "  workload.batch: [1, 2]\nzip:\n"
                             "  - {workload.batch: [4, 8], hardware.nvme.count: [1, 2]}\n"),
             Catch::Contains("test-sweep.yaml:6: workload.batch: appears on more than one axis"));
  CHECK_THAT(error_of("name: t\nbase: nowhere.yaml\ngrid: {workload.batch: [1]}\n"),
             Catch::Contains("does not exist"));
  // Found by the fuzz target: a base name longer than the file system allows escaped as a
  // std::filesystem::filesystem_error ("File name too long"), an internal error.
  std::string long_base = "name: t\nbase: ";
  long_base.append(5000, 'x');
  long_base += "\ngrid: {workload.batch: [1]}\n";
  CHECK_THAT(error_of(long_base),
             Catch::Contains("test-sweep.yaml:2") && Catch::Contains("does not exist"));
  CHECK_THAT(error_of("name: t\nbase: llama3-70b-h200-base.yaml\ngird: {workload.batch: [1]}\n"),
             Catch::Contains("did you mean 'grid'"));
  // Inside a section's map value too: each key is read through its own option, and the error
  // names the value's line, once (not the file and key again inside the message).
  const std::string section = error_of(
      head + "  hardware.gpu:\n    - {model: H200, count: 1}\n    - {model: H20O, count: 2}\n");
  CHECK_THAT(section, Catch::Contains("test-sweep.yaml:6: hardware.gpu: value") &&
                          Catch::Contains("did you mean 'H200'"));
  CHECK_THAT(error_of(head + "  hardware.gpu: [{model: H200, cuont: 2}]\n"),
             Catch::Contains("test-sweep.yaml:4") && Catch::Contains("hardware.gpu.cuont") &&
                 Catch::Contains("did you mean 'count'"));
  const std::string sum = error_of(head + "  policy.kv_cache: [{gpu: 0.5, cpu: 0.6}]\n");
  CHECK_THAT(sum, Catch::Contains("fractions must sum to 1"));
  CHECK(sum.find("test-sweep.yaml", 1) == sum.rfind("test-sweep.yaml"));  // the file named once
}

TEST_CASE("a sweep stopped part-way resumes without losing or duplicating points", "[sweep]") {
  test::TempDir dir;
  const std::string db = dir.file("results.db");
  const SweepSpec spec = parse_sweep_text(kSmall, kFile);
  const std::size_t total = spec.space.point_count();
  REQUIRE(total == 12);
  RunOptions opts;
  opts.threads = 2;
  {
    SweepStore store(db);
    // "Killed" after 5 stored points: the points in flight are dropped, as a kill would.
    const auto first = run_sweep(spec, store, catalog(), opts, "test", nullptr, 5);
    CHECK(first.simulated + first.no_fit == 5);
    CHECK(store.run_count("test-small") == 5);
  }
  {
    SweepStore store(db);  // a new process would reopen the file
    const auto second = run_sweep(spec, store, catalog(), opts, "test", nullptr);
    CHECK(second.skipped == 5);
    CHECK(second.simulated + second.no_fit == total - 5);
    CHECK(store.run_count("test-small") == total);
  }
  {
    SweepStore store(db);
    const auto third = run_sweep(spec, store, catalog(), opts, "test", nullptr);
    CHECK(third.skipped == total);
    CHECK(third.simulated == 0);
    CHECK(store.run_count("test-small") == total);
    CHECK(store.done_hashes("test-small").size() == total);  // one row per distinct scenario
  }
}

TEST_CASE("point counts are checked against the limit without overflow, naming the key",
          "[sweep]") {
  // Four axes of 65,536 values multiply to 2^64, which wrapped to "0 points" and a finished
  // sweep; two axes already pass the limit.
  std::string grid = "name: huge\nbase: llama3-70b-h200-base.yaml\ngrid:\n";
  for (const char* key : {"workload.batch", "workload.gen_tokens", "workload.prompt_tokens",
                          "hardware.nvme.count"})
    grid += std::string("  ") + key + ": {from: 1, to: 65536, step: 1}\n";
  try {
    parse_sweep_text(grid, kFile);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("test-sweep.yaml:5: workload.gen_tokens"));
    CHECK_THAT(e.what(), Catch::Contains("more than 100000000 points"));
  }
  PointSpace space;
  space.axes.resize(4);
  for (auto& a : space.axes) {
    a.keys = {"k"};
    a.values = {std::vector<AxisValue>(65536)};
  }
  CHECK(space.point_count() == SIZE_MAX);  // saturates instead of wrapping to 0
  CHECK_THROWS_AS(check_point_count(space, kMaxSweepPoints, "sweep"), ConfigError);
}

TEST_CASE("a sweep re-run under its name with an edited grid is refused, not mixed", "[sweep]") {
  test::TempDir dir;
  const std::string db = dir.file("results.db");
  const SweepSpec spec = parse_sweep_text(kSmall, kFile);
  RunOptions opts;
  opts.threads = 1;
  {
    SweepStore store(db);
    run_sweep(spec, store, catalog(), opts, "test", nullptr, 2);
  }
  std::string edited = kSmall;
  edited.replace(edited.find("[8, 16]"), 7, "[8, 32]");
  const SweepSpec changed = parse_sweep_text(edited, kFile);
  SweepStore store(db);
  try {
    run_sweep(changed, store, catalog(), opts, "test", nullptr);
    FAIL("the edited sweep ran into the old one's points");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("2 points of a sweep named 'test-small'"));
    CHECK_THAT(e.what(), Catch::Contains("new name"));
  }
  CHECK(store.run_count("test-small") == 2);
  // The unchanged definition still resumes.
  CHECK(run_sweep(spec, store, catalog(), opts, "test", nullptr).skipped == 2);
}

TEST_CASE("points that do not fit are stored with the reason; invalid points are recorded", "[sweep]") {
  test::TempDir dir;
  const SweepSpec spec = parse_sweep_text(
      "name: fit\nbase: llama3-70b-h200-base.yaml\nset: {model.layers: 4, workload.gen_tokens: 2}\n"
      "grid:\n"
      "  hardware.gpu.memory_mib: [1024, 143771]\n"  // 1 GiB: the driver reserve, the context and a layer buffer do not fit
      "  hardware.nvme.count: [0, 1]\n",      // weights on NVMe without drives: invalid
      kFile);
  SweepStore store(dir.file("r.db"));
  RunOptions opts;
  opts.threads = 2;
  const auto sum = run_sweep(spec, store, catalog(), opts, "test", nullptr);
  CHECK(sum.no_fit == 1);
  CHECK(sum.simulated == 1);
  CHECK(sum.invalid == 2);
  CHECK(store.run_count("fit") == 2);
  CHECK(store.failure_count("fit") == 2);
  bool found = false;
  for (const auto& r : store.results().runs())
    if (!r.fits) {
      found = true;
      CHECK_THAT(r.shortfall, Catch::Contains("gpu needs"));
    }
  CHECK(found);
}

TEST_CASE("run results survive serialization between ranks", "[sweep]") {
  const SweepSpec spec = parse_sweep_text(kSmall, kFile);
  const Scenario s = load_point(spec.space, point_at(spec.space, 3), catalog());
  const sim::RunResult r = sim::simulate(s);
  const sim::RunResult back = deserialize_result(serialize_result(r));
  CHECK(back.fits == r.fits);
  CHECK(back.bottleneck == r.bottleneck);
  REQUIRE(back.metrics.size() == r.metrics.size());
  for (std::size_t i = 0; i < r.metrics.size(); ++i) {
    CHECK(back.metrics[i].name == r.metrics[i].name);
    CHECK(back.metrics[i].value == r.metrics[i].value);  // bit for bit
  }
  CHECK(back.memory.size() == r.memory.size());
  CHECK(back.utilization.size() == r.utilization.size());
}

TEST_CASE("a point's outcome survives the message between ranks", "[sweep]") {
  const SweepSpec spec = parse_sweep_text(kSmall, kFile);
  Outcome o;
  o.point = point_at(spec.space, 5);
  o.scenario = load_point(spec.space, o.point, catalog());
  o.result = sim::simulate(*o.scenario);
  const Outcome back = decode_outcome(encode_outcome(o), spec.space, catalog());
  CHECK(back.point.index == 5);
  CHECK(back.point.label == o.point.label);
  CHECK(back.status == Status::kSimulated);
  REQUIRE(back.scenario);
  CHECK(back.scenario->hash == o.scenario->hash);  // rebuilt from the index, not sent
  CHECK(back.result.get("throughput_tokens_per_s") == o.result.get("throughput_tokens_per_s"));

  // An invalid point carries its reason and no result or scenario.
  Outcome bad;
  bad.point = point_at(spec.space, 2);
  bad.status = Status::kInvalid;
  bad.error = "weights on nvme with no drives";
  const Outcome bad_back = decode_outcome(encode_outcome(bad), spec.space, catalog());
  CHECK(bad_back.status == Status::kInvalid);
  CHECK(bad_back.error == bad.error);
  CHECK_FALSE(bad_back.scenario);
}

TEST_CASE("the runner gives the same results on one thread and on many", "[sweep]") {
  const SweepSpec spec = parse_sweep_text(kSmall, kFile);
  std::vector<std::size_t> idx(spec.space.point_count());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  auto collect = [&](int threads) {
    std::vector<double> tput(idx.size());
    RunOptions o;
    o.threads = threads;
    run_points(spec.space, idx, catalog(), o, [&](Outcome&& out) {
      tput[out.point.index] = out.result.get("throughput_tokens_per_s");
    });
    return tput;
  };
  CHECK(collect(1) == collect(4));
}

TEST_CASE("points load through their typed settings as through their override text", "[sweep][setting]") {
  // Valid and invalid points (a drive count of 0 with weights on NVMe, a batch out of range),
  // sections given as maps and placement maps.
  const SweepSpec s = parse_sweep_text(
      "name: t\n"
      "base: llama3-70b-h200-base.yaml\n"
      "set: {model.layers: 4, workload.gen_tokens: 4}\n"
      "grid:\n"
      "  hardware.nvme: [{model: generic-gen4, count: 2}, {count: 0}]\n"
      "  workload.batch: [0, 8]\n"
      "  policy.weights: [nvme, {gpu: 0.5, cpu: 0.5}]\n",
      kFile);
  for (std::size_t i = 0; i < s.space.point_count(); ++i) {
    const Point typed = point_at(s.space, i);
    REQUIRE(typed.settings.size() == typed.overrides.size());
    Point text = typed;
    text.settings.clear();
    INFO(typed.label);
    std::string typed_error, text_error;
    Scenario a, b;
    try {
      a = load_point(s.space, typed, catalog());
    } catch (const Error& e) {
      typed_error = e.what();
    }
    try {
      b = load_point(s.space, text, catalog());
    } catch (const Error& e) {
      text_error = e.what();
    }
    CHECK(typed_error == text_error);
    CHECK(a.hash == b.hash);
    CHECK(a.resolved_yaml == b.resolved_yaml);
  }
}
}  // namespace study_sweep_test
