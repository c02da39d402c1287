#include "reports/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "model/errors.hpp"
#include "reports/breakdown_section.hpp"
#include "reports/notes_section.hpp"
#include "reports/cost_charts.hpp"
#include "reports/entries.hpp"
#include "reports/serving_charts.hpp"
#include "sim/metrics.hpp"
#include "sim/workloads/names.hpp"
#include "sim/workloads/inference/metrics.hpp"
#include "sim/workloads/serving/metrics.hpp"
#include "sim/workloads/training/metrics.hpp"
#include "store/sqlite.hpp"
#include "common/format.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tiersim::reports {
namespace {

// Gantt charts are per run; past this many the page gets long and slow to render.
constexpr std::size_t kMaxGanttRuns = 24;

// Metrics a buyer looks at first; the rest follow alphabetically.
const std::vector<std::string> kHeadlineMetrics =
    sim::metric_names({sim::metric::kThroughputTokensPerS, sim::metric::kTokensPerS,
                       sim::metric::kUsdPerMillionTokens, sim::metric::kEnergyJPerToken,
                       sim::metric::kTtftS, sim::metric::kDecodeSPerToken, sim::metric::kPrefillS,
                       sim::metric::kDecodeS, sim::metric::kWeightWaitS, sim::metric::kTotalS,
                       sim::metric::kCapexUsd, sim::metric::kUsdPerHour, sim::metric::kAvgPowerW});

// A part of a run's energy: its label in the chart and its metric.
struct EnergyPart {
  const char* label;
  const sim::MetricDecl& metric;
};
const std::vector<EnergyPart> kEnergyComponents = {{"gpu", sim::metric::kEnergyJGpu},
                                                   {"cpu", sim::metric::kEnergyJCpu},
                                                   {"dram", sim::metric::kEnergyJDram},
                                                   {"nvme", sim::metric::kEnergyJNvme},
                                                   {"platform", sim::metric::kEnergyJPlatform},
                                                   {"fans", sim::metric::kEnergyJFans},
                                                   {"psu_loss", sim::metric::kEnergyJPsuLoss}};
// The phases of the same energy (model/power.hpp EnergyByPhase), in the order a run goes through.
const std::vector<EnergyPart> kEnergyPhases = {{"prefill", sim::metric::kEnergyJPrefill},
                                               {"decode", sim::metric::kEnergyJDecode},
                                               {"io_wait", sim::metric::kEnergyJIoWait},
                                               {"idle", sim::metric::kEnergyJIdle},
                                               {"other", sim::metric::kEnergyJOther}};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw IoError("cannot read vendored script '" + p.string() +
                         "' (set TIERSIM_VENDOR_DIR to the folder holding vega.min.js)");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  // The page must not reach for anything over the network, not even a source map.
  for (auto pos = s.find("//# sourceMappingURL="); pos != std::string::npos;
       pos = s.find("//# sourceMappingURL=", pos)) {
    auto end = s.find('\n', pos);
    s.erase(pos, end == std::string::npos ? std::string::npos : end - pos);
  }
  return s;
}


std::string utc_now() { return store::utc_timestamp("%Y-%m-%d %H:%M UTC"); }

// Unique, readable run labels: the compare variant's name, for the points of a sweep or plan
// what varies among them (reports/entries.hpp varying_point_labels), else the scenario's name;
// with the run id when labels repeat.
std::vector<std::string> run_labels(const std::vector<store::StoredRun>& runs) {
  std::vector<std::string> names(runs.size());
  std::map<std::string, std::vector<std::size_t>> by_sweep;  // points labelled by their axes
  for (std::size_t i = 0; i < runs.size(); ++i) {
    names[i] = runs[i].display_name();
    if (!runs[i].sweep.empty() && !runs[i].variant.empty()) by_sweep[runs[i].sweep].push_back(i);
  }
  for (const auto& [sweep, members] : by_sweep) {
    std::vector<std::string> labels;
    for (std::size_t i : members) labels.push_back(runs[i].variant);
    const std::vector<std::string> shorter = varying_point_labels(labels);
    for (std::size_t k = 0; k < members.size(); ++k) names[members[k]] = shorter[k];
  }
  std::map<std::string, int> count;
  for (const auto& n : names) ++count[n];
  std::vector<std::string> out;
  for (std::size_t i = 0; i < runs.size(); ++i)
    out.push_back(count[names[i]] > 1 ? names[i] + " #" + std::to_string(runs[i].id) : names[i]);
  return out;
}


