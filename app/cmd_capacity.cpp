// tiersim capacity: how much a configuration holds. For a training scenario, the largest model of
// its shape family that fits, per ZeRO strategy (plain data parallel, ZeRO-3, ZeRO-Offload,
// ZeRO-Infinity to host DRAM, ZeRO-Infinity to NVMe: model/training_memory.hpp zero_strategies);
// for a serving scenario, the highest arrival rate it sustains within its latency targets
// (study/serving_capacity.hpp).
#include <boost/program_options.hpp>
#include <algorithm>
#include <limits>
#include <string>
#include <cstdio>
#include <iostream>

#include "app/command.hpp"
#include "common/format.hpp"
#include "model/capacity.hpp"
#include "sim/economics.hpp"
#include "model/errors.hpp"
#include "model/training_memory.hpp"
#include "reports/run_output.hpp"
#include "reports/study_json.hpp"
#include "sim/workloads/names.hpp"
#include "sim/workloads/serving/metrics.hpp"
#include "study/serving_capacity.hpp"
#include "study/studies.hpp"

namespace po = boost::program_options;

namespace tiersim::app {

namespace {

// The least DRAM the scenario's platform ships with (every memory channel of every socket holding
// the smallest DIMM its vendor sells; model/capacity.hpp dram_population), under which DRAM sized
// to the need (hardware.host.size_dram) never goes, beside the DRAM the runs are priced with.
void print_dram_floor(const Scenario& s) {
  const HostSpec& h = s.hardware.host;
  HostSpec unbounded = h;  // the floor itself, not capped by the catalog's most
  unbounded.dram_gb = std::numeric_limits<double>::infinity();
  const DramPopulation floor = dram_population(0, unbounded);
  std::string floor_text;
  if (floor.dimm_gib > 0) {
    floor_text = format::number(floor.dram_gb) + " GB (" + dimm_layout_text(h, floor.dimm_gib) +
                 ", the smallest sold for it)";
  } else {
    floor_text = "not known (the catalog gives no memory_channels or min_dimm_gib)";
  }
  if (sim::dram_sized_to_need(s))
    std::printf("host %s: DRAM sized to the need, at least the platform's floor, %s, at most "
                "%s GB\n",
                h.name.c_str(), floor_text.c_str(), format::number(h.dram_gb).c_str());
  else
    std::printf("host %s: DRAM %s GB as set (hardware.host.dram_gb); the platform's floor is %s\n",
                h.name.c_str(), format::number(h.dram_gb).c_str(), floor_text.c_str());
}

// The serving half's text: every rate tried and the run at capacity with its cost per served
// request.
int print_serving(const studies::CapacityOutcome& o, const capacity::SearchOptions& search,
                  const std::string& db) {
  const Scenario& base = o.base;
  const capacity::ServingCapacity& c = o.rates;
  const ServingWorkload& w = base.serving;
  const capacity::RatePoint* best = c.at_capacity();
  std::printf("serving capacity of %s: the highest arrival rate with", base.name.c_str());
  if (!search.criteria.check_slo) {
    std::printf(" the scenario's latency targets ignored (--no-slo)");
  } else if (w.slo_ttft_s > 0 || w.slo_tbt_s > 0) {
    std::printf(" %.4g%% of requests within", search.criteria.attainment_pct);
    if (w.slo_ttft_s > 0) std::printf(" TTFT %.4g s", w.slo_ttft_s);
    if (w.slo_ttft_s > 0 && w.slo_tbt_s > 0) std::printf(" and");
    if (w.slo_tbt_s > 0) std::printf(" TPOT %.4g s", w.slo_tbt_s);
  } else {
    std::printf(" no latency target (the scenario gives no workload.slo_ttft or slo_tbt)");
  }
  std::printf("%s\n", search.criteria.check_stability ? ", and a stable queue" : "");
  std::printf("%12s %8s %10s %10s %10s %10s %10s  %s\n", "requests/s", "attain%", "ttft_p50_s",
              "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "drift_s", "verdict");
  for (const std::size_t i : o.by_rate) {
    const capacity::RatePoint* p = &c.points[i];
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
    // Refused for memory at every rate: what would hold it (std::cout is synchronised with
    // the printf lines above).
    reports::print_closest_fits(std::cout, o.closest);
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
    std::printf(", %s per served request (%s)",
                format::usd(r.get(sim::metric::kUsdPerRequestAtCapacity)).c_str(),
                format::quantity(r.get(sim::metric::kUsdPerHour), "USD/h").c_str());
  std::printf(", bottleneck %s", r.bottleneck.c_str());
  if (!r.bottleneck.empty()) std::printf(" (%s)", sim::resource_label(r.bottleneck).c_str());
  std::printf("\n");
  // How many requests the targets and the stability test counted at each rate.
  if (r.find(sim::metric::kWarmupRequests).value_or(0) > 0)
    std::printf("measured: %.0f of the %.0f requests of each run (the first %.0f are the warm-up, "
                "workload.warmup_requests)\n",
                r.get(sim::metric::kRequestsMeasured), r.get(sim::metric::kRequestsCompleted),
                r.get(sim::metric::kWarmupRequests));
  if (!db.empty())
    std::printf("stored %zu runs in %s as sweep '%s'\n", c.points.size(), db.c_str(),
                o.store_sweep.c_str());
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
  studies::CapacityRequest request;
  opts.add_options()("help,h", "show this help")("file", po::value<std::string>(&file),
                                                 "training or serving scenario file")(
      "data-dir", po::value<std::string>(&data_dir), "folder holding catalog/")(
      "set", po::value<std::vector<std::string>>(&sets), "override one scenario key, key=value")(
      "attainment", po::value<double>(&request.search.criteria.attainment_pct)->default_value(90),
      "serving: percent of requests that must meet every SLO (DistServe's 90)")(
      "tolerance", po::value<double>(&request.search.tolerance)->default_value(0.02),
      "serving: stop when the failing rate is within this fraction above the sustained one")(
      "start", po::value<double>(&request.search.start_rate_per_s)->default_value(0),
      "serving: first rate tried, requests/s (0 = the scenario's workload.arrival_rate)")(
      "no-stability", "serving: judge by the SLO attainment alone, not the queue's drift")(
      "no-slo", "serving: ignore the scenario's latency targets; the highest rate with a stable "
                "queue (the offline-throughput view)")(
      "json", "print one JSON object (serving: criteria, every rate tried, the run at capacity; "
              "training: the largest model per strategy)")(
      "db", po::value<std::string>(&request.db),
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
  request.file = file;
  request.sets = sets;
  request.data_dir = data_dir;
  request.tool_version = TIERSIM_VERSION;
  request.search.criteria.check_stability = vm.count("no-stability") == 0;
  request.search.criteria.check_slo = vm.count("no-slo") == 0;
  const bool quiet = vm.count("quiet") > 0;
  request.on_point = [quiet](const capacity::RatePoint& p) {
    if (quiet) return;
    std::fprintf(stderr, "capacity: %.4g requests/s: %s\n", p.rate_per_s,
                 p.meets ? "sustained" : p.why_not.c_str());
  };
  const studies::CapacityOutcome outcome = studies::run_capacity(request);
  if (vm.count("json")) {
    std::cout << reports::json_text(reports::capacity_json(outcome, request.search), 2) << "\n";
    return kExitOk;
  }
  if (outcome.serving) {
    const int rc = print_serving(outcome, request.search, request.db);
    print_dram_floor(outcome.base);
    return rc;
  }
  std::printf("%-20s %12s %8s %8s  %s\n", "strategy", "max_params_b", "layers", "hidden",
              "next step is limited by");
  for (const auto& st : outcome.strategies) {
    const char* name = st.strategy.c_str();
    if (st.no_nvme) {
      std::printf("%-20s %12s %8s %8s  %s\n", name, "-", "-", "-", "no NVMe drives");
      continue;
    }
    const CapacitySearch& r = st.search;
    if (!r.found) {
      std::printf("%-20s %12s %8s %8s  %s\n", name, "none", "-", "-", r.limit.c_str());
      continue;
    }
    std::printf("%-20s %12.2f %8d %8d  %s\n", name, r.params / 1e9, r.model.layers,
                r.model.hidden, r.limit.c_str());
  }
  print_dram_floor(outcome.base);
  return kExitOk;
}

}  // namespace tiersim::app
