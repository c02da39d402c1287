// The one formatting module (common/format.hpp): each printed form of a number, at the edges
// where the forms switch.
#include "common/format.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace common_format_test {

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

TEST_CASE("format: usd and bytes as people read them in reports", "[common][format]") {
  CHECK(format::usd(78815.6) == "$78,816");
  CHECK(format::usd(1234567.4) == "$1,234,567");
  CHECK(format::usd(999.994) == "$999.99");
  CHECK(format::usd(12.345) == "$12.35");
  CHECK(format::usd(0.0042137) == "$0.00421");
  CHECK(format::usd(0) == "$0.00");
  CHECK(format::usd(-1500) == "-$1,500");
  CHECK(format::grouped(1234567.891, 1) == "1,234,567.9");
  CHECK(format::grouped(-0.01, 1) == "0.0");
  CHECK(format::grouped(100, 0) == "100");
  CHECK(format::bytes(1.2e12) == "1.2 TB");
  CHECK(format::bytes(36.3e9) == "36.3 GB");
  CHECK(format::bytes(512e9) == "512 GB");
  CHECK(format::bytes(999.96e9) == "1.0 TB");
  CHECK(format::bytes(900) == "900 B");
  CHECK(format::bytes(0) == "0 B");
}

TEST_CASE("format: numbers for people group thousands and switch to exponents at the ends",
          "[common][format]") {
  CHECK(format::number(0) == "0");
  CHECK(format::number(12.3456) == "12.35");
  CHECK(format::number(999.4) == "999.4");
  CHECK(format::number(999.6) == "1,000");
  CHECK(format::number(78816.4) == "78,816");
  CHECK(format::number(-1234567) == "-1,234,567");
  CHECK(format::number(0.001234) == "0.001234");
  CHECK(format::number(0.00001234) == "1.23e-05");
  CHECK(format::number(2e15) == "2e+15");
  CHECK(format::number(std::nan("")) == "n/a");
}

TEST_CASE("format: dollars, bytes and durations for people", "[common][format]") {
  CHECK(format::usd(78816.2) == "$78,816");
  CHECK(format::usd(1250000) == "$1,250,000");
  CHECK(format::usd(12.346) == "$12.35");
  CHECK(format::usd(0) == "$0.00");
  CHECK(format::usd(0.000123456) == "$0.000123");
  CHECK(format::usd(-5) == "-$5.00");
  CHECK(format::bytes(512) == "512 B");
  CHECK(format::bytes(1.2e12) == "1.2 TB");
  CHECK(format::bytes(36.34e9) == "36.3 GB");
  CHECK(format::bytes(150e6) == "150 MB");
  CHECK(format::bytes(999.96e9) == "1.0 TB");
  CHECK(format::duration(301.2) == "301.2 s");
  CHECK(format::duration(12345.6) == "12,346 s");
  CHECK(format::duration(0.0125) == "12.5 ms");
  CHECK(format::duration(0.00083) == "830 us");
  CHECK(format::duration(0) == "0 s");
}

TEST_CASE("format: a table cell is the quantity without the unit its column names",
          "[common][format]") {
  CHECK(format::cell(78816, "USD") == "$78,816");
  CHECK(format::cell(1.92, "USD/h") == "$1.92");
  CHECK(format::cell(60e9, "bytes") == "60.0 GB");
  CHECK(format::cell(203302.4, "s") == "203,302");
  CHECK(format::cell(18.32365, "tokens/s") == "18.32");
  CHECK(format::cell(1.5e15, "J") == "1.5e+15");
  CHECK(format::cell(std::nan(""), "s") == "n/a");
  // The quantity is the cell with its unit: one rule for both.
  CHECK(format::quantity(203302.4, "tokens") == format::cell(203302.4, "tokens") + " tokens");
}

TEST_CASE("format: a quantity picks its form by the metric's unit", "[common][format]") {
  CHECK(format::quantity(78816, "USD") == "$78,816");
  CHECK(format::quantity(1.92, "USD/h") == "$1.92/h");
  CHECK(format::quantity(0.52, "USD/Mtoken") == "$0.52/Mtoken");
  CHECK(format::quantity(60e9, "bytes") == "60.0 GB");
  CHECK(format::quantity(276.4, "s") == "276.4 s");
  CHECK(format::quantity(12.5, "GB/s") == "12.5 GB/s");
  CHECK(format::quantity(1234.6, "tokens/s") == "1,235 tokens/s");
  CHECK(format::quantity(0.85, "") == "0.85");
  CHECK(format::quantity(5, "tokens/USD") == "5 tokens/USD");
}
TEST_CASE("a count takes its noun's plural unless it is one", "[format]") {
  CHECK(format::counted(1, "configuration") == "1 configuration");
  CHECK(format::counted(0, "configuration") == "0 configurations");
  CHECK(format::counted(12, "published measurement") == "12 published measurements");
}

}  // namespace common_format_test
