#pragma once
// The report's serving section (Vega-Lite charts, reports/charts.hpp): latency against offered load
// (p50 and p99 of TTFT and of the time per output token, one line per configuration, from the
// runs `tiersim capacity --db` stores at every rate it tries) and the latency distribution of
// each configuration, drawn through the percentiles its run reports.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/charts.hpp"
#include "store/results_store.hpp"

namespace tiersim::reports {

// One configuration's serving runs, by offered rate.
struct ServingSeries {
  std::string label;                      // the scenario name
  std::vector<const store::StoredRun*> by_rate;  // ascending offered_rate_requests_per_s
};

// Serving runs that fit, grouped by scenario name (in the order first seen), each sorted by rate.
std::vector<ServingSeries> serving_series(const std::vector<store::StoredRun>& runs);

// The run a configuration's CDF shows: the highest rate whose SLO attainment is at least 90%
// (every run when none reports an attainment), else its lowest rate.
const store::StoredRun* cdf_run(const ServingSeries& s);

// A configuration's latency targets (its capacity search's, store::CapacityStudy).
struct SloTargets {
  std::optional<double> ttft_s;
  std::optional<double> tpot_s;
};

// The horizontal SLO lines of a latency-vs-load chart: one row {target, what} per distinct target
// among `targets` (the value read from `pick`), naming the configurations it applies to unless
// all share it. Empty when none has one.
nlohmann::json slo_rules(const std::map<std::string, SloTargets>& targets, const char* what,
                         std::optional<double> SloTargets::*pick);

// "<h2>Serving</h2>" and the charts; empty when no run is a serving run. `targets` by
// configuration label (serving_series' labels) draws each one's TTFT and TPOT targets as rules
// on the charts against load.
std::vector<ReportPart> serving_chart_parts(const std::vector<store::StoredRun>& runs,
                                            const std::map<std::string, SloTargets>& targets = {});

}  // namespace tiersim::reports
