// tiersim compare: run several configurations and put their speed, energy and cost side by side,
// with ratios against the first (the baseline). Inputs are scenario files or comparison files
// (format in scenarios/README.md, "Comparison files").
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <optional>

#include "app/command.hpp"
#include "common/format.hpp"
#include "config/compare_file.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "reports/notes_section.hpp"
#include "reports/run_output.hpp"
#include "reports/study_json.hpp"
#include "sim/breakdown.hpp"
#include "sim/economics.hpp"
#include "sim/workloads/names.hpp"
#include "study/studies.hpp"

namespace po = boost::program_options;

namespace tiersim::app {

namespace {

using config::Comparison;

using Row = studies::CompareRow;

std::string fmt(double v) { return format::table(v); }

// A value in the table, its unit in the unit column: dollars and bytes in people's forms
// ("$78,816", "1.2 TB"), other numbers grouped ("1,235").
std::string cell_value(double v, const std::string& unit) {
  if (unit.rfind("USD", 0) == 0) return format::usd(v);
  if (unit == "bytes") return format::bytes(v);
  return format::number(v);
}

// Phases shown per configuration in the text table (the rest summed in one line); --json has all.
constexpr std::size_t kComparePhases = 5;

std::string unit_of(const std::vector<Row>& rows, const std::string& metric) {
  for (const auto& r : rows)
    for (const auto& m : r.result.metrics)
      if (m.name == metric) return m.unit;
  return "";
}

// A configuration's error band in its table cell (reports::compact_band), "-" without a scenario.
std::string band_cell(const Row& r) {
  return r.scenario ? reports::compact_band(reports::error_band(r.accuracy)) : "-";
}

void print_table(std::ostream& os, const Comparison& cmp, const std::vector<Row>& rows) {
  const Row& base = rows.front();
  os << "comparison " << (cmp.name.empty() ? "(command line)" : cmp.name) << ": "
     << rows.size() << " configurations, ratios against the baseline '" << base.name << "'\n";
  if (!cmp.description.empty()) os << cmp.description << "\n";
  os << "\n";
  // Rent-versus-buy rows only where some configuration names a cloud instance, so that other
  // comparisons read as before.
  std::vector<std::string> metrics = sim::comparison_metrics();
  for (const auto& m : sim::rent_metrics())
    if (std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.result.has(m); }))
      metrics.push_back(m);
  // Every cell first, then each column as wide as its widest cell: a long value or ratio
  // ("$1,234,567 (0.0123x)") widens its column instead of pushing the rest of the row out of line.
  std::vector<std::vector<std::string>> cells(metrics.size(), std::vector<std::string>(rows.size()));
  for (std::size_t k = 0; k < metrics.size(); ++k)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::string& cell = cells[k][i];
      cell = "-";
      if (const sim::Metric* m = rows[i].result.find_metric(metrics[k])) {
        cell = cell_value(m->value, m->unit);
        if (const auto b = base.result.find(metrics[k]); i > 0 && b && *b != 0)
          cell += " (" + fmt(m->value / *b) + "x)";
      }
    }
  std::vector<std::string> bands(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) bands[i] = band_cell(rows[i]);
  std::vector<std::size_t> col(rows.size(), 10);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    col[i] = std::max({col[i], rows[i].name.size() + 2, bands[i].size() + 2});
    for (std::size_t k = 0; k < metrics.size(); ++k) col[i] = std::max(col[i], cells[k][i].size() + 2);
  }
  std::size_t metric_w = 26;
  for (const auto& m : metrics) metric_w = std::max(metric_w, m.size() + 2);
  std::size_t unit_w = 6;
  for (const auto& m : metrics) unit_w = std::max(unit_w, unit_of(rows, m).size() + 2);
  os << pad("metric", metric_w) << pad("unit", unit_w);
  for (std::size_t i = 0; i < rows.size(); ++i) os << pad(rows[i].name, col[i]);
  os << "\n" << pad("fits", metric_w) << pad("", unit_w);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    os << pad(!r.error.empty() ? "error" : r.result.fits ? "yes" : "NO", col[i]);
  }
  os << "\n";
  // How far to trust each column: its group's out-of-sample error band, and what no published
  // row anchors (tiersim validate; the note under the table says so).
  os << pad("error band", metric_w) << pad("%", unit_w);
  for (std::size_t i = 0; i < rows.size(); ++i) os << pad(bands[i], col[i]);
  os << "\n";
  for (std::size_t k = 0; k < metrics.size(); ++k) {
    os << pad(metrics[k], metric_w) << pad(unit_of(rows, metrics[k]), unit_w);
    for (std::size_t i = 0; i < rows.size(); ++i) os << pad(cells[k][i], col[i]);
    os << "\n";
  }
  // Where each configuration's time goes: its largest phases (sim/breakdown.hpp).
  bool any_phases = false;
  for (const auto& r : rows) any_phases = any_phases || !r.result.phases.empty();
  if (any_phases) {
    os << "\nwhere the time goes (on path: wall time the run waited on this work; busy: the work "
          "summed over every resource)\n";
    for (const auto& r : rows) {
      if (r.result.phases.empty()) continue;
      // total_s where the workload reports it; training's phases cover the iterations it
      // simulates, which is what they add up to.
      const double total_s =
          r.result.find(sim::metric::kTotalS).value_or(sim::phases_span_s(r.result.phases));
      os << r.name << "  (total " << format::duration(total_s) << ", bottleneck "
         << sim::resource_label(r.result.bottleneck) << ")\n";
      reports::print_breakdown(os, r.result, kComparePhases, "  ");
      if (const std::string split = reports::request_split(r.result); !split.empty())
        os << "  " << split << "\n";
    }
  }
  os << "\nerror band: the out-of-sample validation error of each configuration's group "
        "(tiersim validate, leave-one-source-out, never below in-sample; prov. = the group is "
        "provisional); in-sample: every published case of its kind fed a constant it uses, so only "
        "the in-sample error is known; unvalidated: no published measurement runs on it\n";
  for (const auto& r : rows) {
    if (!r.error.empty()) os << r.name << ": error: " << r.error << "\n";
    if (!r.result.fits) os << r.name << ": does not fit: " << r.result.shortfall << "\n";
    if (r.scenario) {
      const std::string note = sim::cost_note(*r.scenario);
      if (!note.empty()) os << r.name << ": " << note << "\n";
      // A profiled drive's calibration warnings and where its price and power came from.
      reports::print_notes(os, r.scenario->notes, r.name + ": ");
    }
    if (!r.note.empty()) os << r.name << ": " << r.note << "\n";
  }
  os << "energy per token is IT energy at the node's AC input (GPUs, CPUs, DRAM, drives, platform,\n"
        "fans, PSU loss) per generated token;\n"
        "cost per token bills facility energy (IT x PUE); tiersim compare --sources lists inputs\n";
}

