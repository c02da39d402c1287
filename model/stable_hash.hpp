#pragma once
// The content hash tiersim stores with what it writes (a scenario's hash, a provenance set's
// digest): FNV-1a 64, the same on every platform and in every run, so a file written by one
// process is matched by another. Not a cryptographic hash: a match is trusted only where the
// caller can afford it (see config::stable_hash, store::ResultsStore::save).
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tiersim {

inline constexpr std::uint64_t kFnv1a64Basis = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis

// `h`: the hash of what came before, to hash a long text piece by piece.
inline std::uint64_t fnv1a64(std::string_view text, std::uint64_t h = kFnv1a64Basis) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;  // FNV prime
  }
  return h;
}

// A hash as it is written out: 16 lower-case hex digits.
inline std::string hex_hash(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace tiersim
