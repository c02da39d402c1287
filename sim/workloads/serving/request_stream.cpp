#include "sim/workloads/serving/request_stream.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <optional>

#include "model/errors.hpp"
#include "model/files.hpp"
#include "sim/workloads/serving/prefix_stream.hpp"
#include "sim/workloads/serving/trace_text.hpp"

namespace tiersim::sim {

std::uint64_t StreamRandom::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double StreamRandom::uniform() {
  // 53 random bits, shifted by half a step so that neither 0 nor 1 comes out.
  return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
}

double StreamRandom::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double r = std::sqrt(-2.0 * std::log(uniform()));
  const double a = 2.0 * std::numbers::pi * uniform();
  spare_ = r * std::sin(a);
  has_spare_ = true;
  return r * std::cos(a);
}

double StreamRandom::exponential(double mean) {
  return -mean * std::log(uniform());
}

double StreamRandom::gamma(double mean, double cv) {
  if (cv <= 0) return mean;
  const double shape = 1.0 / (cv * cv);
  const double scale = mean / shape;
  // Shape < 1: draw at shape + 1 and scale by U^(1/shape) (Marsaglia and Tsang, section 6).
  const double k = shape < 1 ? shape + 1 : shape;
  const double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  double x = 0;
  while (true) {
    double z = 0, v = 0;
    do {
      z = normal();
      v = 1.0 + c * z;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform();
    if (std::log(u) < 0.5 * z * z + d - d * v + d * std::log(v)) {
      x = d * v;
      break;
    }
  }
  if (shape < 1) x *= std::pow(uniform(), 1.0 / shape);
  return x * scale;
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible Low-Level
// Date Algorithms", days_from_civil).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// A point in time as whole seconds since 1970 and the fraction of a second: a double of seconds
// since 1970 would round the traces' 100 ns ticks.
struct Timestamp {
  long long whole_s = 0;
  double fraction_s = 0;
  double minus(const Timestamp& t0) const {
    return static_cast<double>(whole_s - t0.whole_s) + (fraction_s - t0.fraction_s);
  }
};

// Reads exactly `n` decimal digits at text[pos] (no sign, no space, no hex): the fields of a
// timestamp have fixed widths, and anything sscanf's %d or %lf would also take ("+5", " 5",
// "nan", "inf", "0x1p4") is a malformed row, not a time.
std::optional<int> fixed_digits(const std::string& text, std::size_t pos, std::size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

bool leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap_year(y) ? 29 : kDays[m - 1];
}

// "YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM|Z]" (UTC when an offset is given; only differences
// between rows matter). On a malformed stamp, `why` names the field that is wrong.
std::optional<Timestamp> parse_timestamp(const std::string& text, std::string& why) {
  const auto y = fixed_digits(text, 0, 4), mo = fixed_digits(text, 5, 2),
             d = fixed_digits(text, 8, 2), h = fixed_digits(text, 11, 2),
             mi = fixed_digits(text, 14, 2), whole_sec = fixed_digits(text, 17, 2);
  if (!y || !mo || !d || !h || !mi || !whole_sec || text[4] != '-' || text[7] != '-' ||
      (text[10] != ' ' && text[10] != 'T') || text[13] != ':' || text[16] != ':') {
    why = "not of the form YYYY-MM-DD HH:MM:SS with decimal digits";
    return std::nullopt;
  }
  if (*mo < 1 || *mo > 12) {
    why = "month " + std::to_string(*mo) + " is not 1-12";
    return std::nullopt;
  }
  if (*d < 1 || *d > days_in_month(*y, *mo)) {
    why = "day " + std::to_string(*d) + " does not exist in " + std::to_string(*y) + "-" +
          text.substr(5, 2);
    return std::nullopt;
  }
  if (*h > 23 || *mi > 59 || *whole_sec > 60) {  // 60: a leap second
    why = "time of day " + text.substr(11, 8) + " is not 00:00:00-23:59:60";
    return std::nullopt;
  }
  std::size_t pos = 19;
  double fraction_s = 0;
  if (pos < text.size() && text[pos] == '.') {
    const std::size_t first = ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == first) {
      why = "no digits after the decimal point of the seconds";
      return std::nullopt;
    }
    // Only digits and one point are left here, which strtod reads in any locale's "C" form.
    const double sec = std::strtod(text.substr(17, pos - 17).c_str(), nullptr);
    fraction_s = sec - std::floor(sec);
  }
  long long offset_s = 0;
  const std::string rest = text.substr(pos);
  if (!rest.empty() && rest != "Z") {
    const auto oh = fixed_digits(rest, 1, 2), om = fixed_digits(rest, 4, 2);
    if (rest.size() != 6 || (rest[0] != '+' && rest[0] != '-') || !oh || rest[3] != ':' || !om) {
      why = "expected Z or a UTC offset +HH:MM after the seconds, got '" + rest + "'";
      return std::nullopt;
    }
    // UTC offsets in use span -12:00 to +14:00 (IANA tz database); 18:00 is ISO 8601's bound.
    if (*oh > 18 || *om > 59 || *oh * 60 + *om > 18 * 60) {
      why = "UTC offset " + rest + " is not within -18:00..+18:00";
      return std::nullopt;
    }
    offset_s = (rest[0] == '+' ? 1 : -1) * (*oh * 3600LL + *om * 60LL);
  }
  const long long days = days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d));
  return Timestamp{days * 86400 + *h * 3600LL + *mi * 60LL + *whole_sec - offset_s, fraction_s};
}

}  // namespace

