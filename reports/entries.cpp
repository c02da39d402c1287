#include "reports/entries.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "common/format.hpp"
#include "sim/metrics.hpp"
#include "sim/same_timings.hpp"
#include "sim/workloads/serving/metrics.hpp"
#include "study/sweep.hpp"

namespace tiersim::reports {

Entries one_entry_per_configuration(std::vector<store::StoredRun> runs,
                                    const std::vector<store::CapacityStudy>& studies) {
  std::map<std::string, const store::CapacityStudy*> study_of;
  for (const auto& s : studies) study_of[s.sweep] = &s;
  // The runs of each capacity sweep, by index, in the order stored.
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].sweep.rfind(kCapacitySweepPrefix, 0) == 0) groups[runs[i].sweep].push_back(i);
  Entries out;
  if (groups.empty()) {
    out.runs = std::move(runs);
    out.capacity.resize(out.runs.size());
    return out;
  }
  // The entry standing for each group.
  std::map<std::string, std::size_t> entry_of;
  for (const auto& [sweep, members] : groups) {
    const auto st = study_of.find(sweep);
    std::optional<std::size_t> entry;
    if (st != study_of.end() && st->second->entry_run)
      for (std::size_t i : members)
        if (runs[i].id == *st->second->entry_run) entry = i;
    if (!entry) {
      const double attainment = st != study_of.end() ? st->second->attainment_pct : 90;
      const auto rate = [&](std::size_t i) {
        return runs[i].find(sim::metric::kOfferedRateRequestsPerS).value_or(0);
      };
      for (std::size_t i : members)
        if (runs[i].fits &&
            runs[i].find(sim::metric::kSloAttainmentPct).value_or(100) >= attainment &&
            (!entry || rate(i) > rate(*entry)))
          entry = i;
      if (!entry)
        for (std::size_t i : members)
          if (!entry || rate(i) < rate(*entry)) entry = i;
    }
    entry_of[sweep] = *entry;
  }
  out.load_points = runs;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto g = entry_of.find(runs[i].sweep);
    if (g != entry_of.end() && g->second != i) continue;  // a load point, not the entry
    std::optional<store::CapacityStudy> study;
    if (g != entry_of.end())
      if (const auto st = study_of.find(runs[i].sweep); st != study_of.end()) study = *st->second;
    out.runs.push_back(std::move(runs[i]));
    out.capacity.push_back(std::move(study));
  }
  return out;
}

void attach_plan_capacity(Entries& entries, const std::vector<store::PlanCapacity>& rows) {
  entries.capacity.resize(entries.runs.size());
  for (std::size_t i = 0; i < entries.runs.size(); ++i) {
    const store::StoredRun& r = entries.runs[i];
    if (entries.capacity[i]) continue;  // a `tiersim capacity` search's entry
    for (const auto& row : rows)
      if (row.study.sweep == r.sweep && row.scenario_hash == r.scenario_hash) {
        entries.capacity[i] = row.study;
        entries.capacity[i]->scenario_name = r.scenario_name;
        entries.capacity[i]->entry_run = r.id;
        break;
      }
  }
}

namespace {

bool is_point_label(const std::string& label) { return label.find('=') != std::string::npos; }

}  // namespace

