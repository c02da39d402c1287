// tiersim breakeven: the value of one input (a GPU price, a drive's bandwidth, the electricity
// price, ...) at which two configurations tie on a metric, found by a scan and bisection on the
// simulated metric (study/sensitivity.hpp).
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "config/catalog.hpp"
#include "config/compare_file.hpp"
#include "model/errors.hpp"
#include "reports/run_output.hpp"
#include "sim/metrics.hpp"
#include "study/planner.hpp"
#include "study/sensitivity.hpp"
#include "common/format.hpp"

namespace po = boost::program_options;

namespace tiersim::app {
namespace {

std::string num(double v) { return format::significant(v, 6); }

// The name of the better configuration at one sample ("tie" when equal, "" when one failed).
std::string better_at(const sensitivity::BreakEvenSample& s, const sensitivity::BreakEven& be,
                      plan::Sense sense) {
  if (!s.metric_a || !s.metric_b) return "";
  if (*s.metric_a == *s.metric_b) return "tie";
  const bool a_lower = *s.metric_a < *s.metric_b;
  return (a_lower == (sense == plan::Sense::kMinimize)) ? be.a : be.b;
}

// The first and last samples where both configurations ran.
std::pair<const sensitivity::BreakEvenSample*, const sensitivity::BreakEvenSample*> ends(
    const sensitivity::BreakEven& be) {
  const sensitivity::BreakEvenSample *first = nullptr, *last = nullptr;
  for (const auto& s : be.scan)
    if (s.metric_a && s.metric_b) {
      if (!first) first = &s;
      last = &s;
    }
  return {first, last};
}

std::string verdict(const sensitivity::BreakEven& be, plan::Sense sense) {
  const std::string key = be.key + (be.key_unit.empty() ? "" : " (" + be.key_unit + ")");
  auto [first, last] = ends(be);
  if (!first)
    return "no answer: at no value scanned from " + num(be.low) + " to " + num(be.high) +
           " do both configurations run";
  if (be.tie) {
    std::string s = "they tie at " + key + " = " + num(*be.tie);
    if (be.tie_below)
      s += " (whole numbers: between " + num(*be.tie_below) + " and " + num(*be.tie_above) + ")";
    s += ", where " + be.metric + " = " + num(*be.tie_metric) + " " + be.unit + "; '" +
         better_at(*first, be, sense) + "' is better below it, '" + better_at(*last, be, sense) +
         "' above it";
    if (be.crossings > 1)
      s += " (the order changes " + std::to_string(be.crossings) +
           " times in the range; this is the lowest)";
    return s;
  }
  // "the other is 16.4x" or "by 12.3 %": how far apart they are at one sample.
  auto margin = [&](const sensitivity::BreakEvenSample& x) {
    const double a = *x.metric_a, b = *x.metric_b;
    const double worse = sense == plan::Sense::kMinimize ? std::max(a, b) : std::min(a, b);
    const double best = sense == plan::Sense::kMinimize ? std::min(a, b) : std::max(a, b);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f %% (the other is %.3gx)",
                  100 * std::fabs(worse - best) / std::fabs(best), worse / best);
    return std::string(buf);
  };
  const bool part = *be.runs_low > be.low || *be.runs_high < be.high;
  std::string s = "no value of " + key + " from " + num(*be.runs_low) + " to " +
                  num(*be.runs_high) + (part ? " (where both fit)" : "") + " makes them tie: '" + better_at(*first, be, sense) + "' is better at " +
                  num(first->value) + " by " + margin(*first) + " and '" +
                  better_at(*last, be, sense) + "' at " + num(last->value) + " by " + margin(*last);
  if (!be.extrapolation_blocked.empty()) {
    s += ". The trend points past the end where a configuration stops fitting (" +
         be.extrapolation_blocked + "): no straight line is drawn across values where one fails";
  } else if (be.extrapolated_tie) {
    const double x = *be.extrapolated_tie;
    s += ". A straight line through the two ends would cross at " + num(x);
    if (x < be.valid_min || x > be.valid_max)
      s += ", outside the key's valid range (" +
           (be.valid_max >= 1e300 ? ">= " + num(be.valid_min)
                                  : num(be.valid_min) + " .. " + num(be.valid_max)) +
           "): no valid value makes them tie if the trend holds";
    else
      s += "; search there with --between to check";
  } else if (first != last) {
    s += ". The difference does not change with " + be.key + ": no value makes them tie";
  }
  return s;
}

nlohmann::json to_json(const sensitivity::BreakEven& be, plan::Sense sense) {
  nlohmann::json j = {{"key", be.key},
                      {"key_unit", be.key_unit},
                      {"metric", be.metric},
                      {"unit", be.unit},
                      {"sense", sense == plan::Sense::kMinimize ? "minimize" : "maximize"},
                      {"a", be.a},
                      {"b", be.b},
                      {"a_uses_key", be.a_uses_key},
                      {"b_uses_key", be.b_uses_key},
                      {"a_value_as_given", be.base_a},
                      {"b_value_as_given", be.base_b},
                      {"low", be.low},
                      {"high", be.high},
                      {"crossings", be.crossings},
                      {"simulations", be.simulations},
                      {"verdict", verdict(be, sense)}};
  j["runs_low"] = be.runs_low ? nlohmann::json(*be.runs_low) : nlohmann::json();
  j["runs_high"] = be.runs_high ? nlohmann::json(*be.runs_high) : nlohmann::json();
  j["stops_low"] = be.stops_low;
  j["stops_high"] = be.stops_high;
  j["extrapolation_blocked"] = be.extrapolation_blocked;
  nlohmann::json others = nlohmann::json::array();
  for (const auto& [from, to] : be.other_runs) others.push_back({from, to});
  j["other_runs"] = others;
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& f : be.failed) failed.push_back({{"value", f.value}, {"error", f.error}});
  j["failed"] = failed;
  j["tie"] = be.tie ? nlohmann::json(*be.tie) : nlohmann::json();
  j["tie_metric"] = be.tie_metric ? nlohmann::json(*be.tie_metric) : nlohmann::json();
  j["extrapolated_tie"] =
      be.extrapolated_tie ? nlohmann::json(*be.extrapolated_tie) : nlohmann::json();
  nlohmann::json scan = nlohmann::json::array();
  for (const auto& s : be.scan) {
    nlohmann::json x = {{"value", s.value}, {"better", better_at(s, be, sense)}};
    x["a"] = s.metric_a ? nlohmann::json(*s.metric_a) : nlohmann::json();
    x["b"] = s.metric_b ? nlohmann::json(*s.metric_b) : nlohmann::json();
    if (!s.error.empty()) x["error"] = s.error;
    scan.push_back(x);
  }
  j["scan"] = scan;
  return j;
}

}  // namespace

