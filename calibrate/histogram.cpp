#include "calibrate/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tiersim::calibrate {

namespace {

constexpr std::uint64_t kLinear = 1ull << LatencyHistogram::kSignificantBits;
constexpr std::size_t kBuckets = (64 - LatencyHistogram::kSignificantBits + 1) * (kLinear / 2) + kLinear;

// Middle of bucket `index` (inverse of index_of).
double bucket_mid(std::size_t index) {
  if (index < kLinear) return static_cast<double>(index);
  // index = shift * kLinear/2 + sub with sub in [kLinear/2, kLinear).
  const std::size_t half = kLinear / 2;
  const std::size_t shift = index / half - 1;
  const std::size_t sub = index - shift * half;
  const double lo = std::ldexp(static_cast<double>(sub), static_cast<int>(shift));
  const double width = std::ldexp(1.0, static_cast<int>(shift));
  return lo + (width - 1.0) / 2.0;
}

}  // namespace

LatencyHistogram::LatencyHistogram()
    : counts_(kBuckets, 0), min_ns_(std::numeric_limits<std::uint64_t>::max()) {}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
  min_ns_ = std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

void LatencyHistogram::clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  sum_ns_ = 0;
  min_ns_ = std::numeric_limits<std::uint64_t>::max();
  max_ns_ = 0;
}

double LatencyHistogram::percentile_ns(double pct) const {
  if (count_ == 0) return 0.0;
  pct = std::clamp(pct, 0.0, 100.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(pct / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      return std::clamp(bucket_mid(i), static_cast<double>(min_ns_), static_cast<double>(max_ns_));
    }
  }
  return static_cast<double>(max_ns_);
}

}  // namespace tiersim::calibrate
