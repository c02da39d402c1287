#include "study/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "config/catalog.hpp"
#include "config/options.hpp"
#include "config/scenario_loader.hpp"
#include "config/yaml_reader.hpp"
#include "model/errors.hpp"
#include "model/perf.hpp"
#include "model/stack.hpp"
#include "sim/simulate.hpp"
#include "sim/workloads/traits.hpp"
#include "study/accuracy.hpp"
#include "study/parallel.hpp"

namespace fs = std::filesystem;

namespace tiersim::validation {

std::string reference_group(const Scenario& s, const Reference& r) {
  if (!r.group.empty()) return r.group;
  // Token generation split over GPUs that reach each other over PCIe alone: every layer waits
  // for two all-reduces on a link an order of magnitude slower than NVLink, a mechanism no
  // one-GPU or NVLink row tests. Its rows (`group: tensor parallel over PCIe`, serving under load
  // and offline alike) are the evidence for such a run, whatever its workload.
  if (has_capability(s, kCapGeneratesTokens) && s.policy.parallelism.tensor > 1 &&
      peer_link_kind(s.hardware.gpu, s.hardware.host) != PeerLinkKind::kNvlink)
    return "tensor parallel over PCIe";
  // GEMMs on Blackwell's FP4 tensor cores (NVFP4): their rate is an estimate that only these
  // rows test, so they are the evidence for such a run, whatever its workload.
  if (has_capability(s, kCapGeneratesTokens) &&
      native_fp4_gemm(s.policy.stack, s.hardware.gpu, s.policy.weight_bits))
    return "FP4 GEMMs";
  // The workload's own group (sim/workloads/<name>/traits.cpp), else the policy's.
  if (const auto group = workload_traits(s.kind).reference_group) return std::string(group(s));
  const Policy& p = s.policy;
  if (p.schedule == Schedule::kFlexGenBlock || p.schedule == Schedule::kFlexGen) return "FlexGen";
  // Several ranks fetch partitions over their own links and all-gather them (ZeRO-3 data
  // parallel): a mechanism the one-GPU rows do not test. So do ranks whose partitions stay in
  // their own GPU memory (no offload): each layer is still gathered from every rank.
  if (p.parallelism.data > 1) return "ZeRO-Inference data parallel";
  // No offload: the serving-stack rows measure fused-kernel engines (model/stack.hpp: their own
  // GEMM rate, epilogues fused); eager PyTorch without offload, fused attention (SDPA) or not,
  // shares neither their kernels nor ZeRO-Inference's transfers.
  if (p.weights.gpu >= 1.0 && p.kv_cache.gpu >= 1.0)
    return p.stack.gemm_efficiency ? "serving stack" : "eager, no offload";
  // Offload without ZeRO-3's partitioned parameters: Accelerate's hooks copy every tensor of a
  // module each time it runs (model/stack.hpp zero3_partitioning), a path the ZeRO-Inference rows
  // do not test.
  if (!p.stack.zero3_partitioning) return "Accelerate offload";
  return "ZeRO-Inference";
}

std::string provisional_reason(const GroupDef& g, double mape_pct, double max_abs_error_pct) {
  if (!g.provisional.empty()) return g.provisional;
  // Newly modelled groups, each from published rates rather than fitted to its rows, are
  // established only once they meet issue 14's bound.
  if (g.probation.empty()) return "";
  if (mape_pct <= kProbationMeanPct && max_abs_error_pct <= kProbationMaxPct) return "";
  // The group's own text in full (a fixed buffer once cut long notes off at 255 characters).
  char bound[128];
  std::snprintf(bound, sizeof bound,
                ") but outside the bound for a newly modelled group (mean %.1f%% > %.0f%% or max "
                "%.1f%% > %.0f%%)",
                mape_pct, kProbationMeanPct, max_abs_error_pct, kProbationMaxPct);
  return "modelled (" + g.probation + bound;
}

const GroupDef* ValidationData::group(const std::string& name) const {
  for (const auto& g : groups)
    if (g.name == name) return &g;
  return nullptr;
}

std::vector<std::string> ValidationData::group_names() const {
  std::vector<std::string> out;
  for (const auto& g : groups) out.push_back(g.name);
  return out;
}

ValidationData load_validation_data(const std::string& data_dir) {
  const fs::path dir =
      fs::path(data_dir.empty() ? config::default_data_dir() : data_dir) / "validation";
  ValidationData d;
  d.groups_file = (dir / "groups.yaml").string();
  d.derivations_file = (dir / "derivations.yaml").string();

  const config::YNode groups = config::parse_yaml_file(d.groups_file, "validation groups file");
  groups.check_keys({"groups"});
  for (const config::YNode& item : groups.require("groups", "a list of groups").items()) {
    item.check_keys({"name", "probation", "provisional"});
    GroupDef g;
    const config::YNode name = item.require("name", "the group's name");
    g.name = name.as_string();
    if (d.group(g.name)) name.fail("duplicate group '" + g.name + "'");
    if (auto p = item.get("probation")) g.probation = p->as_string();
    if (auto p = item.get("provisional")) g.provisional = p->as_string();
    d.groups.push_back(g);
  }

  const config::YNode root = config::parse_yaml_file(d.derivations_file, "derivations file");
  root.check_keys({"derived_constants"});
  for (const config::YNode& item :
       root.require("derived_constants", "a list of derived constants").items()) {
    item.check_keys({"constant", "value", "derived_from", "applies_to", "how"});
    Derivation c;
    c.line = item.line();
    c.constant = item.require("constant", "what the constant is and where it lives").as_string();
    c.value = item.require("value", "the value with its unit").as_string();
    c.how = item.require("how", "how it was derived").as_string();
    const config::YNode from = item.require("derived_from", "a list of reference rows or sources");
    for (const config::YNode& f : from.items()) c.derived_from.push_back(f.as_string());
    if (c.derived_from.empty()) from.fail("a derived constant names the rows it came from");
    const config::YNode applies = item.require("applies_to", "a map of scenario keys to values");
    for (auto& [key, value] : applies.entries()) {
      if (!config::find_options(key).size())
        applies.fail("unknown scenario key '" + key + "' in applies_to (tiersim schema lists them)");
      c.applies_to.emplace_back(key, value.as_string());
    }
    if (c.applies_to.empty()) applies.fail("name at least one scenario key the constant applies to");
    d.derivations.push_back(std::move(c));
  }
  return d;
}

bool derivation_applies(const Derivation& d, const Scenario& s) {
  Scenario copy = s;  // option_scalar reads through a mutable scenario
  for (const auto& [key, want] : d.applies_to) {
    const config::Option* o = config::find_option(key, s.kind);
    if (!o) return false;
    std::string have;
    if (!config::option_scalar(*o, copy, have)) return false;  // a map or a placement split
    if (config::to_lower(have) == config::to_lower(want)) continue;
    // Numbers compare as numbers ("1.40" is "1.4").
    char* end_a = nullptr;
    char* end_b = nullptr;
    const double a = std::strtod(have.c_str(), &end_a), b = std::strtod(want.c_str(), &end_b);
    if (end_a && *end_a == 0 && end_b && *end_b == 0 && !have.empty() && !want.empty() && a == b)
      continue;
    return false;
  }
  return true;
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

std::vector<std::string> ValidationSummary::unanchored_parts(const Scenario& s) const {
  return accuracy_record(*this).unanchored_parts(s);
}

std::string default_reference_dir(const std::string& data_dir) {
  return (fs::path(data_dir.empty() ? config::default_data_dir() : data_dir) / "reference")
      .string();
}

namespace {

// The prediction of one reference of scenario `s` (result `r`): the metric, or for a ratio row the
// metric over the same metric of the other scenario. Sets refused/note when a scenario does not
// fit.
void predict(ValidationRow& row, const Reference& ref, const sim::RunResult& r,
             const sim::RunResult* denominator, const std::string& file) {
  auto refuse = [&row](const std::string& why) {
    row.refused = true;
    row.note = "does not fit: " + why;
    row.error_pct = 100;
  };
  if (!r.fits) return refuse(r.shortfall);
  if (denominator && !denominator->fits) return refuse(row.ratio_to + ": " + denominator->shortfall);
  for (const sim::RunResult* x : {&r, denominator}) {
    if (x && !x->has(ref.metric))
      throw Error(file + ": reference metric '" + ref.metric + "' is not an output of a " +
                  x->workload + " workload");
  }
  row.predicted = r.get(ref.metric);
  if (denominator) {
    const double d = denominator->get(ref.metric);
    if (d == 0) throw Error(file + ": ratio_to " + row.ratio_to + " has " + ref.metric + " = 0");
    row.predicted /= d;
  }
  row.error_pct = 100.0 * (row.predicted - row.published) / row.published;
}

// True when derivation entry `from` ("case", "case metric" or a source) names `row`.
bool names_row(const std::string& from, const ValidationRow& row) {
  if (from == row.source || from == row.case_name) return true;
  return from == row.case_name + " " + row.metric;
}

// Every derivation entry must name at least one row: a typo would silently count a row as
// out-of-sample.
void check_derivations(const ValidationData& data, const std::vector<ValidationRow>& rows) {
  for (const auto& d : data.derivations)
    for (const auto& from : d.derived_from) {
      const bool any = std::any_of(rows.begin(), rows.end(),
                                   [&](const ValidationRow& r) { return names_row(from, r); });
      if (!any)
        throw ConfigError(data.derivations_file, d.line, "derived_from",
                          "'" + from + "' names no reference row (a case, 'case metric' or a "
                          "source of the rows under the reference folder)");
    }
}

struct Mean {
  double sum = 0, max = 0;
  std::size_t n = 0;
  void add(double abs_error) {
    sum += abs_error;
    max = std::max(max, abs_error);
    ++n;
  }
  double mean() const { return n ? sum / double(n) : 0; }
};

}  // namespace

ValidationSummary run_validation(const std::string& dir, const std::string& data_dir,
                                 const std::atomic<bool>* stop) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("reference folder '" + dir + "' does not exist");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());

