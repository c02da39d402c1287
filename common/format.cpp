#include "common/format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string>
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

std::string grouped(double v, int decimals) {
  if (!std::isfinite(v)) return report(v);
  std::string digits = fixed(std::fabs(v), decimals);
  const auto point = digits.find('.');
  std::string whole = digits.substr(0, point), out;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += ',';
    out += whole[i];
  }
  if (point != std::string::npos) out += digits.substr(point);
  // "-0" for a value that rounds to zero reads as a sign error.
  if (v < 0 && out.find_first_not_of("0.,") != std::string::npos) out.insert(0, 1, '-');
  return out;
}

std::string gigabytes(double bytes) {
  return fixed(bytes / 1e9, 1) + " GB";
}

std::string number(double v) {
  if (!std::isfinite(v)) return report(v);
  const double a = std::fabs(v);
  if (a >= 1e15 || (a != 0 && a < 1e-4)) return significant(v, 3);
  if (a >= 999.5) return grouped(v, 0);
  return significant(v, 4);
}

std::string usd(double usd) {
  if (!std::isfinite(usd)) return report(usd);
  const double a = std::fabs(usd);
  std::string body;
  if (a >= 1e15)
    body = significant(a, 3);
  else if (a >= 999.995)
    body = grouped(a, 0);
  else if (a >= 1 || a == 0)
    body = fixed(a, 2);
  else
    body = significant(a, 3);
  return (usd < 0 ? "-$" : "$") + body;
}

std::string bytes(double bytes) {
  if (!std::isfinite(bytes)) return report(bytes);
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  double v = bytes;
  std::size_t u = 0;
  while (std::fabs(v) >= 999.95 && u + 1 < std::size(kUnits)) {
    v /= 1000;
    ++u;
  }
  const std::string n = u == 0 ? fixed(v, 0) : std::fabs(v) < 99.95 ? fixed(v, 1) : fixed(v, 0);
  return n + " " + kUnits[u];
}

std::string duration(double s) {
  if (!std::isfinite(s)) return report(s);
  const double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a >= 1) return number(s) + " s";
  if (a >= 1e-3) return significant(s * 1e3, 4) + " ms";
  return significant(s * 1e6, 4) + " us";
}

std::string cell(double v, std::string_view unit) {
  if (unit.substr(0, 3) == "USD") return usd(v);
  if (unit == "bytes") return bytes(v);
  return number(v);
}

std::string quantity(double v, std::string_view unit) {
  if (unit == "s") return duration(v);
  const std::string c = cell(v, unit);
  if (unit.substr(0, 3) == "USD") return c + std::string(unit.substr(3));
  if (unit == "bytes" || unit.empty()) return c;
  return c + " " + std::string(unit);
}

std::string counted(std::size_t n, std::string_view noun) {
  std::string out = std::to_string(n);
  out += ' ';
  out += noun;
  if (n != 1) out += 's';
  return out;
}

}  // namespace tiersim::format
