// The decision summary's error bands: each metric is banded by the group that measures it.
#include <catch2/catch.hpp>

#include "reports/decision.hpp"
#include "reports/report.hpp"

namespace reports_decision_test {

using namespace tiersim;
using namespace tiersim::reports;

namespace {

store::StoredRun run_with(double j_per_token, double tokens_per_s) {
  store::StoredRun r;
  r.scenario_name = "run";
  r.metrics = {{"energy_j_per_token", j_per_token, "J/token"},
               {"gpu_energy_j_per_token", 0.5 * j_per_token, "J/token"},
               {"throughput_tokens_per_s", tokens_per_s, "tokens/s"}};
  return r;
}

// A validation group with `n` rows, all of them out of sample, at `pct` mean absolute error.
ValidationInfo::Group group(const std::string& name, std::size_t n, double pct) {
  ValidationInfo::Group g;
  g.name = name;
  g.measurements = n;
  g.mape_pct = pct;
  g.out_of_sample_measurements = n;
  g.out_of_sample_mape_pct = pct;
  return g;
}

ReportInput two_zero_inference_runs() {
  ReportInput in;
  in.runs = {run_with(2.0, 10), run_with(3.0, 20)};
  in.decision.groups = {"ZeRO-Inference", "ZeRO-Inference"};
  in.validation.available = true;
  ValidationInfo::Group zero;
  zero.name = "ZeRO-Inference";
  zero.measurements = 13;
  zero.mape_pct = 9.1;
  // Its five out-of-sample rows happen to be its best: the band stays at the in-sample 9.1 %.
  zero.out_of_sample_measurements = 5;
  zero.out_of_sample_mape_pct = 6.0;
  ValidationInfo::Group energy;
  energy.name = kEnergyGroup;
  energy.measurements = 11;
  energy.mape_pct = 5.0;
  energy.out_of_sample_measurements = 11;
  energy.out_of_sample_mape_pct = 7.0;
  in.validation.groups = {zero, energy, group("system energy", 4, 34.9)};
  return in;
}

}  // namespace

TEST_CASE("GPU energy is banded by the energy group, node energy by system energy, throughput by "
          "the run's own",
          "[report][decision]") {
  ReportInput in = two_zero_inference_runs();
  const std::vector<std::string> labels = {"a", "b"};
  in.decision.metric = "gpu_energy_j_per_token";
  in.decision.lower_is_better = true;
  const std::string energy = decision_markdown(in, labels);
  CHECK(energy.find("+-7.0 % (out-of-sample validation error of group energy") != std::string::npos);
  CHECK(energy.find("group ZeRO-Inference") == std::string::npos);
  // The whole node's energy per token: what the GPU-only rows do not measure.
  in.decision.metric = "energy_j_per_token";
  const std::string node = decision_markdown(in, labels);
  CHECK(node.find("+-34.9 % (out-of-sample validation error of group system energy") !=
        std::string::npos);
  in.decision.metric = "throughput_tokens_per_s";
  in.decision.lower_is_better = false;
  const std::string throughput = decision_markdown(in, labels);
  CHECK(throughput.find("+-9.1 % (out-of-sample validation error of group ZeRO-Inference") !=
        std::string::npos);
}

TEST_CASE("a prefix-caching first-token time is banded by the KV cache reuse rows that measure it",
          "[report][decision]") {
  ReportInput in = two_zero_inference_runs();
  in.decision.groups = {"serving under load", "serving under load"};
  for (auto& r : in.runs) r.metrics.push_back({"ttft_prefix_hit_mean_s", 0.05, "s"});
  in.runs[1].metrics.back().value = 0.08;
  in.validation.groups.push_back(group("serving under load", 12, 7.9));
  in.validation.groups.push_back(group("KV cache reuse", 8, 9.5));
  in.decision.metric = "ttft_prefix_hit_mean_s";
  in.decision.lower_is_better = true;
  const std::string md = decision_markdown(in, {"a", "b"});
  CHECK(md.find("+-9.5 % (out-of-sample validation error of group KV cache reuse") !=
        std::string::npos);
  CHECK(md.find("group serving under load") == std::string::npos);
}

TEST_CASE("the summary has an interactive part: rate within the SLO, cost per request, and why a "
          "configuration sustains no rate",
          "[report][decision]") {
  ReportInput in = two_zero_inference_runs();
  store::StoredRun none = run_with(9.0, 1);
  in.runs.push_back(none);
  in.decision.groups.push_back("ZeRO-Inference");
  in.runs[0].metrics.push_back({"capacity_requests_per_s", 0.5, "requests/s"});
  in.runs[0].metrics.push_back({"usd_per_request_at_capacity", 0.004, "USD/request"});
  in.runs[1].metrics.push_back({"capacity_requests_per_s", 1.5, "requests/s"});
  in.runs[1].metrics.push_back({"usd_per_request_at_capacity", 0.003, "USD/request"});
  store::CapacityStudy found;
  found.found = true;
  found.slo_ttft_s = 2;
  found.slo_tbt_s = 0.2;
  found.rate_requests_per_s = 0.5;
  store::CapacityStudy missed = found;
  missed.found = false;
  missed.zero_load_miss = true;
  missed.rate_requests_per_s.reset();
  missed.limit = "cannot meet the SLO at any load: zero-load TTFT p90 5.2 s > 2 s target";
  in.capacity = {found, found, missed};
  in.capacity[1]->rate_requests_per_s = 1.5;
  in.decision.metric = "energy_j_per_token";
  const std::vector<std::string> labels = {"a", "b", "c"};
  const std::string md = decision_markdown(in, labels);
  INFO(md);
  CHECK_THAT(md, Catch::Contains("### Offline use") && Catch::Contains("### Interactive use"));
  CHECK_THAT(md, Catch::Contains("90% of requests within TTFT 2 s and TPOT 200 ms"));
  CHECK_THAT(md, Catch::Contains("b has the highest sustained rate within the SLO, 1.5 requests/s "
                                 "(+-9.1 %); 3x the runner-up a"));
  CHECK_THAT(md, Catch::Contains("b has the lowest cost per request at its sustained rate, "
                                 "$0.003 per request"));
  CHECK_THAT(md, Catch::Contains("c cannot meet the SLO at any load, because zero-load TTFT p90 "
                                 "5.2 s &gt; 2 s target."));
  // The zero-load probe's figures rank nowhere: c has the lowest throughput, but is no "runner-up"
  // and no winner offline either.
  CHECK(ranking(in, "energy_j_per_token", true) == std::vector<std::size_t>{0, 1});
  const auto parts = decision_html(in, labels);
  // The offline headline chart, then the two interactive ones, each with error bars.
  std::size_t interactive = 0;
  for (const auto& p : parts)
    if (!p.spec.is_null() && p.spec["title"].get<std::string>().rfind("Interactive: ", 0) == 0) {
      ++interactive;
      CHECK(p.spec["layer"][1]["mark"]["type"] == "rule");
      CHECK(p.spec["data"]["values"][0].contains("low"));
    }
  CHECK(interactive == 2);
}

TEST_CASE("a bar no published case backs is marked unvalidated", "[report][decision]") {
  ReportInput in = two_zero_inference_runs();
  in.decision.groups = {"ZeRO-Inference", "no such group"};
  in.decision.metric = "throughput_tokens_per_s";
  in.decision.lower_is_better = false;
  const auto parts = decision_html(in, {"a", "b"});
  const auto& values = parts[0].spec["data"]["values"];
  REQUIRE(values.size() == 2);
  CHECK(values[0]["run"] == "a");
  CHECK(values[0].contains("high"));
  CHECK(values[1]["run"] == "b (unvalidated)");
  CHECK_FALSE(values[1].contains("high"));
}

TEST_CASE("a serving plan's configurations say what their search found and why the plan rejected "
          "them",
          "[report][decision]") {
  ReportInput in = two_zero_inference_runs();
  in.runs.push_back(run_with(9.0, 1));
  in.decision.groups.push_back("ZeRO-Inference");
  const char* hashes[] = {"aaaa", "bbbb", "cccc"};
  for (std::size_t i = 0; i < 3; ++i) in.runs[i].scenario_hash = hashes[i];
  for (std::size_t i = 0; i < 2; ++i) {
    in.runs[i].metrics.push_back({"capacity_requests_per_s", 1.0 + static_cast<double>(i), "requests/s"});
    in.runs[i].metrics.push_back({"capex_usd", 50000.0 * static_cast<double>(i + 1), "USD"});
  }
  store::CapacityStudy found;
  found.found = true;
  found.slo_ttft_s = 2;
  found.slo_tbt_s = 0.2;
  found.rate_requests_per_s = 1;
  store::CapacityStudy missed = found;
  missed.found = false;
  missed.zero_load_miss = true;
  missed.rate_requests_per_s.reset();
  missed.limit = "cannot meet the SLO at any load: zero-load TTFT p90 2.5 s > 2 s target";
  in.capacity = {found, found, missed};
  in.capacity[1]->rate_requests_per_s = 2;
  in.plan_verdicts = {
      {"gpu.count=2", "aaaa", "feasible", ""},
      {"gpu.count=6", "bbbb", "rejected", "budget: capex_usd = 100000 > max 60000"},
      {"gpu.count=1", "cccc", "rejected", "SLO: sustains no rate: " + missed.limit}};
  const std::string md = decision_markdown(in, {"a", "b", "c"});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("**a**") && Catch::Contains("sustains 1 requests/s (feasible)"));
  CHECK_THAT(md, Catch::Contains("sustains 2 requests/s (rejected, budget: capex_usd = 100000 &gt; "
                                 "max 60000)"));
  // The search's reason once, not again as the plan's "SLO: sustains no rate: ...".
  CHECK_THAT(md, Catch::Contains("cannot meet the SLO at any load, because zero-load TTFT p90 2.5 s "
                                 "&gt; 2 s target (rejected)"));
  CHECK(md.find("SLO: sustains no rate") == std::string::npos);
}

