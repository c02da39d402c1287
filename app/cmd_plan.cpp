// tiersim plan: branch-and-bound search for the best configuration meeting constraints.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/command.hpp"
#include "config/catalog.hpp"
#include "config/yaml_reader.hpp"
#include "model/errors.hpp"
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

// The resolved scenario with the plan's figures on top: `tiersim run FILE` reproduces them.
void write_scenario(const fs::path& path, const plan::PlanSpec& spec, const plan::Candidate& c,
                    const std::vector<std::string>& metrics) {
  std::ofstream out(path);
  if (!out) throw IoError("cannot write '" + path.string() + "'");
  out << "# Found by `tiersim plan` (" << spec.name << "): " << c.point.label << "\n";
  for (const auto& m : metrics)
    out << "#   " << m << ": " << fmt(plan::metric_value(c.scenario, c.result, m)) << "\n";
  out << c.scenario.resolved_yaml;
  if (!c.scenario.resolved_yaml.empty() && c.scenario.resolved_yaml.back() != '\n') out << "\n";
  if (!out) throw IoError("failed writing '" + path.string() + "'");
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
      "db", po::value<std::string>(&db),
      "also store every simulated point in this results database under the plan's name "
      "(`tiersim report` can plot the front)")(
      "threads,j", po::value<int>(&threads)->default_value(0), "threads (0 = every hardware thread)")(
      "no-prune", "simulate every point that fits (brute force; for checking the pruning)")(
      "data-dir", po::value<std::string>(&data_dir),
      "folder holding catalog/ (default: $TIERSIM_DATA_DIR or the source tree's scenarios/)");
  po::options_description hidden;
  hidden.add_options()("plan", po::value<std::string>(&file));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("plan", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\nexample:\n  tiersim plan scenarios/plans/opt66b-10tps.yaml --out plan-out --db tiersim-results.db\n";
    return kExitOk;
  }
  if (file.empty()) throw Error("missing PLAN.yaml (see tiersim plan --help)");

  const plan::PlanSpec spec = plan::parse_plan_file(file);
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
  const plan::PlanResult r = plan::run_plan(spec, catalog, po_);
  const auto& st = r.stats;

  std::cout << "plan " << spec.name << (spec.description.empty() ? "" : ": " + spec.description) << "\n";
  std::cout << "  considered " << st.considered << " configurations\n";
  std::cout << "  invalid (cannot be built or modelled): " << st.invalid << "\n";
  std::cout << "  pruned by capacity (does not fit, no simulation): " << st.pruned_capacity << "\n";
  for (const auto& [m, count] : st.pruned_constraint)
    std::cout << "  pruned by " << (m == "capex_usd" ? "budget" : "bound") << " on " << m << ": " << count << "\n";
  std::cout << "  pruned by bound against the incumbents" << (spec.pareto.empty() ? "" : " and the Pareto front")
            << ": " << st.pruned_objective << "\n";
  std::cout << "  simulated " << st.simulated << ", feasible " << st.feasible << "; " << st.wall_s << " s\n";
  if (st.bound_violations)
    std::cout << "  WARNING: " << st.bound_violations << " simulated values beat their optimistic bound; "
              << "pruning may have been unsafe (please report)\n";

  std::vector<std::string> shown = {spec.objective.metric};
  for (const auto& c : spec.constraints)
    if (std::find(shown.begin(), shown.end(), c.metric) == shown.end()) shown.push_back(c.metric);
  for (const auto& g : spec.pareto)
    if (std::find(shown.begin(), shown.end(), g.metric) == shown.end()) shown.push_back(g.metric);

  if (!r.no_capacity.empty()) {
    std::cout << "  sustaining no arrival rate within the targets:\n";
    for (const auto& c : r.no_capacity)
      std::cout << "    " << c.point.label << ": " << c.why_not << "\n";
  }

  if (out_dir.empty()) out_dir = spec.name + "-plan";
  fs::create_directories(out_dir);
  if (r.best.empty()) {
    std::cout << "no configuration meets the constraints\n";
    return kExitFailure;
  }
  std::cout << "\nbest (" << (spec.objective.sense == plan::Sense::kMinimize ? "lowest " : "highest ")
            << spec.objective.metric << "):\n";
  for (std::size_t k = 0; k < r.best.size(); ++k) {
    const auto& c = r.best[k];
    const fs::path path = fs::path(out_dir) / ("best-" + std::to_string(k + 1) + ".yaml");
    write_scenario(path, spec, c, shown);
    std::cout << "  " << k + 1 << ". " << c.point.label << "\n     ";
    for (const auto& m : shown) std::cout << m << "=" << fmt(plan::metric_value(c.scenario, c.result, m)) << "  ";
    std::cout << "\n     -> " << path.string() << "\n";
  }
  if (!spec.pareto.empty()) {
    std::cout << "\nPareto front (" << spec.pareto[0].metric << " vs " << spec.pareto[1].metric << "):\n";
    for (std::size_t k = 0; k < r.pareto.size(); ++k) {
      const auto& c = r.pareto[k];
      const fs::path path = fs::path(out_dir) / ("pareto-" + std::to_string(k + 1) + ".yaml");
      write_scenario(path, spec, c, shown);
      std::cout << "  " << fmt(plan::metric_value(c.scenario, c.result, spec.pareto[0].metric)) << "  "
                << fmt(plan::metric_value(c.scenario, c.result, spec.pareto[1].metric)) << "  " << c.point.label
                << "  -> " << path.string() << "\n";
    }
  }
  return kExitOk;
}

}  // namespace tiersim::app
