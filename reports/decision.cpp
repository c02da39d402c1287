#include "reports/decision.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "reports/entries.hpp"
#include "reports/report.hpp"
#include "sim/metrics.hpp"
#include "sim/workloads/serving/metrics.hpp"
#include "common/format.hpp"
#include "sim/workloads/traits.hpp"

using nlohmann::json;

namespace tiersim::reports {
namespace {

// The other objectives the summary names a winner for, with their better direction (the same
// directions study/planner.cpp knows).
struct Objective {
  const sim::MetricDecl& metric;
  const char* what;
  bool lower_is_better;
};
constexpr Objective kObjectives[] = {
    {sim::metric::kUsdPerMillionTokens, "lowest cost per million tokens", true},
    {sim::metric::kThroughputTokensPerS, "highest throughput", false},
    {sim::metric::kEnergyJPerToken, "lowest energy per token", true},
};

// Whether entry i takes part in the rankings: it fits, and it is not the zero-load probe of a
// capacity search that sustains no rate (an idle server's cost per token describes no way to use
// it).
bool is_candidate(const ReportInput& in, std::size_t i) {
  if (i < in.capacity.size() && in.capacity[i] && !in.capacity[i]->found) return false;
  return in.runs[i].fits;
}

std::string placement_text(const Placement& p) {
  if (p.gpu == 1) return "gpu";
  if (p.cpu == 1) return "cpu";
  if (p.nvme == 1) return "nvme";
  std::string s;
  const std::pair<const char*, double> parts[] = {{"gpu", p.gpu}, {"cpu", p.cpu}, {"nvme", p.nvme}};
  for (const auto& [name, f] : parts) {
    if (f == 0) continue;
    s += (s.empty() ? "" : " + ") + format::fixed(100 * f, 0) + "% " + name;
  }
  return s;
}

// The validation group whose error bands `metric` of a run in group `run_group`: energy and
// power metrics are predicted by the power model whatever the configuration, and their
// declaration names the group that measures them (sim/metrics.hpp validation_group: "energy" for
// the GPUs' own, "system energy" for the node's); every other metric by the run's own group.
std::string band_group(const std::string& metric, const std::string& run_group) {
  const sim::MetricDecl* decl = sim::find_metric(metric);
  return decl && !decl->validation_group.empty() ? std::string(decl->validation_group) : run_group;
}

ErrorBand band_of(const ReportInput& in, std::size_t i, const std::string& metric) {
  ErrorBand b;
  b.validation_run = in.validation.available;
  if (i < in.decision.groups.size()) b.group = band_group(metric, in.decision.groups[i]);
  if (i < in.decision.unvalidated.size()) b.unvalidated = in.decision.unvalidated[i];
  for (const auto& g : in.validation.groups)
    if (g.name == b.group)
      set_group_errors(b, g.measurements, g.mape_pct, g.out_of_sample_measurements,
                       g.out_of_sample_mape_pct, g.provisional);
  return b;
}

const std::string& unit_of(const ReportInput& in, const std::string& metric) {
  static const std::string none;
  for (const auto& r : in.runs)
    if (const sim::Metric* m = r.find_metric(metric)) return m->unit;
  return none;
}

struct Verdict {
  std::size_t winner = 0;
  std::optional<std::size_t> runner_up;
  std::optional<double> baseline_ratio;  // winner / baseline (first run) when they differ
  // How the margin over the runner-up stands against the two bands (margin_verdict_text); ""
  // without a runner-up.
  std::string margin_verdict;
};

std::optional<Verdict> verdict(const ReportInput& in, const std::string& metric, bool lower) {
  const auto order = ranking(in, metric, lower);
  if (order.empty()) return std::nullopt;
  Verdict v;
  v.winner = order.front();
  const double w = in.runs[v.winner].get(metric);
  if (order.size() > 1) {
    v.runner_up = order[1];
    v.margin_verdict =
        margin_verdict_text(w, band_of(in, v.winner, metric), in.runs[*v.runner_up].get(metric),
                            band_of(in, *v.runner_up, metric), lower);
  }
  if (const auto base = in.runs[0].find(metric);
      v.winner != 0 && base && in.runs[0].fits && *base != 0)
    v.baseline_ratio = w / *base;
  return v;
}

// Inputs whose swing alone reverses the winner and the runner-up (same input value in both).
std::vector<std::string> flipping_inputs(const DecisionInput& d, std::size_t winner,
                                         std::size_t runner, bool lower) {
  const TornadoChart *tw = nullptr, *tr = nullptr;
  for (const auto& t : d.tornadoes) {
    if (t.run == winner) tw = &t;
    if (t.run == runner) tr = &t;
  }
  std::vector<std::string> out;
  if (!tw || !tr) return out;
  auto beats = [&](double a, double b) { return lower ? a < b : a > b; };
  for (const auto& bw : tw->bars) {
    // An input the runner-up does not use keeps its metric at the base value.
    double rl = tr->base_metric, rh = tr->base_metric;
    for (const auto& br : tr->bars)
      if (br.key == bw.key) {
        rl = br.metric_low;
        rh = br.metric_high;
      }
    if (!beats(bw.metric_low, rl)) out.push_back(bw.input + " at its low end");
    if (!beats(bw.metric_high, rh)) out.push_back(bw.input + " at its high end");
  }
  return out;
}

// The bar of each configuration with its error bar: the whisker spans the out-of-sample band of
// its group; a bar no published case backs has none and says "unvalidated" in its label.
json headline_spec(const ReportInput& in, const std::vector<std::string>& labels,
                   const std::string& metric, const std::string& title) {
  json values = json::array();
  double lo = 0, hi = 0;
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const sim::Metric* m = is_candidate(in, i) ? in.runs[i].find_metric(metric) : nullptr;
    if (!m) continue;
    const ErrorBand b = band_of(in, i, metric);
    const double e = b.pct.value_or(0) / 100;
    const std::string unbanded = b.measurements > 0 ? " (in-sample only)" : " (unvalidated)";
    json row = {{"run", b.pct ? labels[i] : labels[i] + unbanded},
                {"value", m->value},
                {"band", band_text(b)}};
    if (b.pct) {
      row["low"] = m->value * (1 - e);
      row["high"] = m->value * (1 + e);
    }
    values.push_back(row);
    lo = lo == 0 ? m->value : std::min(lo, m->value);
    hi = std::max(hi, m->value);
  }
  if (values.empty()) return nullptr;
  json x = {{"field", "value"},
            {"type", "quantitative"},
            {"title", metric + " (" + unit_of(in, metric) + "); whiskers: out-of-sample validation error band"}};
  // Values spanning orders of magnitude would turn all but the largest bar into slivers.
  if (lo > 0 && hi / lo > 30) x["scale"] = {{"type", "log"}};
  json s = chart_spec(title, 520, bars_height(values.size(), 26));
  s["data"] = {{"values", values}};
  json y = {{"field", "run"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}};
  json xlow = x;
  xlow["field"] = "low";
  s["layer"] = json::array(
      {{{"mark", {{"type", "bar"}, {"tooltip", true}}}, {"encoding", {{"y", y}, {"x", x}}}},
       {{"mark", {{"type", "rule"}, {"color", "#222"}, {"strokeWidth", 2}}},
        {"encoding", {{"y", y}, {"x", xlow}, {"x2", {{"field", "high"}}}}}}});
  return s;
}

json tornado_spec(const TornadoChart& t, const std::string& label, const std::string& metric,
                  const std::string& unit, double range) {
  json values = json::array();
  const std::string lo = "input -" + format::fixed(100 * range, 0) + " %";
  const std::string hi = "input +" + format::fixed(100 * range, 0) + " %";
  for (const auto& b : t.bars) {
    values.push_back({{"input", b.input},
                      {"end", lo},
                      {"value", b.low_value},
                      {"from", t.base_metric},
                      {"to", b.metric_low}});
    values.push_back({{"input", b.input},
                      {"end", hi},
                      {"value", b.high_value},
                      {"from", t.base_metric},
                      {"to", b.metric_high}});
  }
  if (values.empty()) return nullptr;
  json y = {{"field", "input"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}};
  json s = chart_spec("Sensitivity of " + metric + ": " + label, 520, bars_height(t.bars.size(), 24));
  s["data"] = {{"values", values}};
  s["layer"] = json::array(
      {{{"mark", {{"type", "bar"}, {"tooltip", true}}},
        {"encoding",
         {{"y", y},
          {"x",
           {{"field", "from"},
            {"type", "quantitative"},
            {"scale", {{"zero", false}}},
            {"title", metric + " (" + unit + ")"}}},
          {"x2", {{"field", "to"}}},
          {"color",
           {{"field", "end"}, {"type", "nominal"}, {"title", nullptr}, {"sort", {lo, hi}}}}}}},
       {{"mark", {{"type", "rule"}, {"color", "#222"}}},
        {"encoding", {{"x", {{"datum", t.base_metric}}}}}}});
  return s;
}

}  // namespace

