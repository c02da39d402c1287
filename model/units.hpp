#pragma once
// Unit conventions. Every quantity in tiersim is a double in SI base units unless its name says
// otherwise: *_bytes (bytes), *_s (seconds), *_w (watts), *_j (joules), *_usd (US dollars),
// *_gbps (1e9 bytes per second, decimal, as drive and link datasheets quote), *_tflops (1e12
// floating point operations per second), *_gb (1e9 bytes), *_gib (2^30 bytes).
#include <cstdint>

namespace tiersim::units {

inline constexpr double kGB = 1e9;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kKiB = 1024.0;
inline constexpr double kTera = 1e12;
inline constexpr double kGiga = 1e9;
inline constexpr double kMicro = 1e-6;
inline constexpr double kJoulesPerKwh = 3.6e6;

constexpr double gbps_to_bytes_per_s(double gbps) { return gbps * kGB; }
constexpr double gb_to_bytes(double gb) { return gb * kGB; }
constexpr double tflops_to_flops(double tflops) { return tflops * kTera; }

}  // namespace tiersim::units