// The run's bottleneck as people read it, with its stable name: "GPU 5 (gpu5)"; "" for none.
std::string bottleneck_text(const store::StoredRun& r) {
  if (r.bottleneck.empty()) return "";
  return sim::resource_label(r.bottleneck) + " (" + r.bottleneck + ")";
}

// Metric names in display order, with the unit each one has.
std::vector<std::pair<std::string, std::string>> metric_rows(const std::vector<store::StoredRun>& runs) {
  std::map<std::string, std::string> unit;
  for (const auto& r : runs)
    for (const auto& m : r.metrics)
      // The phase_* metrics are the rows of their own section (reports/breakdown_section.cpp).
      if (!sim::is_phase_metric_name(m.name)) unit.emplace(m.name, m.unit);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& name : kHeadlineMetrics)
    if (auto it = unit.find(name); it != unit.end()) out.push_back(*it);
  for (const auto& [name, u] : unit)
    if (std::find(kHeadlineMetrics.begin(), kHeadlineMetrics.end(), name) ==
        kHeadlineMetrics.end())
      out.emplace_back(name, u);
  return out;
}

std::map<std::string, int> provenance_counts(const store::StoredRun& r) {
  std::map<std::string, int> n;
  for (const auto& [key, source] : r.provenance) ++n[provenance_kind(source)];
  return n;
}

std::string provenance_summary(const store::StoredRun& r) {
  if (r.provenance.empty()) return "not recorded";
  std::string s;
  for (const auto& [kind, n] : provenance_counts(r)) {
    if (!s.empty()) s += ", ";
    s += std::to_string(n) + " " + kind;
  }
  return s;
}

}  // namespace

std::string validation_sentence(const ValidationInfo& v) {
  // A percentage as the sentence prints it: one decimal ("12.3%").
  const auto pct = [](double p) { return format::fixed(p, 1) + "%"; };
  if (!v.available)
    return "Model validation could not be run (" + v.error +
           "); treat the predictions as unvalidated.";
  if (!v.groups.empty()) {
    // Each configuration is judged by the error of its own group of mechanisms, not one global
    // figure that other groups' cases dominate; and by the rows no constant was derived from
    // (leave-one-source-out, study/validation.hpp), since the in-sample figure promises more
    // accuracy than the model has on systems it has not seen.
    std::string out =
        "Model validation by the group each configuration belongs to (error bands use the "
        "out-of-sample, leave-one-source-out error):";
    for (const auto& g : v.groups) {
      const std::string configurations = format::counted(g.configurations, "configuration");
      out += " " + g.name + " (" + configurations + "): ";
      if (g.measurements == 0) {
        out += "no published case covers it, unvalidated;";
        continue;
      }
      if (g.out_of_sample_measurements > 0)
        out += "out-of-sample mean absolute error " + pct(g.out_of_sample_mape_pct) + " over " +
               format::counted(g.out_of_sample_measurements, "published measurement") +
               " (worst case " + pct(g.out_of_sample_max_abs_error_pct) + "), in-sample " +
               pct(g.mape_pct) + " over " + std::to_string(g.measurements);
      else
        out += "no out-of-sample measurement (every one of its " +
               format::counted(g.measurements, "published measurement") +
               " fed a constant it uses), in-sample mean absolute error " + pct(g.mape_pct) +
               " (worst case " + pct(g.max_abs_error_pct) + ")";
      if (g.provisional)
        out += ", provisional: " +
               (g.why_provisional.empty() ? std::string("not established yet") : g.why_provisional);
      out += ";";
    }
    out.back() = '.';
    return out;
  }
  const std::string validated =
      "Model validated against " + std::to_string(v.measurements) + " published measurements";
  if (v.out_of_sample_measurements > 0)
    return validated + ": out-of-sample (leave-one-source-out) mean absolute error " +
           pct(v.out_of_sample_mape_pct) + " over " + std::to_string(v.out_of_sample_measurements) +
           ", in-sample " + pct(v.mape_pct) + " (worst case " + pct(v.max_abs_error_pct) + ").";
  return validated + ", in-sample mean absolute error " + pct(v.mape_pct) + " (worst case " +
         pct(v.max_abs_error_pct) + "); no out-of-sample figure.";
}

