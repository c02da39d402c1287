#include "sim/engine/frame_pool.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "sim/engine/engine.hpp"

namespace sim_engine_frame_pool_test {

using namespace tiersim::sim;

TEST_CASE("frame pool hands out distinct, aligned, writable blocks of every size", "[engine]") {
  std::vector<std::pair<void*, std::size_t>> blocks;
  std::set<void*> seen;
  for (std::size_t bytes : {1u, 63u, 64u, 65u, 200u, 4096u, 4097u, 100000u})
    for (int i = 0; i < 50; ++i) {
      void* p = frame_pool::allocate(bytes);
      REQUIRE(p != nullptr);
      CHECK(reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t) == 0);
      CHECK(seen.insert(p).second);
      std::memset(p, 0xab, bytes);  // the whole block is ours (ASan checks this)
      blocks.emplace_back(p, bytes);
    }
  for (auto [p, bytes] : blocks) frame_pool::deallocate(p, bytes);
  // Freed blocks are reused or returned; allocating again still gives usable memory.
  void* again = frame_pool::allocate(200);
  std::memset(again, 0, 200);
  frame_pool::deallocate(again, 200);
}

namespace {
Task tick(Engine& e, int n, int& done) {
  for (int i = 0; i < n; ++i) co_await e.delay(1.0);
  ++done;
}
Task parent(Engine& e, int& done) {
  for (int i = 0; i < 100; ++i) co_await tick(e, 2, done);
}
}  // namespace

TEST_CASE("processes on pooled frames run to completion many times over", "[engine]") {
  // Frames recycled between runs and between sub-tasks must not carry anything over.
  for (int run = 0; run < 3; ++run) {
    Engine e;
    int done = 0;
    for (int p = 0; p < 20; ++p) e.spawn(parent(e, done));
    e.run();
    CHECK(done == 2000);
    CHECK(e.now() == 200.0);
  }
}
}  // namespace sim_engine_frame_pool_test