  config::LoadOptions load;
  load.data_dir = data_dir;
  const config::Catalog catalog = config::Catalog::load(data_dir);
  load.catalog = &catalog;
  ValidationSummary out;
  out.data = load_validation_data(data_dir);
  const ValidationData& data = out.data;
  // Scenarios by path, each loaded and simulated at most once (ratio rows share denominators).
  std::map<std::string, Scenario> scenarios;
  auto scenario = [&](const std::string& path) -> const Scenario& {
    auto it = scenarios.find(path);
    if (it == scenarios.end()) it = scenarios.emplace(path, config::load_scenario(path, load)).first;
    return it->second;
  };
  // First pass, in file order: load every scenario and check every reference's group and ratio
  // file, so that an error names the first bad file as a one-by-one pass would; collect the
  // scenarios to simulate. The simulations then run side by side (each owns its engine; the
  // scenarios and catalog are read-only), and the rows are built in file order from them.
  // The scenario a ratio row divides by: its file, beside the reference's.
  const auto ratio_path = [](const fs::path& reference, const std::string& ratio_to) {
    return (reference.parent_path() / ratio_to).lexically_normal().string();
  };
  std::vector<std::string> to_run;
  std::map<std::string, std::size_t> run_index;
  auto mark = [&](const std::string& path) {
    if (run_index.emplace(path, to_run.size()).second) to_run.push_back(path);
  };
  for (const auto& f : files) {
    const Scenario& s = scenario(f.string());
    if (s.references.empty()) continue;
    mark(f.string());
    for (const auto& ref : s.references) {
      const std::string group = reference_group(s, ref);
      if (!data.group(group))
        throw ConfigError(f.string(), 0, "reference.group",
                          "group '" + group + "' of case " + ref.case_name + " is not defined in " +
                              data.groups_file + config::did_you_mean(group, data.group_names()) +
                              "; valid: " + config::join(data.group_names()));
      if (ref.ratio_to.empty()) continue;
      const std::string path = ratio_path(f, ref.ratio_to);
      if (!fs::is_regular_file(path, ec))
        throw ConfigError(f.string(), 0, "reference.ratio_to",
                          "'" + ref.ratio_to + "' is not a scenario file beside this one");
      scenario(path);
      mark(path);
    }
  }
  std::vector<sim::RunResult> results(to_run.size());
  study::parallel_for(to_run.size(), 0, [&](std::size_t i) {
    sim::SimOptions options;
    options.stop = stop;
    results[i] = sim::simulate(scenarios.at(to_run[i]), options);
  });
  auto result = [&](const std::string& path) -> const sim::RunResult& {
    return results[run_index.at(path)];
  };
  for (const auto& f : files) {
    const Scenario& s = scenario(f.string());
    if (s.references.empty()) continue;
    const sim::RunResult& r = result(f.string());
    for (const auto& ref : s.references) {
      ValidationRow row;
      row.file = f.filename().string();
      row.case_name = ref.case_name;
      row.metric = ref.metric;
      row.source = ref.source;
      row.published = ref.value;
      row.approx = ref.approx;
      row.calibration = ref.calibration;
      row.group = reference_group(s, ref);
      row.ratio_to = ref.ratio_to;
      row.gpu = s.hardware.gpu.name;
      row.stack = s.policy.stack.name;
      row.features = model_features(s);
      const Scenario* other = nullptr;
      const sim::RunResult* denominator = nullptr;
      if (!ref.ratio_to.empty()) {
        const std::string path = ratio_path(f, ref.ratio_to);
        other = &scenario(path);
        denominator = &result(path);
      }
      predict(row, ref, r, denominator, f.string());
      for (std::size_t i = 0; i < data.derivations.size(); ++i)
        if (derivation_applies(data.derivations[i], s) ||
            (other && derivation_applies(data.derivations[i], *other)))
          row.constants_used.push_back(i);
      out.rows.push_back(row);
    }
  }
  if (out.rows.empty()) throw Error("no reference scenarios found in '" + dir + "'");
  check_derivations(data, out.rows);

