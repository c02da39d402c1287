#include "common/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace tiersim {

double monotonic_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string clock_text(double seconds) {
  const long long total = std::llround(std::max(0.0, seconds));
  char buf[64];
  if (total >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", total / 60, total % 60);
  return buf;
}

std::string eta_text(std::size_t done, std::size_t total, double elapsed_s,
                     double estimate_per_item_s, std::size_t min_done) {
  if (done >= total) return clock_text(0);
  const double per_item = done >= std::max<std::size_t>(min_done, 1) && elapsed_s > 0
                              ? elapsed_s / double(done)
                              : estimate_per_item_s;
  if (per_item <= 0) return "--:--";
  return clock_text(per_item * double(total - done));
}

ProgressLine::ProgressLine(std::ostream& os, bool tty, double log_interval_s)
    : os_(os), tty_(tty), log_interval_s_(log_interval_s) {}

void ProgressLine::update(const std::string& text, bool force) {
  const double t = monotonic_s();
  if (!force && t - last_s_ < (tty_ ? 0.1 : log_interval_s_)) return;
  last_s_ = t;
  if (tty_) {
    os_ << "\r\033[K" << text << std::flush;
    line_open_ = true;
  } else {
    os_ << text << "\n" << std::flush;
  }
}

void ProgressLine::message(const std::string& text) {
  if (tty_ && line_open_) os_ << "\r\033[K";
  os_ << text << "\n" << std::flush;
  line_open_ = false;
}

void ProgressLine::finish(const std::string& text) {
  if (tty_ && line_open_) os_ << "\r\033[K";
  os_ << text << "\n" << std::flush;
  line_open_ = false;
}

}  // namespace tiersim
