// The KV cache tiers: LRU against Che's approximation on an independent-reference Zipf stream, and
// the write-through / write-back bookkeeping of the hierarchy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <list>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

#include "sim/workloads/serving/kv_tiers.hpp"
#include "sim/workloads/serving/request_stream.hpp"

namespace tiersim::sim_workloads_serving_kv_tiers_test {
namespace {

// Che's approximation of an LRU cache of C items under the independent reference model with
// popularities p (Che, Tung and Wang, "Hierarchical Web caching systems: modeling, design and
// experimental results", IEEE JSAC 20(7), 2002; Fricker, Robert and Roberts, ITC 2012, on its
// accuracy): the characteristic time T solves sum_i (1 - exp(-p_i T)) = C, and the hit ratio is
// sum_i p_i (1 - exp(-p_i T)).
double che_hit_ratio(const std::vector<double>& p, double capacity) {
  auto occupancy = [&](double t) {
    double s = 0;
    for (double x : p) s += 1 - std::exp(-x * t);
    return s;
  };
  double lo = 0, hi = 1;
  while (occupancy(hi) < capacity) hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (occupancy(mid) < capacity ? lo : hi) = mid;
  }
  double h = 0;
  for (double x : p) h += x * (1 - std::exp(-x * lo));
  return h;
}

// The simulated LRU's hit ratio on `requests` draws (after as many for warm-up): a hierarchy with
// only a GPU tier of `capacity` blocks, each draw a one-block prompt looked up, then computed.
double lru_hit_ratio(const std::vector<double>& cdf, std::size_t capacity, int requests,
                     std::uint64_t seed) {
  sim::KvHierarchy kv(capacity, 0, 0, false);
  sim::StreamRandom rng(seed);
  long hits = 0;
  for (int i = 0; i < 2 * requests; ++i) {
    const double u = rng.uniform() * cdf.back();
    const auto item =
        static_cast<std::uint64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    const bool hit = kv.match(&item, 1).gpu == 1;
    kv.computed(&item, 0, 1);
    if (i >= requests && hit) ++hits;
  }
  return double(hits) / requests;
}

// An LRU set of block hashes written the plain way (a std::list in recency order and a map into
// it), independent of the hierarchy's index and lists: the reference its tests compare with.
class PlainLru {
 public:
  explicit PlainLru(std::size_t capacity) : capacity_(capacity) {}
  std::size_t capacity() const { return capacity_; }
  bool contains(std::uint64_t h) const { return where_.count(h) > 0; }
  bool touch(std::uint64_t h) {
    const auto it = where_.find(h);
    if (it == where_.end()) return false;
    order_.splice(order_.begin(), order_, it->second);
    return true;
  }
  // Adds `h` as the most recent (or touches it); returns the block it evicted, `h` itself at
  // capacity 0.
  std::optional<std::uint64_t> insert(std::uint64_t h) {
    if (capacity_ == 0) return h;
    if (touch(h)) return std::nullopt;
    std::optional<std::uint64_t> evicted;
    if (order_.size() >= capacity_) {
      evicted = order_.back();
      where_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(h);
    where_[h] = order_.begin();
    return evicted;
  }

 private:
  std::size_t capacity_;
  std::list<std::uint64_t> order_;  // most recent first
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

}  // namespace

TEST_CASE("LRU on an independent-reference Zipf stream matches Che's approximation",
          "[workloads][serving][kv]") {
  const int items = 5000;
  for (double alpha : {0.8, 1.0}) {
    std::vector<double> p, cdf;
    double sum = 0;
    for (int k = 1; k <= items; ++k) sum += std::pow(k, -alpha);
    for (int k = 1; k <= items; ++k) {
      p.push_back(std::pow(k, -alpha) / sum);
      cdf.push_back((cdf.empty() ? 0.0 : cdf.back()) + p.back());
    }
    for (std::size_t c : {50, 250, 1000}) {
      const double che = che_hit_ratio(p, double(c));
      const double sim = lru_hit_ratio(cdf, c, 400000, 7 + c);
      INFO("alpha " << alpha << " capacity " << c << ": Che " << che << ", LRU " << sim);
      // Che's approximation is within about 1% of the exact LRU hit ratio at these sizes (Fricker
      // et al. 2012); 400,000 draws give a standard error below 0.1%.
      CHECK(sim == Approx(che).margin(0.01));
      // And far from what a cache of half or twice the size would give: the check can fail.
      CHECK(std::abs(che_hit_ratio(p, double(c) / 2) - sim) > 0.02);
      CHECK(std::abs(che_hit_ratio(p, double(c) * 2) - sim) > 0.02);
    }
  }
}

TEST_CASE("a tier evicts its least recently used block", "[workloads][serving][kv]") {
  sim::KvHierarchy kv(2, 0, 0, false);
  const std::uint64_t h[] = {1, 2, 3};
  const auto held = [&](std::uint64_t b) { return kv.match(&b, 1).gpu == 1; };
  kv.computed(h, 0, 2);  // 1, then 2
  kv.computed(h, 0, 1);  // 1 again: the most recent now
  kv.computed(h, 2, 3);  // 3 evicts 2, the least recent
  CHECK(held(1));
  CHECK_FALSE(held(2));
  CHECK(held(3));
  sim::KvHierarchy none(0, 0, 0, false);
  none.computed(h, 0, 1);
  CHECK_FALSE(none.match(h, 1).blocks());
}

TEST_CASE("the block index agrees with a standard map under random inserts and erases",
          "[workloads][serving][kv]") {
  // Small integer keys (a trace's block ids) crowd into runs of neighbouring slots, which is
  // where backward-shift deletion can lose a key; random 64-bit keys exercise the rest.
  for (const std::uint64_t key_range : {std::uint64_t(64), std::uint64_t(5000), ~std::uint64_t(0)}) {
    sim::BlockIndex index;
    std::unordered_map<std::uint64_t, std::uint32_t> reference;
    std::mt19937_64 rng(key_range);
    for (std::uint32_t step = 0; step < 60000; ++step) {
      const std::uint64_t key = key_range == ~std::uint64_t(0) ? rng() : rng() % key_range;
      if (rng() % 3 == 0) {
        index.erase(key);
        reference.erase(key);
      } else if (rng() % 2 == 0) {
        // find_or_insert: stores `step` only where the key is absent, and says which.
        bool inserted = false;
        const std::uint32_t got = index.find_or_insert(key, step, inserted);
        const auto [at, added] = reference.emplace(key, step);
        REQUIRE(inserted == added);
        REQUIRE(got == at->second);
      } else if (!reference.count(key)) {
        index.insert(key, step);
        reference.emplace(key, step);
      }
      if (step % 2999 == 0) {
        REQUIRE(index.size() == reference.size());
        for (const auto& [k, v] : reference) {
          const std::uint32_t* found = index.find(k);
          REQUIRE(found);
          REQUIRE(*found == v);
        }
      }
    }
    REQUIRE(index.size() == reference.size());
    for (std::uint64_t k = 0; k < std::min<std::uint64_t>(key_range, 100000); ++k)
      REQUIRE((index.find(k) != nullptr) == (reference.count(k) > 0));
  }
}

TEST_CASE("write-through copies computed blocks down; write-back on eviction",
          "[workloads][serving][kv]") {
  const std::uint64_t h[] = {11, 12, 13, 14};
  SECTION("write-through") {
    sim::KvHierarchy kv(2, 3, 8, false);
    kv.computed(h, 0, 4);  // the GPU keeps the last two; host the last three; NVMe all four
    auto w = kv.take_writes();
    CHECK(w.host == 4);
    CHECK(w.nvme == 4);
    const auto m = kv.match(h, 4);
    CHECK(m.nvme == 1);  // 11 left the GPU and host
    CHECK(m.host == 1);  // 12 left the GPU
    CHECK(m.gpu == 2);
    CHECK(m.blocks() == 4);
    // Without the NVMe tier the prefix ends at its first block, 11, which only NVMe holds.
    CHECK(kv.match(h, 4, false).blocks() == 0);
    CHECK(kv.match(h + 1, 3, false).blocks() == 3);
    kv.take(h, m);
    w = kv.take_writes();
    CHECK(w.host == 0);  // loads up are not writes down
    CHECK(w.nvme == 0);
  }
  SECTION("write-back") {
    sim::KvHierarchy kv(2, 1, 8, true);
    kv.computed(h, 0, 4);
    auto w = kv.take_writes();
    CHECK(w.host == 2);  // 11 and 12 evicted from the GPU to host
    CHECK(w.nvme == 1);  // 11 evicted from host to NVMe
    const auto m = kv.match(h, 4);
    CHECK(m.nvme == 1);
    CHECK(m.host == 1);
    CHECK(m.gpu == 2);
  }
  SECTION("a miss ends the prefix") {
    sim::KvHierarchy kv(8, 0, 0, false);
    kv.computed(h, 1, 4);
    CHECK(kv.match(h, 4).blocks() == 0);
    kv.computed(h, 0, 1);
    CHECK(kv.match(h, 4).gpu == 4);
  }
}

namespace {

// The hierarchy as three independent LRU sets (PlainLru), each with its own map: what KvHierarchy
// was before its tiers shared one index. The shared index must change nothing that can be seen.
class ThreeSets {
 public:
  ThreeSets(std::size_t gpu, std::size_t host, std::size_t nvme, bool write_back)
      : gpu_(gpu), host_(host), nvme_(nvme), write_back_(write_back) {}
  sim::KvHierarchy::Match match(const std::uint64_t* h, std::size_t n, bool nvme = true) const {
    sim::KvHierarchy::Match m;
    for (std::size_t i = 0; i < n; ++i) {
      if (gpu_.contains(h[i]))
        ++m.gpu;
      else if (host_.contains(h[i]))
        ++m.host;
      else if (nvme && nvme_.contains(h[i]))
        ++m.nvme;
      else
        break;
    }
    return m;
  }
  void take(const std::uint64_t* h, const sim::KvHierarchy::Match& m) {
    for (std::size_t i = 0; i < m.blocks(); ++i) {
      if (gpu_.touch(h[i])) continue;
      if (!host_.touch(h[i])) {
        nvme_.touch(h[i]);
        to_host(h[i], false);
      }
      to_gpu(h[i]);
    }
  }
  void computed(const std::uint64_t* h, std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      to_gpu(h[i]);
      if (!write_back_) {
        if (host_.capacity() > 0 && !host_.contains(h[i])) to_host(h[i], true);
        if (nvme_.capacity() > 0 && !nvme_.contains(h[i])) to_nvme(h[i]);
      }
    }
  }
  long host_writes = 0, nvme_writes = 0;