void collapse_same_timings(Entries& e) {
  const std::size_t n = e.runs.size();
  e.capacity.resize(n);
  e.same_timings.resize(n);
  std::vector<char> dropped(n, 0);
  const auto capex = [&](std::size_t i) { return e.runs[i].find(sim::metric::kCapexUsd); };
  // Whether i stands before j: the cheaper to buy, then the one stored first.
  const auto before = [&](std::size_t i, std::size_t j) {
    const auto ci = capex(i), cj = capex(j);
    if (ci && cj && *ci != *cj) return *ci < *cj;
    return i < j;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const store::StoredRun& a = e.runs[i];
    if (dropped[i] || a.sweep.empty() || a.sweep.rfind(kCapacitySweepPrefix, 0) == 0 ||
        !is_point_label(a.display_name()))
      continue;
    for (std::size_t j = i + 1; j < n; ++j) {
      const store::StoredRun& b = e.runs[j];
      if (dropped[j] || b.sweep != a.sweep || !is_point_label(b.display_name()) ||
          !sim::same_timings(a.metrics, b.metrics))
        continue;
      // The planner's rule (study/sweep.hpp): drives, DRAM; not another host, instance or policy.
      if (!sweep::differ_in_hardware_only(a.display_name(), b.display_name())) continue;
      // The survivor of the two stays at the earlier place, so that the entries keep the order
      // stored; the other is listed under it.
      const std::size_t keep = before(i, j) ? i : j, drop = keep == i ? j : i;
      std::string t = short_point_label(
          sweep::label_items_not_in(e.runs[drop].display_name(), e.runs[keep].display_name()));
      if (const auto ck = capex(keep), cd = capex(drop); ck && cd)
        t += " (capex " + std::string(*cd >= *ck ? "+" : "-") +
             format::usd(std::round(std::fabs(*cd - *ck))) + ")";
      std::vector<std::string> listed = std::move(e.same_timings[drop]);
      e.same_timings[drop].clear();
      if (keep == j) {
        // j takes i's place (i's list, now empty, goes with i to j's).
        std::swap(e.runs[i], e.runs[j]);
        std::swap(e.capacity[i], e.capacity[j]);
        std::swap(e.same_timings[i], e.same_timings[j]);
      }
      e.same_timings[i].push_back(std::move(t));
      for (auto& x : listed) e.same_timings[i].push_back(std::move(x));
      dropped[j] = 1;
    }
  }
  Entries out;
  out.load_points = std::move(e.load_points);
  for (std::size_t i = 0; i < n; ++i) {
    if (dropped[i]) continue;
    out.runs.push_back(std::move(e.runs[i]));
    out.capacity.push_back(std::move(e.capacity[i]));
    out.same_timings.push_back(std::move(e.same_timings[i]));
  }
  e = std::move(out);
}

const store::PlanVerdict* verdict_of(const std::vector<store::PlanVerdict>& verdicts,
                                     const store::StoredRun& run) {
  for (const auto& v : verdicts)
    if (v.scenario_hash == run.scenario_hash && v.status != "equivalent") return &v;
  return nullptr;
}

std::string short_point_label(const std::string& label) {
  // A point label is "key=value" items separated by spaces, each key a dotted path.
  if (label.find('=') == std::string::npos) return label;
  std::istringstream in(label);
  std::string item, out;
  while (in >> item) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) return label;  // not a point label after all
    std::string key = item.substr(0, eq);
    const auto first = key.find('.');
    // "hardware.gpu.model" -> "gpu.model"; "workload.batch" stays (one segment would say less).
    if (first != std::string::npos && key.find('.', first + 1) != std::string::npos)
      key.erase(0, first + 1);
    out += (out.empty() ? "" : ", ") + key + item.substr(eq);
  }
  return out;
}

namespace {

// "a.b=1 c=2" as (key, value) pairs; nullopt when it is not a point label.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_point(const std::string& label) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(label);
  std::string item;
  while (in >> item) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return std::nullopt;
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string last_segment(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

}  // namespace

std::vector<std::string> varying_point_labels(const std::vector<std::string>& labels) {
  std::vector<std::vector<std::pair<std::string, std::string>>> points;
  for (const auto& l : labels) {
    auto p = parse_point(l);
    if (!p) {
      std::vector<std::string> out;
      for (const auto& x : labels) out.push_back(short_point_label(x));
      return out;
    }
    points.push_back(std::move(*p));
  }
  // The keys whose value is not the same in every point (a key missing somewhere varies).
  std::map<std::string, std::set<std::string>> values;
  std::map<std::string, std::size_t> seen;
  for (const auto& p : points)
    for (const auto& [k, v] : p) {
      values[k].insert(v);
      ++seen[k];
    }
  std::set<std::string> varying;
  for (const auto& [k, vs] : values)
    if (vs.size() > 1 || seen[k] < points.size()) varying.insert(k);
  if (varying.empty()) {
    std::vector<std::string> out;
    for (const auto& x : labels) out.push_back(short_point_label(x));
    return out;
  }
  // "hardware.gpu.model" -> "gpu.model", "policy.weights" -> "weights": the section (hardware,
  // policy, workload) says nothing the rest does not.
  const auto name = [&](const std::string& k) {
    const auto first = k.find('.');
    if (first == std::string::npos) return k;
    return k.find('.', first + 1) != std::string::npos ? k.substr(first + 1) : last_segment(k);
  };
  std::vector<std::string> out;
  for (const auto& p : points) {
    std::string l;
    for (const auto& [k, v] : p)
      if (varying.count(k)) l += (l.empty() ? "" : ", ") + name(k) + "=" + v;
    out.push_back(l);
  }
  return out;
}

}  // namespace tiersim::reports
