// tiersim compare: run several configurations and put their speed, energy and cost side by side,
// with ratios against the first (the baseline). Inputs are scenario files or comparison files
// (format in scenarios/README.md, "Comparison files").
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <optional>

#include "app/command.hpp"
#include "config/compare_file.hpp"
#include "config/economics_sources.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "sim/economics.hpp"
#include "reports/run_output.hpp"
#include "sim/simulate.hpp"
#include "store/results_store.hpp"
#include "common/format.hpp"

namespace po = boost::program_options;

namespace tiersim::app {

namespace {

using config::Comparison;
using config::VariantSpec;

// A finished variant.
struct Row {
  std::string name;
  std::string note;
  std::optional<Scenario> scenario;
  sim::RunResult result;
  std::string error;  // the model could not simulate it (message); the table goes on
};

std::string fmt(double v) { return format::table(v); }

std::string unit_of(const std::vector<Row>& rows, const std::string& metric) {
  for (const auto& r : rows)
    for (const auto& m : r.result.metrics)
      if (m.name == metric) return m.unit;
  return "";
}

void print_table(std::ostream& os, const Comparison& cmp, const std::vector<Row>& rows) {
  const Row& base = rows.front();
  os << "comparison " << (cmp.name.empty() ? "(command line)" : cmp.name) << ": "
     << rows.size() << " configurations, ratios against the baseline '" << base.name << "'\n";
  if (!cmp.description.empty()) os << cmp.description << "\n";
  os << "\n";
  std::size_t col = 16;
  for (const auto& r : rows) col = std::max(col, r.name.size() + 2);
  // Rent-versus-buy rows only where some configuration names a cloud instance, so that other
  // comparisons read as before.
  std::vector<std::string> metrics = sim::comparison_metrics();
  for (const auto& m : sim::rent_metrics())
    if (std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.result.has(m); }))
      metrics.push_back(m);
  std::size_t metric_w = 26;
  for (const auto& m : metrics) metric_w = std::max(metric_w, m.size() + 2);
  constexpr std::size_t kUnitW = 30;
  os << pad("metric", metric_w) << pad("unit", kUnitW);
  for (const auto& r : rows) os << pad(r.name, col);
  os << "\n" << pad("fits", metric_w) << pad("", kUnitW);
  for (const auto& r : rows) os << pad(!r.error.empty() ? "error" : r.result.fits ? "yes" : "NO", col);
  os << "\n";
  for (const auto& metric : metrics) {
    os << pad(metric, metric_w) << pad(unit_of(rows, metric), kUnitW);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i].result;
      std::string cell = "-";
      if (const auto v = r.find(metric)) {
        cell = fmt(*v);
        if (const auto b = base.result.find(metric); i > 0 && b && *b != 0)
          cell += " (" + fmt(*v / *b) + "x)";
      }
      os << pad(cell, col);
    }
    os << "\n";
  }
  os << "\n";
  for (const auto& r : rows) {
    if (!r.error.empty()) os << r.name << ": error: " << r.error << "\n";
    if (!r.result.fits) os << r.name << ": does not fit: " << r.result.shortfall << "\n";
    if (r.scenario) {
      const std::string note = sim::cost_note(*r.scenario);
      if (!note.empty()) os << r.name << ": " << note << "\n";
    }
    if (!r.note.empty()) os << r.name << ": " << r.note << "\n";
  }
  os << "energy per token is IT energy at the node's AC input (GPUs, CPUs, DRAM, drives, platform,\n"
        "fans, PSU loss) per generated token;\n"
        "cost per token bills facility energy (IT x PUE); tiersim compare --sources lists inputs\n";
}

// The inputs of energy and cost: the scenario's, with the DRAM energy and cost counted when it
// was sized to the need (sim/economics.hpp, dram_sizing) rather than the catalog's dram_gb.
nlohmann::json economics_sources(const Row& r) {
  nlohmann::json src = config::economics_sources(*r.scenario);
  if (const std::string note = sim::dram_note(*r.scenario, r.result); !note.empty())
    src["power"]["hardware.host.dram_gb"] = {
        {"value", r.result.get(sim::metric::kDramSizedGb)}, {"unit", "GB"}, {"source", note}};
  return src;
}

void print_sources(std::ostream& os, const std::vector<Row>& rows) {
  for (const auto& r : rows) {
    if (!r.scenario) continue;
    const nlohmann::json src = economics_sources(r);
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
  }
}