void set_group_errors(ErrorBand& b, std::size_t rows, double in_sample_pct,
                      std::size_t out_of_sample_rows, double out_of_sample_pct, bool provisional) {
  if (rows == 0) return;  // no published case in the group: no band
  b.measurements = rows;
  b.in_sample_pct = in_sample_pct;
  // The band is the out-of-sample error, never less than the in-sample one
  // (validation::ValidationGroup::error_band_pct).
  if (out_of_sample_rows > 0) b.pct = std::max(out_of_sample_pct, in_sample_pct);
  b.provisional = provisional;
}

std::string margin_text(double w, double r, bool lower) {
  if (lower) return format::fixed(r != 0 ? 100 * (r - w) / r : 0, 1) + " % lower than";
  if (r > 0 && w / r >= 2) return format::significant(w / r, 3) + "x";
  return format::fixed(r != 0 ? 100 * (w - r) / r : 0, 1) + " % higher than";
}

bool bands_overlap(double w, const ErrorBand& bw, double r, const ErrorBand& br, bool lower) {
  const double ew = bw.pct.value_or(0) / 100, er = br.pct.value_or(0) / 100;
  // The predictions' bands [x (1 - e), x (1 + e)] overlap: the order is within model error.
  return lower ? w * (1 + ew) >= r * (1 - er) : w * (1 - ew) <= r * (1 + er);
}

