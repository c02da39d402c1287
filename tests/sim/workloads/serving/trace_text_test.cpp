// The text rules every request-trace reader shares: lines, CSV cells, decimal numbers.
#include <catch2/catch.hpp>

#include <fstream>

#include "model/errors.hpp"
#include "sim/workloads/serving/trace_text.hpp"
#include "tests/temp_dir.hpp"

namespace tiersim::sim_workloads_serving_trace_text_test {

TEST_CASE("trace numbers are decimal only", "[workloads][serving]") {
  CHECK(sim::parse_whole("12", 1e9) == 12.0);
  CHECK(sim::parse_whole("1.2e3", 1e9) == 1200.0);
  CHECK(sim::parse_whole("0", 1e9) == 0.0);
  for (const char* bad : {"", "1.5", "-1", "0x10", "nan", "inf", "1e999", "12 ", "+", "1e10"})
    CHECK_FALSE(sim::parse_whole(bad, 1e9));
  CHECK(sim::parse_seconds("0.25") == 0.25);
  for (const char* bad : {"", "-0.5", "0x1p4", "nan", "inf", "1e999", "3s"})
    CHECK_FALSE(sim::parse_seconds(bad));
}

TEST_CASE("trace CSV cells are trimmed of spaces and quotes", "[workloads][serving]") {
  CHECK(sim::split_csv(" a ,\"b\",3") == std::vector<std::string>{"a", "b", "3"});
  CHECK(sim::split_csv("a,,b,") == std::vector<std::string>{"a", "", "b", ""});
}

TEST_CASE("trace lines drop a byte order mark, CR and blank lines", "[workloads][serving]") {
  test::TempDir dir;
  std::ofstream(dir.file("t.csv"), std::ios::binary) << "\xEF\xBB\xBFh\r\n\n  \r\nx\r\n";
  sim::TraceLines lines(dir.file("t.csv"));
  std::string line;
  REQUIRE(lines.next(line));
  CHECK(line == "h");
  CHECK(lines.line_no() == 1);
  REQUIRE(lines.next(line));
  CHECK(line == "x");
  CHECK(lines.line_no() == 4);
  CHECK_FALSE(lines.next(line));
  CHECK_THROWS_AS(sim::TraceLines(dir.str()), ConfigError);
}

}  // namespace tiersim
