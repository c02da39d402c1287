#include <catch2/catch.hpp>

#include "store/calibration_points.hpp"
#include "store/calibration_store.hpp"
#include "calibrate/campaign.hpp"

namespace store_calibration_store_test {

namespace store = tiersim::store;

using namespace tiersim::calibrate;

TEST_CASE("store: points go in and come back as bandwidth-vs-block-size curves", "[calibrate][store]") {
  tiersim::store::Database db(":memory:");
  CHECK(latest_calibration_run(db) == 0);
  CHECK(read_calibration_points(db).empty());
  store::CalibrationRun run;
  run.started_at = "2025-01-01T00:00:00Z";
  run.host = "h";
  run.kernel = "k";
  run.mode = "quick";
  run.engine = "io_uring";
  run.targets = {"/mnt/a"};
  run.options_json = "{}";
  run.tool_version = "0.1.0";
  const auto id = insert_run(db, run);
  for (int qd : {1, 32}) {
    for (std::int64_t bs : {1 << 20, 4096, 65536}) {
      store::CalibrationPoint p;
      p.run_id = id;
      p.target = "/mnt/a";
      p.filesystem = "ext4";
      p.device = "/dev/x";
      p.rw = "randread";
      p.engine = "io_uring";
      p.block_bytes = bs;
      p.queue_depth = qd;
      p.threads = 1;
      p.bandwidth_gbps = static_cast<double>(bs) * qd / 1e6;
      p.lat_p99_us = 12.5;
      const auto pid = insert_point(db, p);
      if (qd == 32) update_point_fit(db, pid, "heldout", 1.5);
    }
  }
  CHECK(latest_calibration_run(db) == id);
  const auto pts = read_calibration_points(db);
  REQUIRE(pts.size() == 6);
  CHECK(pts[0].lat_p99_us == 12.5);
  CHECK(pts[5].fit_role == "heldout");
  CHECK(pts[0].fit_role == "none");
  const auto curves = read_bandwidth_curves(db, id);
  REQUIRE(curves.size() == 2);
  CHECK(curves[0].queue_depth == 1);
  CHECK(curves[1].queue_depth == 32);
  CHECK(curves[0].block_bytes == std::vector<double>{4096, 65536, 1 << 20});
  CHECK(curves[1].bandwidth_gbps[2] == Approx((1 << 20) * 32 / 1e6));
  CHECK(curves[1].model_bandwidth_gbps[0] == 1.5);
}

TEST_CASE("size parsing", "[calibrate]") {
  CHECK(tiersim::calibrate::parse_size_bytes("4096") == 4096);
  CHECK(tiersim::calibrate::parse_size_bytes("4KiB") == 4096);
  CHECK(tiersim::calibrate::parse_size_bytes("1M") == 1 << 20);
  CHECK(tiersim::calibrate::parse_size_bytes("2GiB") == 2ull << 30);
  CHECK_THROWS_AS(tiersim::calibrate::parse_size_bytes("12 parsecs"), tiersim::Error);
  CHECK(tiersim::calibrate::size_text(16 << 20) == "16MiB");
}
}  // namespace store_calibration_store_test