std::string margin_verdict_text(double w, const ErrorBand& bw, double r, const ErrorBand& br,
                                bool lower) {
  if (!bw.validation_run || !br.validation_run)
    return "the validation was not run, so no error band backs the margin";
  if (!bw.backs_margin() || !br.backs_margin())
    return "at least one of the two has no error band from " +
           std::to_string(ErrorBand::kMinRowsToBackMargin) +
           " or more published cases, so the margin is not backed by validation";
  if (bands_overlap(w, bw, r, br, lower))
    return "the error bands overlap: the margin is within the model's out-of-sample validation "
           "error, so treat the two as a tie";
  return "the margin is larger than the model's out-of-sample validation error bands";
}

std::string compact_band(const ErrorBand& b) {
  std::string cell = short_band(b);
  if (b.pct && b.provisional) cell += " prov.";
  // A band from a handful of published rows says little: the count, where it is that few.
  if (b.pct && b.measurements < ErrorBand::kMinRowsToBackMargin)
    cell += std::string(b.provisional ? "," : "") + " " + std::to_string(b.measurements) +
            (b.measurements == 1 ? " row" : " rows");
  for (const auto& part : b.unvalidated) cell += "; " + part + " unvalidated";
  return cell;
}

std::string short_band(const ErrorBand& b) {
  if (!b.validation_run) return "no error band";
  if (b.pct) return "+-" + format::fixed(*b.pct, 1) + " %";
  // Published cases cover its kind, but every one fed a constant it uses (band_text): only the
  // in-sample error is known, which is not "unvalidated".
  if (b.measurements > 0) return "in-sample " + format::fixed(b.in_sample_pct, 1) + " %";
  return "unvalidated";
}

