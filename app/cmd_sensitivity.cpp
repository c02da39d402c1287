// tiersim sensitivity: how much each uncertain input (prices, electricity, utilisation,
// bandwidths, compute rates) moves a metric of each configuration, one input at a time: the
// tornado table. Inputs change only through scenario overrides (study/sensitivity.hpp).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/command.hpp"
#include "config/catalog.hpp"
#include "config/compare_file.hpp"
#include "model/errors.hpp"
#include "reports/run_output.hpp"
#include "sim/metrics.hpp"
#include "sim/result.hpp"
#include "reports/study_json.hpp"
#include "study/sensitivity.hpp"
#include "study/studies.hpp"
#include "common/format.hpp"

namespace po = boost::program_options;

namespace tiersim::app {
namespace {

std::string num(double v) { return format::significant(v, 4); }

void print_tornado(std::ostream& os, const sensitivity::Tornado& t) {
  os << "\n" << t.variant << ": ";
  if (!t.error.empty()) {
    os << "not analysed: " << t.error << "\n";
    return;
  }
  os << t.metric << " = " << num(t.base_metric) << " " << t.unit << " with the inputs as given\n";
  std::size_t w = 10;
  for (const auto& r : t.rows) w = std::max(w, r.input.what.size() + r.input.key.size() + 5);
  os << "  " << pad("input", w) << pad("low", 11) << pad("high", 11) << pad("metric@low", 12)
     << pad("metric@high", 12) << "swing\n";
  for (const auto& r : t.rows) {
    if (!r.skipped.empty()) continue;
    const std::string what = r.input.what + " (" + r.input.key + ")";
    os << "  " << pad(what, w) << pad(num(r.low_value), 11) << pad(num(r.high_value), 11)
       << pad(r.metric_low ? num(*r.metric_low) : "failed", 12)
       << pad(r.metric_high ? num(*r.metric_high) : "failed", 12) << num(r.swing());
    if (t.base_metric != 0) os << " (" << num(100 * r.swing() / std::abs(t.base_metric)) << "%)";
    if (r.clamped) os << "  [clamped to the key's valid range]";
    if (!r.error.empty()) os << "  " << r.error;
    os << "\n";
  }
  std::string skipped;
  for (const auto& r : t.rows)
    if (!r.skipped.empty()) skipped += (skipped.empty() ? "" : ", ") + r.input.key;
  if (!skipped.empty())
    os << "  not varied (unused here, or not for this workload): " << skipped << "\n";
}

}  // namespace

int cmd_sensitivity(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim sensitivity FILE... [options]\n\n"
      "Varies one uncertain input at a time (component prices, electricity price, utilisation,\n"
      "amortisation period, PUE, GPU compute and memory rates, PCIe and NVMe bandwidth, host\n"
      "DRAM bandwidth and CPU rates) by +-20 % of its value in each configuration, re-simulates,\n"
      "and prints per configuration the tornado table: input, low and high value, the metric at\n"
      "each, and the swing, largest first. Inputs a configuration does not use (a drive price\n"
      "without drives) are listed as not varied. Each FILE is a scenario or a comparison file\n"
      "(as for tiersim compare); values change through the same overrides as --set.\n\n"
      "options");
  // The options are read straight into the request: each is named once.
  studies::SensitivityRequest request;
  std::vector<std::string> files;
  opts.add_options()("help,h", "show this help")(
      "metric",
      po::value<std::string>(&request.metric)
          ->default_value(std::string(sim::metric::kUsdPerMillionTokens.name)),
      "metric to explain (names as in scenarios/README.md, e.g. throughput_tokens_per_s)")(
      "range", po::value<double>(&request.range)->default_value(0.2, "0.2"),
      "relative change of each input at both ends (0.2 = -20 % and +20 %)")(
      "input", po::value<std::vector<std::string>>(&request.inputs)->composing(),
      "vary only these inputs: KEY, or KEY=LOW:HIGH with factors of the base value, e.g. "
      "--input economics.prices.gpu_usd=0.5:1.5 (repeatable; default: the list above)")(
      "variant", po::value<std::vector<std::string>>(&request.variants)->composing(),
      "analyse only this variant of a comparison file (repeatable)")(
      "set", po::value<std::vector<std::string>>(&request.sets)->composing(),
      "override one scenario key in every configuration first, e.g. --set workload.batch=100")(
      "json", "print one JSON object")("threads,j",
                                       po::value<int>(&request.threads)->default_value(0),
                                       "threads (0 = every hardware thread)")(
      "data-dir", po::value<std::string>(&request.data_dir), kDataDirHelp);
  const po::variables_map vm = parse_command_line(args, opts, files);
  if (printed_help(
          vm, opts,
          "  # which inputs decide the cost per million tokens of the three OPT-30B set-ups?\n"
          "  tiersim sensitivity scenarios/cost/opt30b-l40s.yaml\n"
          "  # only the GPU and drive prices, -50 % .. +50 %, for one variant, as JSON\n"
          "  tiersim sensitivity scenarios/cost/opt30b-l40s.yaml --variant 1x-l40s-gen5 "
          "--input economics.prices.gpu_usd=0.5:1.5 --input "
          "economics.prices.drive_usd=0.5:1.5 --json\n"))
    return kExitOk;
  if (files.empty()) throw Error("missing FILE (see tiersim sensitivity --help)");
  request.comparison = config::read_compare_inputs(files);
  const studies::SensitivityOutcome outcome = studies::run_sensitivity(request);
  const auto& ts = outcome.tornadoes;

  if (vm.count("json")) {
    std::cout << reports::json_text(reports::sensitivity_json(outcome), 2) << "\n";
  } else {
    std::cout << "sensitivity of " << request.metric
              << " to one input at a time (each varied by its "
              << "stated factors, default +-" << num(100 * request.range) << " %)\n";
    for (const auto& t : ts) print_tornado(std::cout, t);
  }
  return kExitOk;
}

}  // namespace tiersim::app