TEST_CASE("a configuration on a cloud instance says it runs in a virtual machine",
          "[report][decision]") {
  // The label decides how fast its host faults fresh pages in (model/perf.hpp fresh_pages_s), so
  // the summary a purchaser reads names it.
  Scenario s;
  s.hardware.gpu_count = 1;
  s.hardware.gpu.name = "H200";
  s.hardware.host.name = "azure-nd-h200-v5";
  s.hardware.host.virtual_machine = true;
  CHECK_THAT(describe_configuration(s),
             Catch::Contains("azure-nd-h200-v5 (a virtual machine) with"));
  s.hardware.host.name = "dgx-h100";
  s.hardware.host.virtual_machine = false;
  CHECK_THAT(describe_configuration(s), !Catch::Contains("virtual machine"));
  CHECK_THAT(describe_configuration(s), Catch::Contains("dgx-h100 with"));
}

TEST_CASE("a configuration names the DRAM its energy and cost counted", "[report][decision]") {
  // The catalog's figure is what the platform holds; a run that left it to the catalog is priced
  // for the DRAM sized to its need (the dram_sized_gb metric), which the summary must name.
  Scenario s;
  s.hardware.gpu_count = 1;
  s.hardware.gpu.name = "L40S";
  s.hardware.host.name = "generic-2s-ddr5";
  s.hardware.host.dram_gb = 1024;
  CHECK_THAT(describe_configuration(s), Catch::Contains("with 1024 GB DRAM;"));
  CHECK_THAT(describe_configuration(s, 274.9),
             Catch::Contains("with 275 GB DRAM (sized to the run's need; the platform holds up to "
                             "1024 GB);"));
  CHECK_THAT(describe_configuration(s, 1024.0), Catch::Contains("with 1024 GB DRAM;"));
}

}  // namespace reports_decision_test