void print_sources(std::ostream& os, const std::vector<Row>& rows) {
  for (const auto& r : rows) {
    if (!r.scenario) continue;
    const nlohmann::json src = reports::compare_sources_json(r);
    os << "\nsources: " << r.name << "\n";
    for (const auto& [what, q] : src["prices"].items()) {
      os << "  " << pad("price " + what + " (" + q["component"].get<std::string>() + ")", 44);
      if (q["usd"].is_null()) {
        os << "MISSING\n";
        continue;
      }
      os << pad(fmt(q["usd"].get<double>()) + " USD", 14) << pad(q["date"].get<std::string>(), 9)
         << q["source"].get<std::string>() << "\n";
    }
    for (const char* section : {"power", "economics"})
      for (const auto& [key, v] : src[section].items())
        os << "  " << pad(key, 44)
           << pad(fmt(v["value"].get<double>()) + " " + v["unit"].get<std::string>(), 23)
           << v["source"].get<std::string>() << "\n";
    // What the list cannot say: a profiled drive's price and power came from a catalog drive the
    // scenario may not name, or from nowhere; its profile's calibration warnings.
    reports::print_notes(os, r.scenario->notes, "  ");
  }
}

}  // namespace

int cmd_compare(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim compare FILE... [options]\n\n"
      "Runs several configurations and prints speed, energy per token, capex, cost per million\n"
      "tokens and return per dollar side by side, with ratios against the first (the baseline).\n"
      "Each FILE is a scenario or a comparison file (top-level key `compare:`; see\n"
      "scenarios/README.md). Exit code 1 when a configuration could not be simulated.\n\n"
      "options");
  // The options are read straight into the request: each is named once.
  studies::CompareRequest request;
  std::vector<std::string> files;
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>(&request.sets)->composing(),
      "override one scenario key in every configuration, e.g. --set economics.usd_per_kwh=0.2 "
      "(repeatable)")("json", "print one JSON object (includes the sources of every input)")(
      "sources", "after the table, list where each price and power figure came from")(
      "data-dir", po::value<std::string>(&request.data_dir), kDataDirHelp)(
      "db", po::value<std::string>(&request.db),
      "store every configuration's result in this SQLite results database (for tiersim report)");
  const po::variables_map vm = parse_command_line(args, opts, files);
  if (printed_help(
          vm, opts,
          "  tiersim compare scenarios/cost/opt30b-l40s.yaml --sources --db "
          "tiersim-results.db\n"
          "  # rent versus buy (economics.cloud_instance in the scenarios): rent_usd_per_hour,\n"
          "  # rent_usd_per_million_tokens, buy_breakeven_duty_cycle\n"
          "  tiersim compare scenarios/cost/llama3-70b-rent-vs-buy.yaml --sources\n"))
    return kExitOk;
  if (files.empty()) throw Error("missing FILE (see tiersim compare --help)");

  request.comparison = config::read_compare_inputs(files);
  request.tool_version = TIERSIM_VERSION;
  const studies::CompareOutcome outcome = studies::run_compare(request);

  if (vm.count("json")) {
    std::cout << reports::json_text(reports::compare_json(outcome), 2) << "\n";
  } else {
    print_table(std::cout, outcome.comparison, outcome.rows);
    if (vm.count("sources")) print_sources(std::cout, outcome.rows);
  }
  return outcome.failed ? kExitFailure : kExitOk;
}

}  // namespace tiersim::app
