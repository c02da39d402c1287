#include <catch2/catch.hpp>

#include <set>
#include <tuple>

#include "calibrate/campaign.hpp"

namespace calibrate_campaign_test {

using namespace tiersim::calibrate;

TEST_CASE("sweep plan: --rwmix-read adds random mixed points at KV block sizes on each target",
          "[calibrate][campaign]") {
  CalibrationOptions o;
  o.plan = quick_plan();
  const std::uint64_t region = 2ull << 30;
  const auto pure = plan_points(o, 2, region);
  for (const auto& p : pure) CHECK_FALSE(p.job.mixed());

  o.plan.rwmix_read_pcts = {70, 50};
  o.plan.pattern = Pattern::sequential;  // mixed points stay random whatever the sweep's pattern
  const auto planned = plan_points(o, 2, region);
  std::set<std::tuple<std::size_t, int, std::uint32_t, unsigned>> mixed;
  for (const auto& p : planned) {
    if (!p.job.mixed()) continue;
    REQUIRE(p.targets.size() == 1);  // each drive alone: the interference is a drive's
    CHECK(p.job.pattern == Pattern::random);
    CHECK(rw_name(p.job) == "randrw" + std::to_string(p.job.rwmix_read_pct));
    mixed.insert({p.targets.front(), p.job.rwmix_read_pct, p.job.block_bytes, p.job.queue_depth});
  }
  // 2 targets x 2 mixes x 5 block sizes (16 KiB .. 2 MiB) x 4 depths, none twice.
  CHECK(mixed.size() == 2 * 2 * 5 * 4);
  CHECK(planned.size() == pure.size() + mixed.size());
  for (const auto& m : mixed) {
    CHECK(std::get<2>(m) >= 16u * 1024);
    CHECK(std::get<2>(m) <= 2u * 1024 * 1024);
  }

  SECTION("points with too much in flight are skipped as the others") {
    o.plan.max_inflight_bytes = 1u << 20;  // 1 MiB: 2 MiB blocks never fit, 1 MiB only at QD1
    std::size_t big = 0;
    for (const auto& p : plan_points(o, 1, region))
      if (p.job.mixed() && p.job.block_bytes >= (1u << 20)) ++big;
    CHECK(big == 2);  // 1 MiB x QD1, for each of the two mixes
  }
}

TEST_CASE("parse_rw reads a mixed stream's read percentage", "[calibrate][campaign]") {
  const JobSpec j = parse_rw("randrw70");
  CHECK(j.mixed());
  CHECK(j.rwmix_read_pct == 70);
  CHECK(j.pattern == Pattern::random);
  CHECK(rw_name(j) == "randrw70");
  CHECK(parse_rw("rw100").pattern == Pattern::sequential);
  CHECK_FALSE(parse_rw("randread").mixed());
  CHECK_THROWS(parse_rw("randrw101"));
  CHECK_THROWS(parse_rw("randrw"));
  CHECK_THROWS(parse_rw("randrwx"));
}

}  // namespace calibrate_campaign_test
