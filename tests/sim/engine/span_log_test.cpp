// The compact log of busy intervals the time breakdown reads (sim/engine/span_log.hpp).
#include "sim/engine/span_log.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "sim/engine/engine.hpp"

namespace sim_engine_span_log_test {

using namespace tiersim::sim;

TEST_CASE("span log: a slot per resource, activity and stage, busy summed as recorded",
          "[engine][span-log]") {
  SpanLog log;
  // Two pointers to equal names are one activity (Activity's == compares names).
  const std::string copy = "fetch";
  const Activity fetch{"fetch"}, fetch_copy{copy.c_str()}, compute{"compute"};
  log.add(0, 0, 0.0, 1.0, 1.0, fetch, Stage::kPrefill);
  log.add(0, 0, 1.0, 3.0, 0.5, compute, Stage::kPrefill);
  log.add(0, 1, 1.0, 2.0, 0.25, fetch_copy, Stage::kPrefill);
  log.add(1, 0, 1.0, 2.0, 2.0, fetch, Stage::kPrefill);   // another resource
  log.add(0, 0, 3.0, 4.0, 1.0, fetch, Stage::kDecode);    // another stage
  log.add(0, 0, 4.0, 4.0, 0.125, fetch, Stage::kPrefill);  // zero length: busy, not kept
  REQUIRE(log.slots().size() == 4);
  CHECK(log.slots()[0].busy_s == 1.0 + 0.25 + 0.125);
  CHECK(log.slots()[1].busy_s == 0.5);
  CHECK(log.slots()[2].resource == 1);
  CHECK(log.slots()[3].stage == Stage::kDecode);
  REQUIRE(log.size() == 5);
  CHECK(log[2].slot == 0);
  CHECK(log[2].channel == 1);
  CHECK(log[4].start_s == 3.0);
  CHECK(log[4].end_s == 4.0);
  CHECK(log[4].work_s == 1.0);
}

TEST_CASE("span log: 32 bytes an interval, in chunks that are not copied as the log grows",
          "[engine][span-log]") {
  SpanLog log;
  const Activity a{"compute"}, b{"allreduce"};
  constexpr std::size_t n = 200'000;  // four chunks, the last one part full
  for (std::size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i);
    log.add(static_cast<int>(i % 2), 0, t, t + 0.5, 0.5, i % 2 ? b : a, Stage::kDecode);
  }
  REQUIRE(log.size() == n);
  CHECK(sizeof(SpanLog::Interval) == 32);
  // The intervals, one chunk not yet filled, and the few slots: no doubling of the whole log.
  CHECK(log.bytes() <= n * 32 + (std::size_t{1} << 16) * 32 + 4096);
  CHECK(log.bytes() >= n * 32);
  // Read back across the chunks' edges.
  for (const std::size_t i : {std::size_t{0}, std::size_t{65'535}, std::size_t{65'536}, n - 1}) {
    CHECK(log[i].start_s == static_cast<double>(i));
    CHECK(log[i].slot == i % 2);
  }
}

TEST_CASE("span log: kept with keep_spans, and no trace spans without tracing",
          "[engine][span-log]") {
  Engine e;
  e.keep_spans(true);
  Resource& g = e.add_resource({ResourceRole::kGpu, "gpu"}, WorkUnit::kSeconds, 1.0);
  e.spawn([](Resource& r) -> Task {
    co_await r.use(1.0, Tag{Activity{"compute"}, 0, 0, 1.0, Stage::kDecode});
    co_await r.use(2.0, Tag{Activity{"compute"}, 0, 1, 1.0, Stage::kDecode});
  }(g));
  e.run();
  CHECK(e.trace().empty());
  REQUIRE(e.spans().size() == 2);
  CHECK(e.spans()[1].start_s == 1.0);
  CHECK(e.spans()[1].end_s == 3.0);
  CHECK(e.spans().slots().at(0).busy_s == 3.0);

  Engine traced;
  traced.enable_trace(true);
  Resource& h = traced.add_resource({ResourceRole::kGpu, "gpu"}, WorkUnit::kSeconds, 1.0);
  traced.spawn([](Resource& r) -> Task { co_await r.use(1.0); }(h));
  traced.run();
  CHECK(traced.trace().size() == 1);
  CHECK(traced.spans().size() == 1);
}

}  // namespace sim_engine_span_log_test
