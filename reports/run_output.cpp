#include "reports/run_output.hpp"

#include <cstdio>
#include <map>

#include "model/units.hpp"
#include "sim/economics.hpp"
#include "common/format.hpp"

namespace tiersim::reports {

// Output of one simulated run: reads sim's results, metrics and notes throughout.
using namespace tiersim::sim;

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
  return j;
}

void print_human(std::ostream& os, const Scenario& scenario, const RunResult& result) {
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
  if (const std::string note = cost_note(scenario); !note.empty())
    os << "note       " << note << "\n";
  if (const std::string note = dram_note(scenario, result); !note.empty())
    os << "note       " << note << "\n";
  if (!result.fits) {
    os << "result     does not fit: " << result.shortfall << "\n";
    return;
  }
  for (const auto& m : result.metrics)
    os << "  " << m.name << std::string(m.name.size() < 28 ? 28 - m.name.size() : 1, ' ')
       << format::significant(m.value, 4) << " " << m.unit << "\n";
  os << "bottleneck " << result.bottleneck << "\nutilization";
  for (const auto& u : result.utilization)
    os << "  " << u.name << " " << format::fixed(100 * u.utilization, 0) << "%";
  os << "\n";
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