namespace reports_decision_band_test {

TEST_CASE("a band from a handful of published rows backs no margin", "[report][decision]") {
  using tiersim::reports::ErrorBand;
  ErrorBand one_row;
  tiersim::reports::set_group_errors(one_row, 1, 3.4, 1, 3.4, true);
  ErrorBand many;
  tiersim::reports::set_group_errors(many, 41, 9.5, 18, 8.4, false);
  REQUIRE(one_row.pct);
  CHECK_FALSE(one_row.backs_margin());
  CHECK(many.backs_margin());
  CHECK(*many.pct == Approx(9.5));  // never below the in-sample mean
  CHECK(tiersim::reports::compact_band(one_row) == "+-3.4 % prov., 1 row");
  CHECK(tiersim::reports::compact_band(many) == "+-9.5 %");
  // Published rows, every one of which fed a constant (FlexGen's, I/O's): no out-of-sample band,
  // but not unvalidated either.
  ErrorBand fed;
  tiersim::reports::set_group_errors(fed, 12, 8.9, 0, 0, false);
  CHECK_FALSE(fed.pct);
  CHECK(tiersim::reports::compact_band(fed) == "in-sample 8.9 %");
  CHECK(tiersim::reports::short_band(ErrorBand{}) == "unvalidated");  // no published case
  // 2.0 against 2.81 with +-9.5 % each: 2.19 and 2.54 at the near ends, apart; 2.46 against
  // 2.81 they overlap (2.69 and 2.54), and with +-20 % each so do the first two.
  CHECK_FALSE(tiersim::reports::bands_overlap(2.0, many, 2.81, many, true));
  CHECK(tiersim::reports::bands_overlap(2.46, many, 2.81, many, true));
  ErrorBand wide;
  tiersim::reports::set_group_errors(wide, 20, 20, 20, 20, false);
  CHECK(tiersim::reports::bands_overlap(2.0, wide, 2.81, wide, true));
  CHECK(tiersim::reports::margin_verdict_text(2.0, one_row, 2.81, many, true)
            .find("not backed by validation") != std::string::npos);
}

}  // namespace reports_decision_band_test