std::string band_text(const ErrorBand& b) {
  if (!b.validation_run) return "validation not run, no error band";
  std::string parts;
  for (const auto& p : b.unvalidated) parts += (parts.empty() ? "" : ", ") + p;
  // A group's band says nothing of a GPU or a stack no published row ran on.
  const std::string unanchored =
      parts.empty() ? "" : "; unvalidated: " + parts + " (no published row runs on it)";
  if (b.group.empty()) return "validation group unknown" + unanchored;
  // Unvalidated first, then why, so that the reader sees the verdict before the bookkeeping.
  if (!b.pct && b.measurements > 0)
    return "no out-of-sample error band: every published case of its kind (" + b.group +
           ") fed a constant it uses (in-sample error " + format::fixed(b.in_sample_pct, 1) +
           " %)" + unanchored;
  if (!b.pct)
    return "unvalidated: no published measurement covers its kind of configuration (" + b.group +
           ")" + unanchored;
  // A band from fewer rows than back a margin says so in full, not only in the short forms: one
  // published row gives a figure, not an error distribution.
  const std::string few = b.measurements < ErrorBand::kMinRowsToBackMargin
                              ? "; from " + std::to_string(b.measurements) + " published " +
                                    (b.measurements == 1 ? "row" : "rows") + " only"
                              : "";
  return "+-" + format::fixed(*b.pct, 1) + " % (out-of-sample validation error of group " +
         b.group + ", leave-one-source-out, never below in-sample" +
         (b.provisional ? ", provisional" : "") + few + ")" + unanchored;
}

namespace {

// "$1.23 per million tokens", "1.2k tokens/s": the value in words a buyer reads.
std::string human(double v, const std::string& unit) {
  if (unit == "USD") return format::usd(v);
  if (unit == "USD/Mtoken") return format::usd(v) + " per million tokens";
  if (unit == "USD/request") return format::usd(v) + " per request";
  if (unit == "tokens/s") return format::grouped(v, v >= 100 ? 0 : 1) + " tokens/s";
  if (unit == "requests/s") return format::significant(v, 3) + " requests/s";
  return format::significant(v, 3) + " " + unit;
}

// What being best on a metric means, in words ("the lowest cost per million tokens").
std::string best_on(const std::string& metric, bool lower) {
  static const std::pair<const sim::MetricDecl*, const char*> kWords[] = {
      {&sim::metric::kUsdPerMillionTokens, "cost per million tokens"},
      {&sim::metric::kThroughputTokensPerS, "throughput"},
      {&sim::metric::kEnergyJPerToken, "energy per token"},
      {&sim::metric::kCapacityRequestsPerS, "sustained rate within the SLO"},
      {&sim::metric::kUsdPerRequestAtCapacity, "cost per request at its sustained rate"}};
  std::string what = metric;
  for (const auto& [m, words] : kWords)
    if (m->name == metric) what = words;
  return std::string(lower ? "the lowest " : "the highest ") + what;
}

// One objective's winner in a sentence: value, band, margin over the runner-up and how that
// margin stands against the bands. "" when no configuration has the metric.
std::string objective_sentence(const ReportInput& in, const std::vector<std::string>& labels,
                               const std::string& metric, bool lower, bool long_band) {
  const auto v = verdict(in, metric, lower);
  if (!v) return "";
  const std::string& unit = unit_of(in, metric);
  const std::size_t w = v->winner;
  std::string t = labels[w] + " has " + best_on(metric, lower) + ", " +
                  human(in.runs[w].get(metric), unit) + " (" +
                  (long_band ? band_text(band_of(in, w, metric))
                             : short_band(band_of(in, w, metric))) +
                  ")";
  if (v->runner_up) {
    const std::size_t r = *v->runner_up;
    t += "; " + margin_text(in.runs[w].get(metric), in.runs[r].get(metric), lower) +
         " the runner-up " + labels[r] + " (" + human(in.runs[r].get(metric), unit) + ", " +
         short_band(band_of(in, r, metric)) + "): " + v->margin_verdict;
  }
  return t + ".";
}

// "90% of requests within TTFT 2 s and TPOT 200 ms": the targets of the capacity searches.
std::string targets_text(const store::CapacityStudy& st) {
  std::string t = format::significant(st.attainment_pct, 3) + "% of requests within";
  if (st.slo_ttft_s) t += " TTFT " + format::significant(*st.slo_ttft_s, 3) + " s";
  if (st.slo_ttft_s && st.slo_tbt_s) t += " and";
  if (st.slo_tbt_s) t += " TPOT " + format::significant(*st.slo_tbt_s * 1e3, 3) + " ms";
  if (!st.slo_ttft_s && !st.slo_tbt_s) t = "no latency target";
  return t + (st.stability ? ", with a stable queue" : "");
}

// What the capacity search found for entry i, in words; "" when it is no capacity search.
std::string capacity_text(const ReportInput& in, std::size_t i) {
  if (i >= in.capacity.size() || !in.capacity[i]) return "";
  const store::CapacityStudy& st = *in.capacity[i];
  const std::string prefix = "cannot meet the SLO at any load: ";
  if (!st.found) {
    if (st.limit.rfind(prefix, 0) == 0)
      return "cannot meet the SLO at any load, because " + st.limit.substr(prefix.size());
    return "sustains no rate: " + st.limit;
  }
  const store::StoredRun& r = in.runs[i];
  std::string t = std::string(st.unbounded ? "sustains at least " : "sustains ") +
                  human(*st.rate_requests_per_s, "requests/s");
  if (const auto usd = r.find(sim::metric::kUsdPerRequestAtCapacity))
    t += " at " + human(*usd, "USD/request");
  return t;
}

// The summary as plain sentences (shared by the HTML and the Markdown).
struct Sentences {
  std::string recommendation;  // main objective
  std::vector<std::string> others;
  std::string robustness;
  // Interactive use (entries of capacity searches): the targets, the winners on sustained rate
  // and cost per request, and each configuration that sustains no rate, with why.
  std::string interactive_targets;
  std::vector<std::string> interactive;
};

std::vector<std::string> interactive_sentences(const ReportInput& in,
                                               const std::vector<std::string>& labels,
                                               std::string& targets) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < in.capacity.size() && targets.empty(); ++i)
    if (in.capacity[i]) targets = targets_text(*in.capacity[i]);
  // Runs judged at capacity elsewhere (a plan's capacity_search) carry the rate without a study.
  if (targets.empty() && std::any_of(in.runs.begin(), in.runs.end(), [](const store::StoredRun& r) {
        return r.has(sim::metric::kCapacityRequestsPerS);
      }))
    targets = "its scenario's latency targets";
  if (targets.empty()) return out;
  for (const auto& [metric, lower] :
       {std::pair{&sim::metric::kCapacityRequestsPerS, false},
        std::pair{&sim::metric::kUsdPerRequestAtCapacity, true}}) {
    const std::string t = objective_sentence(in, labels, std::string(metric->name), lower, false);
    if (!t.empty()) out.push_back(t);
  }
  if (out.empty()) out.push_back("No configuration sustains any rate within the targets.");
  for (std::size_t i = 0; i < in.capacity.size(); ++i)
    if (in.capacity[i] && (!in.capacity[i]->found || in.capacity[i]->unbounded))
      out.push_back(labels[i] + " " + capacity_text(in, i) + ".");
  return out;
}

