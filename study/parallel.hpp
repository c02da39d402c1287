#pragma once
// Runs fn(i) for i in [0, n) on up to `threads` threads (0 = every hardware thread), the calling
// thread included. Each simulation owns its engine and the loader and catalog are read-only, so
// the studies (plan, sensitivity, break-even, whatif) run their points this way. The first
// exception thrown by fn stops handing out indices and is rethrown here after every thread ends.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tiersim::study {

template <class F>
void parallel_for(std::size_t n, int threads, F&& fn) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t t = std::min<std::size_t>(threads > 0 ? std::size_t(threads) : hw,
                                              std::max<std::size_t>(1, n));
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex mu;
  auto work = [&] {
    for (std::size_t i; (i = next++) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failure) failure = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < t; ++k) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace tiersim::study