  // Which rows fed a constant, and which rows' sources fed a constant they use.
  for (auto& row : out.rows) {
    for (const auto& d : data.derivations)
      for (const auto& from : d.derived_from) row.fed_constant = row.fed_constant || names_row(from, row);
    for (const std::size_t i : row.constants_used)
      for (const auto& from : data.derivations[i].derived_from)
        for (const auto& fed : out.rows)
          if (fed.source == row.source && names_row(from, fed)) row.source_in_sample = true;
  }

  Mean all, prediction, loso;
  for (const auto& r : out.rows) {
    const double e = std::fabs(r.error_pct);
    all.add(e);
    if (r.calibration) continue;
    prediction.add(e);
    if (!r.source_in_sample) loso.add(e);
  }
  for (const auto& def : data.groups) {
    ValidationGroup g;
    g.name = def.name;
    Mean in, none, oos;
    bool any = false;
    for (const auto& r : out.rows) {
      if (r.group != def.name) continue;
      any = true;
      if (r.calibration) continue;
      const double e = std::fabs(r.error_pct);
      in.add(e);
      if (r.refused) ++g.refused_rows;
      if (!r.fed_constant) none.add(e);
      if (!r.source_in_sample) oos.add(e);
    }
    if (!any) continue;
    g.rows = in.n;
    g.mape_pct = in.mean();
    g.max_abs_error_pct = in.max;
    g.no_constant_rows = none.n;
    g.no_constant_mape_pct = none.mean();
    g.out_of_sample_rows = oos.n;
    g.out_of_sample_mape_pct = oos.mean();
    g.out_of_sample_max_abs_error_pct = oos.max;
    g.why_provisional = provisional_reason(def, g.mape_pct, g.max_abs_error_pct);
    g.provisional = !g.why_provisional.empty();
    out.groups.push_back(g);
  }
  out.mape_pct = all.mean();
  out.max_abs_error_pct = all.max;
  out.prediction_rows = prediction.n;
  out.prediction_mape_pct = prediction.mean();
  out.prediction_max_abs_error_pct = prediction.max;
  out.out_of_sample_rows = loso.n;
  out.out_of_sample_mape_pct = loso.mean();
  return out;
}

}  // namespace tiersim::validation
