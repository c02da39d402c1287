#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "sim/engine/engine.hpp"

#include <atomic>

#include "model/errors.hpp"

namespace sim_engine_engine_test {

using namespace tiersim::sim;

namespace {

// An activity of these tests' own.
constexpr Activity kCompute{"compute"};

Task use_twice(Resource& r, double amount, std::vector<double>& done, Engine& e) {
  co_await r.use(amount);
  done.push_back(e.now());
  co_await r.use(amount);
  done.push_back(e.now());
}

Task wait_then(Engine& e, double dt, std::vector<double>& log) {
  co_await e.delay(dt);
  log.push_back(e.now());
}

// Ticks `n` times, one event each, counting them.
Task ticker(Engine& e, int n, int& ticks) {
  for (int i = 0; i < n; ++i) {
    co_await e.delay(1.0);
    ++ticks;
  }
}

Task thrower(Engine& e) {
  co_await e.delay(1.0);
  throw std::runtime_error("boom");
}

}  // namespace

TEST_CASE("a FIFO resource serves requests one after another at its rate", "[engine]") {
  Engine e;
  Resource& link = e.add_resource({ResourceRole::kPcieH2d, "link"}, WorkUnit::kBytes, 100.0);
  std::vector<double> a, b;
  e.spawn(use_twice(link, 50.0, a, e));
  e.spawn(use_twice(link, 50.0, b, e));
  e.run();
  // Four requests of 0.5 s each, served in request order: A1, B1, A2, B2.
  REQUIRE(a == std::vector<double>{0.5, 1.5});
  REQUIRE(b == std::vector<double>{1.0, 2.0});
  REQUIRE(link.busy_s() == Approx(2.0));
}

TEST_CASE("a resource counts the work it did in its unit, not rebuilt from busy time", "[engine]") {
  Engine e;
  Resource& link = e.add_resource({ResourceRole::kPcieH2d, "link"}, WorkUnit::kBytes, 3.0);
  Resource& nvme = e.add_resource({ResourceRole::kNvme, "nvme"}, WorkUnit::kSeconds, 1.0);
  std::vector<double> done;
  e.spawn(use_twice(link, 1.0, done, e));  // use(): 2 bytes
  e.run();
  CHECK(link.amount() == 2.0);
  // A flow counts each resource's own amount; fixed time (a latency) is no amount.
  const Demand flow[] = {{&link, 10.0}, {&nvme, 0.25}};
  e.reserve_from(e.now(), std::begin(flow), std::end(flow), Tag{}, 0.5);
  CHECK(link.amount() == 12.0);
  CHECK(nvme.amount() == 0.25);
  CHECK(nvme.busy_s() == 0.75);  // 0.25 s of service plus the 0.5 s fixed time
  e.reserve_from(e.now(), Demand{&link, 4.0}, Tag{}, 0.0);
  // Work worked out once and reserved again and again carries its amount along.
  const Work w = link.work(5.0);
  e.reserve_work_from(e.now(), link, w, Tag{});
  e.reserve_work_from(e.now(), nvme, nvme.work(1.0), link, w, Tag{});
  CHECK(link.amount() == 26.0);
  CHECK(nvme.amount() == 1.25);
  // Busy time counts the fixed time as well; less it, times the rate, it gives the bytes only to
  // rounding (thirds of a second are not exact in binary).
  CHECK((link.busy_s() - 0.5) * link.rate_per_s() == Approx(link.amount()));
}

TEST_CASE("a multi-channel resource serves requests in parallel", "[engine]") {
  Engine e;
  Resource& cores = e.add_resource({ResourceRole::kCpu, "cores"}, WorkUnit::kSeconds, 1.0, 2);
  std::vector<double> a, b;
  e.spawn(use_twice(cores, 1.0, a, e));
  e.spawn(use_twice(cores, 1.0, b, e));
  e.run();
  REQUIRE(a == std::vector<double>{1.0, 2.0});
  REQUIRE(b == std::vector<double>{1.0, 2.0});
}

TEST_CASE("a flow across two resources runs at the slower one's rate and holds both", "[engine]") {
  Engine e;
  Resource& fast = e.add_resource({ResourceRole::kPcieH2d, "link"}, WorkUnit::kBytes, 100.0);
  Resource& slow = e.add_resource({ResourceRole::kNvme, "drive"}, WorkUnit::kBytes, 10.0);
  std::vector<double> log;
  auto flow = [&]() -> Task {
    std::vector<Demand> d{Demand{&fast, 100.0}, Demand{&slow, 100.0}};
    co_await e.use_all(std::move(d));
    log.push_back(e.now());
    co_await fast.use(100.0);  // the fast link was held for the whole 10 s, working 1 s of it
    log.push_back(e.now());
  };
  e.spawn(flow());
  e.run();
  REQUIRE(log == std::vector<double>{10.0, 11.0});
  REQUIRE(fast.busy_s() == Approx(2.0));
}

TEST_CASE("events at equal times run in the order they were scheduled", "[engine]") {
  Engine e;
  std::vector<double> log;
  for (int i = 0; i < 5; ++i) e.spawn(wait_then(e, 1.0, log));
  e.run();
  REQUIRE(log.size() == 5);
  REQUIRE(e.events_processed() == 10);
}

TEST_CASE("a semaphore admits at most its units; a flag releases all waiters", "[engine]") {
  Engine e;
  Semaphore slots(e, 1);
  Flag go(e);
  std::vector<double> log;
  auto worker = [&](double hold) -> Task {
    co_await go.wait();
    co_await slots.acquire();
    co_await e.delay(hold);
    log.push_back(e.now());
    slots.release();
  };
  auto starter = [&]() -> Task {
    co_await e.delay(2.0);
    go.set();
  };
  e.spawn(worker(1.0));
  e.spawn(worker(1.0));
  e.spawn(starter());
  e.run();
  REQUIRE(log == std::vector<double>{3.0, 4.0});
}

TEST_CASE("an exception inside a process reaches Engine::run", "[engine]") {
  Engine e;
  e.spawn(thrower(e));
  REQUIRE_THROWS_WITH(e.run(), "boom");
}

TEST_CASE("a process left waiting forever is freed with the engine", "[engine]") {
  // Under AddressSanitizer this would report a leak if the frame were not destroyed.
  auto e = std::make_unique<Engine>();
  Flag never(*e);
  auto waiter = [&]() -> Task { co_await never.wait(); };
  e->spawn(waiter());
  e->run();
  e.reset();
  SUCCEED();
}

TEST_CASE("a flow across more than eight resources waits for and holds every one", "[engine]") {
  // Regression: reserve_all used to drop every demand past the eighth, so a slow ninth link
  // neither set the flow's duration nor was counted busy.
  Engine e;
  std::vector<Demand> demands;
  for (int i = 0; i < 8; ++i)
    demands.push_back({&e.add_resource({ResourceRole::kPcieH2d, "link" + std::to_string(i)},
                                       WorkUnit::kBytes, 100.0),
                       100.0});
  Resource& slow = e.add_resource({ResourceRole::kNvme, "drive8"}, WorkUnit::kBytes, 10.0);
  Resource& busy = e.add_resource({ResourceRole::kCpu, "cores9"}, WorkUnit::kSeconds, 1.0);
  demands.push_back({&slow, 100.0});
  demands.push_back({&busy, 1.0});
  // `busy` is occupied until t = 3: the flow starts then, when all ten are free.
  auto hog = [&]() -> Task { co_await busy.use(3.0); };
  double done_s = -1;
  auto flow = [&]() -> Task {
    co_await e.use_all(demands);
    done_s = e.now();
  };
  e.spawn(hog());
  e.spawn(flow());
  e.run();
  REQUIRE(done_s == Approx(3.0 + 10.0));
  REQUIRE(slow.busy_s() == Approx(10.0));
  REQUIRE(busy.busy_s() == Approx(3.0 + 1.0));
}

TEST_CASE("run_until runs the events due by then and leaves the rest queued", "[engine]") {
  Engine e;
  std::vector<double> log;
  for (double t : {1.0, 2.0, 3.0}) e.spawn(wait_then(e, t, log));
  e.run_until(0.5);  // the three starts at t = 0, none of the wake-ups
  REQUIRE(log.empty());
  REQUIRE(e.now() == 0.5);
  e.run_until(2.0);  // an event exactly at the bound runs
  REQUIRE(log == std::vector<double>{1.0, 2.0});
  REQUIRE(e.now() == 2.0);
  e.run_until(2.5);  // nothing due: only the clock moves
  REQUIRE(log.size() == 2);
  REQUIRE(e.now() == 2.5);
  // A process started now begins at the bound, not at the last event.
  e.spawn(wait_then(e, 0.25, log));
  e.run();
  REQUIRE(log == std::vector<double>{1.0, 2.0, 2.75, 3.0});
  REQUIRE(e.now() == 3.0);  // run() stops at the last event
}

TEST_CASE("run_until rethrows a process's exception", "[engine]") {
  Engine e;
  e.spawn(thrower(e));
  REQUIRE_NOTHROW(e.run_until(0.5));
  REQUIRE_THROWS_WITH(e.run_until(1.0), "boom");
}

namespace {
Task log_now(Engine& e, std::vector<double>& log) {
  log.push_back(e.now());
  co_return;
}
}  // namespace

TEST_CASE("spawn_at starts a process at a later time", "[engine]") {
  Engine e;
  std::vector<double> log;
  e.spawn(wait_then(e, 2.0, log));
  e.spawn_at(2.0, log_now(e, log));
  e.spawn_at(1.0, log_now(e, log));
  e.run();
  REQUIRE(log == std::vector<double>{1.0, 2.0, 2.0});
  // One event per process start and one for the delay: spawn_at adds no event of its own.
  REQUIRE(e.events_processed() == 4);
}

namespace {

Task tagged_work(Resource& r) {
  co_await r.use(2.0, Tag{kCompute, 0, 0, 1.0, Stage::kPrefill});
  co_await r.use(4.0, Tag{kCompute, 1, 0, 0.25, Stage::kDecode});
  co_await r.use(1.0);  // untagged: full power, no stage
}

}  // namespace

TEST_CASE("a resource counts its busy time at the load and in the stage each piece says",
          "[engine][power]") {
  Engine e;
  Resource& gpu = e.add_resource({ResourceRole::kGpu, "gpu"}, WorkUnit::kSeconds, 1.0);
  e.spawn(tagged_work(gpu));
  e.run();
  CHECK(gpu.busy_s() == Approx(7.0));
  CHECK(gpu.load_s() == Approx(2.0 + 1.0 + 1.0));
  CHECK(gpu.busy_s(Stage::kPrefill) == Approx(2.0));
  CHECK(gpu.load_s(Stage::kDecode) == Approx(1.0));
  CHECK(gpu.busy_s(Stage::kNone) == Approx(1.0));
  CHECK(gpu.load_s(Stage::kNone) == Approx(1.0));
}

TEST_CASE("a stop flag set from outside ends the run with Interrupted; unset, it runs to the end",
          "[engine]") {
  std::atomic<bool> stop{false};
  {
    Engine e;
    e.stop_when(&stop);
    int ticks = 0;
    e.spawn(ticker(e, 20000, ticks));
    e.run();
    CHECK(ticks == 20000);
  }
  stop = true;
  Engine e;
  e.stop_when(&stop);
  int ticks = 0;
  e.spawn(ticker(e, 20000, ticks));
  CHECK_THROWS_AS(e.run(), tiersim::Interrupted);
  // Polled every kStopPollEvents events: it stops at the first poll, long before the end.
  CHECK(ticks < static_cast<int>(Engine::kStopPollEvents) + 1);
}
}  // namespace sim_engine_engine_test
