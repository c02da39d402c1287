#include "reports/run_output.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>

#include "common/format.hpp"
#include "model/units.hpp"
#include "reports/notes_section.hpp"
#include "sim/breakdown.hpp"
#include "sim/economics.hpp"
#include "sim/workloads/names.hpp"
#include "sim/workloads/serving/metrics.hpp"

namespace tiersim::reports {

// Output of one simulated run: reads sim's results, metrics and notes throughout.
using namespace tiersim::sim;

namespace {
// What the breakdown measures, in one line (sim/breakdown.hpp has the rule).
constexpr const char* kPhasesMeasure =
    "on path: wall time the run waited on this work, walking back from its end; the phases add "
    "up to the simulated time; busy: the work summed over every resource, overlapped or not";
}  // namespace

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json to_json(const Scenario& scenario, const RunResult& result) {
  nlohmann::json j;
  j["scenario"] = scenario.name;
  j["scenario_hash"] = scenario.hash;
  j["workload"] = result.workload;
  j["fits"] = result.fits;
  nlohmann::json memory = nlohmann::json::object();
  for (const auto& t : result.memory) {
    nlohmann::json items = nlohmann::json::object();
    for (const auto& i : t.items) items[i.what] = i.bytes;
    memory[t.tier] = {{"required_bytes", t.required_bytes},
                      {"capacity_bytes", t.capacity_bytes},
                      {"fits", t.fits()},
                      {"items", items}};
  }
  j["memory"] = memory;
  // Same key as compare's --json: which cost metrics are missing and which price to set.
  if (const std::string note = cost_note(scenario); !note.empty()) j["cost_note"] = note;
  if (const std::string note = dram_note(scenario, result); !note.empty()) j["dram_note"] = note;
  // Only where there are any, like the notes above (a profiled drive's warnings and sources).
  if (!scenario.notes.empty()) j["notes"] = notes_json(scenario.notes);
  if (!result.fits) {
    j["shortfall"] = result.shortfall;
    return j;
  }
  nlohmann::json units = nlohmann::json::object();
  for (const auto& m : result.metrics) {
    j[m.name] = m.value;
    units[m.name] = m.unit;
  }
  j["units"] = units;
  j["bottleneck"] = result.bottleneck;
  nlohmann::json util = nlohmann::json::object();
  for (const auto& u : result.utilization) util[u.name] = u.utilization;
  j["utilization"] = util;
  j["events"] = result.events;
  if (!result.phases.empty()) {
    j["phases"] = breakdown_json(result);
    j["phases_measure"] = kPhasesMeasure;
    j["phases_simulated_s"] = sim::phases_span_s(result.phases);
  }
  return j;
}

std::string request_split(const RunResult& result) {
  const auto queue = result.find(metric::kQueueDelayMeanS);
  const auto ttft = result.find(metric::kTtftMeanS);
  const auto e2e = result.find(metric::kE2eMeanS);
  if (!queue || !ttft || !e2e) return "";
  return "per request (means): queueing " + format::duration(*queue) +
         ", first iteration to first token " + format::duration(*ttft - *queue) + ", decode " +
         format::duration(*e2e - *ttft) + "; end to end " + format::duration(*e2e);
}

nlohmann::json breakdown_json(const RunResult& result) {
  const double total = sim::phases_span_s(result.phases);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : result.phases)
    out.push_back({{"stage", stage_label(p.stage)},
                   {"activity", p.waiting ? "waiting" : p.activity.name()},
                   {"label", phase_label(p)},
                   {"metric", phase_metric_name(p)},
                   {"path_s", p.path_s},
                   {"share", total > 0 ? p.path_s / total : 0.0},
                   {"busy_s", p.busy_s},
                   {"bottleneck", p.bottleneck},
                   {"bottleneck_label", p.bottleneck.empty() ? "" : resource_label(p.bottleneck)}});
  return out;
}

