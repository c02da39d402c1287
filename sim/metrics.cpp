#include "sim/metrics.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/breakdown.hpp"
#include "sim/workloads/checkpoint/metrics.hpp"
#include "sim/workloads/inference/metrics.hpp"
#include "sim/workloads/io/metrics.hpp"
#include "sim/workloads/serving/metrics.hpp"
#include "sim/workloads/training/metrics.hpp"

namespace tiersim::sim {

namespace {

// Every metric a run can report, in the order `tiersim schema --metrics` and
// scenarios/README.md list them: per-workload groups first, then energy and cost
// (sim/economics.cpp), which every workload with the energy-and-cost capability adds.
const std::vector<MetricDecl> kMetrics = {
    metric::kTotalS,
    metric::kPrefillS,
    metric::kTtftS,
    metric::kDecodeS,
    metric::kDecodeSPerToken,
    metric::kThroughputTokensPerS,
    metric::kGeneratedTokens,
    metric::kWeightWaitS,
    metric::kCpuAttentionS,
    metric::kAllgatherBytes,
    metric::kWeightsBytes,
    metric::kWeightsGpuFraction,
    metric::kWeightsCpuFraction,
    metric::kWeightsNvmeFraction,
    metric::kPageCacheBytes,
    metric::kNvmeReadGbpsModel,
    metric::kPhaseS,
    metric::kRequestsCompleted,
    metric::kWarmupRequests,
    metric::kRequestsMeasured,
    metric::kRequestsPerS,
    metric::kGoodputRequestsPerS,
    metric::kSloAttainmentPct,
    metric::kOfferedRateRequestsPerS,
    metric::kCapacityRequestsPerS,
    metric::kUsdPerRequestAtCapacity,
    metric::kServersForTraffic,
    metric::kGpusForTraffic,
    metric::kUsdPerRequestForTraffic,
    metric::kQueueDelayDriftS,
    metric::kQueueDelayMeanS,
    metric::kQueueDelayP50S,
    metric::kQueueDelayP99S,
    metric::kQueueDelayMaxS,
    metric::kTtftMeanS,
    metric::kTtftP50S,
    metric::kTtftP90S,
    metric::kTtftP99S,
    metric::kTtftMaxS,
    metric::kTbtMeanS,
    metric::kTbtP50S,
    metric::kTbtP90S,
    metric::kTbtP99S,
    metric::kTbtMaxS,
    metric::kTpotMeanS,
    metric::kTpotP50S,
    metric::kTpotP90S,
    metric::kTpotP99S,
    metric::kE2eMeanS,
    metric::kE2eP50S,
    metric::kE2eP90S,
    metric::kE2eP99S,
    metric::kE2eMaxS,
    metric::kMeanRequestsInSystem,
    metric::kKvCacheBlocks,
    metric::kKvCacheMeanPct,
    metric::kKvCacheMaxPct,
    metric::kPreemptions,
    metric::kSwappedRequests,
    metric::kSwapOutBytes,
    metric::kSwapInBytes,
    metric::kKvPrefixLookupBlocks,
    metric::kKvHitPct,
    metric::kTtftPrefixHitMeanS,
    metric::kTtftPrefixMissMeanS,
    metric::kKvHitGpuPct,
    metric::kKvHitHostPct,
    metric::kKvHitNvmePct,
    metric::kKvRecomputeAvoidedTokens,
    metric::kKvGpuTierBlocks,
    metric::kKvHostTierBlocks,
    metric::kKvNvmeTierBlocks,
    metric::kKvHostTierBytes,
    metric::kKvNvmeTierBytes,
    metric::kKvHostReadBytes,
    metric::kKvNvmeReadBytes,
    metric::kKvHostWriteBytes,
    metric::kKvNvmeWriteBytes,
    metric::kNvmeDriveWritesPerDay,
    metric::kNvmeDwpdRating,
    metric::kNvmeDwpdUsedPct,
    metric::kIterations,
    metric::kReplicas,
    metric::kReadGbps,
    metric::kWriteGbps,
    metric::kReadGibps,
    metric::kWriteGibps,
    metric::kArrayGbpsModel,
    metric::kCheckpointS,
    metric::kCheckpointBytes,
    metric::kNvmeDirectWriteGbpsModel,
    metric::kNvmeBufferedWriteGbpsModel,
    metric::kMaxParamsB,
    metric::kMaxParamsLayers,
    metric::kMaxParamsHidden,
    metric::kGpuMemoryBytes,
    metric::kCpuMemoryBytes,
    metric::kNvmeMemoryBytes,
    metric::kParamsB,
    metric::kIterationS,
    metric::kSamplesPerS,
    metric::kTokensPerS,
    metric::kAchievedTflopsPerGpu,
    metric::kOptimizerStepS,
    metric::kForwardBackwardS,
    metric::kCpuAdamS,
    metric::kParamGatherWaitS,
    metric::kDataParallel,
    metric::kCheckpointStallS,
    metric::kCheckpointOverheadPct,
    metric::kDramSizedGb,
    metric::kEnergyJ,
    metric::kEnergyJGpu,
    metric::kEnergyJCpu,
    metric::kEnergyJDram,
    metric::kEnergyJNvme,
    metric::kEnergyJPlatform,
    metric::kEnergyJFans,
    metric::kEnergyJPsuLoss,
    metric::kEnergyJPrefill,
    metric::kEnergyJDecode,
    metric::kEnergyJIoWait,
    metric::kEnergyJIdle,
    metric::kEnergyJOther,
    metric::kFacilityEnergyJ,
    metric::kAvgPowerW,
    metric::kDcAvgPowerW,
    metric::kFacilityAvgPowerW,
    metric::kGpuAvgPowerW,
    metric::kEnergyJPerToken,
    metric::kGpuEnergyJPerToken,
    metric::kFacilityEnergyJPerToken,
    metric::kTokensPerKwh,
    metric::kEnergyJPerRequest,
    metric::kCapexUsd,
    metric::kCapexUsdGpu,
    metric::kCapexUsdPlatform,
    metric::kCapexUsdDram,
    metric::kCapexUsdDrives,
    metric::kCapexUsdPerHour,
    metric::kEnergyUsdPerHour,
    metric::kUsdPerHour,
    metric::kUsdPerMillionTokens,
    metric::kUsdPerRequest,
    metric::kTokensPerUsd,
    metric::kReturnPerDollar,
    metric::kRentUsdPerHour,
    metric::kRentUsdPerMillionTokens,
    metric::kRentUsdPerRequest,
    metric::kBuyBreakevenDutyCycle,
};

}  // namespace

const std::vector<MetricDecl>& metric_declarations() {
  return kMetrics;
}

const MetricDecl* find_metric(std::string_view name) {
  const auto it = std::find_if(kMetrics.begin(), kMetrics.end(),
                               [&](const MetricDecl& m) { return m.name == name; });
  if (it != kMetrics.end()) return &*it;
  return is_phase_metric_name(name) ? &metric::kPhaseS : nullptr;
}

const MetricDecl& metric_decl(std::string_view name) {
  if (const MetricDecl* m = find_metric(name)) return *m;
  throw std::logic_error("metric '" + std::string(name) +
                         "' is not declared in sim/metrics.cpp (every metric needs a unit and a "
                         "description there)");
}

std::vector<std::string> metric_names(std::initializer_list<MetricDecl> metrics) {
  std::vector<std::string> names;
  names.reserve(metrics.size());
  for (const MetricDecl& m : metrics) names.emplace_back(m.name);
  return names;
}

std::string metrics_markdown() {
  std::string out = "| metric | unit | workloads | meaning |\n|---|---|---|---|\n";
  for (const auto& m : kMetrics) {
    out += "| `" + std::string(m.name) + "` | " + (m.unit.empty() ? "-" : std::string(m.unit)) +
           " | " + std::string(m.workloads) + " | " + std::string(m.description) + " |\n";
  }
  return out;
}

}  // namespace tiersim::sim
