// The compact log of busy intervals the time breakdown reads (sim/engine/span_log.hpp).
#include "sim/engine/span_log.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <initializer_list>
#include <map>
#include <string>
#include <tuple>

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
  log.add(1, 0, 1.0, 2.0, 2.0, fetch, Stage::kPrefill);    // another resource
  log.add(0, 0, 3.0, 4.0, 1.0, fetch, Stage::kDecode);     // another stage
  log.add(0, 0, 4.0, 4.0, 0.125, fetch, Stage::kPrefill);  // zero length: busy, not kept
  REQUIRE(log.slots().size() == 4);
  CHECK(log.slots()[0].busy_s == 1.0 + 0.25 + 0.125);
  CHECK(log.slots()[1].busy_s == 0.5);
  CHECK(log.slots()[2].resource == 1);
  CHECK(log.slots()[3].stage == Stage::kDecode);
  REQUIRE(log.size() == 5);
  CHECK(log[2].slot == 0);
  CHECK(log[4].start_s == 3.0);
  CHECK(log[4].end_s == 4.0);
  CHECK(log[4].work_s == 1.0);
  // Each interval links to the one kept before it on its channel (the zero-length one is not).
  CHECK(log[0].before == SpanLog::kNone);
  CHECK(log[1].before == 0);
  CHECK(log[2].before == SpanLog::kNone);
  CHECK(log[3].before == SpanLog::kNone);
  CHECK(log[4].before == 1);
  REQUIRE(log.channels().size() == 3);
  CHECK(log.channels()[0].resource == 0);
  CHECK(log.channels()[0].channel == 0);
  CHECK(log.channels()[0].latest == 4);
  CHECK(log.channels()[1].channel == 1);
  CHECK(log.channels()[1].latest == 2);
  CHECK(log.channels()[2].resource == 1);
  CHECK(log.channels()[2].latest == 3);
  CHECK(log.in_order());
  // The walk's key: the end clipped, the resource from the slot.
  CHECK(log.key(4, 3.5).end_s == 3.5);
  CHECK(log.key(4, 10.0).end_s == 4.0);
  CHECK(log.key(3, 10.0).resource == 1);
}

TEST_CASE("span log: a span's slot, found by name pointer or name, sums its spans as recorded",
          "[engine][span-log]") {
  // Many spans over three resources and activities alternating, each activity by two pointers
  // to one name: the slots' sums are those of a plain sum per (resource, activity, stage) in
  // the order recorded.
  SpanLog log;
  const std::string names[] = {"compute", "fetch", "write"};
  const std::string copies[] = {"compute", "fetch", "write"};
  const Stage stages[] = {Stage::kPrefill, Stage::kDecode};
  std::map<std::tuple<int, std::string, Stage>, double> want;
  for (int i = 0; i < 5000; ++i) {
    const int r = (i * 7) % 3;
    const int a = (i / 3 + i % 5) % 3;
    const Stage st = stages[(i / 11) % 2];
    const double work = 1.0 / static_cast<double>(i % 13 + 1);
    const Activity act{(i % 2 ? names[a] : copies[a]).c_str()};
    log.add(r, 0, static_cast<double>(i), static_cast<double>(i) + 1.0, work, act, st);
    want[{r, names[a], st}] += work;
  }
  REQUIRE(log.slots().size() == want.size());
  for (const SpanLog::Slot& slot : log.slots())
    CHECK(slot.busy_s == want.at({slot.resource, slot.activity.name(), slot.stage}));
  CHECK(log.in_order());
}

TEST_CASE("span log: whether each channel's intervals came in the walk's order",
          "[engine][span-log]") {
  const Activity a{"compute"};
  const auto in_order = [&](std::initializer_list<std::array<double, 3>> spans) {
    SpanLog log;
    for (const auto& [start, end, work] : spans) log.add(0, 0, start, end, work, a, Stage::kNone);
    return log.in_order();
  };
  CHECK(in_order({{0, 1, 1}, {1, 2, 1}, {2, 5, 1}}));
  CHECK_FALSE(in_order({{1, 2, 1}, {0, 1, 1}}));  // ends earlier
  CHECK(in_order({{1, 2, 1}, {0, 2, 1}}));        // ends with it, longer: walked first
  CHECK_FALSE(in_order({{0, 2, 1}, {1, 2, 1}}));  // ends with it, shorter
  CHECK(in_order({{0, 2, 0.5}, {0, 2, 1}}));      // the same times, more work
  CHECK_FALSE(in_order({{0, 2, 1}, {0, 2, 1}}));  // a tie: only a sort can order them
  // Another channel or resource is another list.
  SpanLog log;
  log.add(0, 0, 1, 2, 1, a, Stage::kNone);
  log.add(0, 1, 0, 1, 1, a, Stage::kNone);
  log.add(1, 0, 0, 1, 1, a, Stage::kNone);
  CHECK(log.in_order());
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