void print_breakdown(std::ostream& os, const RunResult& result, std::size_t max_rows,
                     const std::string& indent) {
  if (result.phases.empty()) return;
  const double total = sim::phases_span_s(result.phases);
  const auto share = [&](double s) {
    return total > 0 ? format::fixed(100 * s / total, 1) + "%" : std::string("-");
  };
  const auto cell = [](std::string text, std::size_t width) {
    return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
  };
  std::size_t label_w = 20;
  for (const auto& p : result.phases)
    label_w = std::max(label_w, std::string(stage_label(p.stage)).size() + 1 + phase_label(p).size() + 2);
  os << indent << cell("phase", label_w) << cell("on path", 11) << cell("share", 8)
     << cell("busy", 11) << "bottleneck\n";
  const std::size_t shown =
      max_rows == 0 ? result.phases.size() : std::min(max_rows, result.phases.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const PhaseTime& p = result.phases[i];
    os << indent << cell(std::string(stage_label(p.stage)) + " " + phase_label(p), label_w)
       << cell(format::duration(p.path_s), 11) << cell(share(p.path_s), 8)
       << cell(p.waiting ? "-" : format::duration(p.busy_s), 11)
       << (p.bottleneck.empty() ? "-" : resource_label(p.bottleneck) + " (" + p.bottleneck + ")")
       << "\n";
  }
  if (shown < result.phases.size()) {
    double rest = 0;
    for (std::size_t i = shown; i < result.phases.size(); ++i) rest += result.phases[i].path_s;
    os << indent
       << cell(std::to_string(result.phases.size() - shown) + " more phases", label_w)
       << cell(format::duration(rest), 11) << share(rest) << "\n";
  }
  // Each stage's part of the run, where there is more than one: "prefill 301.1 s (79.6%)".
  std::array<double, kStageCount> by_stage{};
  for (const auto& p : result.phases) by_stage[static_cast<std::size_t>(p.stage)] += p.path_s;
  if (std::count_if(by_stage.begin(), by_stage.end(), [](double s) { return s > 0; }) > 1) {
    os << indent << "by stage:";
    const char* sep = " ";
    for (std::size_t i = 0; i < kStageCount; ++i)
      if (by_stage[i] > 0) {
        os << sep << stage_label(static_cast<Stage>(i)) << " " << format::duration(by_stage[i])
           << " (" << share(by_stage[i]) << ")";
        sep = ", ";
      }
    os << "\n";
  }
}

namespace {

// The band of `group` with its errors (none when the record has no row of it).
ErrorBand group_band(const std::string& group,
                     const std::optional<validation::GroupAccuracy>& errors) {
  ErrorBand band;
  band.group = group;
  if (errors)
    set_group_errors(band, errors->rows, errors->in_sample_pct, errors->out_of_sample_rows,
                     errors->out_of_sample_pct, errors->provisional);
  return band;
}

}  // namespace

ErrorBand error_band(const std::optional<validation::RunAccuracy>& accuracy) {
  if (!accuracy) {
    ErrorBand band;
    band.validation_run = false;
    return band;
  }
  ErrorBand band = group_band(accuracy->group, accuracy->errors);
  band.unvalidated = accuracy->unvalidated;
  return band;
}

std::optional<validation::RunAccuracy> run_accuracy_of(const Scenario& scenario,
                                                       const std::string& data_dir) {
  const auto record = validation::shipped_accuracy(data_dir);
  if (!record) return std::nullopt;
  return validation::run_accuracy(scenario, *record);
}

std::optional<EnergyBands> energy_bands(const std::optional<validation::RunAccuracy>& accuracy,
                                        const RunResult& result) {
  if (!accuracy || !result.has(metric::kEnergyJ.name)) return std::nullopt;
  return EnergyBands{group_band(accuracy->node_energy_group, accuracy->node_energy),
                     group_band(accuracy->gpu_energy_group, accuracy->gpu_energy)};
}

std::string energy_accuracy_text(const EnergyBands& bands) {
  const auto one = [](const ErrorBand& b) { return compact_band(b) + " (group " + b.group + ")"; };
  return "energy and power at the wall " + one(bands.node) + "; the GPUs' own " + one(bands.gpu);
}

std::string accuracy_text(const ErrorBand& band) {
  if (!band.validation_run)
    return "unknown: no validation/accuracy.json in the data folder (tiersim validate "
           "--write-accuracy writes it)";
  return band_text(band);
}

nlohmann::json accuracy_json(const ErrorBand& band, const EnergyBands* energy) {
  nlohmann::json j;
  j["group"] = band.group.empty() ? nlohmann::json() : nlohmann::json(band.group);
  j["error_band_pct"] = band.pct ? nlohmann::json(*band.pct) : nlohmann::json();
  j["in_sample_pct"] =
      band.measurements > 0 ? nlohmann::json(band.in_sample_pct) : nlohmann::json();
  j["published_rows"] = band.measurements;
  j["provisional"] = band.provisional;
  j["unvalidated"] = band.unvalidated;
  j["text"] = accuracy_text(band);
  if (energy)
    j["energy"] = {{"node", accuracy_json(energy->node)}, {"gpu", accuracy_json(energy->gpu)}};
  return j;
}

