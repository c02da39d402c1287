// One entry per configuration (reports/entries.hpp): a capacity search's load points become one
// entry, and plan points are named by what varies.
#include "reports/entries.hpp"

#include <catch2/catch.hpp>

namespace tiersim::reports_entries_test {
namespace {

store::StoredRun load_point(std::int64_t id, const std::string& name, double rate,
                            double attainment) {
  store::StoredRun r;
  r.id = id;
  r.scenario_name = name;
  r.workload = "serving";
  r.sweep = std::string(reports::kCapacitySweepPrefix) + name;
  r.metrics = {{"offered_rate_requests_per_s", rate, "requests/s"},
               {"slo_attainment_pct", attainment, "%"}};
  return r;
}

}  // namespace

TEST_CASE("a capacity search's load points are one entry: the study's run at capacity",
          "[reports][entries]") {
  store::StoredRun plain;
  plain.id = 1;
  plain.scenario_name = "plain";
  std::vector<store::StoredRun> runs = {plain,
                                        load_point(2, "six", 0.05, 100),
                                        load_point(3, "six", 0.1, 100),
                                        load_point(4, "six", 0.2, 40),
                                        load_point(5, "one", 0.05, 0),
                                        load_point(6, "one", 5e-8, 0),
                                        load_point(7, "old", 1, 100),
                                        load_point(8, "old", 2, 95),
                                        load_point(9, "old", 4, 10)};
  store::CapacityStudy six;
  six.sweep = "capacity:six";
  six.found = true;
  six.rate_requests_per_s = 0.1;
  six.entry_run = 3;
  store::CapacityStudy one;
  one.sweep = "capacity:one";
  one.zero_load_miss = true;
  one.limit = "cannot meet the SLO at any load: zero-load TTFT p90 5.2 s > 2 s target";
  one.entry_run = 6;
  const reports::Entries e = reports::one_entry_per_configuration(runs, {six, one});
  // plain, six, one, and "old" (a file from before the studies table: grouped by its sweep).
  REQUIRE(e.runs.size() == 4);
  CHECK(e.runs[0].id == 1);
  CHECK(e.runs[1].id == 3);
  CHECK(e.runs[2].id == 6);
  // Without a study: the highest rate with 90% of requests within the targets.
  CHECK(e.runs[3].id == 8);
  REQUIRE(e.capacity.size() == 4);
  CHECK_FALSE(e.capacity[0]);
  REQUIRE(e.capacity[1]);
  CHECK(e.capacity[1]->rate_requests_per_s == 0.1);
  REQUIRE(e.capacity[2]);
  CHECK(e.capacity[2]->zero_load_miss);
  CHECK_FALSE(e.capacity[3]);
  // Every load point stays for the charts against load.
  CHECK(e.load_points.size() == runs.size());
  // Nothing to group: the runs as they were, no separate load points.
  const reports::Entries same = reports::one_entry_per_configuration({plain}, {});
  CHECK(same.runs.size() == 1);
  CHECK(same.load_points.empty());
}

TEST_CASE("plan points are named by what varies", "[reports][entries]") {
  CHECK(reports::short_point_label("hardware.gpu.model=H200 hardware.nvme.count=2") ==
        "gpu.model=H200, nvme.count=2");
  CHECK(reports::short_point_label("workload.batch=16") == "workload.batch=16");
  CHECK(reports::short_point_label("6x-l40s") == "6x-l40s");
  std::vector<store::PlanVerdict> verdicts = {{"a=1", "h1", "equivalent", "same as a=2"},
                                              {"a=2", "h1", "rejected", "memory: does not fit"}};
  store::StoredRun r;
  r.scenario_hash = "h1";
  REQUIRE(reports::verdict_of(verdicts, r));
  CHECK(reports::verdict_of(verdicts, r)->point == "a=2");
  r.scenario_hash = "h2";
  CHECK_FALSE(reports::verdict_of(verdicts, r));
}

}  // namespace tiersim

TEST_CASE("a plan's points are named by the axes that vary among them", "[reports][entries]") {
  const std::vector<std::string> labels = {
      "hardware.gpu.model=H200 hardware.nvme.count=0 policy.io_path=aio hardware.gpu.count=2",
      "hardware.gpu.model=H200 hardware.nvme.count=2 policy.io_path=aio hardware.gpu.count=2",
      "hardware.gpu.model=A100-80GB hardware.nvme.count=0 policy.io_path=aio hardware.gpu.count=1"};
  // io_path is the same everywhere: left out; the others without their section.
  CHECK(tiersim::reports::varying_point_labels(labels) ==
        std::vector<std::string>{"gpu.model=H200, nvme.count=0, gpu.count=2",
                                 "gpu.model=H200, nvme.count=2, gpu.count=2",
                                 "gpu.model=A100-80GB, nvme.count=0, gpu.count=1"});
  CHECK(tiersim::reports::varying_point_labels({"policy.weights=cpu a=1", "policy.weights=gpu a=1"}) ==
        std::vector<std::string>{"weights=cpu", "weights=gpu"});
  // One point: nothing varies, the short form of its label.
  CHECK(tiersim::reports::varying_point_labels({labels[0]}) ==
        std::vector<std::string>{"gpu.model=H200, nvme.count=0, policy.io_path=aio, gpu.count=2"});
  // Not point labels: as they are.
  CHECK(tiersim::reports::varying_point_labels({"a", "b"}) == std::vector<std::string>{"a", "b"});
}
