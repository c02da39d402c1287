#include "common/format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace tiersim::format {

std::string significant(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string fixed(double v, int decimals) {
  char buf[352];  // %f of the largest double has 309 digits before the point
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string exact(double v) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return std::to_string(v);
  return std::string(buf, ptr);
}

std::string table(double v) {
  const double a = std::abs(v);
  if (a != 0 && (a >= 1e7 || a < 1e-3)) return significant(v, 3);
  if (a >= 1000) return fixed(v, 0);
  return significant(v, 4);
}

std::string report(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "inf" : "-inf");
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e7 || a < 1e-3)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.3e", v);
    return buf;
  }
  return significant(v, 4);
}

std::string dollars(double usd) {
  // snprintf, not "$" + std::string: GCC 12 warns (-Wstringop-overflow) on the latter.
  char buf[352];
  if (std::fabs(usd) >= 1e6)
    std::snprintf(buf, sizeof buf, "$%.2fM", usd / 1e6);
  else if (std::fabs(usd) >= 1e3)
    std::snprintf(buf, sizeof buf, "$%.1fk", usd / 1e3);
  else
    std::snprintf(buf, sizeof buf, "$%.2f", usd);
  return buf;
}

std::string gigabytes(double bytes) {
  return fixed(bytes / 1e9, 1) + " GB";
}

}  // namespace tiersim::format
