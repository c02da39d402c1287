#include "reports/serving_charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "reports/report.hpp"
#include "sim/workloads/serving/metrics.hpp"

namespace tiersim::reports {
namespace {

// Tableau 10, the palette Vega-Lite's other report plots use.
constexpr const char* kColors[] = {"#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b",
                                   "#eeca3b", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac"};

struct Line {
  std::string name;
  std::string color;
  bool dashed = false;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in this order
};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Tick values: decades on a log axis, 1-2-5 steps on a linear one.
std::vector<double> ticks(double lo, double hi, bool log) {
  std::vector<double> out;
  if (log) {
    for (double e = std::floor(std::log10(lo)); e <= std::ceil(std::log10(hi)); ++e)
      out.push_back(std::pow(10.0, e));
    return out;
  }
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5   ? mag
                      : raw / mag < 3.5 ? 2 * mag
                      : raw / mag < 7.5 ? 5 * mag
                                        : 10 * mag;
  for (double t = std::ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step) out.push_back(t);
  return out;
}

// One chart: lines on linear x and linear or log y, axes with ticks, a legend below.
std::string svg_chart(const std::string& title, const std::string& x_label,
                      const std::string& y_label, const std::vector<Line>& lines, bool log_y,
                      double y_min_linear = 0) {
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto& l : lines)
    for (auto [x, y] : l.points) {
      if (log_y && !(y > 0)) continue;
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  if (x0 > x1) return "";
  if (!log_y) y0 = std::min(y0, y_min_linear);
  if (x1 - x0 <= 0) x1 = x0 + std::max(1.0, std::fabs(x0));
  if (log_y) {
    y0 = std::pow(10.0, std::floor(std::log10(y0)));
    y1 = std::pow(10.0, std::ceil(std::log10(y1)));
    if (y1 <= y0) y1 = 10 * y0;
  } else if (y1 - y0 <= 0) {
    y1 = y0 + std::max(1.0, std::fabs(y0));
  }
  const double left = 64, top = 28, plot_w = 400, plot_h = 220, legend_row = 16;
  const double width = left + plot_w + 16;
  const double height = top + plot_h + 44 + legend_row * double(lines.size());
  const auto sx = [&](double x) { return left + (x - x0) / (x1 - x0) * plot_w; };
  const auto sy = [&](double y) {
    const double f = log_y ? (std::log10(y) - std::log10(y0)) / (std::log10(y1) - std::log10(y0))
                           : (y - y0) / (y1 - y0);
    return top + plot_h - f * plot_h;
  };
  std::ostringstream s;
  s << "<svg class=\"serving-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
    << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " " << height
    << "\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\" aria-label=\""
    << html_escape(title) << "\">\n";
  s << "<text x=\"" << left << "\" y=\"16\" font-size=\"13\" font-weight=\"bold\">"
    << html_escape(title) << "</text>\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
    << plot_h << "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (double t : ticks(x0, x1, false)) {
    if (t < x0 - 1e-12 || t > x1 + 1e-12) continue;
    s << "<line x1=\"" << sx(t) << "\" x2=\"" << sx(t) << "\" y1=\"" << top + plot_h << "\" y2=\""
      << top + plot_h + 4 << "\" stroke=\"#888\"/><text x=\"" << sx(t) << "\" y=\""
      << top + plot_h + 16 << "\" text-anchor=\"middle\">" << num(t) << "</text>\n";
  }
  for (double t : ticks(y0, y1, log_y)) {
    if (t < y0 * (1 - 1e-12) || t > y1 * (1 + 1e-12)) continue;
    s << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << sy(t) << "\" y2=\""
      << sy(t) << "\" stroke=\"#eee\"/><text x=\"" << left - 6 << "\" y=\"" << sy(t) + 4
      << "\" text-anchor=\"end\">" << num(t) << "</text>\n";
  }
  s << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h + 32
    << "\" text-anchor=\"middle\">" << html_escape(x_label) << "</text>\n";
  s << "<text transform=\"translate(14," << top + plot_h / 2
    << ") rotate(-90)\" text-anchor=\"middle\">" << html_escape(y_label) << "</text>\n";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    s << "<polyline class=\"series\" fill=\"none\" stroke=\"" << l.color
      << "\" stroke-width=\"1.8\"" << (l.dashed ? " stroke-dasharray=\"5,3\"" : "") << " points=\"";
    for (auto [x, y] : l.points)
      if (!log_y || y > 0) s << sx(x) << "," << sy(y) << " ";
    s << "\"><title>" << html_escape(l.name) << "</title></polyline>\n";
    for (auto [x, y] : l.points)
      if (!log_y || y > 0)
        s << "<circle cx=\"" << sx(x) << "\" cy=\"" << sy(y) << "\" r=\"2.5\" fill=\"" << l.color
          << "\"><title>" << html_escape(l.name) << ": " << num(x) << ", " << num(y)
          << "</title></circle>\n";
    const double ly = top + plot_h + 48 + legend_row * double(i);
    s << "<line x1=\"" << left << "\" x2=\"" << left + 24 << "\" y1=\"" << ly - 4 << "\" y2=\""
      << ly - 4 << "\" stroke=\"" << l.color << "\" stroke-width=\"1.8\""
      << (l.dashed ? " stroke-dasharray=\"5,3\"" : "") << "/><text x=\"" << left + 30 << "\" y=\""
      << ly << "\">" << html_escape(l.name) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

// (value, quantile) points of a distribution from the percentile metrics a run reports
// (PREFIX_pNN_s, and PREFIX_max_s as the 100th), ascending.
std::vector<std::pair<double, double>> quantiles(const store::StoredRun& r, const std::string& prefix) {
  std::vector<std::pair<double, double>> out;
  for (const auto& m : r.metrics) {
    const std::string head = prefix + "_p";
    if (m.name.rfind(head, 0) == 0 && m.name.size() > head.size() + 2 &&
        m.name.compare(m.name.size() - 2, 2, "_s") == 0) {
      const std::string digits = m.name.substr(head.size(), m.name.size() - head.size() - 2);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
      out.emplace_back(m.value, std::stod(digits) / 100.0);
    }
    if (m.name == prefix + "_max_s") out.emplace_back(m.value, 1.0);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

}  // namespace

std::vector<ServingSeries> serving_series(const std::vector<store::StoredRun>& runs) {
  std::vector<ServingSeries> out;
  std::map<std::string, std::size_t> index;
  for (const auto& r : runs) {
    if (r.workload != "serving" || !r.fits || !r.has(sim::metric::kOfferedRateRequestsPerS))
      continue;
    auto [it, added] = index.emplace(r.display_name(), out.size());
    if (added) out.push_back({r.display_name(), {}});
    out[it->second].by_rate.push_back(&r);
  }
  for (auto& s : out)
    std::stable_sort(s.by_rate.begin(), s.by_rate.end(),
                     [](const store::StoredRun* a, const store::StoredRun* b) {
                       return a->get(sim::metric::kOfferedRateRequestsPerS) <
                              b->get(sim::metric::kOfferedRateRequestsPerS);
                     });
  return out;
}

const store::StoredRun* cdf_run(const ServingSeries& s) {
  if (s.by_rate.empty()) return nullptr;
  const store::StoredRun* best = nullptr;
  for (const store::StoredRun* r : s.by_rate)
    if (r->find(sim::metric::kSloAttainmentPct).value_or(100) >= 90) best = r;
  return best ? best : s.by_rate.front();
}

std::string serving_charts_html(const std::vector<store::StoredRun>& runs) {
  const std::vector<ServingSeries> series = serving_series(runs);
  if (series.empty()) return "";
  std::vector<Line> ttft, tpot, ttft_cdf, tpot_cdf;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const ServingSeries& s = series[i];
    const std::string color = kColors[i % std::size(kColors)];
    struct Percentile {
      const char* name;
      const sim::MetricDecl& ttft;
      const sim::MetricDecl& tpot;
    };
    for (const Percentile& pct :
         {Percentile{"p50", sim::metric::kTtftP50S, sim::metric::kTpotP50S},
          Percentile{"p99", sim::metric::kTtftP99S, sim::metric::kTpotP99S}}) {
      Line a{s.label + " " + pct.name, color, std::string(pct.name) == "p99", {}};
      Line b = a;
      for (const store::StoredRun* r : s.by_rate) {
        const double x = r->get(sim::metric::kOfferedRateRequestsPerS);
        a.points.emplace_back(x, r->get(pct.ttft));
        if (const auto tpot = r->find(pct.tpot)) b.points.emplace_back(x, *tpot);
      }
      ttft.push_back(std::move(a));
      if (!b.points.empty()) tpot.push_back(std::move(b));
    }
    if (const store::StoredRun* r = cdf_run(s)) {
      const std::string at =
          s.label + " at " + num(r->get(sim::metric::kOfferedRateRequestsPerS)) + " requests/s";
      ttft_cdf.push_back({at, color, false, quantiles(*r, "ttft")});
      if (auto q = quantiles(*r, "tpot"); !q.empty()) tpot_cdf.push_back({at, color, false, q});
    }
  }
  // Latencies grow without bound near capacity: a log axis keeps the low-load points readable.
  std::ostringstream h;
  h << "<h2>Serving</h2>\n<p class=\"note\">Latency against the offered arrival rate, one line "
       "per configuration over its stored serving runs (<code>tiersim capacity --db</code> stores "
       "every rate its search tries); solid p50, dashed p99. Below, each configuration's latency "
       "distribution at the highest rate with 90% of requests within its targets, drawn through "
       "the percentiles the run reports.</p>\n<div class=\"serving-charts\">\n";
  h << svg_chart("Time to first token vs load", "offered rate (requests/s)", "TTFT (s)", ttft,
                 true);
  if (!tpot.empty())
    h << svg_chart("Time per output token vs load", "offered rate (requests/s)", "TPOT (s)", tpot,
                   true);
  // A CDF: value on x, share of requests (0..1) on y.
  h << svg_chart("TTFT distribution", "TTFT (s)", "share of requests", ttft_cdf, false);
  if (!tpot_cdf.empty())
    h << svg_chart("TPOT distribution", "TPOT (s)", "share of requests", tpot_cdf, false);
  h << "</div>\n";
  return h.str();
}

}  // namespace tiersim::reports
