// The `tiersim` Python module's native part (`tiersim._tiersim`). It exposes the same library
// calls the `tiersim` program makes (study/studies.hpp, reports/report_study.hpp) and returns
// results as JSON text built by the same functions (reports/study_json.hpp), which the
// pure-Python wrapper (python/tiersim/__init__.py) turns into plain dicts and lists: exactly the
// objects `tiersim <command> --json` prints, so a notebook and the command line never disagree.
// Every call runs on a worker thread while this one watches for Ctrl-C (run_interruptibly).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/catalog.hpp"
#include "config/catalog_json.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "config/compare_file.hpp"
#include "reports/report_study.hpp"
#include "reports/run_output.hpp"
#include "reports/study_json.hpp"
#include "sim/simulate.hpp"
#include "store/results_store.hpp"
#include "study/studies.hpp"
#include "study/sweep.hpp"

namespace py = pybind11;

namespace tiersim::python {
namespace {

// Reads a scenario from a file (is_file) or from YAML/JSON text.
Scenario load(const std::string& source, bool is_file, const std::vector<std::string>& sets,
              const std::string& data_dir) {
  config::LoadOptions o;
  o.overrides = sets;
  o.data_dir = data_dir;
  return is_file ? config::load_scenario(source, o)
                 : config::load_scenario_text(source, "<dict>", o);
}

// Runs `work` (which polls `stop`) on another thread while this one, holding the GIL only
// between waits, checks for Python signals every `poll`: Ctrl-C (KeyboardInterrupt) sets `stop`,
// waits for the work to wind down (points in flight finish, as for `tiersim sweep`) and raises.
// With the GIL released for the whole call, as before, a signal was only seen at the end.
template <typename T, typename Work>
T run_interruptibly(std::atomic<bool>& stop, Work&& work) {
  auto done = std::async(std::launch::async, std::forward<Work>(work));
  constexpr auto poll = std::chrono::milliseconds(100);
  while (true) {
    {
      py::gil_scoped_release unlocked;
      if (done.wait_for(poll) == std::future_status::ready) break;
    }
    if (PyErr_CheckSignals() != 0) {
      stop = true;
      {
        py::gil_scoped_release unlocked;
        done.wait();
      }
      throw py::error_already_set();
    }
  }
  return done.get();  // rethrows the work's exception
}

// One simulation, stoppable by Ctrl-C: the engine polls the flag (sim::SimOptions::stop), so a
// long serving run stops within a few thousand events instead of running to its end. `trace`
// keeps the timeline a stored run carries (as `tiersim run --db` does).
sim::RunResult simulate_interruptibly(const Scenario& s, bool trace = false) {
  std::atomic<bool> stop{false};
  sim::SimOptions options;
  options.stop = &stop;
  options.trace = trace;
  options.breakdown = true;  // the time breakdown, as tiersim run --json has it
  return run_interruptibly<sim::RunResult>(stop, [&] { return sim::simulate(s, options); });
}

// One scenario: the `tiersim run --json` object (with `closest_fits` under a refusal, and its
// `accuracy`); stored in `db` as `tiersim run --db` stores it.
std::string run(const std::string& source, bool is_file, const std::vector<std::string>& sets,
                const std::string& data_dir, const std::string& db) {
  const Scenario s = load(source, is_file, sets, data_dir);
  const sim::RunResult r = simulate_interruptibly(s, !db.empty());
  if (!db.empty()) store::ResultsStore(db).save(s, r, TIERSIM_VERSION);
  const auto accuracy = reports::run_accuracy_of(s, data_dir);
  return reports::json_text(reports::run_json(s, r, studies::closest_fits(s, r), accuracy));
}

// The resolved scenario: name, hash and canonical YAML (every catalog value inlined).
std::string resolve(const std::string& source, bool is_file, const std::vector<std::string>& sets,
                    const std::string& data_dir) {
  const Scenario s = load(source, is_file, sets, data_dir);
  return reports::json_text(nlohmann::json{{"name", s.name},
                                       {"hash", s.hash},
                                       {"workload", to_string(s.kind)},
                                       {"resolved_yaml", s.resolved_yaml}});
}

// The inputs of compare, sensitivity, breakeven and whatif: files (scenarios or comparison files)
// and texts (dicts as JSON), read as `tiersim compare FILE...` reads its files.
using Sources = std::vector<std::pair<std::string, bool>>;
config::Comparison comparison_of(const Sources& sources) {
  std::vector<config::CompareInput> inputs;
  for (const auto& [source, is_file] : sources) inputs.push_back({source, is_file, "<dict>"});
  return config::read_compare_inputs(inputs);
}

// A request of a study over a comparison (compare, sensitivity, breakeven, whatif) with what
// they all take filled in, as the program fills it: the comparison read from `sources`, the --set
// overrides of every configuration and the data folder.
template <typename Request>
Request comparison_request(const Sources& sources, const std::vector<std::string>& sets,
                           const std::string& data_dir) {
  Request request;
  request.comparison = comparison_of(sources);
  request.sets = sets;
  request.data_dir = data_dir;
  return request;
}

// Files tiersim did not write are refused unless force=True (the program says --force).
OutputOptions output_options(bool force) {
  OutputOptions o;
  o.force = force;
  o.force_hint = "pass force=True to replace it";
  return o;
}

// A study run on its filled request, stoppable by Ctrl-C as run_interruptibly says (the request's
// `stop` is set here): `to_json(run(request))` as text, the object `tiersim <study> --json`
// prints.
template <typename Request, typename Run, typename ToJson>
std::string study_json(Request& request, Run run, ToJson to_json) {
  std::atomic<bool> stop{false};
  request.stop = &stop;
  const auto outcome =
      run_interruptibly<decltype(run(request))>(stop, [&] { return run(request); });
  return reports::json_text(to_json(outcome));
}

// `tiersim compare --json`.
std::string compare(const Sources& sources, const std::vector<std::string>& sets,
                    const std::string& data_dir, const std::string& db) {
  auto request = comparison_request<studies::CompareRequest>(sources, sets, data_dir);
  request.db = db;
  request.tool_version = TIERSIM_VERSION;
  return study_json(request, studies::run_compare, reports::compare_json);
}

// A sweep file, stored into `db` as `tiersim sweep` does (resumable, keyed by scenario hash):
// `tiersim sweep --json`.
std::string sweep(const std::string& file, const std::string& db, int threads,
                  const std::string& data_dir, std::size_t limit) {
  const sweep::SweepSpec spec = sweep::parse_sweep_file(file);
  const config::Catalog catalog = config::Catalog::load(data_dir);
  sweep::SweepStore store(db);
  std::atomic<bool> stop{false};
  sweep::RunOptions ro;
  ro.threads = threads;
  ro.stop = &stop;
  const sweep::SweepSummary sum = run_interruptibly<sweep::SweepSummary>(stop, [&] {
    return sweep::run_sweep(spec, store, catalog, ro, TIERSIM_VERSION, nullptr, limit);
  });
  return reports::json_text(reports::sweep_json(sum, spec.name, db));
}

// `tiersim capacity --json`.
std::string capacity(const std::string& file, const std::vector<std::string>& sets,
                     const std::string& data_dir, double attainment_pct, double tolerance,
                     double start_rate_per_s, bool stability, bool slo, const std::string& db) {
  studies::CapacityRequest request;
  request.file = file;
  request.sets = sets;
  request.data_dir = data_dir;
  request.search.criteria.attainment_pct = attainment_pct;
  request.search.tolerance = tolerance;
  request.search.start_rate_per_s = start_rate_per_s;
  request.search.criteria.check_stability = stability;
  request.search.criteria.check_slo = slo;
  request.db = db;
  request.tool_version = TIERSIM_VERSION;
  return study_json(request, studies::run_capacity, [&](const studies::CapacityOutcome& outcome) {
    return reports::capacity_json(outcome, request.search);
  });
}

// `tiersim plan --json` (and the same scenario files written into `out_dir`).
std::string plan(const std::string& file, const std::string& out_dir, const std::string& db,
                 int threads, bool prune, bool force, const std::string& data_dir) {
  studies::PlanRequest request;
  request.file = file;
  request.out_dir = out_dir;
  request.db = db;
  request.data_dir = data_dir;
  request.tool_version = TIERSIM_VERSION;
  request.threads = threads;
  request.prune = prune;
  request.output = output_options(force);
  return study_json(request, studies::run_plan, reports::plan_json);
}

// `tiersim sensitivity --json`.
std::string sensitivity(const Sources& sources, const std::string& metric, double range,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& variants,
                        const std::vector<std::string>& sets, int threads,
                        const std::string& data_dir) {
  auto request = comparison_request<studies::SensitivityRequest>(sources, sets, data_dir);
  request.metric = metric;
  request.range = range;
  request.inputs = inputs;
  request.variants = variants;
  request.threads = threads;
  return study_json(request, studies::run_sensitivity, reports::sensitivity_json);
}

// `tiersim breakeven --json`.
std::string breakeven(const Sources& sources, const std::string& key,
                      const std::optional<std::pair<double, double>>& between,
                      const std::vector<std::string>& variants, const std::string& metric,
                      const std::string& sense, int points, const std::vector<std::string>& sets,
                      const std::string& data_dir) {
  auto request = comparison_request<studies::BreakEvenRequest>(sources, sets, data_dir);
  request.key = key;
  request.between = between;
  request.variants = variants;
  request.metric = metric;
  request.sense = sense;
  request.points = points;
  return study_json(request, studies::run_breakeven, reports::breakeven_json);
}

// `tiersim whatif --json`. Ctrl-C raises KeyboardInterrupt, as in the other studies (the program
// prints what was found until then instead).
std::string whatif(const Sources& sources, double ratio, const std::vector<std::string>& variants,
                   const std::string& metric, const std::string& sense,
                   const std::vector<std::string>& vary, const std::vector<std::string>& vary_a,
                   const std::vector<std::string>& vary_b, int points, int max_points,
                   const std::vector<std::string>& sets, int threads, const std::string& data_dir) {
  auto request = comparison_request<studies::WhatIfRequest>(sources, sets, data_dir);
  request.ratio = ratio;
  request.variants = variants;
  request.metric = metric;
  request.sense = sense;
  request.vary = vary;
  request.vary_a = vary_a;
  request.vary_b = vary_b;
  request.points = points;
  request.max_points = max_points;
  request.threads = threads;
  return study_json(request, studies::run_whatif, reports::whatif_json);
}

// `tiersim catalog [WHICH] --json`.
std::string catalog(const std::string& which, const std::string& data_dir) {
  config::check_catalog_kind(which);
  return reports::json_text(config::catalog_json(config::Catalog::load(data_dir), which));
}

// `tiersim validate --json`.
std::string validate(const std::string& dir, const std::string& data_dir, double max_mape_pct) {
  std::atomic<bool> stop{false};
  const auto summary = run_interruptibly<validation::ValidationSummary>(
      stop, [&] { return studies::run_validate({dir, data_dir, &stop}); });
  return reports::json_text(reports::validation_json(summary, max_mape_pct));
}

// `tiersim report --json` (and the report written into `out_dir`).
std::string report(const std::string& db, const std::string& out_dir,
                   const std::optional<std::string>& sweep_name, const std::string& title,
                   const std::string& objective, bool validation, bool sensitivity, bool force,
                   const std::string& vendor_dir, const std::string& data_dir) {
  std::atomic<bool> stop{false};
  reports::ReportRequest request;
  request.db = db;
  request.out_dir = out_dir;
  request.has_sweep = sweep_name.has_value();
  request.sweep = sweep_name.value_or("");
  request.title = title;
  request.objective = objective;
  request.validation = validation;
  request.sensitivity = sensitivity;
  request.output = output_options(force);
  request.vendor_dir = vendor_dir;
  request.data_dir = data_dir;
  request.tool_version = TIERSIM_VERSION;
  request.stop = &stop;
  const auto outcome = run_interruptibly<reports::ReportOutcome>(
      stop, [&] { return reports::run_report(request); });
  return reports::json_text(reports::report_json(outcome));
}

// Every stored run of a results database (optionally one sweep's), one flat object per run:
// what a pandas.DataFrame takes directly (metrics as columns).
std::string runs(const std::string& db, const std::optional<std::string>& sweep_name) {
  const store::ResultsStore store(db);
  store::RunFilter f;
  f.sweep = sweep_name;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : store.runs(f)) {
    nlohmann::json j = {{"id", r.id},
                        {"created_at", r.created_at},
                        {"scenario", r.scenario_name},
                        {"scenario_hash", r.scenario_hash},
                        {"workload", r.workload},
                        {"fits", r.fits},
                        {"bottleneck", r.bottleneck},
                        {"sweep", r.sweep}};
    for (const auto& m : r.metrics) j[m.name] = m.value;
    out.push_back(j);
  }
  return reports::json_text(out);
}

}  // namespace
}  // namespace tiersim::python

