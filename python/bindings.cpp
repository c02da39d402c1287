// The `tiersim` Python module's native part (`tiersim._tiersim`). It exposes the same library
// calls the `tiersim` program makes and returns results as JSON text, which the pure-Python
// wrapper (python/tiersim/__init__.py) turns into plain dicts and lists: exactly the objects
// `tiersim run --json` prints, so a notebook and the command line never disagree.
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
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "reports/run_output.hpp"
#include "sim/economics.hpp"
#include "sim/simulate.hpp"
#include "store/results_store.hpp"
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
// long serving run stops within a few thousand events instead of running to its end.
sim::RunResult simulate_interruptibly(const Scenario& s) {
  std::atomic<bool> stop{false};
  sim::SimOptions options;
  options.stop = &stop;
  options.breakdown = true;  // the time breakdown, as tiersim run --json has it
  return run_interruptibly<sim::RunResult>(stop, [&] { return sim::simulate(s, options); });
}

// One scenario: the `tiersim run --json` object.
std::string run(const std::string& source, bool is_file, const std::vector<std::string>& sets,
                const std::string& data_dir) {
  const Scenario s = load(source, is_file, sets, data_dir);
  const sim::RunResult r = simulate_interruptibly(s);
  return reports::json_text(reports::to_json(s, r));
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

// Several configurations side by side: each one's run object plus "ratios" to the first
// (the baseline), for the metrics `tiersim compare` shows.
std::string compare(const std::vector<std::pair<std::string, bool>>& sources,
                    const std::vector<std::string>& sets, const std::string& data_dir) {
  nlohmann::json out = nlohmann::json::array();
  std::vector<sim::RunResult> results;
  for (const auto& [source, is_file] : sources) {
    // Ctrl-C between configurations, and within each simulation.
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    const Scenario s = load(source, is_file, sets, data_dir);
    sim::RunResult r = simulate_interruptibly(s);
    nlohmann::json j = reports::to_json(s, r);
    nlohmann::json ratios = nlohmann::json::object();
    if (!results.empty())
      for (const auto& [name, ratio] : sim::metric_ratios(r, results.front())) ratios[name] = ratio;
    j["ratios"] = ratios;
    out.push_back(j);
    results.push_back(std::move(r));
  }
  return reports::json_text(out);
}

// A sweep file, stored into `db` as `tiersim sweep` does (resumable, keyed by scenario hash).
std::string sweep(const std::string& file, const std::string& db, int threads,
                  const std::string& data_dir) {
  const sweep::SweepSpec spec = sweep::parse_sweep_file(file);
  const config::Catalog catalog = config::Catalog::load(data_dir);
  sweep::SweepStore store(db);
  std::atomic<bool> stop{false};
  sweep::RunOptions ro;
  ro.threads = threads;
  ro.stop = &stop;
  const sweep::SweepSummary sum = run_interruptibly<sweep::SweepSummary>(stop, [&] {
    return sweep::run_sweep(spec, store, catalog, ro, TIERSIM_VERSION, nullptr);
  });
  return reports::json_text(nlohmann::json{{"sweep", spec.name},
                                       {"points", sum.points},
                                       {"simulated", sum.simulated},
                                       {"no_fit", sum.no_fit},
                                       {"skipped", sum.skipped},
                                       {"invalid", sum.invalid},
                                       {"failures", sum.failures},
                                       {"db", db}});
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
    } catch (const Error& e) {
      error(e.what());
    }
  });
  m.def("run", &python::run, py::arg("source"), py::arg("is_file"), py::arg("sets"),
        py::arg("data_dir"));
  m.def("resolve", &python::resolve, py::arg("source"), py::arg("is_file"), py::arg("sets"),
        py::arg("data_dir"));
  m.def("compare", &python::compare, py::arg("sources"), py::arg("sets"), py::arg("data_dir"));
  m.def("sweep", &python::sweep, py::arg("file"), py::arg("db"), py::arg("threads"),
        py::arg("data_dir"));
  m.def("runs", &python::runs, py::arg("db"), py::arg("sweep"));
  m.attr("__version__") = TIERSIM_VERSION;
}
