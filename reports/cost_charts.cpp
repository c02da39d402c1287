#include "reports/cost_charts.hpp"

#include <algorithm>
#include <iterator>

#include "common/format.hpp"
#include "reports/decision.hpp"
#include "reports/report.hpp"
#include "sim/metrics.hpp"

namespace tiersim::reports {
namespace {

using nlohmann::json;

// The capex parts sim/economics.cpp reports, in stacking order, with the report's palette.
struct Part {
  const sim::MetricDecl& metric;
  const char* name;
  const char* color;
};
constexpr Part kParts[] = {{sim::metric::kCapexUsdGpu, "GPUs", "#4c78a8"},
                           {sim::metric::kCapexUsdPlatform, "platform", "#f58518"},
                           {sim::metric::kCapexUsdDram, "DRAM", "#54a24b"},
                           {sim::metric::kCapexUsdDrives, "NVMe drives", "#b279a2"}};

std::string num(double v) { return format::significant(v, 4); }

// Each configuration's purchase price as one bar stacked by component.
json capex_chart(const std::vector<store::StoredRun>& runs, const std::vector<std::string>& labels,
                 const std::vector<std::size_t>& rows) {
  json values = json::array();
  for (std::size_t i : rows)
    for (std::size_t k = 0; k < std::size(kParts); ++k)
      if (const double v = runs[i].find(kParts[k].metric).value_or(0); v > 0)
        values.push_back({{"run", labels[i]},
                          {"part", kParts[k].name},
                          {"part_order", k},  // stacking order: that of kParts
                          {"usd", v},
                          {"price", format::dollars(v)},
                          {"total", format::dollars(runs[i].get(sim::metric::kCapexUsd))}});
  if (values.empty()) return nullptr;
  json domain = json::array(), range = json::array();
  for (const Part& p : kParts) {
    domain.push_back(p.name);
    range.push_back(p.color);
  }
  json s = chart_spec("Capex by component (USD)", 480, bars_height(rows.size(), 26));
  s["data"] = {{"values", values}};
  s["mark"] = {{"type", "bar"}};
  s["encoding"] = {
      {"y", {{"field", "run"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
      {"x", {{"field", "usd"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "USD"}}},
      {"color",
       {{"field", "part"}, {"type", "nominal"}, {"title", "component"},
        {"scale", {{"domain", domain}, {"range", range}}}, {"sort", domain}}},
      {"order", {{"field", "part_order"}, {"type", "quantitative"}}},
      {"tooltip", json::array({{{"field", "run"}}, {{"field", "part"}}, {{"field", "price"}},
                               {{"field", "total"}, {"title", "capex"}}})}};
  return s;
}

// Throughput against cost per million tokens on log scales, the Pareto front as a line through
// the configurations no other one beats on both, each point numbered as in the list below it.
json scatter_chart(const std::vector<store::StoredRun>& runs, const std::vector<std::string>& labels,
                   const std::vector<std::size_t>& rows, const std::vector<std::size_t>& front) {
  json values = json::array();
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const store::StoredRun& r = runs[rows[k]];
    const auto at = std::find(front.begin(), front.end(), k);
    values.push_back({{"n", k + 1},
                      {"run", labels[rows[k]]},
                      {"throughput", r.get(sim::metric::kThroughputTokensPerS)},
                      {"usd_per_mtoken", r.get(sim::metric::kUsdPerMillionTokens)},
                      {"front", at != front.end() ? "Pareto front" : "beaten on both"},
                      {"front_order", at != front.end() ? at - front.begin() : -1}});
  }
  json s = chart_spec("Throughput vs cost per million tokens (log scales)", 420, 260);
  s["data"] = {{"values", values}};
  const json x = {{"field", "throughput"}, {"type", "quantitative"},
                  {"scale", {{"type", "log"}}}, {"title", "throughput_tokens_per_s (tokens/s)"}};
  const json y = {{"field", "usd_per_mtoken"}, {"type", "quantitative"},
                  {"scale", {{"type", "log"}}}, {"title", "USD per million tokens"}};
  const json colour = {{"field", "front"}, {"type", "nominal"}, {"title", nullptr},
                       {"scale", {{"domain", {"Pareto front", "beaten on both"}},
                                  {"range", {"#e45756", "#4c78a8"}}}}};
  s["layer"] = json::array(
      {{{"transform", json::array({{{"filter", "datum.front_order >= 0"}}})},
        {"mark", {{"type", "line"}, {"color", "#e45756"}, {"strokeWidth", 2}}},
        {"encoding",
         {{"x", x}, {"y", y}, {"order", {{"field", "front_order"}, {"type", "quantitative"}}}}}},
       {{"mark", {{"type", "point"}, {"filled", true}, {"size", 80}, {"tooltip", true}}},
        {"encoding", {{"x", x}, {"y", y}, {"color", colour}}}},
       {{"mark", {{"type", "text"}, {"dx", 9}, {"dy", -8}}},
        {"encoding", {{"x", x}, {"y", y}, {"text", {{"field", "n"}}}}}}});
  return s;
}

}  // namespace

std::vector<std::size_t> cost_pareto_front(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < points.size() && !dominated; ++j) {
      if (j == i) continue;
      const bool no_worse = points[j].first >= points[i].first && points[j].second <= points[i].second;
      const bool better = points[j].first > points[i].first || points[j].second < points[i].second;
      // Of identical points the first stands for the others.
      dominated = no_worse && (better || j < i);
    }
    if (!dominated) out.push_back(i);
  }
  std::sort(out.begin(), out.end(),
            [&](std::size_t a, std::size_t b) { return points[a].first < points[b].first; });
  return out;
}

std::vector<ReportPart> cost_chart_parts(const std::vector<store::StoredRun>& runs,
                                         const std::vector<std::string>& labels) {
  std::vector<std::size_t> with_capex, with_both;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].has(sim::metric::kCapexUsdGpu)) with_capex.push_back(i);
    // Runs without tokens or prices have neither metric.
    if (runs[i].find(sim::metric::kThroughputTokensPerS).value_or(0) > 0 &&
        runs[i].find(sim::metric::kUsdPerMillionTokens).value_or(0) > 0)
      with_both.push_back(i);
  }
  if (with_capex.empty()) return {};
  std::vector<ReportPart> parts;
  parts.push_back({"<h2>Cost</h2>\n<p class=\"note\">Purchase price by component, and each "
                   "configuration's throughput against its cost per million tokens; the Pareto "
                   "front joins the configurations no other one beats on both.</p>\n",
                   capex_chart(runs, labels, with_capex)});
  if (with_both.size() >= 2) {
    std::vector<std::pair<double, double>> pts;
    for (std::size_t i : with_both)
      pts.emplace_back(runs[i].get(sim::metric::kThroughputTokensPerS),
                       runs[i].get(sim::metric::kUsdPerMillionTokens));
    const std::vector<std::size_t> front = cost_pareto_front(pts);
    parts.push_back({"", scatter_chart(runs, labels, with_both, front)});
    std::string list = "<ol class=\"note\">";
    for (std::size_t k = 0; k < pts.size(); ++k)
      list += "<li>" + html_escape(labels[with_both[k]]) + ": " + num(pts[k].first) +
              " tokens/s, $" + num(pts[k].second) + "/Mtoken" +
              (std::find(front.begin(), front.end(), k) != front.end() ? " (Pareto front)" : "") +
              "</li>";
    parts.push_back({list + "</ol>\n", nullptr});
  }
  return parts;
}

}  // namespace tiersim::reports
