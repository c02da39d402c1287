#pragma once
// A small, fast PRNG (xoshiro256**, seeded by splitmix64) for random offsets and incompressible
// fill data. std::mt19937_64 is several times slower, which shows at millions of IOPS.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tiersim::calibrate {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n) without a division (Lemire's multiply-shift; bias < n / 2^64).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  void fill(void* data, std::size_t size_bytes) {
    auto* p = static_cast<unsigned char*>(data);
    std::size_t i = 0;
    for (; i + 8 <= size_bytes; i += 8) {
      const std::uint64_t v = next();
      std::memcpy(p + i, &v, 8);
    }
    if (i < size_bytes) {
      const std::uint64_t v = next();
      std::memcpy(p + i, &v, size_bytes - i);
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace tiersim::calibrate
