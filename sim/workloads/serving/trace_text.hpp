#pragma once
// The text rules every request-trace reader shares (the Azure / plain CSV reader of
// request_stream.hpp and the Mooncake JSONL / conversation CSV readers of prefix_stream.hpp): how a
// trace file is opened and its lines read, how a CSV line splits into cells, which number texts
// are accepted, and the context-window check. One place, so that the readers cannot drift apart
// (one accepting "0x10" or "nan" where another refuses it).
#include <fstream>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/workloads/serving/request_stream.hpp"

namespace tiersim::sim {

// The scenario key every trace error names.
inline constexpr const char* kTraceKey = "workload.trace";

// The lines of a trace file, opened under the input-file rule (model/files.hpp: a regular file of
// at most kMaxTraceFileBytes, else ConfigError(path, 0, workload.trace) at once, before a FIFO
// could block the open or /dev/zero be read). Drops a UTF-8 byte order mark on the first line,
// a trailing '\r' (Windows line ends) and blank lines.
class TraceLines {
 public:
  explicit TraceLines(const std::string& path);
  // The next non-blank line into `line`; false at the end of the file.
  bool next(std::string& line);
  // The 1-based number of the line `next` returned last (0 before the first).
  int line_no() const { return line_no_; }

 private:
  std::ifstream in_;
  int line_no_ = 0;
};

// The cells of one CSV line: split at commas, spaces, tabs and double quotes trimmed from both
// ends of each cell; a trailing comma gives a last empty cell.
std::vector<std::string> split_csv(const std::string& line);

// Whether `text` holds only what a person writes in a decimal number: digits, a point, an
// exponent, signs. std::stod alone would also take "0x1p4", "inf" and "nan".
bool decimal_text(const std::string& text);

// A whole number in 0..max written in decimal ("12", "1.2e3"), else nullopt.
std::optional<double> parse_whole(const std::string& text, double max);

// A finite number of seconds >= 0 written in decimal, else nullopt.
std::optional<double> parse_seconds(const std::string& text);

// An identifier written as a whole decimal number in 0..2^64-1 ("123"), read exactly (not through
// a double, which would merge ids above 2^53), else nullopt.
std::optional<std::uint64_t> parse_id(const std::string& text);

// Arrivals span at most this long, in seconds: a later arrival is a malformed row (a typo'd year,
// 1e308), not a workload, and would reach the energy and cost models as an absurd duration.
inline constexpr double kMaxTraceSpan_s = 1e8;  // about 3.2 years

// Throws ConfigError(path, line, workload.trace) when the request's prompt and output do not fit
// the model's context of `context_tokens` tokens (0: unknown, no check).
void check_context(const std::string& path, int line, const Request& r, int context_tokens);

// Orders requests by arrival (stable: equal arrivals keep the file's order) and times them from
// the first.
void sort_by_arrival(std::vector<Request>& requests);

}  // namespace tiersim::sim
