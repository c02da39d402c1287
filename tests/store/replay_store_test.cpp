// The replay_runs table (store/replay_store.hpp): both writers' rows land with every column, the
// suite-only columns NULL for a single replay, in one transaction.
#include "store/replay_store.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "store/sqlite.hpp"
#include "tests/temp_dir.hpp"

namespace store_replay_store_test {

namespace store = tiersim::store;

TEST_CASE("replay store: rows of a single replay and of the suite read back", "[store][replay]") {
  tiersim::test::TempDir dir;
  const std::string db_path = dir.file("r.db");

  store::ReplayRunRow single;
  single.created_at = "2026-11-27T07:00:00Z";
  single.target = "/mnt/nvme";
  single.name = "opt30b.yaml";
  single.kind = "inference";
  single.detail = "scale 0.5";
  single.predicted_total_s = 2.0;
  single.measured_total_s = 2.5;
  single.error_pct = -20.0;
  single.replay_read_gbps = 6.5;

  store::ReplayRunRow suite = single;
  suite.name = "io-bound-aio";
  suite.predicted_point_total_s = 2.4;
  suite.point_error_pct = -4.0;
  suite.calibrated_read_gbps = 6.9;

  store::append_replay_runs(db_path, {single});
  store::append_replay_runs(db_path, {suite});

  store::Database db(db_path);
  auto st = db.prepare(
      "SELECT name, detail, error_pct, predicted_point_total_s, point_error_pct, replay_read_gbps, "
      "calibrated_read_gbps FROM replay_runs ORDER BY id");
  REQUIRE(st.step());
  CHECK(st.column_text(0) == "opt30b.yaml");
  CHECK(st.column_text(1) == "scale 0.5");
  CHECK(st.column_double(2) == -20.0);
  CHECK(st.column_is_null(3));
  CHECK(st.column_is_null(4));
  CHECK(st.column_double(5) == 6.5);
  CHECK(st.column_is_null(6));
  REQUIRE(st.step());
  CHECK(st.column_text(0) == "io-bound-aio");
  CHECK(st.column_double(3) == 2.4);
  CHECK(st.column_double(4) == -4.0);
  CHECK(st.column_double(6) == 6.9);
  CHECK_FALSE(st.step());
}
}  // namespace store_replay_store_test
