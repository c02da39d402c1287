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

// Which KV tier a tier-size curve varies.
enum class KvTier { kHost, kNvme };

// One tier-size curve: runs of one configuration that differ only in the size of one KV tier
// (workload.kv_host_cache or workload.kv_nvme_cache: the same resolved scenario otherwise, the
// offered rate included), ascending in that size. Only curves of two sizes or more are kept.
struct TierCurve {
  KvTier tier = KvTier::kHost;
  std::string label;  // "<scenario> at R requests/s[, DRAM tier X GB | NVMe tier X GB]"
  std::vector<const store::StoredRun*> by_size;
};

// The curves among `runs` (serving runs with prefix caching that fit and report their tier sizes,
// kv_host_tier_bytes and kv_nvme_tier_bytes), in the order their configurations are first seen.
std::vector<TierCurve> tier_curves(const std::vector<store::StoredRun>& runs);

// "<h2>KV cache tiers</h2>", the prefix hit rate (any tier, and the share the varied tier serves)
// and the TTFT p50 and p99 against the size of the DRAM tier, then of the NVMe tier, where the
// database holds such curves (a sweep over the tier size at a fixed rate:
// scenarios/sweeps/llama3-70b-multiturn-kv-tiers.yaml); empty otherwise.
std::vector<ReportPart> tier_size_chart_parts(const std::vector<store::StoredRun>& runs);

}  // namespace tiersim::reports
