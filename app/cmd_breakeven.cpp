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
#include "reports/study_json.hpp"
#include "study/sensitivity.hpp"
#include "study/studies.hpp"
#include "common/format.hpp"

namespace po = boost::program_options;

namespace tiersim::app {
namespace {

std::string num(double v) { return format::significant(v, 6); }

std::string better_at(const sensitivity::BreakEvenSample& s, const sensitivity::BreakEven& be,
                      plan::Sense sense) {
  return reports::breakeven_better_at(s, be, sense);
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
  // The options are read straight into the request: each is named once.
  studies::BreakEvenRequest request;
  std::vector<std::string> files;
  std::vector<double> between;
  opts.add_options()("help,h", "show this help")("vary", po::value<std::string>(&request.key),
                                                 "the scenario key to solve for (required)")(
      "between", po::value<std::vector<double>>(&between)->multitoken(),
      "LOW HIGH: the range to search (default: a quarter to four times the value as given)")(
      "variants", po::value<std::vector<std::string>>(&request.variants)->multitoken(),
      "A B: the two variants of the comparison file to compare (default: the first two)")(
      "metric",
      po::value<std::string>(&request.metric)
          ->default_value(std::string(sim::metric::kUsdPerMillionTokens.name)),
      "metric on which they should tie")("sense", po::value<std::string>(&request.sense),
                                         kSenseHelp)(
      "points", po::value<int>(&request.points)->default_value(9),
      "evenly spaced values scanned first")(
      "set", po::value<std::vector<std::string>>(&request.sets)->composing(), kSetBothHelp)(
      "json", "print one JSON object")("data-dir", po::value<std::string>(&request.data_dir),
                                       kDataDirHelp);
  const po::variables_map vm = parse_command_line(args, opts, files);
  if (printed_help(vm, opts,
                   "  # at what L40S price does one L40S + Gen5 NVMe match six L40S in $/Mtoken?\n"
                   "  tiersim breakeven scenarios/cost/opt30b-l40s.yaml --variants 6x-l40s "
                   "1x-l40s-gen5 --vary economics.prices.gpu_usd --between 1000 40000\n"
                   "  # at what electricity price do they tie, at batch 100?\n"
                   "  tiersim breakeven scenarios/cost/opt30b-l40s.yaml --variants 6x-l40s "
                   "1x-l40s-gen5 --vary economics.usd_per_kwh --between 0.01 1 --set "
                   "workload.batch=100\n"))
    return kExitOk;
  if (files.empty()) throw Error("missing FILE (see tiersim breakeven --help)");
  if (!between.empty() && between.size() != 2) throw Error("--between takes two values, LOW HIGH");
  request.comparison = config::read_compare_inputs(files);
  if (!between.empty()) request.between = std::make_pair(between[0], between[1]);
  const studies::BreakEvenOutcome outcome = studies::run_breakeven(request);
  const sensitivity::BreakEven& be = outcome.result;
  const plan::Sense sense = outcome.sense;

  if (vm.count("json")) {
    std::cout << reports::json_text(reports::breakeven_json(outcome), 2) << "\n";
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
              << format::counted(be.failed.size(), "value") << " where a configuration fails:\n";
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
  std::cout << "\n" << reports::breakeven_verdict(be, sense) << ".\n(" << be.simulations << " simulations)\n";
  return kExitOk;
}

}  // namespace tiersim::app
