#pragma once
// SIGINT/SIGTERM during calibration: the handler only sets a flag; the benchmark loop sees it
// within one sampling window, the workers drain their in-flight I/O, and the destructors of the
// calibration files remove them. A second signal terminates at once (SA_RESETHAND).
#include <atomic>

namespace tiersim::calibrate {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers and clears the flag
  ~InterruptGuard();  // restores the previous handlers
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The flag the handler sets; pass it to run_point / run_calibration as their stop flag.
  const std::atomic<bool>* flag() const;
  // The signal that set the flag, 0 when none.
  static int signal_received();
  // The exit status of a program stopped by that signal, as a shell reports one killed by it:
  // 128 + signal number (SIGINT 130, SIGTERM 143); 130 when none was received.
  static int exit_code();
};

}  // namespace tiersim::calibrate