Sentences sentences(const ReportInput& in, const std::vector<std::string>& labels) {
  Sentences out;
  const DecisionInput& d = in.decision;
  const std::string& unit = unit_of(in, d.metric);
  out.interactive = interactive_sentences(in, labels, out.interactive_targets);
  auto v = verdict(in, d.metric, d.lower_is_better);
  if (!v) {
    out.recommendation = "No recommendation on " + d.metric +
                         ": no configuration that fits has this metric (are prices missing?).";
    return out;
  }
  const std::size_t w = v->winner;
  std::string s = "Recommendation: " + labels[w] + " has " + best_on(d.metric, d.lower_is_better) +
                  ", " + human(in.runs[w].get(d.metric), unit) + ", " +
                  band_text(band_of(in, w, d.metric));
  if (v->runner_up) {
    s += "; " +
         margin_text(in.runs[w].get(d.metric), in.runs[*v->runner_up].get(d.metric),
                     d.lower_is_better) +
         " the runner-up " + labels[*v->runner_up] + " (" +
         human(in.runs[*v->runner_up].get(d.metric), unit) + ")";
  }
  if (v->baseline_ratio)
    s += "; " + format::significant(*v->baseline_ratio, 3) + "x the baseline " + labels[0];
  s += ".";
  if (v->runner_up) {
    std::string verdict_text = v->margin_verdict;
    verdict_text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(verdict_text[0])));
    s += " " + verdict_text + ".";
  }
  std::size_t excluded = 0;
  for (std::size_t i = 0; i < in.runs.size(); ++i)
    if (in.runs[i].fits && !is_candidate(in, i)) ++excluded;
  if (excluded)
    s += " Not ranked: " + std::to_string(excluded) + " configuration" +
         (excluded == 1 ? " that sustains" : "s that sustain") +
         " no rate within the SLO (" + (excluded == 1 ? "its" : "their") +
         " only figures are at zero load).";
  out.recommendation = s;
  for (const auto& o : kObjectives) {
    const std::string metric(o.metric.name);
    if (metric == d.metric) continue;
    auto ov = verdict(in, metric, o.lower_is_better);
    if (!ov) continue;
    out.others.push_back(objective_sentence(in, labels, metric, o.lower_is_better, false));
  }
  if (v->runner_up && !d.tornadoes.empty()) {
    const auto flips = flipping_inputs(d, w, *v->runner_up, d.lower_is_better);
    if (flips.empty())
      out.robustness = labels[w] + " stays ahead of " + labels[*v->runner_up] +
                       " when any one input of the sensitivity analysis moves by +-" +
                       format::fixed(100 * d.range, 0) + " %.";
    else {
      out.robustness = labels[*v->runner_up] + " would win with ";
      for (std::size_t i = 0; i < flips.size(); ++i)
        out.robustness += (i ? (i + 1 == flips.size() ? " or " : ", ") : "") + flips[i];
      out.robustness += " (one input at a time, +-" + format::fixed(100 * d.range, 0) + " %).";
    }
  }
  return out;
}

}  // namespace