 private:
  void to_gpu(std::uint64_t h) {
    const auto evicted = gpu_.insert(h);
    if (evicted && write_back_ && host_.capacity() > 0 && !host_.touch(*evicted))
      to_host(*evicted, true);
  }
  void to_host(std::uint64_t h, bool count) {
    if (host_.capacity() == 0) return;
    if (count) ++host_writes;
    const auto evicted = host_.insert(h);
    if (evicted && write_back_ && nvme_.capacity() > 0 && !nvme_.touch(*evicted)) to_nvme(*evicted);
  }
  void to_nvme(std::uint64_t h) {
    if (nvme_.capacity() == 0) return;
    ++nvme_writes;
    nvme_.insert(h);
  }
  PlainLru gpu_, host_, nvme_;
  bool write_back_;
};

}  // namespace

TEST_CASE("the hierarchy's shared index keeps each tier's LRU order, as three sets would",
          "[workloads][serving][kv]") {
  // Conversations of up to 24 blocks over a few hundred distinct blocks, tiers of 0-60 blocks:
  // every tier evicts often, and cascades of write-back evictions run through all three.
  long checked = 0;  // blocks of the prefixes compared
  for (const bool write_back : {false, true}) {
    for (const auto& caps : std::vector<std::array<std::size_t, 3>>{
             {8, 20, 60}, {0, 12, 40}, {16, 0, 30}, {10, 25, 0}, {0, 0, 5}, {3, 3, 3}}) {
      INFO("write_back " << write_back << " capacities " << caps[0] << " " << caps[1] << " "
                         << caps[2]);
      sim::KvHierarchy kv(caps[0], caps[1], caps[2], write_back);
      ThreeSets ref(caps[0], caps[1], caps[2], write_back);
      std::mt19937_64 rng(caps[0] * 1000 + caps[1] * 10 + caps[2] + write_back);
      std::vector<std::vector<std::uint64_t>> conversations(8);
      for (auto& c : conversations) c.push_back(rng());  // a distinct first block each
      for (int step = 0; step < 5000; ++step) {
        auto& c = conversations[rng() % conversations.size()];
        if (c.size() < 24 && rng() % 2 == 0) c.push_back(rng() % 512);  // shared blocks too
        const std::size_t n = c.size();
        const bool with_nvme = rng() % 4 != 0;
        const auto got = kv.match(c.data(), n, with_nvme);
        const auto want = ref.match(c.data(), n, with_nvme);
        REQUIRE(got.gpu == want.gpu);
        REQUIRE(got.host == want.host);
        REQUIRE(got.nvme == want.nvme);
        checked += long(got.blocks());
        if (rng() % 2 == 0) {
          kv.take(c.data(), got);
          ref.take(c.data(), want);
        }
        const std::size_t from = rng() % (n + 1);
        kv.computed(c.data(), from, n);
        ref.computed(c.data(), from, n);
        const auto w = kv.take_writes();
        REQUIRE(w.host == ref.host_writes);
        REQUIRE(w.nvme == ref.nvme_writes);
        ref.host_writes = ref.nvme_writes = 0;
      }
    }
  }
  // The stream did hit the caches, so the comparisons were not all of empty prefixes.
  CHECK(checked > 5000);
}

}  // namespace tiersim
