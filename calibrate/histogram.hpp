#pragma once
// Latency histogram with log-linear buckets (as HdrHistogram and fio): constant memory and O(1)
// recording however many I/Os a point runs, percentiles within ~0.8% relative error.
#include <cstdint>
#include <vector>

namespace tiersim::calibrate {

class LatencyHistogram {
 public:
  // 7 significant bits: 64 buckets per power of two, i.e. at most 1/128 relative bucket half-width.
  static constexpr int kSignificantBits = 7;

  LatencyHistogram();
  void record_ns(std::uint64_t value_ns) {
    ++counts_[index_of(value_ns)];
    ++count_;
    sum_ns_ += static_cast<double>(value_ns);
    if (value_ns < min_ns_) min_ns_ = value_ns;
    if (value_ns > max_ns_) max_ns_ = value_ns;
  }
  void merge(const LatencyHistogram& other);
  void clear();

  std::uint64_t count() const { return count_; }
  // The value at percentile `pct` (0..100) in nanoseconds: the middle of the bucket holding the
  // ceil(pct/100 * count)-th smallest sample, clamped to the exact min and max. 0 when empty.
  double percentile_ns(double pct) const;
  double mean_ns() const { return count_ ? sum_ns_ / static_cast<double>(count_) : 0.0; }
  double min_ns() const { return count_ ? static_cast<double>(min_ns_) : 0.0; }
  double max_ns() const { return count_ ? static_cast<double>(max_ns_) : 0.0; }

  static std::size_t index_of(std::uint64_t v) {
    constexpr std::uint64_t kLinear = 1ull << kSignificantBits;
    if (v < kLinear) return static_cast<std::size_t>(v);
    const int msb = 63 - __builtin_clzll(v);
    const int shift = msb - kSignificantBits + 1;
    return static_cast<std::size_t>(shift) * (kLinear / 2) + static_cast<std::size_t>(v >> shift);
  }

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  double sum_ns_ = 0;
  std::uint64_t min_ns_;
  std::uint64_t max_ns_ = 0;
};

}  // namespace tiersim::calibrate