std::string describe_configuration(const Scenario& s, std::optional<double> sized_dram_gb) {
  std::ostringstream o;
  const Hardware& hw = s.hardware;
  o << hw.gpu_count << "x " << hw.gpu.name << " ("
    << (hw.gpu.memory_label.empty() ? format::fixed(hw.gpu.memory_mib, 0) + " MiB"
                                    : hw.gpu.memory_label)
    << "), " << hw.host.name << (hw.host.virtual_machine ? " (a virtual machine)" : "") << " with ";
  if (sized_dram_gb && std::lround(*sized_dram_gb) != std::lround(hw.host.dram_gb))
    o << format::fixed(*sized_dram_gb, 0)
      << " GB DRAM (sized to the run's need; the platform holds up to "
      << format::fixed(hw.host.dram_gb, 0) << " GB)";
  else
    o << format::fixed(hw.host.dram_gb, 0) << " GB DRAM";
  if (hw.nvme.count > 0)
    o << ", " << hw.nvme.count << "x "
      << (hw.nvme.drive.name.empty() ? "profiled" : hw.nvme.drive.name) << " NVMe";
  o << "; " << s.model.name << ", " << s.policy.weight_bits << "-bit weights";
  if (has_capability(s, kCapFixedBatch))
    o << "; batch " << s.inference.batch << ", prompt " << s.inference.prompt_tokens << ", "
      << s.inference.gen_tokens << " generated tokens";
  o << "; weights on " << placement_text(s.policy.weights) << ", KV cache on "
    << placement_text(s.policy.kv_cache);
  if (s.policy.parallelism.pipeline > 1 || s.policy.parallelism.tensor > 1)
    o << ", " << s.policy.parallelism.pipeline << "-stage pipeline x "
      << s.policy.parallelism.tensor << "-way tensor parallel";
  return o.str();
}

std::vector<std::size_t> ranking(const ReportInput& in, const std::string& metric,
                                 bool lower_is_better) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < in.runs.size(); ++i)
    if (is_candidate(in, i) && in.runs[i].has(metric)) out.push_back(i);
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    const double x = in.runs[a].get(metric), y = in.runs[b].get(metric);
    if (x != y) return lower_is_better ? x < y : x > y;
    // Ties: the cheaper to buy first (kTieBreakText), then the order stored.
    const auto ca = in.runs[a].find(sim::metric::kCapexUsd), cb = in.runs[b].find(sim::metric::kCapexUsd);
    return ca && cb && *ca < *cb;
  });
  return out;
}

