// The progress line of long commands (common/progress.hpp): its clock and ETA texts, and the two
// ways it prints: redrawn in place on a terminal, plain lines no more often than asked in a log.
#include "common/progress.hpp"

#include <catch2/catch.hpp>
#include <sstream>

namespace common_progress_test {

using namespace tiersim;

TEST_CASE("durations read as m:ss below an hour and h:mm:ss from it", "[common][progress]") {
  CHECK(clock_text(0) == "0:00");
  CHECK(clock_text(-5) == "0:00");
  CHECK(clock_text(59.4) == "0:59");
  CHECK(clock_text(59.6) == "1:00");
  CHECK(clock_text(3599) == "59:59");
  CHECK(clock_text(3600) == "1:00:00");
  CHECK(clock_text(36 * 3600 + 61) == "36:01:01");
}

TEST_CASE("the time left comes from the measured rate once enough items are done",
          "[common][progress]") {
  CHECK(eta_text(0, 10, 0) == "--:--");          // nothing measured, no estimate
  CHECK(eta_text(0, 10, 0, 6.0) == "1:00");      // the estimate: 10 x 6 s
  CHECK(eta_text(5, 10, 50) == "0:50");          // measured: 10 s each, 5 left
  CHECK(eta_text(2, 10, 4, 60.0, 3) == "8:00");  // fewer than min_done: 8 left x the estimate
  CHECK(eta_text(10, 10, 99) == "0:00");         // done
}

TEST_CASE("a log gets plain lines no more often than its interval; a terminal one redrawn line",
          "[common][progress]") {
  std::ostringstream log;
  ProgressLine plain(log, /*tty=*/false, /*log_interval_s=*/3600);
  plain.update("1 of 3");
  plain.update("2 of 3");  // within the interval: not printed
  plain.update("3 of 3", /*force=*/true);
  plain.message("a note");
  plain.finish("done");
  CHECK(log.str() == "1 of 3\n3 of 3\na note\ndone\n");

  std::ostringstream term;
  ProgressLine redrawn(term, /*tty=*/true);
  redrawn.update("1 of 2", true);
  redrawn.update("2 of 2", true);
  redrawn.finish("done");
  CHECK(term.str() == "\r\033[K1 of 2\r\033[K2 of 2\r\033[Kdone\n");
}

}  // namespace common_progress_test
