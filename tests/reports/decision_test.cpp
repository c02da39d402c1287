// The decision summary's error bands: each metric is banded by the group that measures it.
#include <catch2/catch.hpp>

#include "reports/decision.hpp"
#include "reports/report.hpp"

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
  ValidationInfo::Group system;
  system.name = "system energy";
  system.measurements = 4;
  system.mape_pct = 34.9;
  system.out_of_sample_measurements = 4;
  system.out_of_sample_mape_pct = 34.9;
  in.validation.groups = {zero, energy, system};
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
