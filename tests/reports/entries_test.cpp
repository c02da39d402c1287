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

TEST_CASE("a serving plan's points get their capacity search from the plan's rows",
          "[reports][entries]") {
  store::StoredRun six;
  six.id = 1;
  six.scenario_name = "chatbot";
  six.scenario_hash = "aaaa";
  six.sweep = "plan";
  store::StoredRun one = six;
  one.id = 2;
  one.scenario_hash = "bbbb";
  store::StoredRun elsewhere = six;  // the same scenario stored by another plan
  elsewhere.id = 3;
  elsewhere.sweep = "other-plan";
  reports::Entries e = reports::one_entry_per_configuration({six, one, elsewhere}, {});
  store::PlanCapacity row{"gpu.count=1", "bbbb", {}};
  row.study.sweep = "plan";
  row.study.slo_ttft_s = 2.0;
  row.study.zero_load_miss = true;
  row.study.limit = "cannot meet the SLO at any load: zero-load TTFT p90 2.5 s > 2 s target";
  store::PlanCapacity row6{"gpu.count=6", "aaaa", {}};
  row6.study.sweep = "plan";
  row6.study.found = true;
  row6.study.rate_requests_per_s = 2.1;
  reports::attach_plan_capacity(e, {row, row6});
  REQUIRE(e.capacity.size() == 3);
  REQUIRE(e.capacity[0]);
  CHECK(e.capacity[0]->rate_requests_per_s == 2.1);
  CHECK(e.capacity[0]->entry_run == 1);
  REQUIRE(e.capacity[1]);
  CHECK(e.capacity[1]->zero_load_miss);
  CHECK(e.capacity[1]->slo_ttft_s == 2.0);
  CHECK(e.capacity[1]->scenario_name == "chatbot");
  CHECK_FALSE(e.capacity[2]);  // another plan's run: not this plan's search
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

namespace tiersim {

TEST_CASE("points of a plan with the same timings are one entry, the cheaper, with what the other "
          "adds",
          "[reports][entries]") {
  const auto point = [](std::int64_t id, const std::string& label, double total_s, double capex) {
    store::StoredRun r;
    r.id = id;
    r.scenario_name = "base";
    r.sweep = "plan";
    r.variant = label;
    r.metrics = {{"capex_usd", capex, "USD"},
                 {"throughput_tokens_per_s", 100 / total_s, "tokens/s"},
                 {"total_s", total_s, "s"}};
    return r;
  };
  // nvme.count=2 adds drives the GPU-only run does not read: the same timings, $2,260 more. It is
  // stored first, yet the cheaper one stands for both, in its place.
  store::StoredRun two = point(1, "hardware.gpu.model=H200 hardware.nvme.count=2", 10, 42260);
  store::StoredRun none = point(2, "hardware.gpu.model=H200 hardware.nvme.count=0", 10, 40000);
  store::StoredRun slow = point(3, "hardware.gpu.model=L40S hardware.nvme.count=0", 30, 20000);
  // Another host is another server, even with the same timings.
  store::StoredRun host = point(4, "hardware.gpu.model=H200 hardware.host.model=dgx-h100", 10, 39000);
  // The same figures outside the plan (a compare variant): named by the user, kept apart.
  store::StoredRun alone = point(5, "mine", 10, 40000);
  alone.sweep.clear();
  reports::Entries e = reports::one_entry_per_configuration({two, none, slow, host, alone}, {});
  reports::collapse_same_timings(e);
  REQUIRE(e.runs.size() == 4);
  CHECK(e.runs[0].id == 2);
  CHECK(e.runs[1].id == 3);
  CHECK(e.runs[2].id == 4);
  CHECK(e.runs[3].id == 5);
  REQUIRE(e.same_timings.size() == 4);
  CHECK(e.same_timings[0] == std::vector<std::string>{"nvme.count=2 (capex +$2,260)"});
  CHECK(e.same_timings[1].empty());
  CHECK(e.same_timings[2].empty());
  CHECK(e.capacity.size() == 4);
  // A run without timings (it does not fit) is never anyone's twin.
  store::StoredRun nofit = point(6, "hardware.gpu.model=A6000 hardware.nvme.count=0", 1, 1);
  nofit.metrics = {{"capex_usd", 1, "USD"}};
  store::StoredRun nofit2 = nofit;
  nofit2.id = 7;
  nofit2.variant = "hardware.gpu.model=A6000 hardware.nvme.count=2";
  reports::Entries f = reports::one_entry_per_configuration({nofit, nofit2}, {});
  reports::collapse_same_timings(f);
  CHECK(f.runs.size() == 2);
}

}  // namespace tiersim
