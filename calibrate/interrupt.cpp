#include "calibrate/interrupt.hpp"

#include <signal.h>

namespace tiersim::calibrate {

namespace {

// The one piece of global mutable state in calibration: a signal handler can reach nothing else.
// Lock-free atomics are async-signal-safe.
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

struct sigaction g_old_int {};
struct sigaction g_old_term {};

extern "C" void on_signal(int sig) {
  g_signal.store(sig, std::memory_order_relaxed);
  g_stop.store(true, std::memory_order_relaxed);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_stop.store(false);
  g_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a blocked io_uring_enter returns -EINTR and the loop looks at the flag.
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

const std::atomic<bool>* InterruptGuard::flag() const { return &g_stop; }

int InterruptGuard::signal_received() { return g_signal.load(); }

int InterruptGuard::exit_code() {
  const int sig = g_signal.load();
  return 128 + (sig != 0 ? sig : SIGINT);
}

}  // namespace tiersim::calibrate
