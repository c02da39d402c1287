#include <catch2/catch.hpp>
#include <stdexcept>

#include "sim/engine/engine.hpp"

using namespace tiersim::sim;

namespace {

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

Task thrower(Engine& e) {
  co_await e.delay(1.0);
  throw std::runtime_error("boom");
}

}  // namespace

TEST_CASE("a FIFO resource serves requests one after another at its rate", "[engine]") {
  Engine e;
  Resource& link = e.add_resource(ResourceKind::kPcieH2d, kNoIndex, WorkUnit::kBytes, 100.0);
  std::vector<double> a, b;
  e.spawn(use_twice(link, 50.0, a, e));
  e.spawn(use_twice(link, 50.0, b, e));
  e.run();
  // Four requests of 0.5 s each, served in request order: A1, B1, A2, B2.
  REQUIRE(a == std::vector<double>{0.5, 1.5});
  REQUIRE(b == std::vector<double>{1.0, 2.0});
  REQUIRE(link.busy_s() == Approx(2.0));
}

TEST_CASE("a multi-channel resource serves requests in parallel", "[engine]") {
  Engine e;
  Resource& cores = e.add_resource(ResourceKind::kCpu, kNoIndex, WorkUnit::kSeconds, 1.0, 2);
  std::vector<double> a, b;
  e.spawn(use_twice(cores, 1.0, a, e));
  e.spawn(use_twice(cores, 1.0, b, e));
  e.run();
  REQUIRE(a == std::vector<double>{1.0, 2.0});
  REQUIRE(b == std::vector<double>{1.0, 2.0});
}

TEST_CASE("a flow across two resources runs at the slower one's rate and holds both", "[engine]") {
  Engine e;
  Resource& fast = e.add_resource(ResourceKind::kPcieH2d, kNoIndex, WorkUnit::kBytes, 100.0);
  Resource& slow = e.add_resource(ResourceKind::kNvme, kNoIndex, WorkUnit::kBytes, 10.0);
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
