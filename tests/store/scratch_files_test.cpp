// The calibration_files table (store/scratch_files.hpp): registered files read back per host and
// are forgotten by token.
#include "store/scratch_files.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "tests/temp_dir.hpp"

namespace store_scratch_files_test {

namespace store = tiersim::store;

TEST_CASE("scratch files: insert, list per host, erase", "[store][scratch]") {
  tiersim::test::TempDir dir;
  store::ScratchFileTable table(dir.file("r.db"));
  store::ScratchFileRow a{"tok-a", "/data/a.bin", 66306, 1234, 4242, "node1", "2026-11-27T07:00:00Z"};
  store::ScratchFileRow b{"tok-b", "/data/b.bin", 66306, 99, 4243, "node2", "2026-11-27T07:00:01Z"};
  // 64-bit device numbers survive the round trip through SQLite's signed integers.
  a.device = 0x8000000000000001ull;
  table.insert(a);
  table.insert(b);

  const auto here = table.on_host("node1");
  REQUIRE(here.size() == 1);
  CHECK(here[0].token == "tok-a");
  CHECK(here[0].path == "/data/a.bin");
  CHECK(here[0].device == 0x8000000000000001ull);
  CHECK(here[0].inode == 1234);
  CHECK(here[0].pid == 4242);
  CHECK(here[0].created_at == "2026-11-27T07:00:00Z");

  table.erase("tok-a");
  CHECK(table.on_host("node1").empty());
  CHECK(table.on_host("node2").size() == 1);
}
}  // namespace store_scratch_files_test
