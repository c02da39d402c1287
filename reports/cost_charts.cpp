#include "reports/cost_charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "reports/decision.hpp"
#include "reports/report.hpp"
#include "sim/metrics.hpp"

namespace tiersim::reports {
namespace {

// The capex parts sim/economics.cpp reports, in stacking order, with the serving charts' palette.
struct Part {
  const sim::MetricDecl& metric;
  const char* name;
  const char* color;
};
constexpr Part kParts[] = {{sim::metric::kCapexUsdGpu, "GPUs", "#4c78a8"},
                           {sim::metric::kCapexUsdPlatform, "platform", "#f58518"},
                           {sim::metric::kCapexUsdDram, "DRAM", "#54a24b"},
                           {sim::metric::kCapexUsdDrives, "NVMe drives", "#b279a2"}};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A label short enough for the chart's margin; the full text is in the element's <title>.
std::string short_label(const std::string& s) {
  return s.size() <= 26 ? s : valid_utf8(s.substr(0, 24)) + "..";
}

std::string capex_chart(const std::vector<store::StoredRun>& runs, const std::vector<std::string>& labels,
                        const std::vector<std::size_t>& rows) {
  double max_usd = 0;
  for (std::size_t i : rows) max_usd = std::max(max_usd, runs[i].get(sim::metric::kCapexUsd));
  if (!(max_usd > 0)) return "";
  const double left = 180, top = 28, bar_h = 18, gap = 8, plot_w = 300;
  const double height = top + double(rows.size()) * (bar_h + gap) + 40;
  std::ostringstream s;
  s << "<svg class=\"cost-chart\" id=\"capex-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
    << px(left + plot_w + 80) << "\" height=\"" << px(height) << "\" role=\"img\">"
    << "<text x=\"4\" y=\"16\" font-weight=\"bold\">Capex by component (USD)</text>";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const store::StoredRun& r = runs[rows[k]];
    const double y = top + double(k) * (bar_h + gap);
    s << "<text x=\"" << px(left - 6) << "\" y=\"" << px(y + bar_h - 4)
      << "\" text-anchor=\"end\" font-size=\"12\"><title>" << html_escape(labels[rows[k]])
      << "</title>" << html_escape(short_label(labels[rows[k]])) << "</text>";
    double x = left;
    for (const Part& p : kParts) {
      // A part without a price (or a run stored without it) draws no segment.
      const double v = r.find(p.metric).value_or(0);
      if (!(v > 0)) continue;
      const double w = v / max_usd * plot_w;
      s << "<rect class=\"segment\" x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(w)
        << "\" height=\"" << px(bar_h) << "\" fill=\"" << p.color << "\"><title>"
        << html_escape(labels[rows[k]]) << ": " << p.name << " " << money(v) << "</title></rect>";
      x += w;
    }
    s << "<text x=\"" << px(x + 4) << "\" y=\"" << px(y + bar_h - 4) << "\" font-size=\"12\">"
      << money(r.get(sim::metric::kCapexUsd)) << "</text>";
  }
  double lx = left;
  const double ly = top + double(rows.size()) * (bar_h + gap) + 16;
  for (const Part& p : kParts) {
    s << "<rect x=\"" << px(lx) << "\" y=\"" << px(ly - 10) << "\" width=\"10\" height=\"10\" fill=\""
      << p.color << "\"/><text x=\"" << px(lx + 14) << "\" y=\"" << px(ly) << "\" font-size=\"12\">"
      << p.name << "</text>";
    lx += 80;
  }
  s << "</svg>";
  return s.str();
}

std::string scatter_chart(const std::vector<store::StoredRun>& runs, const std::vector<std::string>& labels,
                          const std::vector<std::size_t>& rows) {
  std::vector<std::pair<double, double>> pts;
  for (std::size_t i : rows)
    pts.emplace_back(runs[i].get(sim::metric::kThroughputTokensPerS),
                     runs[i].get(sim::metric::kUsdPerMillionTokens));
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (auto [x, y] : pts) {
    x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  }
  // Log axes, padded to whole factors around the data: costs and throughputs of offload and
  // no-offload configurations span orders of magnitude.
  const double lx0 = std::log10(x0) - 0.1, lx1 = std::log10(x1) + 0.1;
  const double ly0 = std::log10(y0) - 0.1, ly1 = std::log10(y1) + 0.1;
  const double left = 64, top = 40, plot_w = 400, plot_h = 240;
  const auto sx = [&](double x) { return left + (std::log10(x) - lx0) / (lx1 - lx0) * plot_w; };
  const auto sy = [&](double y) { return top + plot_h - (std::log10(y) - ly0) / (ly1 - ly0) * plot_h; };
  std::ostringstream s;
  s << "<svg class=\"cost-chart\" id=\"pareto-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
    << px(left + plot_w + 20) << "\" height=\"" << px(top + plot_h + 48) << "\" role=\"img\">"
    << "<text x=\"4\" y=\"16\" font-weight=\"bold\">Throughput vs cost per million tokens</text>"
    << "<text x=\"4\" y=\"31\" font-size=\"11\">log scales; red: the Pareto front</text>"
    << "<rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\"" << px(plot_w)
    << "\" height=\"" << px(plot_h) << "\" fill=\"none\" stroke=\"#888\"/>";
  // Axis end values: the data range, so the reader sees the span without a tick grid.
  s << "<text x=\"" << px(sx(x0)) << "\" y=\"" << px(top + plot_h + 16)
    << "\" font-size=\"11\" text-anchor=\"middle\">" << num(x0) << "</text><text x=\""
    << px(sx(x1)) << "\" y=\"" << px(top + plot_h + 16)
    << "\" font-size=\"11\" text-anchor=\"middle\">" << num(x1) << "</text>"
    << "<text x=\"" << px(left + plot_w / 2) << "\" y=\"" << px(top + plot_h + 34)
    << "\" font-size=\"12\" text-anchor=\"middle\">throughput_tokens_per_s (tokens/s)</text>"
    << "<text x=\"" << px(left - 4) << "\" y=\"" << px(sy(y0)) << "\" font-size=\"11\" "
    << "text-anchor=\"end\">" << num(y0) << "</text><text x=\"" << px(left - 4) << "\" y=\""
    << px(sy(y1)) << "\" font-size=\"11\" text-anchor=\"end\">" << num(y1) << "</text>"
    << "<text transform=\"translate(12," << px(top + plot_h / 2)
    << ") rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">USD per million tokens</text>";
  const std::vector<std::size_t> front = cost_pareto_front(pts);
  s << "<polyline class=\"pareto\" fill=\"none\" stroke=\"#e45756\" stroke-width=\"2\" points=\"";
  for (std::size_t k = 0; k < front.size(); ++k)
    s << (k ? " " : "") << px(sx(pts[front[k]].first)) << "," << px(sy(pts[front[k]].second));
  s << "\"/>";
  for (std::size_t k = 0; k < pts.size(); ++k) {
    const bool on_front = std::find(front.begin(), front.end(), k) != front.end();
    s << "<circle class=\"point\" cx=\"" << px(sx(pts[k].first)) << "\" cy=\""
      << px(sy(pts[k].second)) << "\" r=\"5\" fill=\"" << (on_front ? "#e45756" : "#4c78a8")
      << "\"><title>" << html_escape(labels[rows[k]]) << ": " << num(pts[k].first)
      << " tokens/s, $" << num(pts[k].second) << "/Mtoken" << (on_front ? " (Pareto front)" : "")
      << "</title></circle><text x=\"" << px(sx(pts[k].first) + 7) << "\" y=\""
      << px(sy(pts[k].second) - 6) << "\" font-size=\"11\">" << k + 1 << "</text>";
  }
  s << "</svg><ol class=\"note\">";
  for (std::size_t k = 0; k < pts.size(); ++k)
    s << "<li>" << html_escape(labels[rows[k]]) << ": " << num(pts[k].first) << " tokens/s, $"
      << num(pts[k].second) << "/Mtoken"
      << (std::find(front.begin(), front.end(), k) != front.end() ? " (Pareto front)" : "")
      << "</li>";
  s << "</ol>";
  return s.str();
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

std::string cost_charts_html(const std::vector<store::StoredRun>& runs,
                             const std::vector<std::string>& labels) {
  std::vector<std::size_t> with_capex, with_both;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].has(sim::metric::kCapexUsdGpu)) with_capex.push_back(i);
    // Runs without tokens or prices have neither metric.
    if (runs[i].find(sim::metric::kThroughputTokensPerS).value_or(0) > 0 &&
        runs[i].find(sim::metric::kUsdPerMillionTokens).value_or(0) > 0)
      with_both.push_back(i);
  }
  if (with_capex.empty()) return "";
  std::string h = "<h2>Cost</h2>\n<p class=\"note\">Purchase price by component, and each "
                  "configuration's throughput against its cost per million tokens; the Pareto "
                  "front joins the configurations no other one beats on both.</p>\n";
  h += capex_chart(runs, labels, with_capex) + "\n";
  if (with_both.size() >= 2) h += scatter_chart(runs, labels, with_both) + "\n";
  return h;
}

}  // namespace tiersim::reports