PYBIND11_MODULE(_tiersim, m) {
  using namespace tiersim;
  m.doc() = "tiersim's native library; use the `tiersim` package, not this module";
  // Errors keep tiersim's message (file, line, key) and its kind.
  static py::exception<Error> error(m, "Error");
  static py::exception<ConfigError> config_error(m, "ConfigError", error.ptr());
  static py::exception<CatalogError> catalog_error(m, "CatalogError", error.ptr());
  static py::exception<ModelError> model_error(m, "ModelError", error.ptr());
  static py::exception<IoError> io_error(m, "IoError", error.ptr());
  static py::exception<StoreError> store_error(m, "StoreError", error.ptr());
  static py::exception<Interrupted> interrupted(m, "Interrupted", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      config_error(e.what());
    } catch (const CatalogError& e) {
      catalog_error(e.what());
    } catch (const ModelError& e) {
      model_error(e.what());
    } catch (const IoError& e) {
      io_error(e.what());
    } catch (const StoreError& e) {
      store_error(e.what());
    } catch (const Interrupted& e) {
      interrupted(e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });
  m.def("run", &python::run, py::arg("source"), py::arg("is_file"), py::arg("sets"),
        py::arg("data_dir"), py::arg("db"));
  m.def("resolve", &python::resolve, py::arg("source"), py::arg("is_file"), py::arg("sets"),
        py::arg("data_dir"));
  m.def("compare", &python::compare, py::arg("sources"), py::arg("sets"), py::arg("data_dir"),
        py::arg("db"));
  m.def("sweep", &python::sweep, py::arg("file"), py::arg("db"), py::arg("threads"),
        py::arg("data_dir"), py::arg("limit"));
  m.def("runs", &python::runs, py::arg("db"), py::arg("sweep"));
  m.def("capacity", &python::capacity, py::arg("file"), py::arg("sets"), py::arg("data_dir"),
        py::arg("attainment_pct"), py::arg("tolerance"), py::arg("start_rate_per_s"),
        py::arg("stability"), py::arg("slo"), py::arg("db"));
  m.def("plan", &python::plan, py::arg("file"), py::arg("out_dir"), py::arg("db"),
        py::arg("threads"), py::arg("prune"), py::arg("force"), py::arg("data_dir"));
  m.def("sensitivity", &python::sensitivity, py::arg("sources"), py::arg("metric"),
        py::arg("range"), py::arg("inputs"), py::arg("variants"), py::arg("sets"),
        py::arg("threads"), py::arg("data_dir"));
  m.def("breakeven", &python::breakeven, py::arg("sources"), py::arg("key"), py::arg("between"),
        py::arg("variants"), py::arg("metric"), py::arg("sense"), py::arg("points"),
        py::arg("sets"), py::arg("data_dir"));
  m.def("whatif", &python::whatif, py::arg("sources"), py::arg("ratio"), py::arg("variants"),
        py::arg("metric"), py::arg("sense"), py::arg("vary"), py::arg("vary_a"),
        py::arg("vary_b"), py::arg("points"), py::arg("max_points"), py::arg("sets"),
        py::arg("threads"), py::arg("data_dir"));
  m.def("catalog", &python::catalog, py::arg("which"), py::arg("data_dir"));
  m.def("validate", &python::validate, py::arg("dir"), py::arg("data_dir"),
        py::arg("max_mape_pct"));
  m.def("report", &python::report, py::arg("db"), py::arg("out_dir"), py::arg("sweep"),
        py::arg("title"), py::arg("objective"), py::arg("validation"), py::arg("sensitivity"),
        py::arg("force"), py::arg("vendor_dir"), py::arg("data_dir"));
  m.attr("__version__") = TIERSIM_VERSION;
}
