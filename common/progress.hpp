#pragma once
// The one progress display of long commands (sweep, plan, calibrate): a status line on a stream
// (stderr). On a terminal the line is redrawn in place, at most ten times a second; in a log (CI,
// a file) each update is a plain line of its own, at most one per `log_interval_s`, so a log
// stays readable. In common/ (not a model): every library folder can reach it.
#include <cstddef>
#include <ostream>
#include <string>

namespace tiersim {

// Seconds on a monotonic clock.
double monotonic_s();

// A duration as "m:ss" (below an hour) or "h:mm:ss"; negative durations show as 0:00.
std::string clock_text(double seconds);

// Time left for `total` items when `done` took `elapsed_s`: from the measured rate once
// `min_done` items are done, from `estimate_per_item_s` before that (0: unknown, "--:--").
std::string eta_text(std::size_t done, std::size_t total, double elapsed_s,
                     double estimate_per_item_s = 0, std::size_t min_done = 1);

class ProgressLine {
 public:
  // `log_interval_s` 0: every update is printed (one line per calibration point).
  ProgressLine(std::ostream& os, bool tty, double log_interval_s = 5.0);
  bool tty() const { return tty_; }
  // Shows `text` if enough time has passed since the last update (always with `force`).
  void update(const std::string& text, bool force = false);
  // A line of its own above the status line (terminal) or between updates (log).
  void message(const std::string& text);
  // Ends the status line and prints `text` as the last line.
  void finish(const std::string& text);

 private:
  std::ostream& os_;
  bool tty_;
  double log_interval_s_;
  double last_s_ = -1e300;
  bool line_open_ = false;  // a redrawn line is on the terminal without its newline
};

}  // namespace tiersim
