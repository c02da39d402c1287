// tiersim capacity: how much a configuration holds. For a training scenario, the largest model of
// its shape family that fits, per ZeRO strategy (plain data parallel, ZeRO-3, ZeRO-Offload,
// ZeRO-Infinity to host DRAM, ZeRO-Infinity to NVMe: model/training_memory.hpp zero_strategies);
// for a serving scenario, the highest arrival rate it sustains within its latency targets
// (study/serving_capacity.hpp).
#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "app/command.hpp"
#include "config/scenario_loader.hpp"
#include "model/errors.hpp"
#include "model/training_memory.hpp"
#include "reports/run_output.hpp"
#include "sim/workloads/traits.hpp"
#include "sim/workloads/serving/metrics.hpp"
#include "store/capacity_studies.hpp"
#include "store/results_store.hpp"
#include "study/serving_capacity.hpp"

namespace po = boost::program_options;

namespace tiersim::app {

namespace {

std::string rate_text(double rate) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", rate);
  return buf;
}

// The serving half of `tiersim capacity`: the rate search, its points as a table (or JSON), the
// run at capacity with its cost per served request.
struct ServingArgs {
  std::string file;
  // The file read once and its keys resolved once: each rate is one more typed setting.
  std::shared_ptr<const config::ScenarioSource> source;
  config::LoadOptions load;
  capacity::SearchOptions search;
  bool json = false, quiet = false;
  std::string db;
};

// The search as one configuration in the results database: the run at the sustained rate stored
// again with the capacity metrics search_serving_capacity set on it after the progress callback
// had stored it, and the study naming it (or, when no rate is sustained, the lowest rate tried:
// the zero-load probe when there was one), so that a report shows one entry per configuration.
void record_study(store::ResultsStore& store, const std::string& sweep, const Scenario& base,
                  const capacity::SearchOptions& search, const capacity::ServingCapacity& c) {
  store::CapacityStudy st;
  st.sweep = sweep;
  st.scenario_name = base.name;
  st.attainment_pct = search.criteria.attainment_pct;
  if (search.criteria.check_slo && base.serving.slo_ttft_s > 0)
    st.slo_ttft_s = base.serving.slo_ttft_s;
  if (search.criteria.check_slo && base.serving.slo_tbt_s > 0) st.slo_tbt_s = base.serving.slo_tbt_s;
  st.stability = search.criteria.check_stability;
  st.found = c.found;
  st.unbounded = c.unbounded;
  st.zero_load_miss = c.zero_load_miss;
  if (c.found) st.rate_requests_per_s = c.rate_per_s;
  if (std::isfinite(c.failing_rate_per_s)) st.failing_rate_requests_per_s = c.failing_rate_per_s;
  st.limit = c.limit;
  const capacity::RatePoint* entry = c.at_capacity();
  if (entry) {
    st.entry_run = store.save(entry->scenario, entry->result, TIERSIM_VERSION, sweep);
  } else if (!c.points.empty()) {
    entry = &*std::min_element(c.points.begin(), c.points.end(), [](const auto& x, const auto& y) {
      return x.rate_per_s < y.rate_per_s;
    });
    st.entry_run = store.find(entry->scenario.hash, sweep);
  }
  save_capacity_study(store.database(), st);
}

int serving_capacity(const Scenario& base, const ServingArgs& a) {
  const auto at_rate = [&](double rate) {
    config::LoadOptions load = a.load;
    load.settings.emplace_back("workload.arrival_rate=" + rate_text(rate));
    return a.source->load(load);
  };
  std::unique_ptr<store::ResultsStore> store;
  if (!a.db.empty()) store = std::make_unique<store::ResultsStore>(a.db);
  const std::string sweep = "capacity:" + base.name;
  const auto progress = [&](const capacity::RatePoint& p) {
    if (store) store->save(p.scenario, p.result, TIERSIM_VERSION, sweep);
    if (a.quiet) return;
    std::fprintf(stderr, "capacity: %.4g requests/s: %s\n", p.rate_per_s,
                 p.meets ? "sustained" : p.why_not.c_str());
  };
  const capacity::ServingCapacity c =
      capacity::search_serving_capacity(base, at_rate, a.search, progress);
  std::vector<const capacity::RatePoint*> by_rate;
  for (const auto& p : c.points) by_rate.push_back(&p);
  std::stable_sort(by_rate.begin(), by_rate.end(),
                   [](auto* x, auto* y) { return x->rate_per_s < y->rate_per_s; });
  const ServingWorkload& w = base.serving;
  const capacity::RatePoint* best = c.at_capacity();
  if (store) record_study(*store, sweep, base, a.search, c);

  if (a.json) {
    nlohmann::json j;
    j["scenario"] = base.name;
    j["criteria"] = {{"attainment_pct", a.search.criteria.attainment_pct},
                     {"slo", a.search.criteria.check_slo},
                     {"stability", a.search.criteria.check_stability},
                     {"tolerance", a.search.tolerance}};
    if (w.slo_ttft_s > 0) j["criteria"]["slo_ttft_s"] = w.slo_ttft_s;
    if (w.slo_tbt_s > 0) j["criteria"]["slo_tbt_s"] = w.slo_tbt_s;
    j["found"] = c.found;
    j["unbounded"] = c.unbounded;
    j[std::string(sim::metric::kCapacityRequestsPerS.name)] =
        c.found ? nlohmann::json(c.rate_per_s) : nlohmann::json();
    j["failing_rate_requests_per_s"] = std::isfinite(c.failing_rate_per_s)
                                           ? nlohmann::json(c.failing_rate_per_s)
                                           : nlohmann::json();
    j["limit"] = c.limit;
    j["zero_load_miss"] = c.zero_load_miss;
    j["points"] = nlohmann::json::array();
    for (const auto* p : by_rate) {
      nlohmann::json m = nlohmann::json::object();
      for (const auto& x : p->result.metrics) m[x.name] = x.value;
      j["points"].push_back({{"rate_requests_per_s", p->rate_per_s},
                             {"sustained", p->meets},
                             {"why_not", p->why_not},
                             {"fits", p->result.fits},
                             {"metrics", m}});
    }
    j["at_capacity"] = best ? reports::to_json(best->scenario, best->result) : nlohmann::json();
    std::cout << reports::json_text(j, 2) << "\n";
    return kExitOk;
  }

  std::printf("serving capacity of %s: the highest arrival rate with", base.name.c_str());
  if (!a.search.criteria.check_slo) {
    std::printf(" the scenario's latency targets ignored (--no-slo)");
  } else if (w.slo_ttft_s > 0 || w.slo_tbt_s > 0) {
    std::printf(" %.4g%% of requests within", a.search.criteria.attainment_pct);
    if (w.slo_ttft_s > 0) std::printf(" TTFT %.4g s", w.slo_ttft_s);
    if (w.slo_ttft_s > 0 && w.slo_tbt_s > 0) std::printf(" and");
    if (w.slo_tbt_s > 0) std::printf(" TPOT %.4g s", w.slo_tbt_s);
  } else {
    std::printf(" no latency target (the scenario gives no workload.slo_ttft or slo_tbt)");
  }
  std::printf("%s\n", a.search.criteria.check_stability ? ", and a stable queue" : "");
  std::printf("%12s %8s %10s %10s %10s %10s %10s  %s\n", "requests/s", "attain%", "ttft_p50_s",
              "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "drift_s", "verdict");
  for (const auto* p : by_rate) {
    const auto& r = p->result;
    if (!r.fits) {
      std::printf("%12.4g %8s %10s %10s %10s %10s %10s  %s\n", p->rate_per_s, "-", "-", "-", "-",
                  "-", "-", p->why_not.c_str());
      continue;
    }
    std::printf("%12.4g %8.1f %10.4g %10.4g %10.4g %10.4g %10.3g  %s\n", p->rate_per_s,
                r.find(sim::metric::kSloAttainmentPct).value_or(100), r.get(sim::metric::kTtftP50S),
                r.get(sim::metric::kTtftP99S), r.get(sim::metric::kTpotP50S),
                r.get(sim::metric::kTpotP99S), r.get(sim::metric::kQueueDelayDriftS),
                p->meets ? "sustained" : p->why_not.c_str());
  }
  if (!best) {
    std::printf("capacity: none: %s\n", c.limit.c_str());
    return kExitOk;
  }
  if (c.unbounded)
    std::printf("capacity: at least %.4g requests/s (every rate tried was sustained)\n",
                c.rate_per_s);
  else
    std::printf("capacity: %.4g requests/s (%.4g fails: %s)\n", c.rate_per_s, c.failing_rate_per_s,
                c.limit.c_str());
  const auto& r = best->result;
  std::printf("at capacity: %.4g requests/s served, %.4g%% within the targets", c.rate_per_s,
              r.find(sim::metric::kSloAttainmentPct).value_or(100));
  if (r.has(sim::metric::kUsdPerRequestAtCapacity))
    std::printf(", %.4g USD per served request (%.4g USD/h)",
                r.get(sim::metric::kUsdPerRequestAtCapacity), r.get(sim::metric::kUsdPerHour));
  std::printf(", bottleneck %s\n", r.bottleneck.c_str());
  if (store)
    std::printf("stored %zu runs in %s as sweep '%s'\n", c.points.size(), a.db.c_str(),
                sweep.c_str());
  return kExitOk;
}

}  // namespace

int cmd_capacity(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: tiersim capacity FILE [options]\n\n"
      "Training scenario: finds the largest model of its shape family (workload.capacity_shape)\n"
      "that fits GPU memory, host DRAM and NVMe, for each ZeRO strategy: plain data parallel,\n"
      "ZeRO-3, ZeRO-Offload (stage 2: fp16 parameters on every GPU, gradients and optimizer\n"
      "states in host DRAM), ZeRO-Infinity CPU (stage 3, all states and activation checkpoints\n"
      "in host DRAM) and ZeRO-Infinity NVMe (parameters and optimizer states on NVMe).\n\n"
      "Serving scenario: finds the highest arrival rate (workload.arrival_rate) the configuration\n"
      "sustains: --attainment percent of requests within the scenario's workload.slo_ttft and\n"
      "workload.slo_tbt, and a stable queue (the queueing delay of the run's last third of\n"
      "requests no more than half the mean delay above its middle third). Doubles the rate from\n"
      "the scenario's until one fails (or halves until one passes), then bisects to --tolerance.\n"
      "When the first rate fails, a run at a millionth of it (no queueing) comes next: if even\n"
      "that misses the targets, no rate meets them, and the search stops with that figure.\n"
      "Same seed at every rate. Progress on stderr; prints every rate tried and the cost per\n"
      "served request at capacity. A short run (workload.requests) ends before a queue near its\n"
      "knee builds up and overstates the capacity: raise it until the answer settles.\n\n"
      "options");
  std::string file, data_dir;
  std::vector<std::string> sets;
  ServingArgs serving;
  opts.add_options()("help,h", "show this help")("file", po::value<std::string>(&file),
                                                 "training or serving scenario file")(
      "data-dir", po::value<std::string>(&data_dir), "folder holding catalog/")(
      "set", po::value<std::vector<std::string>>(&sets), "override one scenario key, key=value")(
      "attainment", po::value<double>(&serving.search.criteria.attainment_pct)->default_value(90),
      "serving: percent of requests that must meet every SLO (DistServe's 90)")(
      "tolerance", po::value<double>(&serving.search.tolerance)->default_value(0.02),
      "serving: stop when the failing rate is within this fraction above the sustained one")(
      "start", po::value<double>(&serving.search.start_rate_per_s)->default_value(0),
      "serving: first rate tried, requests/s (0 = the scenario's workload.arrival_rate)")(
      "no-stability", "serving: judge by the SLO attainment alone, not the queue's drift")(
      "no-slo", "serving: ignore the scenario's latency targets; the highest rate with a stable "
                "queue (the offline-throughput view)")(
      "json", "serving: print one JSON object (criteria, every rate tried, the run at capacity)")(
      "db", po::value<std::string>(&serving.db),
      "serving: store every run in this results database as sweep 'capacity:NAME' (`tiersim "
      "report` draws latency against load from them)")("quiet,q", "serving: no progress on stderr");
  const po::variables_map vm =
      parse_command_line(args, opts, po::options_description(), "file", 1);
  if (vm.count("help") || file.empty()) {
    std::cout << opts
              << "\nexamples:\n  tiersim capacity scenarios/training/dgx2-zero3.yaml\n"
                 "  tiersim capacity scenarios/serving/opt30b-chatbot-6xl40s.yaml\n"
                 "  tiersim capacity scenarios/serving/opt30b-chatbot-6xl40s.yaml --set "
                 "workload.requests=1000 --attainment 99 --json\n";
    return vm.count("help") ? kExitOk : kExitUsage;
  }
  const config::CatalogOnce catalogs(data_dir);
  config::LoadOptions load;
  load.overrides = sets;
  load.data_dir = data_dir;
  load.catalogs = &catalogs;
  const Scenario base = config::load_scenario(file, load);
  if (has_capability(base, kCapArrivalRate)) {
    serving.file = file;
    serving.source = std::make_shared<const config::ScenarioSource>(file);
    serving.load = load;
    serving.json = vm.count("json") > 0;
    serving.quiet = vm.count("quiet") > 0;
    serving.search.criteria.check_stability = vm.count("no-stability") == 0;
    serving.search.criteria.check_slo = vm.count("no-slo") == 0;
    if (!serving.search.criteria.check_slo && !serving.search.criteria.check_stability)
      throw Error("--no-slo and --no-stability together leave no criterion");
    if (!(serving.search.start_rate_per_s >= 0) || !std::isfinite(serving.search.start_rate_per_s))
      throw Error("--start: expected an arrival rate in requests/s > 0 (0 = the scenario's), got " +
                  std::to_string(serving.search.start_rate_per_s));
    if (!(serving.search.criteria.attainment_pct > 0 &&
          serving.search.criteria.attainment_pct <= 100))
      throw Error("--attainment: expected a percentage in (0, 100], got " +
                  std::to_string(serving.search.criteria.attainment_pct));
    return serving_capacity(base, serving);
  }
  if (!has_capability(base, kCapZeroTraining))
    throw Error(file + ": capacity needs a training or a serving workload (workload.kind)");
  const ExecutionModel em;
  std::printf("%-20s %12s %8s %8s  %s\n", "strategy", "max_params_b", "layers", "hidden",
              "next step is limited by");
  for (const auto& st : zero_strategies()) {
    Scenario s = base;
    apply_strategy(s, st);
    const bool needs_nvme = st.params == Tier::kNvme || st.optimizer == Tier::kNvme;
    if (needs_nvme && s.hardware.nvme.count <= 0) {
      std::printf("%-20s %12s %8s %8s  %s\n", st.name, "-", "-", "-", "no NVMe drives");
      continue;
    }
    const CapacitySearch r = largest_trainable(s, em);
    if (!r.found) {
      std::printf("%-20s %12s %8s %8s  %s\n", st.name, "none", "-", "-", r.limit.c_str());
      continue;
    }
    std::printf("%-20s %12.2f %8d %8d  %s\n", st.name, r.params / 1e9, r.model.layers,
                r.model.hidden, r.limit.c_str());
  }
  return kExitOk;
}

}  // namespace tiersim::app
