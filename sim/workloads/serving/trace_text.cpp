#include "sim/workloads/serving/trace_text.hpp"

#include <charconv>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "model/errors.hpp"
#include "model/files.hpp"

namespace tiersim::sim {

TraceLines::TraceLines(const std::string& path) {
  check_input_file(path, "trace file", kMaxTraceFileBytes, kTraceKey);
  in_.open(path, std::ios::binary);
  if (!in_) throw ConfigError(path, 0, kTraceKey, "cannot open the trace file");
}

bool TraceLines::next(std::string& line) {
  while (std::getline(in_, line)) {
    ++line_no_;
    if (line_no_ == 1) strip_utf8_bom(line);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    const auto b = cell.find_first_not_of(" \t\"");
    const auto e = cell.find_last_not_of(" \t\"");
    out.push_back(b == std::string::npos ? std::string() : cell.substr(b, e - b + 1));
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

bool decimal_text(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
}

namespace {

// The whole of `text` as a finite double, decimal only; nullopt for anything else, including a
// number out of double's range ("1e999", where std::stod throws).
std::optional<double> parse_decimal(const std::string& text) {
  if (!decimal_text(text)) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<double> parse_whole(const std::string& text, double max) {
  const auto v = parse_decimal(text);
  if (!v || *v < 0 || *v > max || *v != std::floor(*v)) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parse_id(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::optional<double> parse_seconds(const std::string& text) {
  const auto v = parse_decimal(text);
  if (!v || *v < 0) return std::nullopt;
  return v;
}

void check_context(const std::string& path, int line, const Request& r, int context_tokens) {
  if (context_tokens > 0 && r.prompt_tokens + r.output_tokens > context_tokens)
    throw ConfigError(path, line, kTraceKey,
                      "prompt + output = " + std::to_string(r.prompt_tokens + r.output_tokens) +
                          " tokens exceeds the model's context of " +
                          std::to_string(context_tokens) + " tokens (model.max_positions)");
}

void sort_by_arrival(std::vector<Request>& requests) {
  std::stable_sort(requests.begin(), requests.end(),
                   [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  if (requests.empty()) return;
  const double t0 = requests.front().arrival_s;
  for (auto& r : requests) r.arrival_s -= t0;
}

}  // namespace tiersim::sim