std::vector<Request> read_trace(const std::string& path, int max_requests, int context_tokens) {
  TraceLines lines(path);
  auto fail = [&](int line, const std::string& msg) -> void {
    throw ConfigError(path, line, kTraceKey, msg);
  };
  std::string line;
  // Header: names the columns, in any order.
  std::vector<std::string> header;
  if (lines.next(line)) header = split_csv(line);
  if (header.empty()) fail(0, "the trace is empty (expected a header line and request rows)");
  auto column = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  const int ts = column("TIMESTAMP"), ctx = column("ContextTokens"),
            gen = column("GeneratedTokens");
  const int arr = column("arrival_s"), pr = column("prompt_tokens"), out = column("output_tokens");
  const bool azure = ts >= 0 && ctx >= 0 && gen >= 0;
  const bool plain = arr >= 0 && pr >= 0 && out >= 0;
  if (!azure && !plain)
    fail(lines.line_no(),
         "expected a header with the columns TIMESTAMP,ContextTokens,GeneratedTokens "
         "(Azure LLM inference trace) or arrival_s,prompt_tokens,output_tokens, got '" +
             excerpt(line) + "'");
  const int c_time = azure ? ts : arr, c_prompt = azure ? ctx : pr, c_out = azure ? gen : out;
  const std::size_t needed =
      static_cast<std::size_t>(std::max(c_time, std::max(c_prompt, c_out))) + 1;

  std::vector<Request> requests;
  std::optional<Timestamp> first_stamp;  // Azure rows are timed relative to the first row
  while (static_cast<int>(requests.size()) < max_requests && lines.next(line)) {
    const auto cells = split_csv(line);
    // As many cells as the header names, no fewer and no more: a stray comma (a thousands
    // separator, "0,1,020,10") shifts the columns after it, and the row would be read as other
    // numbers than it holds.
    if (cells.size() < needed || cells.size() != header.size())
      fail(lines.line_no(), "expected " + std::to_string(header.size()) +
                                " comma-separated columns (as the header names), got " +
                                std::to_string(cells.size()) + " in '" + excerpt(line) + "'");
    Request r;
    const std::string& t = cells[static_cast<std::size_t>(c_time)];
    double when = 0;
    bool have_time = false;
    std::string why;
    if (azure) {
      if (const auto stamp = parse_timestamp(t, why)) {
        if (!first_stamp) first_stamp = *stamp;
        when = stamp->minus(*first_stamp);
        have_time = true;
      }
    } else if (const auto seconds = parse_seconds(t)) {
      when = *seconds;
      have_time = true;
    }
    const std::string column_name = excerpt(header[static_cast<std::size_t>(c_time)], 40);
    if (!have_time)
      fail(lines.line_no(), std::string("expected ") +
                                (azure ? "a timestamp YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM]"
                                       : "an arrival time in seconds >= 0") +
                                " in column " + column_name + ", got '" + excerpt(t, 60) + "'" +
                                (why.empty() ? "" : " (" + why + ")"));
    if (std::fabs(when) > kMaxTraceSpan_s)
      fail(lines.line_no(),
           "the arrival in column " + column_name + " ('" + excerpt(t, 60) + "') is more than " +
               std::to_string(static_cast<long long>(kMaxTraceSpan_s)) +
               " s (about 3 years) from the first request's; a trace spans at most that");
    r.arrival_s = when;
    const auto prompt = parse_whole(cells[static_cast<std::size_t>(c_prompt)], 1e9);
    const auto output = parse_whole(cells[static_cast<std::size_t>(c_out)], 1e9);
    if (!prompt || *prompt < 1)
      fail(lines.line_no(), "expected a whole prompt length in 1..1e9 in column " +
                                excerpt(header[static_cast<std::size_t>(c_prompt)], 40) +
                                ", got '" + excerpt(cells[static_cast<std::size_t>(c_prompt)], 60) +
                                "'");
    if (!output)
      fail(lines.line_no(), "expected a whole output length in 0..1e9 in column " +
                                excerpt(header[static_cast<std::size_t>(c_out)], 40) + ", got '" +
                                excerpt(cells[static_cast<std::size_t>(c_out)], 60) + "'");
    r.prompt_tokens = static_cast<int>(*prompt);
    // A request always produces its first token (the one prefill samples); rows with 0 generated
    // tokens are counted as 1.
    r.output_tokens = std::max(1, static_cast<int>(*output));
    check_context(path, lines.line_no(), r, context_tokens);
    requests.push_back(r);
  }
  if (requests.empty()) fail(lines.line_no(), "the trace has a header but no request rows");
  // Arrival order (the Azure files are sorted; a plain CSV need not be), relative to the first.
  sort_by_arrival(requests);
  return requests;
}

