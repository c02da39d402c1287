// The one formatting module (common/format.hpp): each printed form of a number, at the edges
// where the forms switch.
#include "common/format.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace format = tiersim::format;

TEST_CASE("format: significant digits and fixed decimals follow printf", "[common][format]") {
  CHECK(format::significant(1234.5678, 4) == "1235");
  CHECK(format::significant(0.00123456, 3) == "0.00123");
  CHECK(format::significant(12345678.0, 4) == "1.235e+07");
  CHECK(format::fixed(12.5, 2) == "12.50");
  CHECK(format::fixed(99.95, 0) == "100");
  // The largest double fits (309 digits before the point).
  CHECK(format::fixed(std::numeric_limits<double>::max(), 1).size() == 311);
}

TEST_CASE("format: exact reads back as the same double", "[common][format]") {
  for (double v : {0.1, 1.0 / 3.0, 6.02214076e23, 5e-324, 150754820096.0})
    CHECK(std::strtod(format::exact(v).c_str(), nullptr) == v);
  CHECK(format::exact(0.1) == "0.1");
  CHECK(format::exact(256.0) == "256");
}

TEST_CASE("format: table and report forms switch at 1e-3 and 1e7", "[common][format]") {
  CHECK(format::table(0.0) == "0");
  CHECK(format::table(0.0009) == "0.0009");  // %.3g
  CHECK(format::table(0.5) == "0.5");
  CHECK(format::table(1234.6) == "1235");
  CHECK(format::table(9999999.0) == "9999999");
  CHECK(format::table(1e7) == "1e+07");
  CHECK(format::report(0.0009) == "9.000e-04");
  CHECK(format::report(12.345678) == "12.35");
  CHECK(format::report(2e7) == "2.000e+07");
  CHECK(format::report(std::nan("")) == "n/a");
  CHECK(format::report(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format::report(-std::numeric_limits<double>::infinity()) == "-inf");
}

TEST_CASE("format: dollars and gigabytes", "[common][format]") {
  CHECK(format::dollars(2.444) == "$2.44");
  CHECK(format::dollars(147800) == "$147.8k");
  CHECK(format::dollars(1234567) == "$1.23M");
  CHECK(format::dollars(-1500) == "$-1.5k");
  CHECK(format::gigabytes(36.3e9) == "36.3 GB");
}