namespace {

// Entry i's status in the list of configurations: what its capacity search found, why the plan
// rejected it, or that it does not fit; "" when there is nothing to add.
std::string verdict_status(const ReportInput& in, std::size_t i);

std::string entry_status(const ReportInput& in, std::size_t i) {
  std::string s = verdict_status(in, i);
  if (i < in.same_timings.size() && !in.same_timings[i].empty()) {
    s += std::string(s.empty() ? "" : "; ") + "the same timings, with hardware it does not use: ";
    for (std::size_t k = 0; k < in.same_timings[i].size(); ++k)
      s += (k ? "; " : "") + in.same_timings[i][k];
  }
  return s;
}

// What the entry's capacity search found and what the plan decided about it.
std::string verdict_status(const ReportInput& in, std::size_t i) {
  const std::string c = capacity_text(in, i);
  if (const store::PlanVerdict* v = verdict_of(in.plan_verdicts, in.runs[i])) {
    // A plan's serving point: what its search found, then the plan's verdict, unless that only
    // repeats the search's reason ("SLO: sustains no rate: ...").
    if (c.empty()) return v->status == "feasible" ? "feasible" : v->status + ", " + v->reason;
    if (v->status == "feasible") return c + " (feasible)";
    if (v->reason.rfind("SLO: ", 0) == 0) return c + " (" + v->status + ")";
    return c + " (" + v->status + ", " + v->reason + ")";
  }
  if (!c.empty()) return c;
  return in.runs[i].fits ? "" : "does not fit: " + in.runs[i].shortfall;
}

// The plan's points that never became a run (pruned before simulation, invalid, or the same
// configuration as another point), grouped by the kind of their reason ("memory", "budget",
// "constraint", "objective", ...), each group with its count and its first kExamples points.
constexpr std::size_t kExamples = 3;
std::vector<std::string> unsimulated_verdicts(const ReportInput& in) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const store::PlanVerdict*>> by_kind;
  for (const auto& v : in.plan_verdicts) {
    if (v.status != "pruned" && v.status != "invalid" && v.status != "equivalent") continue;
    const std::string kind =
        v.status == "equivalent" ? "the same configuration as another point" : v.reason.substr(0, v.reason.find(':'));
    if (!by_kind.count(kind)) order.push_back(kind);
    by_kind[kind].push_back(&v);
  }
  std::vector<std::string> out;
  for (const auto& kind : order) {
    const auto& vs = by_kind[kind];
    std::string t = kind + " (" + format::counted(vs.size(), "point") + "), e.g. ";
    for (std::size_t k = 0; k < std::min(kExamples, vs.size()); ++k)
      t += (k ? "; " : "") + short_point_label(vs[k]->point) + ": " + vs[k]->reason;
    out.push_back(t);
  }
  return out;
}

constexpr const char* kTieBreakText =
    "Ties on a metric are broken by the lower purchase price (capex_usd), then by the order the "
    "runs were stored.";

}  // namespace