namespace {

// --- Vega-Lite specs --------------------------------------------------------------------------

// A horizontal bar per run; nullopt-like (null json) when no run has the metric.
json bar_spec(const std::vector<store::StoredRun>& runs, const std::vector<std::string>& labels,
              const std::vector<std::string>& names, const std::string& title,
              const std::string& axis) {
  json values = json::array();
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const auto& name : names)
      if (const sim::Metric* m = runs[i].find_metric(name)) {
        values.push_back({{"run", labels[i]}, {"value", m->value}});
        break;  // first name present wins (e.g. tokens_per_s for training runs)
      }
  if (values.empty()) return nullptr;
  json s = chart_spec(title, 560, static_cast<int>(std::max<std::size_t>(60, 22 * values.size())));
  s["data"] = {{"values", values}};
  s["mark"] = {{"type", "bar"}, {"tooltip", true}};
  s["encoding"] = {{"y", {{"field", "run"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
                   {"x", {{"field", "value"}, {"type", "quantitative"}, {"title", axis}}}};
  return s;
}

json latency_spec(const std::vector<store::StoredRun>& runs, const std::vector<std::string>& labels) {
  const std::vector<std::pair<const sim::MetricDecl*, std::string>> parts = {
      {&sim::metric::kPrefillS, "prefill"},
      {&sim::metric::kDecodeS, "decode"},
      {&sim::metric::kWeightWaitS, "I/O wait (weights)"}};
  json values = json::array();
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const auto& [metric, part] : parts)
      if (const auto v = runs[i].find(*metric))
        values.push_back({{"run", labels[i]}, {"part", part}, {"seconds", *v}});
  if (values.empty()) return nullptr;
  // Side by side, not stacked: I/O wait happens inside prefill and decode, so stacking would
  // count it twice.
  json s = chart_spec("Latency split (I/O wait is part of prefill + decode)", 560,
                     static_cast<int>(std::max<std::size_t>(60, 30 * runs.size())));
  s["data"] = {{"values", values}};
  s["mark"] = {{"type", "bar"}, {"tooltip", true}};
  s["encoding"] = {
      {"y", {{"field", "run"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
      {"yOffset", {{"field", "part"}, {"sort", {"prefill", "decode", "I/O wait (weights)"}}}},
      {"x", {{"field", "seconds"}, {"type", "quantitative"}, {"title", "seconds"}}},
      {"color", {{"field", "part"}, {"type", "nominal"}, {"sort", {"prefill", "decode", "I/O wait (weights)"}}, {"title", nullptr}}}};
  return s;
}

// Energy per generated token of each run as one stacked bar of `parts` (the components, or the
// phases), or its total where a run has none of them.
json energy_spec(const std::vector<store::StoredRun>& runs, const std::vector<std::string>& labels,
                 const std::vector<EnergyPart>& parts, const std::string& by) {
  json values = json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const store::StoredRun& r = runs[i];
    const double tokens = r.find(sim::metric::kGeneratedTokens).value_or(0);
    bool any_part = false;
    if (tokens > 0)
      for (const EnergyPart& c : parts)
        if (const auto v = r.find(c.metric)) {
          values.push_back({{"run", labels[i]}, {by, c.label}, {"j_per_token", *v / tokens}});
          any_part = true;
        }
    if (!any_part)
      if (const auto v = r.find(sim::metric::kEnergyJPerToken))
        values.push_back({{"run", labels[i]}, {by, "total"}, {"j_per_token", *v}});
  }
  if (values.empty()) return nullptr;
  json s = chart_spec("Energy per generated token by " + by, 560,
                     static_cast<int>(std::max<std::size_t>(60, 22 * runs.size())));
  s["data"] = {{"values", values}};
  s["mark"] = {{"type", "bar"}, {"tooltip", true}};
  json order = json::array();
  for (const EnergyPart& c : parts) order.push_back(c.label);
  s["encoding"] = {
      {"y", {{"field", "run"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
      {"x",
       {{"field", "j_per_token"},
        {"type", "quantitative"},
        {"stack", "zero"},
        {"title", "J per token (IT power, before PUE)"}}},
      {"color", {{"field", by}, {"type", "nominal"}, {"sort", order}, {"title", by}}}};
  return s;
}

// `activities`: every label over all runs, so one activity has the same colour in every chart.
json gantt_spec(const store::StoredRun& r, const std::string& label, const json& activities) {
  if (r.timeline.empty()) return nullptr;
  double t0 = r.timeline.front().start_s;
  for (const auto& s : r.timeline) t0 = std::min(t0, s.start_s);
  json values = json::array();
  for (const auto& s : r.timeline)
    values.push_back({{"resource", s.resource},
                      {"label", s.label},
                      {"start_ms", (s.start_s - t0) * 1e3},
                      {"end_ms", (s.end_s - t0) * 1e3},
                      {"step", s.phase},
                      {"item", s.item}});
  int step = r.timeline.front().phase;
  json s = chart_spec(label + ": one decode step (step " + std::to_string(step) + ")", 900, 0);
  s.erase("height");
  s["data"] = {{"values", values}};
  s["mark"] = {{"type", "bar"}, {"tooltip", true}};
  s["encoding"] = {
      {"y", {{"field", "resource"}, {"type", "nominal"}, {"title", nullptr}}},
      {"x", {{"field", "start_ms"}, {"type", "quantitative"}, {"title", "milliseconds into the step"}}},
      {"x2", {{"field", "end_ms"}}},
      {"color", {{"field", "label"}, {"type", "nominal"}, {"title", "activity"}, {"scale", {{"domain", activities}, {"scheme", "tableau20"}}}}},
      {"tooltip", json::array({{{"field", "label"}}, {{"field", "resource"}}, {{"field", "start_ms"}, {"format", ".3f"}},
                               {{"field", "end_ms"}, {"format", ".3f"}}, {{"field", "step"}}, {{"field", "item"}, {"title", "layer/item"}}})}};
  return s;
}

json calibration_spec(const std::vector<CalibrationCurve>& curves) {
  json values = json::array();
  for (const auto& c : curves)
    for (std::size_t i = 0; i < c.block_bytes.size() && i < c.bandwidth_gbps.size(); ++i)
      values.push_back({{"block_kib", c.block_bytes[i] / 1024.0},
                        {"gbps", c.bandwidth_gbps[i]},
                        {"queue_depth", c.queue_depth},
                        {"series", c.rw + " " + fs::path(c.target).filename().string() +
                                       " (" + std::to_string(c.threads) + " thread" +
                                       (c.threads == 1 ? "" : "s") + ")"}});
  if (values.empty()) return nullptr;
  json s = chart_spec("", 420, 260);
  s.erase("title");
  s.erase("width");
  s.erase("height");
  s["title"] = "Measured bandwidth vs block size per queue depth (calibration)";
  s["data"] = {{"values", values}};
  s["facet"] = {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}};
  s["columns"] = 2;
  s["spec"] = {{"width", 420},
               {"height", 260},
               {"mark", {{"type", "line"}, {"point", true}, {"tooltip", true}}},
               {"encoding",
                {{"x", {{"field", "block_kib"}, {"type", "quantitative"}, {"scale", {{"type", "log"}, {"base", 2}}}, {"title", "block size (KiB)"}}},
                 {"y", {{"field", "gbps"}, {"type", "quantitative"}, {"title", "GB/s (1e9 B/s)"}}},
                 {"color", {{"field", "queue_depth"}, {"type", "ordinal"}, {"title", "queue depth"}}}}}};
  return s;
}

// --- HTML -------------------------------------------------------------------------------------

// JSON inlined in a <script> element. The HTML parser ends the element at "</script" and enters
// its "script data escaped" states at "<!--" (then "<script" hides the real "</script>", and the
// page's scripts never run); JavaScript before ES2019 ends a string at U+2028/U+2029. As \u
// escapes none of them can occur (WHATWG HTML, "Restrictions for contents of script elements").
// Invalid UTF-8 in a name becomes U+FFFD instead of failing the whole report.
std::string script_json(const json& j) {
  const std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < s.size() && s[i + 1] == '\x80' &&
               (s[i + 2] == '\xa8' || s[i + 2] == '\xa9')) {
      out += s[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

constexpr const char* kCss = R"css(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px 32px;color:#1d2330;max-width:1500px}
h1{margin-bottom:4px}h2{margin-top:36px;border-bottom:1px solid #d0d5dd;padding-bottom:4px}
.meta{color:#555;margin:2px 0}
.validation{background:#eef5ff;border-left:4px solid #2f6fdf;padding:8px 12px;margin:12px 0;font-weight:600}
.validation.missing{background:#fff4e5;border-left-color:#e08a00}
.tablewrap{overflow-x:auto}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #d0d5dd;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f3f5f8;white-space:normal;overflow-wrap:anywhere;min-width:6em;max-width:11em;vertical-align:bottom}
td.name,th.name{text-align:left}
td.name{white-space:normal;overflow-wrap:anywhere;max-width:16em}
tr.head td{white-space:normal;max-width:11em;overflow-wrap:anywhere}
.status{color:#8a1c1c}
tr.head td{font-weight:600;background:#fafbfc}
.plot{margin:16px 0}.note{color:#666;font-size:13px}
.recommendation{background:#effaf1;border-left:4px solid #1d6b35;padding:8px 12px;font-weight:600}
details{margin:6px 0}summary{cursor:pointer;font-weight:600}
li.input-warning{color:#8a1c1c}
.src-catalog{color:#1d6b35}.src-profile{color:#8a3ab9}.src-override{color:#b54708}.src-default{color:#555}
)css";

// The load point an entry's figures are from: its capacity search's sustained rate, or the
// zero-load probe of one that sustains none; "" for other runs.
std::string load_point_text(const ReportInput& in, std::size_t i) {
  if (i >= in.capacity.size() || !in.capacity[i]) return "";
  const auto rate = in.runs[i].find(sim::metric::kOfferedRateRequestsPerS);
  const std::string r = rate ? format::significant(*rate, 3) + " requests/s" : "?";
  return in.capacity[i]->found ? "sustained rate, " + r : "zero load, " + r + " (no rate meets the SLO)";
}

std::string html_table(const ReportInput& in, const std::vector<std::string>& labels) {
  std::ostringstream h;
  h << "<div class=\"tablewrap\"><table><thead><tr><th class=\"name\">metric</th><th class=\"name\">unit</th>";
  for (const auto& l : labels) h << "<th>" << html_escape(l) << "</th>";
  h << "</tr></thead><tbody>";
  auto text_row = [&](const std::string& name, auto get) {
    h << "<tr class=\"head\"><td class=\"name\">" << name << "</td><td></td>";
    for (const auto& r : in.runs) h << "<td>" << html_escape(get(r)) << "</td>";
    h << "</tr>";
  };
  text_row("workload", [](const store::StoredRun& r) { return r.workload; });
  text_row("fits in memory", [](const store::StoredRun& r) { return std::string(r.fits ? "yes" : "NO"); });
  text_row("bottleneck", [](const store::StoredRun& r) { return bottleneck_text(r); });
  if (std::any_of(in.capacity.begin(), in.capacity.end(), [](const auto& c) { return c.has_value(); })) {
    // Which load point of a capacity search the column's figures are from.
    h << "<tr class=\"head\"><td class=\"name\">figures at</td><td></td>";
    for (std::size_t i = 0; i < in.runs.size(); ++i)
      h << "<td>" << html_escape(load_point_text(in, i)) << "</td>";
    h << "</tr>";
  }
  text_row("inputs from", [](const store::StoredRun& r) { return provenance_summary(r); });
  for (const auto& [name, unit] : metric_rows(in.runs)) {
    h << "<tr><td class=\"name\">" << html_escape(name) << "</td><td class=\"name\">"
      << html_escape(unit) << "</td>";
    for (const auto& r : in.runs) {
      const sim::Metric* m = r.find_metric(name);
      h << "<td>" << (m ? html_escape(format::cell(m->value, unit)) : "&ndash;") << "</td>";
    }
    h << "</tr>";
  }
  h << "</tbody></table></div>";
  return h.str();
}

std::string html_sources(const ReportInput& in, const std::vector<std::string>& labels) {
  std::ostringstream h;
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const store::StoredRun& r = in.runs[i];
    h << "<details><summary>" << html_escape(labels[i]) << " &mdash; "
      << html_escape(provenance_summary(r)) << "</summary>";
    h << "<p class=\"meta\">run " << r.id << ", scenario hash <code>" << html_escape(r.scenario_hash)
      << "</code>, simulated " << html_escape(r.created_at) << " by tiersim "
      << html_escape(r.tool_version);
    if (!r.sweep.empty()) h << ", sweep " << html_escape(r.sweep);
    if (!r.fits) h << "<br><b>does not fit:</b> " << html_escape(r.shortfall);
    h << "</p>";
    if (!r.provenance.empty()) {
      h << "<table><tr><th class=\"name\">input</th><th class=\"name\">source</th></tr>";
      for (const auto& [key, source] : r.provenance)
        h << "<tr><td class=\"name\">" << html_escape(key) << "</td><td class=\"name src-"
          << provenance_kind(source) << "\">" << html_escape(source) << "</td></tr>";
      h << "</table>";
    }
    h << "</details>";
  }
  return h.str();
}

// The serving charts over every load point, with each capacity search's latency targets drawn.
std::vector<ReportPart> serving_section(const ReportInput& in) {
  std::map<std::string, SloTargets> targets;
  for (std::size_t i = 0; i < in.runs.size() && i < in.capacity.size(); ++i)
    if (const auto& st = in.capacity[i])
      targets[in.runs[i].display_name()] = {st->slo_ttft_s, st->slo_tbt_s};
  return serving_chart_parts(in.load_points.empty() ? in.runs : in.load_points, targets);
}

std::string build_html(const ReportInput& in, const std::vector<std::string>& labels,
                       const std::string& vendor_dir) {
  const fs::path vd(vendor_dir);
  std::vector<std::pair<std::string, json>> plots;  // (section heading or "", spec)
  std::vector<std::string> missing;
  auto add = [&](const std::string& what, json spec) {
    if (spec.is_null())
      missing.push_back(what);
    else
      plots.emplace_back(what, std::move(spec));
  };
  add("throughput",
      bar_spec(in.runs, labels,
               sim::metric_names({sim::metric::kThroughputTokensPerS, sim::metric::kTokensPerS}),
               "Throughput", "generated tokens per second"));
  add("latency split", latency_spec(in.runs, labels));
  add("energy per token", energy_spec(in.runs, labels, kEnergyComponents, "component"));
  add("energy by phase", energy_spec(in.runs, labels, kEnergyPhases, "phase"));
  add("cost per million tokens",
      bar_spec(in.runs, labels, sim::metric_names({sim::metric::kUsdPerMillionTokens}),
               "Cost per million generated tokens (capex amortised + energy)",
               "USD per 1e6 tokens"));

  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    << "<title>" << html_escape(in.title) << "</title><style>" << kCss << "</style>\n";
  for (const char* f : {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js"})
    h << "<script>/* " << f << " (reports/vendor, BSD-3-Clause) */\n" << read_file(vd / f)
      << "\n</script>\n";
  h << "</head><body>\n<h1>" << html_escape(in.title) << "</h1>\n";
  h << "<p class=\"meta\">" << format::counted(in.runs.size(), "configuration")
    << (in.sweep.empty() ? "" : " of sweep <b>" + html_escape(in.sweep) + "</b>") << " from <code>"
    << html_escape(in.database_name) << "</code>; generated " << utc_now() << " by tiersim "
    << html_escape(in.tool_version) << ".</p>\n";
  h << "<p class=\"validation" << (in.validation.available ? "" : " missing") << "\">"
    << html_escape(validation_sentence(in.validation)) << "</p>\n";
  h << notes_banner_html(in.notes);  // "" unless some configuration's inputs carry a warning
  h << "<p class=\"note\">All numbers are simulator predictions, not measurements. Each run's inputs "
       "and where they came from (catalog entry with its source, calibrated device profile, or "
       "user override) are listed under <a href=\"#sources\">Sources</a>.</p>\n";

  int n = 0;
  std::ostringstream js;
  auto embed = [&](const json& spec) {
    const std::string id = "plot" + std::to_string(n++);
    h << "<div class=\"plot\" id=\"" << id << "\"></div>\n";
    js << "vegaEmbed('#" << id << "'," << script_json(spec)
       << ",{actions:false,renderer:'svg'}).catch(function(e){var d=document.getElementById('" << id
       << "');d.className='plot plot-error';d.textContent='This plot failed to render: '+e;});\n";
  };
  for (const auto& part : decision_html(in, labels)) {
    h << part.html;
    if (!part.spec.is_null()) embed(part.spec);
  }

  h << "<h2>Comparison</h2>\n" << html_table(in, labels) << "\n";
  h << notes_html(in.notes, labels);  // "" when no configuration's inputs carry notes
  h << "<h2>Plots</h2>\n";
  if (!missing.empty()) {
    h << "<p class=\"note\">Not plotted (no run has the metrics): ";
    for (std::size_t i = 0; i < missing.size(); ++i) h << (i ? ", " : "") << html_escape(missing[i]);
    h << ".</p>\n";
  }
  for (const auto& [what, spec] : plots) embed(spec);
  for (const auto& part : serving_section(in)) {  // none without serving runs
    h << part.html;
    if (!part.spec.is_null()) embed(part.spec);
  }
  // Hit rate and TTFT against KV tier size; none without runs that differ only in a tier's size.
  for (const auto& part : tier_size_chart_parts(in.load_points.empty() ? in.runs : in.load_points)) {
    h << part.html;
    if (!part.spec.is_null()) embed(part.spec);
  }
  for (const auto& part : cost_chart_parts(in.runs, labels)) {  // none without capex
    h << part.html;
    if (!part.spec.is_null()) embed(part.spec);
  }
  for (const auto& part : breakdown_parts(in.runs, labels)) {  // none without phase_* metrics
    h << part.html;
    if (!part.spec.is_null()) embed(part.spec);
  }

  h << "<h2>One decode step per configuration</h2>\n<p class=\"note\">Busy intervals of every "
       "simulated resource during one steady-state decode step (the middle one), including "
       "prefetches for the next step that overlap it. Hover a bar for the layer.</p>\n";
  std::set<std::string> activity_set;
  for (const auto& r : in.runs)
    for (const auto& sp : r.timeline) activity_set.insert(sp.label);
  const json activities(activity_set);
  std::size_t gantts = 0;
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    json g = gantt_spec(in.runs[i], labels[i], activities);
    if (g.is_null()) continue;
    if (gantts++ == kMaxGanttRuns) {
      h << "<p class=\"note\">Further timelines left out (more than " << kMaxGanttRuns
        << " configurations).</p>\n";
      break;
    }
    embed(g);
  }
  if (gantts == 0)
    h << "<p class=\"note\">No timeline stored (runs saved without tracing).</p>\n";

  if (json c = calibration_spec(in.calibration); !c.is_null()) {
    h << "<h2>Calibration</h2>\n<p class=\"note\">Points measured by <code>tiersim calibrate</code> "
         "on this machine's drives (latest calibration run in the database).</p>\n";
    embed(c);
  }

  h << "<h2 id=\"sources\">Sources</h2>\n" << html_sources(in, labels) << "\n";
  h << "<script>\n" << js.str() << "</script>\n</body></html>\n";
  return h.str();
}

// --- Markdown and CSV -------------------------------------------------------------------------

std::string build_markdown(const ReportInput& in, const std::vector<std::string>& labels) {
  std::ostringstream m;
  m << "# " << md_escape(in.title) << "\n\n";
  m << format::counted(in.runs.size(), "configuration")
    << (in.sweep.empty() ? "" : " of sweep " + md_escape(in.sweep)) << " from "
    << md_escape(in.database_name) << "; generated " << utc_now() << " by tiersim "
    << md_escape(in.tool_version) << ".\n\n";
  m << "**" << md_escape(validation_sentence(in.validation)) << "**\n\n";
  m << "All numbers are simulator predictions. Plots and per-step timelines are in index.html.\n\n";
  m << decision_markdown(in, labels);
  m << "## Comparison\n\n| metric | unit |";
  for (const auto& l : labels) m << " " << md_escape(l) << " |";
  m << "\n|---|---|";
  for (std::size_t i = 0; i < labels.size(); ++i) m << "---:|";
  m << "\n| fits in memory | |";
  for (const auto& r : in.runs) m << " " << (r.fits ? "yes" : "**no**") << " |";
  m << "\n| bottleneck | |";
  for (const auto& r : in.runs) m << " " << md_escape(bottleneck_text(r)) << " |";
  if (std::any_of(in.capacity.begin(), in.capacity.end(), [](const auto& c) { return c.has_value(); })) {
    m << "\n| figures at | |";
    for (std::size_t i = 0; i < in.runs.size(); ++i) m << " " << md_escape(load_point_text(in, i)) << " |";
  }
  m << "\n| inputs from | |";
  for (const auto& r : in.runs) m << " " << md_escape(provenance_summary(r)) << " |";
  for (const auto& [name, unit] : metric_rows(in.runs)) {
    m << "\n| " << md_escape(name) << " | " << md_escape(unit) << " |";
    for (const auto& r : in.runs) {
      const sim::Metric* x = r.find_metric(name);
      m << " " << (x ? md_escape(format::cell(x->value, unit)) : "–") << " |";
    }
  }
  m << "\n\n" << notes_markdown(in.notes, labels);  // "" when no inputs carry notes
  m << breakdown_markdown(in.runs, labels);  // "" without phase_* metrics
  m << "## Sources\n";
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const store::StoredRun& r = in.runs[i];
    m << "\n### " << md_escape(labels[i]) << "\n\nrun " << r.id << ", scenario hash "
      << md_escape(r.scenario_hash) << ", tiersim " << md_escape(r.tool_version) << ", "
      << md_escape(r.created_at) << "\n\n";
    if (!r.fits) m << "Does not fit: " << md_escape(r.shortfall) << "\n\n";
    for (const auto& [key, source] : r.provenance)
      m << "- `" << md_escape(key) << "`: " << md_escape(source) << "\n";
  }
  return m.str();
}

std::string build_csv(const ReportInput& in) {
  std::ostringstream c;
  c << "run_id,scenario_name,variant,scenario_hash,sweep,metric,value,unit\n";
  for (const auto& r : in.runs)
    for (const auto& m : r.metrics) {
      char v[40];
      std::snprintf(v, sizeof v, "%.17g", m.value);  // full precision: a CSV is for re-analysis
      c << r.id << "," << csv_escape(r.scenario_name) << "," << csv_escape(r.variant) << ","
        << csv_escape(r.scenario_hash) << "," << csv_escape(r.sweep) << "," << csv_escape(m.name)
        << "," << v << "," << csv_escape(m.unit) << "\n";
    }
  return c.str();
}

}  // namespace

std::string csv_escape(const std::string& text) {
  std::string s = valid_utf8(text);
  // A spreadsheet runs a cell starting with = + - @ (or TAB/CR before one) as a formula
  // (OWASP, "CSV Injection"); a leading quote makes it text.
  if (!s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos)
    s.insert(0, 1, '\'');
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";  // RFC 4180: quote the field, double the quotes inside
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string html_escape(const std::string& text) {
  const std::string s = valid_utf8(text);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;  // attribute values in single quotes too
      default: out += c;
    }
  }
  return out;
}

// Text in Markdown (table cells, headings, list items): a "|" would end the cell, a newline the
// row or paragraph, and raw HTML is rendered by most Markdown viewers; so they are escaped.
std::string md_escape(const std::string& s) {
  std::string out;
  const std::string text = valid_utf8(s);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // GitHub's autolinks of bare URLs ("https://...", "www."): the ':' or '.' is escaped.
    if ((c == ':' && text.compare(i + 1, 2, "//") == 0) ||
        (c == '.' && i >= 3 && text.compare(i - 3, 3, "www") == 0)) {
      out += '\\';
      out += c;
      continue;
    }
    switch (c) {
      // Link, image and emphasis syntax ([text](url), ![alt](src), *, ~) and headings (#) are
      // backslash-escaped, which CommonMark allows for any ASCII punctuation: a scenario name
      // is shown as written, never as a link. Links and images need both brackets, so escaping
      // them is enough and the prose's parentheses stay readable. ('_' is left: inside words,
      // as in metric names, it never starts emphasis.)
      case '[': case ']': case '*': case '~': case '#':
      case '|':
      case '\\':
      case '`':
        out += '\\';
        out += c;
        break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n':
      case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

std::string valid_utf8(std::string_view s) {
  // Well-formed sequences per the Unicode Standard, Table 3-7; each byte that cannot start or
  // continue one becomes U+FFFD (as nlohmann::json's error_handler_t::replace does).
  std::string out;
  out.reserve(s.size());
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char b = byte(i);
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
    if (b < 0x80) n = 1;
    else if (b >= 0xc2 && b <= 0xdf) n = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      n = 3;
      if (b == 0xe0) lo = 0xa0;
      if (b == 0xed) hi = 0x9f;  // no UTF-16 surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 4;
      if (b == 0xf0) lo = 0x90;
      if (b == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
    }
    bool ok = n > 0 && i + n <= s.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const unsigned char c = byte(i + k);
      ok = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xbf);
    }
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}


std::string provenance_kind(const std::string& source) {
  auto starts = [&](const char* p) { return source.rfind(p, 0) == 0; };
  if (starts("catalog")) return "catalog";
  if (starts("profile")) return "profile";
  if (starts("override")) return "override";
  if (starts("default")) return "default";
  return "other";
}

std::string default_vendor_dir() {
  if (const char* env = std::getenv("TIERSIM_VENDOR_DIR"); env && *env) return env;
  return std::string(TIERSIM_SOURCE_DIR) + "/reports/vendor";
}

ReportFiles report_files(const std::string& out_dir) {
  return {(fs::path(out_dir) / "index.html").string(), (fs::path(out_dir) / "report.md").string(),
          (fs::path(out_dir) / "metrics.csv").string()};
}

void check_report_outputs(const std::string& out_dir, const OutputOptions& output) {
  const ReportFiles files = report_files(out_dir);
  for (const std::string* f : {&files.html, &files.markdown, &files.csv})
    check_output_file(*f, "report file", output);
}

ReportFiles write_report(const ReportInput& in, const std::string& out_dir,
                         const OutputOptions& output) {
  const ReportFiles files = report_files(out_dir);
  // Every file is checked before any is written: a refused metrics.csv must not leave a new
  // index.html next to the user's own files.
  check_report_outputs(out_dir, output);
  make_output_dir(out_dir, "report folder");
  const std::vector<std::string> labels = run_labels(in.runs);
  const std::string vendor = in.vendor_dir.empty() ? default_vendor_dir() : in.vendor_dir;
  // Build the page first: a missing vendored script fails before any file is written.
  const std::string html = build_html(in, labels, vendor);
  write_output_file(files.html, html, "report file", output);
  write_output_file(files.markdown, build_markdown(in, labels), "report file", output);
  write_output_file(files.csv, build_csv(in), "report file", output);
  return files;
}

}  // namespace tiersim::reports