void print_closest_fits(std::ostream& os, const std::vector<fit::Suggestion>& closest) {
  if (closest.empty()) return;
  os << "closest that fits (capacity model, not simulated):\n";
  for (const auto& c : closest) {
    os << "  " << c.what << ":";
    for (const auto& set : c.sets) os << " --set " << set;
    os << "  (" << c.detail << ")\n";
  }
}

void print_human(std::ostream& os, const Scenario& scenario, const RunResult& result,
                 const ErrorBand* band, const EnergyBands* energy) {
  os << "scenario   " << scenario.name << "  (" << result.workload << ", hash " << scenario.hash
     << ")\n";
  os << "memory     ";
  bool first = true;
  for (const auto& t : result.memory) {
    if (t.capacity_bytes <= 0 && t.required_bytes <= 0) continue;
    os << (first ? "" : "  |  ") << t.tier << " " << format::fixed(t.required_bytes / units::kGB, 1)
       << " / " << format::fixed(t.capacity_bytes / units::kGB, 1) << " GB"
       << (t.fits() ? "" : " DOES NOT FIT");
    first = false;
  }
  os << "\n";
  if (band) os << "accuracy   " << accuracy_text(*band) << "\n";
  if (energy) os << "           " << energy_accuracy_text(*energy) << "\n";
  if (const std::string note = cost_note(scenario); !note.empty())
    os << "note       " << note << "\n";
  if (const std::string note = dram_note(scenario, result); !note.empty())
    os << "note       " << note << "\n";
  // Before the result, so that a run that does not fit shows them too.
  if (!scenario.notes.empty()) {
    os << "notes      on the inputs\n";
    print_notes(os, scenario.notes, "  ");
  }
  if (!result.fits) {
    os << "result     does not fit: " << result.shortfall << "\n";
    return;
  }
  // Each metric by its stable name, its value as people read it (format::quantity); the phase_*
  // metrics are the breakdown's rows below.
  for (const auto& m : result.metrics) {
    if (!result.phases.empty() && is_phase_metric_name(m.name)) continue;
    os << "  " << m.name << std::string(m.name.size() < 28 ? 28 - m.name.size() : 1, ' ')
       << format::quantity(m.value, m.unit) << "\n";
  }
  os << "bottleneck " << result.bottleneck;
  if (!result.bottleneck.empty()) os << " (" << resource_label(result.bottleneck) << ")";
  os << "\nutilization";
  for (const auto& u : result.utilization)
    os << "  " << u.name << " " << format::fixed(100 * u.utilization, 0) << "%";
  os << "\n";
  if (!result.phases.empty()) {
    os << "where the time goes (" << kPhasesMeasure << "):\n";
    print_breakdown(os, result);
    const double simulated = sim::phases_span_s(result.phases);
    if (const auto total = result.find(metric::kTotalS);
        total && std::fabs(*total - simulated) > 1e-6 * *total)
      os << "  (the phases cover the " << format::duration(simulated)
         << " simulated; the workload projects total_s, " << format::duration(*total)
         << ", from that sample)\n";
  }
  if (const std::string split = request_split(result); !split.empty()) os << split << "\n";
}

void write_chrome_trace(std::ostream& os, const Scenario& scenario, const RunResult& result) {
  std::map<std::string, int> tids;
  for (const auto& u : result.utilization) tids.emplace(u.name, static_cast<int>(tids.size()) + 1);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1},
                    {"args", {{"name", "tiersim: " + scenario.name}}}});
  for (const auto& [name, tid] : tids)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid},
                      {"args", {{"name", name}}}});
  for (const auto& s : result.timeline) {
    auto it = tids.find(s.resource);
    int tid = it == tids.end() ? 0 : it->second;
    events.push_back({{"name", s.label},
                      {"cat", s.resource},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", tid},
                      {"ts", s.start_s * 1e6},
                      {"dur", (s.end_s - s.start_s) * 1e6},
                      {"args", {{"phase", s.phase}, {"item", s.item}}}});
  }
  os << json_text(nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}) << "\n";
}

}  // namespace tiersim::reports