std::vector<ReportPart> decision_html(const ReportInput& in,
                                      const std::vector<std::string>& labels) {
  const Sentences s = sentences(in, labels);
  std::ostringstream h;
  h << "<h2 id=\"decision\">Decision summary</h2>\n";
  h << "<h3>Offline use: cost per token, throughput, energy</h3>\n<p class=\"recommendation\">"
    << html_escape(s.recommendation) << "</p>\n";
  if (!s.others.empty()) {
    h << "<ul class=\"objectives\">";
    for (const auto& o : s.others) h << "<li>" << html_escape(o) << "</li>";
    h << "</ul>\n";
  }
  if (!s.robustness.empty()) h << "<p class=\"note\">" << html_escape(s.robustness) << "</p>\n";
  if (!s.interactive_targets.empty()) {
    h << "<h3>Interactive use: requests within the SLO</h3>\n<p class=\"note\">Each "
         "configuration at the highest arrival rate it sustains with "
      << html_escape(s.interactive_targets)
      << " (the search of <code>tiersim capacity</code>, and of a plan's "
         "<code>capacity_search</code>).</p>\n"
      << "<ul class=\"interactive\">";
    for (const auto& t : s.interactive) h << "<li>" << html_escape(t) << "</li>";
    h << "</ul>\n";
  }
  h << "<p class=\"note\">" << kTieBreakText << "</p>\n";
  h << "<h3>The configurations</h3>\n<ul class=\"configurations\">";
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const std::string status = entry_status(in, i);
    h << "<li><b>" << html_escape(labels[i]) << "</b>"
      << (i == 0 && in.runs.size() > 1 ? " (baseline)" : "") << ": "
      << html_escape(i < in.decision.descriptions.size() ? in.decision.descriptions[i] : "");
    if (!status.empty())
      h << " &mdash; <span class=\"status\">" << html_escape(status) << "</span>";
    h << "</li>";
  }
  h << "</ul>\n";
  const auto unsimulated = unsimulated_verdicts(in);
  if (!unsimulated.empty()) {
    h << "<h3>Points of the plan not simulated, by reason</h3>\n<ul class=\"rejected\">";
    for (const auto& u : unsimulated) h << "<li>" << html_escape(u) << "</li>";
    h << "</ul>\n";
  }
  std::vector<ReportPart> parts;
  parts.push_back({h.str(), headline_spec(in, labels, in.decision.metric,
                                          "Offline: " + in.decision.metric +
                                              " with the model's error band")});
  if (!s.interactive_targets.empty())
    for (const sim::MetricDecl* m :
         {&sim::metric::kCapacityRequestsPerS, &sim::metric::kUsdPerRequestAtCapacity})
      if (json spec = headline_spec(in, labels, std::string(m->name),
                                    "Interactive: " + std::string(m->name) +
                                        " with the model's error band");
          !spec.is_null())
        parts.push_back({"", std::move(spec)});
  if (!in.decision.tornadoes.empty()) {
    parts.push_back(
        {"<p class=\"note\">Tornado charts: each input moved alone by +-" +
             format::fixed(100 * in.decision.range, 0) +
             " % of its value (clamped to its valid range), the configuration re-simulated; the "
             "bars show where " +
             html_escape(in.decision.metric) +
             " lands, the line its value with the inputs as given. <code>tiersim "
             "sensitivity</code> "
             "prints the same analysis as a table.</p>\n",
         nullptr});
    for (const auto& t : in.decision.tornadoes)
      parts.push_back({"", tornado_spec(t, labels.at(t.run), in.decision.metric,
                                        unit_of(in, in.decision.metric), in.decision.range)});
  } else if (!in.decision.sensitivity_note.empty()) {
    parts.push_back({"<p class=\"note\">No sensitivity analysis: " +
                         html_escape(in.decision.sensitivity_note) + "</p>\n",
                     nullptr});
  }
  return parts;
}

std::string decision_markdown(const ReportInput& in, const std::vector<std::string>& labels) {
  const Sentences s = sentences(in, labels);
  std::ostringstream m;
  m << "## Decision summary\n\n### Offline use: cost per token, throughput, energy\n\n"
    << md_escape(s.recommendation) << "\n\n";
  for (const auto& o : s.others) m << "- " << md_escape(o) << "\n";
  if (!s.others.empty()) m << "\n";
  if (!s.robustness.empty()) m << md_escape(s.robustness) << "\n\n";
  if (!s.interactive_targets.empty()) {
    m << "### Interactive use: requests within the SLO\n\nEach configuration at the highest "
         "arrival rate it sustains with "
      << md_escape(s.interactive_targets) << ".\n\n";
    for (const auto& t : s.interactive) m << "- " << md_escape(t) << "\n";
    m << "\n";
  }
  m << kTieBreakText << "\n\n### The configurations\n\n";
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const std::string status = entry_status(in, i);
    m << "- **" << md_escape(labels[i])
      << "**: " << md_escape(i < in.decision.descriptions.size() ? in.decision.descriptions[i] : "")
      << (status.empty() ? "" : " (" + md_escape(status) + ")") << "\n";
  }
  m << "\n";
  const auto unsimulated = unsimulated_verdicts(in);
  if (!unsimulated.empty()) {
    m << "### Points of the plan not simulated, by reason\n\n";
    for (const auto& u : unsimulated) m << "- " << md_escape(u) << "\n";
    m << "\n";
  }
  return m.str();
}

}  // namespace tiersim::reports
