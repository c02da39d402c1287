#include "reports/serving_charts.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "common/format.hpp"
#include "reports/report.hpp"
#include "sim/workloads/traits.hpp"
#include "sim/workloads/serving/metrics.hpp"

namespace tiersim::reports {
namespace {

using nlohmann::json;

std::string num(double v) { return format::significant(v, 4); }

// One chart of lines: `values` rows {config, series, x, y[, dash]}, one colour per configuration
// and, `by_percentile`, a dash per percentile (solid p50, dashed p99); a log y axis keeps low-load latencies
// readable when those near capacity grow without bound (rows with y <= 0 cannot be drawn on it and
// are left out by the caller).
json line_chart(const std::string& title, const std::string& x_title, const std::string& y_title,
                json values, bool log_y, bool by_percentile) {
  json s = chart_spec(title, 420, 240);
  s["data"] = {{"values", std::move(values)}};
  s["mark"] = {{"type", "line"}, {"point", true}, {"tooltip", true}};
  json y = {{"field", "y"}, {"type", "quantitative"}, {"title", y_title}};
  if (log_y) y["scale"] = {{"type", "log"}};
  s["encoding"] = {{"x", {{"field", "x"}, {"type", "quantitative"}, {"title", x_title}}},
                   {"y", y},
                   {"color", {{"field", "config"}, {"type", "nominal"}, {"sort", nullptr},
                              {"title", nullptr}, {"legend", {{"orient", "bottom"}, {"columns", 1}}}}},
                   {"detail", {{"field", "series"}, {"type", "nominal"}}},
                   {"order", {{"field", "x"}, {"type", "quantitative"}}}};
  if (by_percentile)
    s["encoding"]["strokeDash"] = {
        {"field", "dash"}, {"type", "nominal"}, {"title", nullptr}, {"sort", {"p50", "p99"}}};
  return s;
}

// The chart with its SLO lines: a red rule at each target, labelled at its left end. The lines
// and the rules share the y scale (a layer's default), so a log axis places both alike.
json with_rules(json chart, const json& rules) {
  if (rules.empty()) return chart;
  json lines = {{"mark", chart["mark"]}, {"encoding", chart["encoding"]}};
  chart.erase("mark");
  chart.erase("encoding");
  const json y = {{"field", "target"}, {"type", "quantitative"}};
  chart["layer"] = json::array(
      {lines,
       {{"name", "slo_target"},
        {"data", {{"values", rules}}},
        {"mark", {{"type", "rule"}, {"color", "#c62828"}, {"strokeWidth", 2}, {"tooltip", true}}},
        {"encoding", {{"y", y}}}},
       {{"data", {{"values", rules}}},
        {"mark", {{"type", "text"}, {"align", "left"}, {"dx", 4}, {"dy", -6}, {"color", "#c62828"}}},
        {"encoding", {{"y", y}, {"x", {{"value", 0}}}, {"text", {{"field", "what"}}}}}}});
  return chart;
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

// The resolved scenario without the size of `tier` (its line under workload:, if any): runs
// whose keys are equal lie on one curve of that tier's size. The name stays in: a sweep's points
// share their base's name, and two configurations named apart are not one curve.
std::string without_tier_key(const std::string& yaml, KvTier tier) {
  const std::string key = tier == KvTier::kHost ? "kv_host_cache:" : "kv_nvme_cache:";
  std::istringstream in(yaml);
  std::string out, line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(' ');
    if (first != std::string::npos && line.compare(first, key.size(), key) == 0) continue;
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace

std::vector<ServingSeries> serving_series(const std::vector<store::StoredRun>& runs) {
  std::vector<ServingSeries> out;
  std::map<std::string, std::size_t> index;
  for (const auto& r : runs) {
    // Runs whose requests arrive at a rate (kCapArrivalRate), measured at several rates.
    const WorkloadTraits* traits = find_workload_traits(r.workload);
    if (!traits || !traits->has(kCapArrivalRate) || !r.fits ||
        !r.has(sim::metric::kOfferedRateRequestsPerS))
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

json slo_rules(const std::map<std::string, SloTargets>& targets, const char* what,
               std::optional<double> SloTargets::*pick) {
  std::map<double, std::vector<std::string>> by_value;
  for (const auto& [label, t] : targets)
    if (const auto v = t.*pick; v && *v > 0) by_value[*v].push_back(label);
  json rows = json::array();
  for (const auto& [v, labels] : by_value) {
    std::string text = std::string(what) + " target " + num(v) + " s";
    if (by_value.size() > 1 || labels.size() < targets.size()) {
      text += " (";
      for (std::size_t i = 0; i < labels.size(); ++i) text += (i ? ", " : "") + labels[i];
      text += ")";
    }
    rows.push_back({{"target", v}, {"what", text}});
  }
  return rows;
}

std::vector<ReportPart> serving_chart_parts(const std::vector<store::StoredRun>& runs,
                                            const std::map<std::string, SloTargets>& targets) {
  const std::vector<ServingSeries> series = serving_series(runs);
  if (series.empty()) return {};
  json ttft = json::array(), tpot = json::array(), ttft_cdf = json::array(),
       tpot_cdf = json::array();
  for (const ServingSeries& s : series) {
    struct Percentile {
      const char* name;
      const sim::MetricDecl& ttft;
      const sim::MetricDecl& tpot;
    };
    for (const Percentile& pct :
         {Percentile{"p50", sim::metric::kTtftP50S, sim::metric::kTpotP50S},
          Percentile{"p99", sim::metric::kTtftP99S, sim::metric::kTpotP99S}}) {
      const std::string name = s.label + " " + pct.name;
      for (const store::StoredRun* r : s.by_rate) {
        const double x = r->get(sim::metric::kOfferedRateRequestsPerS);
        // A log axis cannot draw zero: such points (and absent ones) are left out.
        if (const double t = r->find(pct.ttft).value_or(0); t > 0)
          ttft.push_back({{"config", s.label}, {"series", name}, {"x", x}, {"y", t}, {"dash", pct.name}});
        if (const double t = r->find(pct.tpot).value_or(0); t > 0)
          tpot.push_back({{"config", s.label}, {"series", name}, {"x", x}, {"y", t}, {"dash", pct.name}});
      }
    }
    if (const store::StoredRun* r = cdf_run(s)) {
      // A configuration no rate of which meets the targets shows its lowest rate (with a capacity
      // search, the zero-load probe): said so, not passed off as an operating point.
      const bool meets = r->find(sim::metric::kSloAttainmentPct).value_or(100) >= 90;
      const std::string at =
          s.label + " at " + num(r->get(sim::metric::kOfferedRateRequestsPerS)) + " requests/s" +
          (meets ? "" : " (lowest rate tried; none meets the targets)");
      for (auto [v, q] : quantiles(*r, "ttft"))
        ttft_cdf.push_back({{"config", at}, {"series", at}, {"x", v}, {"y", q}});
      for (auto [v, q] : quantiles(*r, "tpot"))
        tpot_cdf.push_back({{"config", at}, {"series", at}, {"x", v}, {"y", q}});
    }
  }
  std::vector<ReportPart> parts;
  parts.push_back(
      {"<h2>Serving</h2>\n<p class=\"note\">Latency against the offered arrival rate, one line "
       "per configuration over its stored serving runs (<code>tiersim capacity --db</code> stores "
       "every rate its search tries); solid p50, dashed p99; the red lines are the latency targets "
       "of the capacity searches, which sustain a rate when the share of requests their attainment "
       "target names (90%: the p90, between the two lines) meets every target. Below, each configuration's latency "
       "distribution at the highest rate with 90% of requests within its targets, drawn through "
       "the percentiles the run reports.</p>\n",
       nullptr});
  const std::string rate = "offered rate (requests/s)";
  if (!ttft.empty())
    parts.push_back({"", with_rules(line_chart("Time to first token vs load", rate, "TTFT (s)", ttft,
                                               true, true),
                                    slo_rules(targets, "TTFT", &SloTargets::ttft_s))});
  if (!tpot.empty())
    parts.push_back({"", with_rules(line_chart("Time per output token vs load", rate, "TPOT (s)",
                                               tpot, true, true),
                                    slo_rules(targets, "TPOT", &SloTargets::tpot_s))});
  // A CDF: value on x, share of requests (0..1) on y.
  if (!ttft_cdf.empty())
    parts.push_back(
        {"", line_chart("TTFT distribution", "TTFT (s)", "share of requests", ttft_cdf, false, false)});
  if (!tpot_cdf.empty())
    parts.push_back(
        {"", line_chart("TPOT distribution", "TPOT (s)", "share of requests", tpot_cdf, false, false)});
  return parts;
}

std::vector<TierCurve> tier_curves(const std::vector<store::StoredRun>& runs) {
  std::vector<TierCurve> out;
  for (const KvTier tier : {KvTier::kHost, KvTier::kNvme}) {
    const sim::MetricDecl& size =
        tier == KvTier::kHost ? sim::metric::kKvHostTierBytes : sim::metric::kKvNvmeTierBytes;
    const sim::MetricDecl& other =
        tier == KvTier::kHost ? sim::metric::kKvNvmeTierBytes : sim::metric::kKvHostTierBytes;
    std::vector<TierCurve> curves;
    std::map<std::string, std::size_t> index;
    for (const auto& r : runs) {
      if (!r.fits || !r.has(sim::metric::kKvHitPct) || !r.has(size) || !r.has(other) ||
          !r.has(sim::metric::kOfferedRateRequestsPerS))
        continue;
      auto [it, added] = index.emplace(without_tier_key(r.scenario_yaml, tier), curves.size());
      if (added) {
        // The scenario's name, not the run's display name: a sweep names each point by its
        // axis values, which here are the sizes along the curve.
        std::string label = r.scenario_name + " at " +
                            num(r.get(sim::metric::kOfferedRateRequestsPerS)) + " requests/s";
        // The other tier's size names the curve when it has one (a DRAM-tier curve beside an
        // NVMe tier; an NVMe-tier curve over a DRAM tier).
        if (const double o = r.get(other); o > 0)
          label += (tier == KvTier::kHost ? ", NVMe tier " : ", DRAM tier ") + format::bytes(o);
        curves.push_back({tier, label, {}});
      }
      curves[it->second].by_size.push_back(&r);
    }
    for (auto& c : curves) {
      std::stable_sort(c.by_size.begin(), c.by_size.end(),
                       [&](const store::StoredRun* a, const store::StoredRun* b) {
                         return a->get(size) < b->get(size);
                       });
      // Two sizes at least make a curve (repeats of one size, stored twice, do not).
      if (c.by_size.front()->get(size) < c.by_size.back()->get(size)) out.push_back(std::move(c));
    }
  }
  return out;
}

std::vector<ReportPart> tier_size_chart_parts(const std::vector<store::StoredRun>& runs) {
  const std::vector<TierCurve> curves = tier_curves(runs);
  if (curves.empty()) return {};
  std::vector<ReportPart> parts;
  parts.push_back(
      {"<h2 id=\"kv-tiers\">KV cache tiers</h2>\n<p class=\"note\">Prefix caching against the "
       "size of a KV cache tier, from stored runs of one configuration at one offered rate that "
       "differ only in that size (<code>workload.kv_host_cache</code>, "
       "<code>workload.kv_nvme_cache</code>; e.g. <code>tiersim sweep "
       "scenarios/sweeps/llama3-70b-multiturn-kv-tiers.yaml --db DB</code>). Hit rate: the share "
       "of looked-up prefix blocks found in any tier (solid) and in the tier that varies (dashed); "
       "time to first token: p50 solid, p99 dashed.</p>\n",
       nullptr});
  for (const KvTier tier : {KvTier::kHost, KvTier::kNvme}) {
    const bool host = tier == KvTier::kHost;
    const sim::MetricDecl& size = host ? sim::metric::kKvHostTierBytes : sim::metric::kKvNvmeTierBytes;
    const sim::MetricDecl& own = host ? sim::metric::kKvHitHostPct : sim::metric::kKvHitNvmePct;
    const char* own_name = host ? "from DRAM" : "from NVMe";
    json hit = json::array(), ttft = json::array();
    for (const TierCurve& c : curves) {
      if (c.tier != tier) continue;
      for (const store::StoredRun* r : c.by_size) {
        const double x = r->get(size) / 1e9;
        hit.push_back({{"config", c.label}, {"series", c.label + " any tier"}, {"x", x},
                       {"y", r->get(sim::metric::kKvHitPct)}, {"dash", "any tier"}});
        if (const auto v = r->find(own))
          hit.push_back({{"config", c.label}, {"series", c.label + " " + own_name}, {"x", x},
                         {"y", *v}, {"dash", own_name}});
        struct Pct {
          const char* name;
          const sim::MetricDecl& m;
        };
        for (const Pct& p : {Pct{"p50", sim::metric::kTtftP50S}, Pct{"p99", sim::metric::kTtftP99S}})
          if (const double t = r->find(p.m).value_or(0); t > 0)
            ttft.push_back({{"config", c.label}, {"series", c.label + " " + p.name}, {"x", x},
                            {"y", t}, {"dash", p.name}});
      }
    }
    if (hit.empty()) continue;
    const std::string what = host ? "DRAM tier" : "NVMe tier";
    const std::string x_title = what + " size per server (GB)";
    json h = line_chart("KV prefix hit rate vs " + what + " size", x_title, "hit rate (%)", hit,
                        false, false);
    h["encoding"]["strokeDash"] = {{"field", "dash"}, {"type", "nominal"}, {"title", nullptr},
                                   {"sort", {"any tier", own_name}}};
    // The dash legend as line samples (the default symbol is the point mark's circle).
    h["encoding"]["strokeDash"]["legend"] = {{"symbolType", "stroke"}};
    parts.push_back({"", h});
    if (!ttft.empty()) {
      json t = line_chart("Time to first token vs " + what + " size", x_title, "TTFT (s)", ttft,
                          true, true);
      t["encoding"]["strokeDash"]["legend"] = {{"symbolType", "stroke"}};
      parts.push_back({"", t});
    }
  }
  return parts;
}

}  // namespace tiersim::reports