int cmd_breakeven(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim breakeven FILE --vary KEY [--between LOW HIGH] [options]\n\n"
      "Finds the value of one input at which two configurations tie on a metric (default: cost\n"
      "per million generated tokens). KEY is any numeric scenario key (tiersim schema): a price\n"
      "(economics.prices.gpu_usd), the electricity price, a drive's read bandwidth\n"
      "(hardware.nvme.read_gbps), the drive count, the batch, ... It is set in both\n"
      "configurations (held fixed in one that does not use it, e.g. a drive price where there\n"
      "are no drives). The range is scanned at evenly spaced values, then the first change of\n"
      "order is refined by bisection on the simulated metric. When no value in the range makes\n"
      "them tie, it says which configuration is better at each end and by how much. Values\n"
      "where a configuration does not fit are not searched: the range is narrowed to the part\n"
      "where both fit (its ends found by bisection), the rest is listed as failed, and no trend\n"
      "is extrapolated across it. For several inputs at once, see tiersim whatif.\n"
      "FILE is a comparison file (the first two variants, or those named by --variants) or two\n"
      "scenario files.\n\n"
      "options");
  std::vector<std::string> files, sets, variants;
  std::vector<double> between;
  std::string data_dir, metric, key, sense_text;
  int points = 9;
  opts.add_options()("help,h", "show this help")("vary", po::value<std::string>(&key),
                                                 "the scenario key to solve for (required)")(
      "between", po::value<std::vector<double>>(&between)->multitoken(),
      "LOW HIGH: the range to search (default: a quarter to four times the value as given)")(
      "variants", po::value<std::vector<std::string>>(&variants)->multitoken(),
      "A B: the two variants of the comparison file to compare (default: the first two)")(
      "metric",
      po::value<std::string>(&metric)->default_value(
          std::string(sim::metric::kUsdPerMillionTokens.name)),
      "metric on which they should tie")(
      "sense", po::value<std::string>(&sense_text),
      "minimize or maximize: which direction of the metric is better (known for the common "
      "metrics; needed for others)")("points", po::value<int>(&points)->default_value(9),
                                     "evenly spaced values scanned first")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(),
      "override one scenario key in both configurations first, e.g. --set workload.batch=100")(
      "json", "print one JSON object")(
      "data-dir", po::value<std::string>(&data_dir),
      "folder holding catalog/ (default: $TIERSIM_DATA_DIR or the source tree's scenarios/)");
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>(&files));
  const po::variables_map vm = parse_command_line(args, opts, hidden, "files", -1);
  if (vm.count("help")) {
    std::cout << opts
              << "\nexamples:\n"
                 "  # at what L40S price does one L40S + Gen5 NVMe match six L40S in $/Mtoken?\n"
                 "  tiersim breakeven scenarios/cost/opt30b-l40s.yaml --variants 6x-l40s "
                 "1x-l40s-gen5 --vary economics.prices.gpu_usd --between 1000 40000\n"
                 "  # at what electricity price do they tie, at batch 100?\n"
                 "  tiersim breakeven scenarios/cost/opt30b-l40s.yaml --variants 6x-l40s "
                 "1x-l40s-gen5 --vary economics.usd_per_kwh --between 0.01 1 --set "
                 "workload.batch=100\n";
    return kExitOk;
  }
  if (files.empty()) throw Error("missing FILE (see tiersim breakeven --help)");
  sensitivity::check_metric_name(metric, "--metric");
  if (key.empty()) throw Error("missing --vary KEY (see tiersim breakeven --help)");
  if (!between.empty() && between.size() != 2) throw Error("--between takes two values, LOW HIGH");
  if (!variants.empty() && variants.size() != 2) throw Error("--variants takes two names, A B");
  if (points < 2) throw Error("--points must be at least 2");

  plan::Sense sense = plan::Sense::kMinimize;
  if (sense_text == "minimize" || sense_text == "maximize") {
    sense = sense_text == "minimize" ? plan::Sense::kMinimize : plan::Sense::kMaximize;
  } else if (!sense_text.empty()) {
    throw Error("--sense must be minimize or maximize, got '" + sense_text + "'");
  } else if (auto known = plan::known_sense(metric)) {
    sense = *known;
  } else {
    throw Error("which direction of '" + metric +
                "' is better? add --sense minimize or --sense maximize");
  }

  const config::Comparison cmp = config::read_compare_inputs(files);
  if (cmp.variants.size() < 2)
    throw Error("need two configurations: a comparison file or two scenario files");
  const config::VariantSpec& a =
      variants.empty() ? cmp.variants[0] : config::find_variant(cmp, variants[0], "--variants");
  const config::VariantSpec& b =
      variants.empty() ? cmp.variants[1] : config::find_variant(cmp, variants[1], "--variants");

  const config::Catalog catalog = config::Catalog::load(data_dir);
  sensitivity::BreakEvenOptions o;
  o.key = key;
  o.metric = metric;
  o.scan_points = points;
  o.load.overrides = sets;
  o.load.catalog = &catalog;
  if (!between.empty()) {
    o.low = between[0];
    o.high = between[1];
  }
  const sensitivity::BreakEven be = sensitivity::break_even(a, b, o);

  if (vm.count("json")) {
    std::cout << reports::json_text(to_json(be, sense), 2) << "\n";
    return kExitOk;
  }
  std::cout << "break-even of " << be.metric << " (" << be.unit << ", "
            << (sense == plan::Sense::kMinimize ? "lower" : "higher") << " is better) between '"
            << be.a << "' and '" << be.b << "' as " << be.key
            << (be.key_unit.empty() ? "" : " (" + be.key_unit + ")") << " goes from " << num(be.low)
            << " to " << num(be.high) << "\n";
  std::cout << "as given: " << be.a << " "
            << (be.a_uses_key ? num(be.base_a) : std::string("does not use it (held fixed)"))
            << ", " << be.b << " "
            << (be.b_uses_key ? num(be.base_b) : std::string("does not use it (held fixed)"))
            << "\n\n";
  if (!be.failed.empty()) {
    // The part of the range where a configuration fails is reported as such and not searched.
    std::cout << "a first scan of " << num(be.low) << " .. " << num(be.high) << " found "
              << be.failed.size() << " value(s) where a configuration fails:\n";
    for (const auto& f : be.failed)
      std::cout << "  " << pad(num(f.value), 28) << f.error << "\n";
    if (be.runs_low && (*be.runs_low > be.low || *be.runs_high < be.high))
      std::cout << "both fit from " << num(*be.runs_low) << " to " << num(*be.runs_high)
                << " (an end where a configuration stops fitting found by bisection); only that part is searched below\n";
    for (const auto& [from, to] : be.other_runs)
      std::cout << "  (both also run from about " << num(from) << " to " << num(to)
                << ", not searched: use --between to search there)\n";
    std::cout << "\n";
  }
  const std::size_t w = std::max<std::size_t>(14, std::max(be.a.size(), be.b.size()) + 2);
  std::cout << "  " << pad(be.key, 28) << pad(be.a, w) << pad(be.b, w) << "better\n";
  for (const auto& s : be.scan) {
    std::cout << "  " << pad(num(s.value), 28) << pad(s.metric_a ? num(*s.metric_a) : "failed", w)
              << pad(s.metric_b ? num(*s.metric_b) : "failed", w) << better_at(s, be, sense);
    if (!s.error.empty()) std::cout << "  (" << s.error << ")";
    std::cout << "\n";
  }
  std::cout << "\n" << verdict(be, sense) << ".\n(" << be.simulations << " simulations)\n";
  return kExitOk;
}

}  // namespace tiersim::app
