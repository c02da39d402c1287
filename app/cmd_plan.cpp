// tiersim plan: branch-and-bound search for the best configuration meeting constraints.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "app/command.hpp"
#include "config/catalog.hpp"
#include "config/scenario_loader.hpp"
#include "config/yaml_reader.hpp"
#include "model/errors.hpp"
#include "model/files.hpp"
#include "model/progress.hpp"
#include "sim/metrics.hpp"
#include "store/results_store.hpp"
#include "store/sweep_tables.hpp"
#include "study/planner.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace tiersim::app {
namespace {

std::string fmt(std::optional<double> v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

// The resolved scenario with the plan's figures on top: `tiersim run FILE` reproduces them. It is
// renamed after what it is (`name` is the first key of a resolved scenario), so that it does not
// carry the plan's base scenario's name with other contents.
void write_scenario(const fs::path& path, const std::string& name, const plan::PlanSpec& spec,
                    const plan::Candidate& c, const std::vector<std::string>& metrics,
                    const OutputOptions& output) {
  std::ostringstream out;
  out << "# Found by `tiersim plan` (" << spec.name << "): " << c.point.label << "\n";
  for (const auto& e : c.equivalent) out << "# the same configuration as: " << e << "\n";
  for (const auto& e : c.same_timings) out << "# the same timings, with hardware it does not use: " << e << "\n";
  for (const auto& m : metrics)
    out << "#   " << m << ": " << fmt(plan::metric_value(c.scenario, c.result, m)) << "\n";
  // Paths (a trace, a device profile) absolute: relative ones were relative to the base file's
  // folder and named another file, or none, from the output folder.
  std::string yaml = config::resolved_yaml_with_absolute_paths(c.scenario);
  if (const auto eol = yaml.find('\n'); yaml.rfind("name: ", 0) == 0 && eol != std::string::npos)
    yaml.replace(0, eol, "name: " + name);
  out << yaml;
  if (!yaml.empty() && yaml.back() != '\n') out << "\n";
  write_output_file(path.string(), out.str(), "plan scenario", output);
}

// best-1.yaml, pareto-2.yaml: short names; manifest.txt says what each holds (the axis values
// made names of 200 characters).
fs::path output_path(const std::string& dir, const std::string& kind, std::size_t k) {
  return fs::path(dir) / (kind + "-" + std::to_string(k + 1) + ".yaml");
}

// manifest.txt in the output folder: each file written, the point it holds, its figures and the
// points listed with it.
void write_manifest(const std::string& dir, const plan::PlanSpec& spec, const plan::PlanResult& r,
                    const std::vector<std::string>& metrics, const OutputOptions& output) {
  std::ostringstream m;
  m << "# tiersim plan " << spec.name << ": the scenario files written here and what each holds\n";
  const auto entries = [&](const std::vector<plan::Candidate>& cs, const std::string& kind) {
    for (std::size_t k = 0; k < cs.size(); ++k) {
      const plan::Candidate& c = cs[k];
      m << output_path("", kind, k).string() << ": " << c.point.label << "\n ";
      for (const auto& name : metrics)
        m << " " << name << "=" << fmt(plan::metric_value(c.scenario, c.result, name));
      m << "\n";
      for (const auto& e : c.equivalent) m << "  same configuration: " << e << "\n";
      for (const auto& e : c.same_timings)
        m << "  same timings, hardware it does not use: " << e << "\n";
    }
  };
  entries(r.best, "best");
  entries(r.pareto, "pareto");
  write_output_file((fs::path(dir) / "manifest.txt").string(), m.str(), "plan manifest", output);
}

std::vector<std::string> shown_metrics(const plan::PlanSpec& spec) {
  std::vector<std::string> shown = {spec.objective.metric};
  for (const auto& c : spec.constraints)
    if (std::find(shown.begin(), shown.end(), c.metric) == shown.end()) shown.push_back(c.metric);
  for (const auto& g : spec.pareto)
    if (std::find(shown.begin(), shown.end(), g.metric) == shown.end()) shown.push_back(g.metric);
  return shown;
}

// --json: the same content as the text output, and the same files written.
int print_plan_json(const plan::PlanSpec& spec, const plan::PlanResult& r, std::string out_dir,
                    const OutputOptions& output) {
  const auto& st = r.stats;
  const std::vector<std::string> shown = shown_metrics(spec);
  nlohmann::json j;
  j["plan"] = spec.name;
  if (!spec.description.empty()) j["description"] = spec.description;
  j["objective"] = {{"metric", spec.objective.metric},
                    {"sense", spec.objective.sense == plan::Sense::kMinimize ? "minimize" : "maximize"}};
  nlohmann::json pruned = nlohmann::json::object();
  for (const auto& [m, count] : st.pruned_constraint) pruned[m] = count;
  j["stats"] = {{"considered", st.considered},       {"invalid", st.invalid},
                {"equivalent", st.equivalent},       {"pruned_capacity", st.pruned_capacity},
                {"pruned_constraint", pruned},       {"pruned_objective", st.pruned_objective},
                {"simulated", st.simulated},         {"feasible", st.feasible},
                {"bound_violations", st.bound_violations}};
  if (out_dir.empty()) out_dir = spec.name + "-plan";
  make_output_dir(out_dir, "the output folder");
  auto entry = [&](const plan::Candidate& c, const std::string& kind, std::size_t k) {
    const fs::path path = output_path(out_dir, kind, k);
    write_scenario(path, spec.name + "-" + kind + "-" + std::to_string(k + 1), spec, c, shown, output);
    nlohmann::json e;
    e["label"] = c.point.label;
    e["overrides"] = c.point.overrides;
    e["equivalent"] = c.equivalent;
    e["same_timings"] = c.same_timings;
    e["scenario_hash"] = c.scenario.hash;
    e["file"] = path.string();
    nlohmann::json m = nlohmann::json::object();
    for (const auto& name : shown)
      if (const auto v = plan::metric_value(c.scenario, c.result, name)) m[name] = *v;
    e["metrics"] = m;
    return e;
  };
  nlohmann::json best = nlohmann::json::array(), front = nlohmann::json::array();
  for (std::size_t k = 0; k < r.best.size(); ++k) best.push_back(entry(r.best[k], "best", k));
  for (std::size_t k = 0; k < r.pareto.size(); ++k) front.push_back(entry(r.pareto[k], "pareto", k));
  write_manifest(out_dir, spec, r, shown, output);
  j["best"] = best;
  if (!spec.pareto.empty()) {
    j["pareto_metrics"] = {spec.pareto[0].metric, spec.pareto[1].metric};
    j["pareto"] = front;
  }
  nlohmann::json none = nlohmann::json::array();
  for (const auto& c : r.no_capacity) none.push_back({{"label", c.point.label}, {"why", c.why_not}});
  j["no_capacity"] = none;
  std::cout << j.dump(2) << "\n";
  return r.best.empty() ? kExitFailure : kExitOk;
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim plan PLAN.yaml [options]\n\n"
      "Searches a space of hardware and policy choices (format in scenarios/plans/README.md) for\n"
      "the configurations that meet the plan's constraints and are best on its objective, and the\n"
      "Pareto front of two metrics. Points are pruned without simulation by capacity, budget and\n"
      "an optimistic roofline bound; the survivors are simulated best-bound first. Each result is\n"
      "written as a resolved scenario file that `tiersim run` reproduces.\n\n"
      "options");
  std::string file, out_dir, db, data_dir;
  int threads = 0;
  opts.add_options()("help,h", "show this help")(
      "out,o", po::value<std::string>(&out_dir), "folder for the scenario files (default: <plan name>-plan)")(
      "force", "replace files in --out that tiersim did not write (by default they are refused)")(
      "db", po::value<std::string>(&db),
      "also store every simulated point in this results database under the plan's name "
      "(`tiersim report` can plot the front)")(
      "threads,j", po::value<int>(&threads)->default_value(0), "threads (0 = every hardware thread)")(
      "no-prune", "simulate every point that fits (brute force; for checking the pruning)")(
      "json", "print the result as JSON (stats, best, Pareto front, each with its metrics, "
      "equivalent points and file) instead of text")(
      "progress", "report progress on stderr after each batch of simulations (default: only "
      "when stderr is a terminal)")(
      "data-dir", po::value<std::string>(&data_dir),
      "folder holding catalog/ (default: $TIERSIM_DATA_DIR or the source tree's scenarios/)");
  po::options_description hidden;
  hidden.add_options()("plan", po::value<std::string>(&file));
  const po::variables_map vm = parse_command_line(args, opts, hidden, "plan", 1);
  if (vm.count("help")) {
    std::cout << opts
              << "\nexamples:\n  tiersim plan scenarios/plans/opt66b-10tps.yaml --out plan-out --db "
                 "tiersim-results.db\n"
                 "  tiersim plan scenarios/plans/opt66b-10tps.yaml --out plan-out --json --progress\n"
                 "\nPoints whose resolved scenarios are identical (same hash; e.g. an I/O path with\n"
                 "no weights on NVMe) are simulated once and listed together, and so are points\n"
                 "with the same timings that add hardware the run does not use (drives with the\n"
                 "weights on the GPU), under the cheaper. Files are named best-K.yaml and\n"
                 "pareto-K.yaml, the scenario inside <plan>-best-K (or -pareto-K), and\n"
                 "manifest.txt lists what each holds.\n";
    return kExitOk;
  }
  if (file.empty()) throw Error("missing PLAN.yaml (see tiersim plan --help)");

  const plan::PlanSpec spec = plan::parse_plan_file(file);
  OutputOptions output;
  output.force = vm.count("force") > 0;
  const config::Catalog catalog = config::Catalog::load(data_dir);
  std::unique_ptr<sweep::SweepStore> store;
  if (!db.empty()) store = std::make_unique<sweep::SweepStore>(db);
  plan::PlanOptions po_;
  po_.threads = threads;
  po_.prune = vm.count("no-prune") == 0;
  if (store)
    po_.on_simulated = [&](const plan::Candidate& c) {
      sweep::Outcome o;
      o.point = c.point;
      o.status = c.result.fits ? sweep::Status::kSimulated : sweep::Status::kNoFit;
      o.scenario = c.scenario;
      o.result = c.result;
      store->save(o, spec.name, TIERSIM_VERSION);
    };
  const bool json = vm.count("json") > 0;
  std::optional<ProgressLine> progress;
  if (vm.count("progress") || isatty(fileno(stderr))) {
    progress.emplace(std::cerr, isatty(fileno(stderr)) != 0, 0.0);
    po_.on_progress = [&](std::size_t simulated, std::size_t queued) {
      progress->update("plan " + spec.name + ": simulated " + std::to_string(simulated) +
                           ", up to " + std::to_string(queued) + " more queued",
                       /*force=*/true);
    };
  }
  const plan::PlanResult r = plan::run_plan(spec, catalog, po_);
  if (progress && progress->tty()) progress->finish("plan " + spec.name + ": done");
  if (store) {
    // Why each point was rejected, for `tiersim report` (store/sweep_tables.hpp plan_verdicts).
    store->flush();
    store::Database& db = store->results().database();
    store::Transaction tx(db);
    store::clear_plan_verdicts(db, spec.name);
    for (const auto& v : r.verdicts)
      store::record_plan_verdict(db, spec.name, {v.label, v.scenario_hash, v.status, v.reason});
    tx.commit();
  }
  const auto& st = r.stats;
  if (json) return print_plan_json(spec, r, out_dir, output);

  std::cout << "plan " << spec.name << (spec.description.empty() ? "" : ": " + spec.description) << "\n";
  std::cout << "  considered " << st.considered << " configurations\n";
  std::cout << "  invalid (cannot be built or modelled): " << st.invalid << "\n";
  std::cout << "  the same resolved scenario as an earlier point (not re-run): " << st.equivalent << "\n";
  std::cout << "  pruned by capacity (does not fit, no simulation): " << st.pruned_capacity << "\n";
  for (const auto& [m, count] : st.pruned_constraint)
    std::cout << "  pruned by " << (m == sim::metric::kCapexUsd.name ? "budget" : "bound") << " on "
              << m << ": " << count << "\n";
  std::cout << "  pruned by bound against the incumbents" << (spec.pareto.empty() ? "" : " and the Pareto front")
            << ": " << st.pruned_objective << "\n";
  std::cout << "  simulated " << st.simulated << ", feasible " << st.feasible << "; " << st.wall_s << " s\n";
  if (st.bound_violations)
    std::cout << "  WARNING: " << st.bound_violations << " simulated values beat their optimistic bound; "
              << "pruning may have been unsafe (please report)\n";

  const std::vector<std::string> shown = shown_metrics(spec);

  if (!r.no_capacity.empty()) {
    std::cout << "  sustaining no arrival rate within the targets:\n";
    for (const auto& c : r.no_capacity)
      std::cout << "    " << c.point.label << ": " << c.why_not << "\n";
  }

  if (out_dir.empty()) out_dir = spec.name + "-plan";
  make_output_dir(out_dir, "the output folder");
  if (r.best.empty()) {
    std::cout << "no configuration meets the constraints\n";
    return kExitFailure;
  }
  std::cout << "\nbest (" << (spec.objective.sense == plan::Sense::kMinimize ? "lowest " : "highest ")
            << spec.objective.metric << "; ties: lower " << plan::kTieBreak << ", then plan order):\n";
  for (std::size_t k = 0; k < r.best.size(); ++k) {
    const auto& c = r.best[k];
    const fs::path path = output_path(out_dir, "best", k);
    write_scenario(path, spec.name + "-best-" + std::to_string(k + 1), spec, c, shown, output);
    std::cout << "  " << k + 1 << ". " << c.point.label << "\n     ";
    for (const auto& e : c.equivalent) std::cout << "(same configuration: " << e << ")\n     ";
    for (const auto& e : c.same_timings)
      std::cout << "(same timings, hardware it does not use: " << e << ")\n     ";
    for (const auto& m : shown) std::cout << m << "=" << fmt(plan::metric_value(c.scenario, c.result, m)) << "  ";
    std::cout << "\n     -> " << path.string() << "\n";
  }
  write_manifest(out_dir, spec, r, shown, output);
  if (!spec.pareto.empty()) {
    std::cout << "\nPareto front (" << spec.pareto[0].metric << " vs " << spec.pareto[1].metric << "):\n";
    for (std::size_t k = 0; k < r.pareto.size(); ++k) {
      const auto& c = r.pareto[k];
      const fs::path path = output_path(out_dir, "pareto", k);
      write_scenario(path, spec.name + "-pareto-" + std::to_string(k + 1), spec, c, shown, output);
      std::cout << "  " << fmt(plan::metric_value(c.scenario, c.result, spec.pareto[0].metric)) << "  "
                << fmt(plan::metric_value(c.scenario, c.result, spec.pareto[1].metric)) << "  " << c.point.label
                << "  -> " << path.string() << "\n";
    }
  }
  return kExitOk;
}

}  // namespace tiersim::app