nlohmann::json to_json(const Comparison& cmp, const std::vector<Row>& rows) {
  nlohmann::json j;
  j["comparison"] = cmp.name;
  if (!cmp.description.empty()) j["description"] = cmp.description;
  j["baseline"] = rows.front().name;
  j["metrics"] = sim::comparison_metrics();
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json v;
    v["name"] = r.name;
    v["fits"] = r.error.empty() && r.result.fits;
    if (!r.error.empty()) v["error"] = r.error;
    if (!r.result.fits) v["shortfall"] = r.result.shortfall;
    if (!r.note.empty()) v["note"] = r.note;
    if (r.scenario) {
      v["scenario"] = r.scenario->name;
      v["scenario_hash"] = r.scenario->hash;
      v["file"] = r.scenario->file;
      const std::string note = sim::cost_note(*r.scenario);
      if (!note.empty()) v["cost_note"] = note;
      if (const std::string dram = sim::dram_note(*r.scenario, r.result); !dram.empty())
        v["dram_note"] = dram;
      v["sources"] = economics_sources(r);
    }
    nlohmann::json metrics = nlohmann::json::object(), units = nlohmann::json::object();
    for (const auto& m : r.result.metrics) {
      metrics[m.name] = m.value;
      units[m.name] = m.unit;
    }
    v["metrics"] = metrics;
    v["units"] = units;
    nlohmann::json ratios = nlohmann::json::object();
    for (const auto& [name, ratio] : sim::metric_ratios(r.result, rows.front().result))
      ratios[name] = ratio;
    v["ratios"] = ratios;
    if (!r.result.bottleneck.empty()) v["bottleneck"] = r.result.bottleneck;
    variants.push_back(std::move(v));
  }
  j["variants"] = variants;
  return j;
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
  std::vector<std::string> files, sets;
  std::string data_dir, db_path;
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(),
      "override one scenario key in every configuration, e.g. --set economics.usd_per_kwh=0.2 "
      "(repeatable)")("json", "print one JSON object (includes the sources of every input)")(
      "sources", "after the table, list where each price and power figure came from")(
      "data-dir", po::value<std::string>(&data_dir),
      "folder holding catalog/ (default: $TIERSIM_DATA_DIR or the source tree's scenarios/)")(
      "db", po::value<std::string>(&db_path),
      "store every configuration's result in this SQLite results database (for tiersim report)");
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>(&files));
  const po::variables_map vm = parse_command_line(args, opts, hidden, "files", -1);
  if (vm.count("help")) {
    std::cout << opts
              << "\nexamples:\n  tiersim compare scenarios/cost/opt30b-l40s.yaml --sources --db "
                 "tiersim-results.db\n"
                 "  # rent versus buy (economics.cloud_instance in the scenarios): rent_usd_per_hour,\n"
                 "  # rent_usd_per_million_tokens, buy_breakeven_duty_cycle\n"
                 "  tiersim compare scenarios/cost/llama3-70b-rent-vs-buy.yaml --sources\n";
    return kExitOk;
  }
  if (files.empty()) throw Error("missing FILE (see tiersim compare --help)");

  const Comparison cmp = config::read_compare_inputs(files);

  std::vector<Row> rows;
  bool failed = false;
  const config::CatalogOnce catalogs(data_dir);
  for (const auto& spec : cmp.variants) {
    config::LoadOptions load;
    load.overrides = sets;
    load.data_dir = data_dir;
    load.catalogs = &catalogs;
    Row row;
    row.note = spec.note;
    row.scenario = config::load_variant(spec, load);
    row.name = spec.name.empty() ? row.scenario->name : spec.name;
    try {
      sim::SimOptions sim_opts;
      // The store keeps one decode step's timeline for the report's Gantt chart.
      sim_opts.trace = !db_path.empty();
      row.result = sim::simulate(*row.scenario, sim_opts);
      // The variant's own name only: without one the report falls back to the scenario name.
      if (!db_path.empty())
        store::ResultsStore(db_path).save(*row.scenario, row.result, TIERSIM_VERSION, "",
                                            store::OnDuplicate::kReplace, spec.name);
    } catch (const ModelError& e) {
      // One configuration the model cannot express should not hide the others.
      row.error = e.what();
      row.result.fits = false;
      failed = true;
    }
    rows.push_back(std::move(row));
  }

  if (vm.count("json")) {
    std::cout << reports::json_text(to_json(cmp, rows), 2) << "\n";
  } else {
    print_table(std::cout, cmp, rows);
    if (vm.count("sources")) print_sources(std::cout, rows);
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace tiersim::app
