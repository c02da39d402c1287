#include "reports/breakdown_section.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "common/format.hpp"
#include "reports/report.hpp"
#include "sim/breakdown.hpp"

namespace tiersim::reports {
namespace {

using nlohmann::json;

// Phases shown as rows of the table (the rest of each run summed in one row); the chart has all.
constexpr std::size_t kTableRows = 10;

struct Row {
  std::string metric;
  std::string label;            // "prefill: KV cache write-back to host"
  double largest_share = 0;     // over the runs, to order the rows
};

std::string phase_row_label(const sim::PhaseTime& p) {
  return std::string(sim::stage_label(p.stage)) + ": " + sim::phase_label(p);
}

double total_of(const store::StoredRun& r) {
  double total = 0;
  for (const auto& m : r.metrics)
    if (sim::is_phase_metric_name(m.name)) total += m.value;
  return total;
}

// Every phase any run has, largest share first.
std::vector<Row> phase_rows(const std::vector<store::StoredRun>& runs) {
  std::map<std::string, Row> rows;
  for (const auto& r : runs) {
    const double total = total_of(r);
    for (const auto& m : r.metrics)
      if (const auto p = sim::parse_phase_metric_name(m.name)) {
        Row& row = rows[m.name];
        row.metric = m.name;
        row.label = phase_row_label(*p);
        if (total > 0) row.largest_share = std::max(row.largest_share, m.value / total);
      }
  }
  std::vector<Row> out;
  for (auto& [name, row] : rows) out.push_back(row);
  std::stable_sort(out.begin(), out.end(),
                   [](const Row& a, const Row& b) { return a.largest_share > b.largest_share; });
  return out;
}

std::string cell(const store::StoredRun& r, const std::string& metric) {
  const auto v = r.find(metric);
  const double total = total_of(r);
  if (!v) return "–";
  return format::duration(*v) +
         (total > 0 ? " (" + format::fixed(100 * *v / total, 1) + "%)" : std::string());
}

// The runs' phases beyond the table's rows, summed: "" where none.
std::string rest_cell(const store::StoredRun& r, const std::vector<Row>& shown) {
  double rest = 0;
  bool any = false;
  for (const auto& m : r.metrics) {
    if (!sim::is_phase_metric_name(m.name)) continue;
    if (std::any_of(shown.begin(), shown.end(), [&](const Row& x) { return x.metric == m.name; }))
      continue;
    rest += m.value;
    any = true;
  }
  const double total = total_of(r);
  if (!any) return "–";
  return format::duration(rest) +
         (total > 0 ? " (" + format::fixed(100 * rest / total, 1) + "%)" : std::string());
}

constexpr const char* kMeasure =
    "Wall time on the critical path: walking back from the end of each run, every moment is "
    "charged to the work that ended last before it (the work whatever came next waited for), "
    "or to waiting where no resource was busy. The phases of a run add up to its simulated time "
    "(total_s; training: the iterations it simulates); work hidden behind other work does not "
    "appear. tiersim run and compare print each phase's busy time and bottleneck resource too.";

}  // namespace

std::vector<ReportPart> breakdown_parts(const std::vector<store::StoredRun>& runs,
                                        const std::vector<std::string>& labels) {
  const std::vector<Row> rows = phase_rows(runs);
  if (rows.empty()) return {};
  json values = json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double total = total_of(runs[i]);
    for (const Row& row : rows)
      if (const auto v = runs[i].find(row.metric))
        values.push_back({{"run", labels[i]},
                          {"phase", row.label},
                          {"seconds", *v},
                          {"share", total > 0 ? *v / total : 0.0}});
  }
  json order = json::array();
  for (const Row& row : rows) order.push_back(row.label);
  json s = chart_spec("Where the time goes: wall time on the critical path by phase", 560,
                      bars_height(runs.size(), 26));
  s["data"] = {{"values", values}};
  s["mark"] = {{"type", "bar"}, {"tooltip", true}};
  s["encoding"] = {
      {"y", {{"field", "run"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
      {"x",
       {{"field", "seconds"},
        {"type", "quantitative"},
        {"stack", "zero"},
        {"title", "seconds (phases add up to the simulated time)"}}},
      {"color",
       {{"field", "phase"},
        {"type", "nominal"},
        {"sort", order},
        {"title", "phase"},
        {"scale", {{"scheme", "tableau20"}}},
        {"legend", {{"orient", "bottom"}, {"columns", 2}, {"labelLimit", 320}}}}},
      {"order", {{"field", "share"}, {"type", "quantitative"}, {"sort", "descending"}}},
      {"tooltip",
       json::array({{{"field", "run"}},
                    {{"field", "phase"}},
                    {{"field", "seconds"}, {"format", ".4g"}},
                    {{"field", "share"}, {"format", ".1%"}}})}};

  std::ostringstream h;
  h << "<h2 id=\"time-breakdown\">Where the time goes</h2>\n<p class=\"note\">"
    << html_escape(kMeasure) << "</p>\n";
  std::ostringstream t;
  t << "<div class=\"tablewrap\"><table class=\"breakdown\"><tr><th class=\"name\">phase</th>";
  for (const auto& l : labels) t << "<th>" << html_escape(l) << "</th>";
  t << "</tr>\n";
  const std::vector<Row> shown(rows.begin(),
                               rows.begin() + static_cast<long>(std::min(kTableRows, rows.size())));
  for (const Row& row : shown) {
    t << "<tr><td class=\"name\">" << html_escape(row.label) << "</td>";
    for (const auto& r : runs) t << "<td>" << html_escape(cell(r, row.metric)) << "</td>";
    t << "</tr>\n";
  }
  if (shown.size() < rows.size()) {
    t << "<tr><td class=\"name\">other phases</td>";
    for (const auto& r : runs) t << "<td>" << html_escape(rest_cell(r, shown)) << "</td>";
    t << "</tr>\n";
  }
  t << "</table></div>\n";
  return {{h.str(), s}, {t.str(), nullptr}};
}

std::string breakdown_markdown(const std::vector<store::StoredRun>& runs,
                               const std::vector<std::string>& labels) {
  const std::vector<Row> rows = phase_rows(runs);
  if (rows.empty()) return "";
  std::ostringstream m;
  m << "## Where the time goes\n\n" << md_escape(kMeasure) << "\n\n| phase |";
  for (const auto& l : labels) m << " " << md_escape(l) << " |";
  m << "\n|---|";
  for (std::size_t i = 0; i < labels.size(); ++i) m << "---:|";
  const std::vector<Row> shown(rows.begin(),
                               rows.begin() + static_cast<long>(std::min(kTableRows, rows.size())));
  for (const Row& row : shown) {
    m << "\n| " << md_escape(row.label) << " |";
    for (const auto& r : runs) m << " " << md_escape(cell(r, row.metric)) << " |";
  }
  if (shown.size() < rows.size()) {
    m << "\n| other phases |";
    for (const auto& r : runs) m << " " << md_escape(rest_cell(r, shown)) << " |";
  }
  m << "\n\n";
  return m.str();
}

}  // namespace tiersim::reports
