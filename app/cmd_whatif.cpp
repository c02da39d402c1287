// tiersim whatif: what would it take for one configuration to beat another by a given ratio on a
// metric? Searches several inputs at once (prices, bandwidths, counts, batch, lengths, stack
// settings) for the nearest assumptions under which it does, or reports the best ratio the stated
// ranges allow (study/whatif.hpp).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "app/command.hpp"
#include "calibrate/interrupt.hpp"
#include "common/format.hpp"
#include "common/progress.hpp"
#include "config/compare_file.hpp"
#include "model/errors.hpp"
#include "reports/run_output.hpp"
#include "reports/study_json.hpp"
#include "study/studies.hpp"
#include "study/whatif.hpp"

namespace po = boost::program_options;

namespace tiersim::app {
namespace {

std::string num(double v) { return format::significant(v, 4); }
std::string times(double r) { return format::significant(r, 3) + "x"; }
std::string opt_num(const std::optional<double>& v) { return v ? num(*v) : "failed"; }

// "x3.1" (built by appending: GCC 12 warns falsely on "x" + std::string at -O3).
std::string factor_text(double f) {
  std::string s = "x";
  s += num(f);
  return s;
}

// "x0.25..4".
std::string range_of(const whatif::InputReport& in) {
  std::string s = factor_text(in.input.low_factor);
  s += "..";
  s += num(in.input.high_factor);
  return s;
}

// "8000 USD" or "200 / 198": the value(s) as given.
std::string as_given(const whatif::InputReport& in) {
  std::string s;
  if (in.used_a && in.used_b && in.value_a != in.value_b)
    s = num(in.value_a) + " / " + num(in.value_b);
  else
    s = num(in.used_a ? in.value_a : in.value_b);
  return s + (in.unit.empty() ? "" : " " + in.unit);
}

// The input's change in a point: "GPU price (economics.prices.gpu_usd) x3.1: 8000 -> 24800 USD".
std::string change(const whatif::Result& r, const whatif::Point& p, std::size_t i) {
  const whatif::InputReport& in = r.inputs[i];
  const double f = p.factors[i];
  auto val = [&](double base) {
    const double v = base * f;
    return num(in.integer ? std::round(v) : v);
  };
  std::string s = whatif::input_label(in.input);
  s += " ";
  s += factor_text(f);
  s += ": ";
  const std::string unit = in.unit.empty() ? "" : " " + in.unit;
  // The same value in both: once. Else each configuration's own.
  if (in.used_a && in.used_b && in.value_a == in.value_b)
    return s + num(in.value_a) + " -> " + val(in.value_a) + unit;
  if (in.used_a) s += r.a + " " + num(in.value_a) + " -> " + val(in.value_a) + unit;
  if (in.used_a && in.used_b) s += ", ";
  if (in.used_b) s += r.b + " " + num(in.value_b) + " -> " + val(in.value_b) + unit;
  return s;
}

// A choice input's change: "b:policy.stack: hf-deepspeed -> optimized".
std::string choice_change(const whatif::Result& r, const whatif::Point& p, std::size_t i) {
  const whatif::InputReport& in = r.inputs[i];
  std::string s = whatif::input_label(in.input) + ": ";
  if (in.used_a && in.used_b && in.text_a == in.text_b) return s + in.text_a + " -> " + p.choices[i];
  if (in.used_a) s += r.a + " " + in.text_a + " -> " + p.choices[i];
  if (in.used_a && in.used_b) s += ", ";
  if (in.used_b) s += r.b + " " + in.text_b + " -> " + p.choices[i];
  return s;
}

void print_point(std::ostream& os, const whatif::Result& r, const whatif::Point& p) {
  bool any = false;
  for (std::size_t i = 0; i < r.inputs.size(); ++i) {
    if (!r.inputs[i].skipped.empty()) continue;
    if (!r.inputs[i].input.choices.empty()) {
      if (i < p.choices.size() && !p.choices[i].empty()) {
        os << "    " << choice_change(r, p, i) << "\n";
        any = true;
      }
      continue;
    }
    if (std::fabs(p.factors[i] - 1) < 1e-9) continue;
    os << "    " << change(r, p, i) << "\n";
    any = true;
  }
  if (!any) os << "    (every input as given)\n";
  os << "  there " << r.a << " " << opt_num(p.metric_a) << " and " << r.b << " "
     << opt_num(p.metric_b) << " " << r.unit << ": " << (p.ratio ? times(*p.ratio) : "no ratio")
     << " (distance " << format::significant(p.distance, 3) << ")\n";
}

void print_text(std::ostream& os, const whatif::Result& r, const whatif::Options& o) {
  os << "what would it take for '" << r.a << "' to beat '" << r.b << "' by " << times(r.target)
     << " on " << r.metric << " (" << r.unit << ", "
     << (r.higher_is_better ? "higher is better: " + r.a + "'s at least " + times(r.target) +
                                  " " + r.b + "'s"
                            : "lower is better: " + r.b + "'s at least " + times(r.target) + " " +
                                  r.a + "'s")
     << ")?\n";
  const whatif::Point& g = r.as_given;
  os << "as given: " << r.a << " " << opt_num(g.metric_a) << ", " << r.b << " "
     << opt_num(g.metric_b) << ": " << (g.ratio ? times(*g.ratio) : "no ratio")
     << (g.error.empty() ? "" : " (" + g.error + ")") << "\n\n";

  os << "each input alone (factors of the values as given; the ratio at the lowest and highest "
        "factor where both fit):\n";
  std::size_t w = 10;
  for (const auto& in : r.inputs) w = std::max(w, whatif::input_label(in.input).size() + 2);
  os << "  " << pad("input", w) << pad("range", 14) << pad("as given", 22) << pad("ratio alone", 22)
     << pad("trend", 18) << "reaches " << times(r.target) << " alone at\n";
  std::string skipped;
  for (const auto& in : r.inputs) {
    const std::string label = whatif::input_label(in.input);
    if (!in.skipped.empty()) {
      skipped += "\n    " + label + ": " + in.skipped;
      continue;
    }
    if (!in.input.choices.empty()) {
      const std::string given = in.used_a && in.used_b && in.text_a != in.text_b
                                    ? in.text_a + " / " + in.text_b
                                    : (in.used_a ? in.text_a : in.text_b);
      os << "  " << pad(label, w) << pad("choice", 14) << pad(given, 22)
         << "(each value searched in turn, below)\n";
      continue;
    }
    std::optional<double> lo, hi;
    for (const auto& s : in.scan)
      if (s.ratio) {
        if (!lo) lo = s.ratio;
        hi = s.ratio;
      }
    std::string alone = lo ? times(*lo) + " .. " + times(*hi) : "none fit";
    std::string fits;
    if (in.fits_low && (*in.fits_low > in.input.low_factor * (1 + 1e-9) ||
                        *in.fits_high < in.input.high_factor * (1 - 1e-9)))
      fits = "  both fit only for " + factor_text(*in.fits_low) + ".." + num(*in.fits_high);
    if (in.gaps) fits += "  (with gaps)";
    os << "  " << pad(label, w) << pad(range_of(in) + (in.clamped ? "*" : ""), 14)
       << pad(as_given(in), 22) << pad(alone, 22) << pad(in.trend.empty() ? "-" : in.trend, 18)
       << (in.alone ? factor_text(*in.alone) : std::string("-")) << fits << "\n";
  }
  if (!skipped.empty()) os << "  not varied:" << skipped << "\n";
  if (!r.choice_outcomes.empty()) {
    std::string names;
    for (const auto& in : r.inputs)
      if (!in.input.choices.empty() && in.skipped.empty())
        names += (names.empty() ? "" : ", ") + whatif::input_label(in.input);
    os << "\neach combination of the choice inputs (" << names
       << "), the numeric inputs searched with it:\n";
    for (const auto& c : r.choice_outcomes) {
      os << "  " << pad(config::join(c.values, ", "), 30)
         << pad("as given " + (c.as_given_ratio ? times(*c.as_given_ratio) : std::string("-")), 20)
         << pad("best " + (c.best_ratio ? times(*c.best_ratio) : std::string("-")), 16)
         << (c.found ? "reaches it at distance " + format::significant(c.distance, 3)
                     : std::string("does not reach it"))
         << (c.error.empty() ? "" : "  (" + c.error + ")") << "\n";
    }
  }
  for (const auto& in : r.inputs)
    if (in.clamped) {
      os << "  * narrowed to the key's valid range\n";
      break;
    }
  os << "\n";

  if (r.found) {
    os << "answer: yes. The nearest assumptions found under which '" << r.a << "' beats '" << r.b
       << "' by " << times(r.target) << ":\n";
    print_point(os, r, r.nearest);
    std::string sa, sb;
    for (const auto& s : whatif::point_settings(r, r.nearest, true)) sa += " --set " + s;
    for (const auto& s : whatif::point_settings(r, r.nearest, false)) sb += " --set " + s;
    os << "  settings of '" << r.a << "':" << (sa.empty() ? " none" : sa) << "\n";
    os << "  settings of '" << r.b << "':" << (sb.empty() ? " none" : sb) << "\n";
  } else {
    if (r.interrupted || r.budget_reached)
      os << "answer: not found before the search stopped (" << (r.interrupted ? "interrupted" : "point limit")
         << "): no point so far where '" << r.a << "' beats '" << r.b << "' by " << times(r.target)
         << ".\n";
    else
      os << "answer: no point found in the stated ranges where '" << r.a << "' beats '" << r.b
         << "' by " << times(r.target) << ".\n";
    if (r.best.ratio) {
      os << "  the highest ratio reached with both fitting:\n";
      print_point(os, r, r.best);
      if (!r.at_bound.empty())
        os << "  inputs at an end of their range there: " << config::join(r.at_bound, ", ")
           << "\n";
      if (r.best_single_checked)
        os << "  checked: no input moved alone from there (to either end or the middle of its "
              "range) raises the ratio; a local search, not a proof that no combination does\n";
    } else {
      os << "  no point evaluated had both configurations fitting\n";
    }
  }
  if (r.budget_reached)
    os << "  (stopped at the limit of " << o.max_points
       << " points: raise --max-points for a longer search)\n";
  if (r.interrupted) os << "  (interrupted: this is what was found until then)\n";
  os << "\n" << whatif::method_text(r, o) << "; " << format::significant(r.wall_s, 3) << " s.\n";
}

}  // namespace

int cmd_whatif(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim whatif FILE --ratio R [--variants A B] [--vary KEY[=LOW:HIGH]]... "
      "[options]\n\n"
      "What would it take for configuration A to beat configuration B by a factor R on a metric\n"
      "(default: return_per_dollar, tokens/s per 1000 USD of capex)? Searches several inputs at\n"
      "once for the nearest assumptions under which A's metric is R times B's (B's is R times\n"
      "A's for a metric where lower is better) with both configurations fitting, or says that no\n"
      "point in the stated ranges reaches R, with the highest ratio reached, where, and which\n"
      "inputs were at an end of their range. Each input is a numeric scenario key (tiersim\n"
      "schema) moved by a factor of its value as given in each configuration that uses it:\n"
      "--vary changes both configurations, --vary-a only A, --vary-b only B. A choice key (the\n"
      "software stack policy.stack, the I/O path) tries each of its values (KEY=V1,V2: these),\n"
      "a changed choice adding 1 to the distance. Without any, the prices, the electricity\n"
      "price, GPU FP16, PCIe, NVMe and DRAM rates, the drive count, the batch and the prompt and\n"
      "generated lengths are searched, each over x0.25..4 (drives x1..8), with each software\n"
      "stack of B (b:policy.stack). The distance of a point is the Euclidean norm of the changes,\n"
      "each input's range counted as 1 on a log scale. Every input is first scanned alone (its\n"
      "trend, the part of its range where both fit, and the value at which it alone reaches R\n"
      "are printed); then a compass search raises the ratio and the nearest point is refined by\n"
      "bisection and linearisation. FILE is a comparison file (the first two variants, or\n"
      "those named by --variants) or two scenario files.\n\n"
      "options");
  // The options are read straight into the request: each is named once.
  studies::WhatIfRequest request;
  std::vector<std::string> files;
  opts.add_options()("help,h", "show this help")(
      "ratio", po::value<double>(&request.ratio),
      "R: the factor by which A should beat B (required)")(
      "variants", po::value<std::vector<std::string>>(&request.variants)->multitoken(),
      "A B: the two variants of the comparison file (default: the first two)")(
      "metric", po::value<std::string>(&request.metric)->default_value("return_per_dollar"),
      "the metric compared (tiersim schema --metrics)")(
      "sense", po::value<std::string>(&request.sense), kSenseHelp)(
      "vary", po::value<std::vector<std::string>>(&request.vary)->composing(),
      "KEY or KEY=LOW:HIGH (factors of the value as given, LOW <= 1 <= HIGH), or for a choice "
      "key KEY or KEY=V1,V2: an input changed in both configurations (repeatable)")(
      "vary-a", po::value<std::vector<std::string>>(&request.vary_a)->composing(),
      "the same, changed only in A")(
      "vary-b", po::value<std::vector<std::string>>(&request.vary_b)->composing(),
      "the same, changed only in B (e.g. the baseline's software settings)")(
      "points", po::value<int>(&request.points)->default_value(7),
      "values of each input scanned alone, ends included")(
      "max-points", po::value<int>(&request.max_points)->default_value(3000),
      "points evaluated at most, shared evenly by the combinations of choice inputs (each "
      "simulates A and B unless already simulated, a few milliseconds each for OPT-30B)")(
      "set", po::value<std::vector<std::string>>(&request.sets)->composing(), kSetBothHelp)(
      "json", "print one JSON object")("quiet,q", "no progress on stderr")(
      "threads,j", po::value<int>(&request.threads)->default_value(0),
      "threads (0 = every hardware thread)")("data-dir", po::value<std::string>(&request.data_dir),
                                             kDataDirHelp);
  const po::variables_map vm = parse_command_line(args, opts, files);
  if (printed_help(
          vm, opts,
          "  # Micron: does one L40S with NVMe offload have 4.8x the return per dollar of "
          "six L40S?\n"
          "  # What would it take, over prices, rates, drives, batch and lengths?\n"
          "  tiersim whatif scenarios/cost/opt30b-l40s-micron-claims.yaml --variants "
          "1x-nvme-384gb 6x-zero-inference --ratio 4.8\n"
          "  # only the GPU price and the baseline's PCIe rate, over wider ranges\n"
          "  tiersim whatif scenarios/cost/opt30b-l40s-micron-claims.yaml --variants "
          "1x-nvme-384gb 6x-zero-inference --ratio 4.8 --vary "
          "economics.prices.gpu_usd=0.1:10 --vary-b hardware.gpu.pcie_h2d_gbps=0.05:1\n"
          "  # at what prices is the NVMe box 20 % cheaper per million tokens than six "
          "L40S?\n"
          "  tiersim whatif scenarios/cost/opt30b-l40s.yaml --variants 1x-l40s-gen5 6x-l40s "
          "--metric usd_per_million_tokens --ratio 1.2 --vary economics.prices.gpu_usd "
          "--vary economics.prices.drive_usd --json\n"))
    return kExitOk;
  if (files.empty()) throw Error("missing FILE (see tiersim whatif --help)");
  if (!vm.count("ratio")) throw Error("missing --ratio R (see tiersim whatif --help)");
  request.comparison = config::read_compare_inputs(files);

  std::optional<ProgressLine> progress;
  if (!vm.count("quiet")) {
    const bool tty = isatty(STDERR_FILENO) != 0;
    progress.emplace(std::cerr, tty);
    request.on_progress = [&](const whatif::Progress& p) {
      progress->update("whatif: " + p.phase + ", " + std::to_string(p.points) + "/" +
                       std::to_string(p.max_points) + " points, best ratio " +
                       (p.best_ratio > 0 ? times(p.best_ratio) : "-"));
    };
  }
  calibrate::InterruptGuard guard;
  request.stop = guard.flag();
  const studies::WhatIfOutcome outcome = studies::run_whatif(request);
  const whatif::Result& r = outcome.result;
  if (progress && progress->tty()) progress->finish("whatif: done");

  if (vm.count("json"))
    std::cout << reports::json_text(reports::whatif_json(outcome), 2) << "\n";
  else
    print_text(std::cout, r, outcome.options);
  return r.interrupted ? calibrate::InterruptGuard::exit_code() : kExitOk;
}

}  // namespace tiersim::app