int draw_length(StreamRandom& rng, ServingWorkload::Lengths dist, int value, int min_value,
                double sigma) {
  switch (dist) {
    case ServingWorkload::Lengths::kFixed:
      return value;
    case ServingWorkload::Lengths::kUniform: {
      const double span = double(value) - double(min_value) + 1.0;
      return min_value + std::min(value - min_value, static_cast<int>(rng.uniform() * span));
    }
    case ServingWorkload::Lengths::kLognormal: {
      const double x = std::exp(std::log(double(value)) + sigma * rng.normal());
      return static_cast<int>(std::clamp(std::round(x), 1.0, 1e9));
    }
  }
  return value;
}

std::vector<Request> request_stream(const Scenario& s, std::vector<Request>* past_turns) {
  const ServingWorkload& w = s.serving;
  // The model's context window where the catalog gives it (HF config max_position_embeddings).
  const int context = s.model.sources.count("max_positions") ? s.model.max_positions : 0;
  if (auto prefixed = prefix_request_stream(w, context, past_turns)) return std::move(*prefixed);
  if (!w.trace.empty()) return read_trace(w.trace, w.requests, context);

  std::vector<Request> out;
  out.reserve(static_cast<std::size_t>(w.requests));
  // Separate streams for arrivals and lengths, so that changing the rate keeps the same lengths.
  StreamRandom arrivals(static_cast<std::uint64_t>(w.seed) * 2 + 1);
  StreamRandom lengths(static_cast<std::uint64_t>(w.seed) * 2 + 2);
  const double mean_gap_s = 1.0 / w.arrival_rate_per_s;
  // The first request arrives at time 0 and each gap follows a request, as serving benchmarks
  // send them (vLLM benchmarks/serve.py get_request: `yield request`, then sleep the drawn
  // interval): the run's span, and so its request and token rates, holds no wait before the
  // first request (one request at a low rate used to run for one random gap, 69 years at 1e-9
  // requests/s, before it arrived).
  double t = 0;
  for (int i = 0; i < w.requests; ++i) {
    Request r;
    r.arrival_s = t;
    t += w.arrival_cv == 1.0 ? arrivals.exponential(mean_gap_s)
                             : arrivals.gamma(mean_gap_s, w.arrival_cv);
    r.prompt_tokens =
        draw_length(lengths, w.prompt_dist, w.prompt_tokens, w.prompt_tokens_min, w.prompt_sigma);
    r.output_tokens =
        draw_length(lengths, w.output_dist, w.output_tokens, w.output_tokens_min, w.output_sigma);
    if (context > 0) {
      // Lognormal draws have no upper bound: truncate to the context window, as serving
      // benchmarks filter their datasets (vLLM's ShareGPT filter drops prompts over 1024 and
      // prompt + output over 2048 tokens).
      r.prompt_tokens = std::min(r.prompt_tokens, context - 1);
      r.output_tokens = std::min(r.output_tokens, context - r.prompt_tokens);
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace tiersim::sim
