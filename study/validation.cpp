#include "study/validation.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "sim/simulate.hpp"

namespace fs = std::filesystem;

namespace tiersim::sim {

std::string reference_group(const Scenario& s, const Reference& r) {
  if (!r.group.empty()) return r.group;
  switch (s.kind) {
    case WorkloadKind::kIo:
      return "I/O";
    case WorkloadKind::kCheckpoint:
      return "checkpoint";
    case WorkloadKind::kTraining:
      return "training";
    default:
      break;
  }
  const Policy& p = s.policy;
  if (p.schedule == Schedule::kFlexGenBlock || p.schedule == Schedule::kFlexGen) return "FlexGen";
  if (p.weights.gpu >= 1.0 && p.kv_cache.gpu >= 1.0) return "serving stack";
  return "ZeRO-Inference";
}

std::string provisional_reason(const std::string& group) {
  // The inference model is eager PyTorch with ZeRO-Inference's layer streaming (issue 14): an
  // optimised serving stack (fused kernels, CUDA graphs, in-flight batching) is not modelled yet.
  // FlexGen's runtime is (policy.schedule: flexgen), but its 4-bit compressed rows come out
  // 30-51% too fast, so the group stays provisional until they hold.
  if (group == "serving stack")
    return "optimised serving stacks (TensorRT-LLM, vLLM) are not modelled: predicted as eager "
           "PyTorch";
  if (group == "FlexGen")
    return "FlexGen's placement, block schedule, CPU attention and disk tier are modelled, but "
           "the decode cost of its 4-bit compression is not matched (compressed rows predicted "
           "30-51% too fast)";
  return "";
}

bool ValidationSummary::established_within(double limit_pct) const {
  for (const auto& g : groups)
    if (!g.provisional && g.rows > 0 && g.mape_pct > limit_pct) return false;
  return true;
}

const ValidationGroup* ValidationSummary::group(const std::string& name) const {
  for (const auto& g : groups)
    if (g.name == name) return &g;
  return nullptr;
}

std::string default_reference_dir(const std::string& data_dir) {
  return (fs::path(data_dir.empty() ? config::default_data_dir() : data_dir) / "reference")
      .string();
}

ValidationSummary run_validation(const std::string& dir, const std::string& data_dir) {
  if (!fs::is_directory(dir)) throw Error("reference folder '" + dir + "' does not exist");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());

  config::LoadOptions load;
  load.data_dir = data_dir;
  const config::Catalog catalog = config::Catalog::load(data_dir);
  load.catalog = &catalog;
  ValidationSummary out;
  for (const auto& f : files) {
    const Scenario s = config::load_scenario(f.string(), load);
    if (s.references.empty()) continue;
    const RunResult r = simulate(s);
    for (const auto& ref : s.references) {
      ValidationRow row{f.filename().string(),
                        ref.case_name,
                        ref.metric,
                        ref.source,
                        ref.value,
                        0,
                        0,
                        ref.approx,
                        ref.calibration,
                        "",
                        reference_group(s, ref)};
      if (!r.fits) {
        row.note = "does not fit: " + r.shortfall;
        row.error_pct = 100;
      } else if (!r.has_metric(ref.metric)) {
        throw Error(f.string() + ": reference metric '" + ref.metric +
                    "' is not an output of a " + r.workload + " workload");
      } else {
        row.predicted = r.metric(ref.metric);
        row.error_pct = 100.0 * (row.predicted - row.published) / row.published;
      }
      out.rows.push_back(row);
    }
  }
  if (out.rows.empty()) throw Error("no reference scenarios found in '" + dir + "'");
  double sum = 0, prediction_sum = 0;
  for (const auto& r : out.rows) {
    const double e = std::fabs(r.error_pct);
    sum += e;
    out.max_abs_error_pct = std::max(out.max_abs_error_pct, e);
    if (r.calibration) continue;
    prediction_sum += e;
    ++out.prediction_rows;
    out.prediction_max_abs_error_pct = std::max(out.prediction_max_abs_error_pct, e);
  }
  for (const auto& name : validation_groups()) {
    ValidationGroup g;
    g.name = name;
    g.why_provisional = provisional_reason(name);
    g.provisional = !g.why_provisional.empty();
    double group_sum = 0;
    bool any = false;
    for (const auto& r : out.rows) {
      if (r.group != name) continue;
      any = true;
      if (r.calibration) continue;
      const double e = std::fabs(r.error_pct);
      group_sum += e;
      ++g.rows;
      g.max_abs_error_pct = std::max(g.max_abs_error_pct, e);
    }
    if (!any) continue;
    if (g.rows > 0) g.mape_pct = group_sum / double(g.rows);
    out.groups.push_back(g);
  }
  out.mape_pct = sum / double(out.rows.size());
  if (out.prediction_rows > 0) out.prediction_mape_pct = prediction_sum / double(out.prediction_rows);
  return out;
}

}  // namespace tiersim::sim
