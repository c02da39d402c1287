#include "sim/workloads/serving/prefix_stream.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include "model/errors.hpp"
#include "model/files.hpp"
#include "sim/workloads/serving/trace_text.hpp"

namespace tiersim::sim {

namespace {

// Mooncake's traces hash blocks of 512 tokens (kvcache-ai/Mooncake FAST25-release/traces README;
// NVIDIA Dynamo's benchmarks/data_generator README: "block_size ... 512").
constexpr int kMooncakeBlockTokens = 512;

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a of a conversation id (any text), the stream key of its blocks.
std::uint64_t text_key(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// Hashes of the full blocks of `tokens` tokens of one stream, after the first `from` blocks.
void append_hashes(std::vector<std::uint64_t>& out, std::uint64_t stream, std::size_t from,
                   long tokens, int block_tokens) {
  const auto n = static_cast<std::size_t>(tokens / block_tokens);
  for (std::size_t i = from; i < n; ++i) out.push_back(block_hash(stream, i));
}

// A minimal reader of one Mooncake JSON line: an object of numbers, strings and arrays of them.
class JsonLine {
 public:
  JsonLine(const std::string& text, const std::string& path, int line)
      : t_(text), path_(path), line_(line) {}

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const {
    throw ConfigError(path_, line_, kTraceKey,
                      (key.empty() ? std::string() : "key \"" + excerpt(key, 60) + "\": ") + msg);
  }

  // Calls on_number(key, text) for a number, on_array(key, elements) for an array (each element's
  // text, strings with their quotes), and ignores strings.
  template <class Number, class Array>
  void parse(Number on_number, Array on_array) {
    skip();
    expect('{');
    skip();
    if (peek() == '}') {
      ++i_;
      end_of_line();
      return;
    }
    std::string key;
    do {
      skip();
      key = string_token();
      skip();
      expect(':');
      skip();
      if (peek() == '[') {
        ++i_;
        std::vector<std::string> elements;
        skip();
        if (peek() == ']') {
          ++i_;
        } else {
          do {
            skip();
            elements.push_back(peek() == '"'
                                   ? std::string(1, '"').append(string_token()).append(1, '"')
                                   : scalar_token(key));
          } while (another(']', key, "in the array"));
        }
        on_array(key, elements);
      } else if (peek() == '"') {
        string_token();
      } else {
        on_number(key, scalar_token(key));
      }
    } while (another('}', key, "after the value"));
    end_of_line();
  }

 private:
  // One object per line: only white space may follow it.
  void end_of_line() {
    skip();
    if (i_ != t_.size()) fail("", "unexpected text after the JSON object");
  }
  char peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
  void skip() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  // After an element or a value: true at ',' (another follows), false at `close` (the end), both
  // consumed; anything else is an error saying `where` it was.
  bool another(char close, const std::string& key, const char* where) {
    skip();
    if (peek() == ',') {
      ++i_;
      return true;
    }
    if (peek() != close) fail(key, std::string("expected ',' or '") + close + "' " + where);
    ++i_;
    return false;
  }
  void expect(char c) {
    if (peek() != c)
      fail("", std::string("expected '") + c + "' (one JSON object per line, Mooncake's format)");
    ++i_;
  }
  std::string string_token() {
    expect('"');
    std::string out;
    while (i_ < t_.size() && t_[i_] != '"') {
      if (t_[i_] == '\\' && i_ + 1 < t_.size()) ++i_;
      out += t_[i_++];
    }
    expect('"');
    return out;
  }
  std::string scalar_token(const std::string& key) {
    const std::size_t b = i_;
    while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '-' ||
                              t_[i_] == '+' || t_[i_] == '.'))
      ++i_;
    if (i_ == b) fail(key, "expected a value");
    return t_.substr(b, i_ - b);
  }
  const std::string& t_;
  const std::string& path_;
  int line_;
  std::size_t i_ = 0;
};

}  // namespace

std::uint64_t block_hash(std::uint64_t stream, std::uint64_t index) {
  return mix(mix(stream + 0x9e3779b97f4a7c15ULL) ^ (index * 0x9e3779b97f4a7c15ULL + 1));
}

std::vector<Request> read_mooncake_trace(const std::string& path, int max_requests,
                                         int context_tokens, int block_tokens) {
  if (block_tokens != kMooncakeBlockTokens)
    throw ConfigError(path, 0, "workload.prefix_block_tokens",
                      "a Mooncake trace hashes blocks of 512 tokens; got " +
                          std::to_string(block_tokens) + " (set workload.prefix_block_tokens: 512)");
  TraceLines lines(path);
  std::vector<Request> requests;
  std::string line;
  double first_s = 0;  // the first request's arrival, for the span rule
  while (static_cast<int>(requests.size()) < max_requests && lines.next(line)) {
    const int line_no = lines.line_no();
    JsonLine json(line, path, line_no);
    std::optional<double> ts, input, output;
    bool has_hashes = false;
    Request r;
    json.parse(
        [&](const std::string& key, const std::string& text) {
          auto number = [&](std::optional<double>& into, double max, const char* what) {
            into = parse_whole(text, max);
            if (!into)
              json.fail(key, std::string("expected ") + what + ", got '" + excerpt(text, 60) + "'");
          };
          if (key == "timestamp")
            number(ts, 1e15, "a whole number of milliseconds >= 0");
          else if (key == "input_length")
            number(input, 1e9, "a whole number of tokens >= 1");
          else if (key == "output_length")
            number(output, 1e9, "a whole number of tokens >= 0");
          else if (key == "hash_ids")
            json.fail(key, "expected an array of block hash ids, got '" + excerpt(text, 60) + "'");
        },
        [&](const std::string& key, const std::vector<std::string>& elements) {
          if (key != "hash_ids") return;
          has_hashes = true;
          r.block_hashes.reserve(elements.size());
          for (std::size_t i = 0; i < elements.size(); ++i) {
            const auto id = parse_id(elements[i]);
            if (!id)
              json.fail(key, "element " + std::to_string(i) +
                                 ": expected a non-negative integer block hash id, got '" +
                                 excerpt(elements[i], 60) + "'");
            r.block_hashes.push_back(*id);
          }
        });
    if (!ts) json.fail("timestamp", "missing (arrival in milliseconds since the first request)");
    if (!input || *input < 1) json.fail("input_length", "missing or below 1 token");
    if (!output) json.fail("output_length", "missing");
    if (!has_hashes) json.fail("hash_ids", "missing (one id per 512-token block of the input)");
    r.arrival_s = *ts / 1000.0;
    if (requests.empty()) first_s = r.arrival_s;
    if (std::fabs(r.arrival_s - first_s) > kMaxTraceSpan_s)
      json.fail("timestamp", "more than " + std::to_string(static_cast<long long>(kMaxTraceSpan_s)) +
                                 " s (about 3 years) from the first request's; a trace spans at "
                                 "most that");
    r.prompt_tokens = static_cast<int>(*input);
    r.output_tokens = std::max(1, static_cast<int>(*output));
    const auto blocks = static_cast<std::size_t>((r.prompt_tokens + block_tokens - 1) / block_tokens);
    if (r.block_hashes.size() > blocks)
      json.fail("hash_ids", std::to_string(r.block_hashes.size()) + " block ids for " +
                                std::to_string(r.prompt_tokens) + " input tokens, which span " +
                                std::to_string(blocks) + " blocks of 512");
    check_context(path, line_no, r, context_tokens);
    requests.push_back(std::move(r));
  }
  if (requests.empty())
    throw ConfigError(path, lines.line_no(), kTraceKey, "the trace has no requests");
  sort_by_arrival(requests);
  return requests;
}

std::vector<Request> read_conversation_trace(const std::string& path, int max_requests,
                                             int context_tokens, int block_tokens) {
  if (block_tokens < 1)
    throw ConfigError(path, 0, "workload.prefix_block_tokens", "must be at least 1 token");
  TraceLines lines(path);
  std::string line;
  std::vector<std::string> header;
  if (lines.next(line)) header = split_csv(line);
  int line_no = lines.line_no();
  const char* names[] = {"conversation_id", "turn", "arrival_s", "prompt_tokens", "output_tokens"};
  int col[5];
  for (int k = 0; k < 5; ++k) {
    const auto it = std::find(header.begin(), header.end(), names[k]);
    if (it == header.end())
      throw ConfigError(path, line_no, kTraceKey,
                        std::string("expected a header with the columns conversation_id,turn,"
                                    "arrival_s,prompt_tokens,output_tokens; no column ") +
                            names[k]);
    col[k] = static_cast<int>(it - header.begin());
  }
  const auto needed = static_cast<std::size_t>(*std::max_element(col, col + 5)) + 1;
  struct Conversation {
    int turn = 0;
    double arrival_s = 0;
    long history = 0;  // tokens of the last prompt and its answer
    std::uint64_t key = 0;
  };
  std::map<std::string, Conversation> conversations;
  std::vector<Request> requests;
  double first_s = 0;  // the first request's arrival, for the span rule
  while (static_cast<int>(requests.size()) < max_requests && lines.next(line)) {
    line_no = lines.line_no();
    const auto cells = split_csv(line);
    auto fail = [&](int k, const std::string& msg) {
      throw ConfigError(path, line_no, kTraceKey, std::string("column ") + names[k] + ": " + msg);
    };
    if (cells.size() < needed)
      throw ConfigError(path, line_no, kTraceKey,
                        "expected " + std::to_string(header.size()) +
                            " comma-separated columns, got " + std::to_string(cells.size()));
    auto cell = [&](int k) -> const std::string& { return cells[static_cast<std::size_t>(col[k])]; };
    const std::string& id = cell(0);
    if (id.empty()) fail(0, "empty conversation id");
    // The cells as they may appear in a message (model/files.hpp: never a whole huge line).
    auto quoted = [&](int k) {
      std::string q(1, '\'');
      q += excerpt(cell(k), 60);
      q += '\'';
      return q;
    };
    const auto turn = parse_whole(cell(1), 1e9);
    if (!turn || *turn < 1) fail(1, "expected a turn number >= 1, got " + quoted(1));
    const auto when = parse_seconds(cell(2));
    if (!when) fail(2, "expected an arrival time in seconds >= 0, got " + quoted(2));
    if (requests.empty()) first_s = *when;
    if (std::fabs(*when - first_s) > kMaxTraceSpan_s)
      fail(2, "arrival " + quoted(2) + " is more than " +
                  std::to_string(static_cast<long long>(kMaxTraceSpan_s)) +
                  " s (about 3 years) from the first request's; a trace spans at most that");
    const auto prompt = parse_whole(cell(3), 1e9), output = parse_whole(cell(4), 1e9);
    if (!prompt || *prompt < 1) fail(3, "expected a prompt length >= 1, got " + quoted(3));
    if (!output) fail(4, "expected an output length >= 0, got " + quoted(4));
    Conversation& c = conversations[id];
    const int t = static_cast<int>(*turn);
    if (t != c.turn + 1)
      fail(1, "turn " + std::to_string(t) + " of conversation '" + excerpt(id, 60) + "' " +
                  (c.turn == 0 ? std::string("is its first row")
                               : "follows turn " + std::to_string(c.turn)) +
                  "; expected turn " + std::to_string(c.turn + 1) +
                  " (turns are numbered 1, 2, ... in arrival order)");
    if (c.turn > 0 && *when < c.arrival_s)
      fail(2, "turn " + std::to_string(t) + " of conversation '" + excerpt(id, 60) +
                  "' arrives at " + excerpt(cell(2), 60) + " s, before turn " +
                  std::to_string(c.turn));
    Request r;
    r.arrival_s = *when;
    r.prompt_tokens = static_cast<int>(*prompt);
    r.output_tokens = std::max(1, static_cast<int>(*output));
    check_context(path, line_no, r, context_tokens);
    // The history is append-only; a prompt shorter than the history (a client that dropped old
    // turns) starts a new stream of blocks.
    if (c.turn == 0 || r.prompt_tokens < c.history) c.key = text_key(id) + std::uint64_t(t);
    append_hashes(r.block_hashes, c.key, 0, long(r.prompt_tokens) + r.output_tokens,
                  block_tokens);
    r.session = text_key(id) | 1;
    c.turn = t;
    c.arrival_s = *when;
    c.history = long(r.prompt_tokens) + r.output_tokens;
    requests.push_back(std::move(r));
  }
  if (requests.empty())
    throw ConfigError(path, lines.line_no(), kTraceKey, "the trace has no requests");
  sort_by_arrival(requests);
  return requests;
}

double session_burn_in_s(const ServingWorkload& w) {
  // A session of two or more turns lasts a geometric number (mean w.turns) of exponential think
  // times: exponential with mean think_time * turns. Of the sessions that started burn-in
  // seconds before time 0, a share exp(-10) = 0.005% would still be live at 0.
  return 10.0 * w.think_time_s * w.turns;
}

std::vector<Request> synthetic_sessions(const ServingWorkload& w, int context_tokens,
                                        std::vector<Request>* past_turns) {
  const int B = w.prefix_block_tokens;
  // Streams of their own, so that each draw sequence depends on the seed alone.
  StreamRandom arrivals(static_cast<std::uint64_t>(w.seed) * 2 + 1);
  StreamRandom lengths(static_cast<std::uint64_t>(w.seed) * 2 + 2);
  StreamRandom sessions(mix(static_cast<std::uint64_t>(w.seed) ^ 0x5e55105e55105eULL));
  // Zipf popularity of the shared prompts: rank k (1-based) with weight k^-s.
  std::vector<double> cdf;
  for (int k = 1; k <= w.shared_prefixes; ++k)
    cdf.push_back((cdf.empty() ? 0.0 : cdf.back()) + std::pow(double(k), -w.prefix_zipf));
  const double session_gap_s = w.turns / w.arrival_rate_per_s;
  const double p_stop = 1.0 / w.turns;  // geometric number of turns with mean w.turns
  const auto wanted = static_cast<std::size_t>(w.requests);
  std::vector<Request> out;
  out.reserve(wanted + wanted / 4);
  // Session starts run from -burn_in, so that at time 0 the sessions in progress, their turns so
  // far and the turn rate are those of a server that has been up for long: a stationary stream,
  // as a trace cut from production traffic is (Mooncake's traces: an hour of a running
  // service), not one where every conversation begins with the run (which starts with first
  // turns only and reaches the configured turn rate after a few session lifetimes).
  double start = -session_burn_in_s(w), cutoff = std::numeric_limits<double>::infinity();
  std::size_t counted = 0;  // requests at time >= 0 so far
  for (std::uint64_t session = 0;; ++session) {
    start += w.arrival_cv == 1.0 ? arrivals.exponential(session_gap_s)
                                 : arrivals.gamma(session_gap_s, w.arrival_cv);
    // Sessions start in order: once one starts after the wanted-th arrival so far, no later one
    // can be among the first `wanted`.
    if (start > cutoff) break;
    long history_tokens = 0;
    std::uint64_t prefix_key = 0;
    if (!cdf.empty()) {
      const double u = sessions.uniform() * cdf.back();
      const auto rank = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
      prefix_key = mix(0x5a4ed0000ULL + static_cast<std::uint64_t>(rank));
      history_tokens = w.shared_prefix_tokens;
    }
    const std::uint64_t key = mix(0xc0417e55a7e0ULL ^ mix(session + 1));
    const auto shared_blocks = static_cast<std::size_t>(cdf.empty() ? 0 : history_tokens / B);
    double t = start;
    for (int turn = 0;; ++turn) {
      Request r;
      r.arrival_s = t;
      const int fresh =
          draw_length(lengths, w.prompt_dist, w.prompt_tokens, w.prompt_tokens_min, w.prompt_sigma);
      r.output_tokens =
          draw_length(lengths, w.output_dist, w.output_tokens, w.output_tokens_min, w.output_sigma);
      long prompt = history_tokens + fresh;
      if (context_tokens > 0 && prompt + r.output_tokens > context_tokens) {
        if (turn > 0) break;  // the conversation has filled the context window: it ends
        prompt = std::min<long>(prompt, context_tokens - 1);
        r.output_tokens = std::min<int>(r.output_tokens, context_tokens - int(prompt));
      }
      r.prompt_tokens = static_cast<int>(prompt);
      const long stream = prompt + r.output_tokens;
      history_tokens = stream;
      // A turn before time 0 is not served; the caller may keep it to warm its cache (every one
      // of the burn-in, ended sessions' too: their blocks take room in an LRU tier as they would
      // on a server that has been up for long).
      const bool before = t < 0;
      if (!before || past_turns) {
        for (std::size_t i = 0; i < static_cast<std::size_t>(stream / B); ++i)
          r.block_hashes.push_back(block_hash(i < shared_blocks ? prefix_key : key, i));
        r.session = key | 1;
        if (before)
          past_turns->push_back(std::move(r));
        else {
          out.push_back(std::move(r));
          ++counted;
        }
      }
      if (sessions.uniform() < p_stop) break;
      // A floor, then an exponential: the mean stays think_time.
      t += w.think_time_min_s + sessions.exponential(w.think_time_s - w.think_time_min_s);
    }
    if (counted >= wanted && std::isinf(cutoff)) {
      std::vector<double> times;
      times.reserve(out.size());
      for (const auto& r : out) times.push_back(r.arrival_s);
      std::nth_element(times.begin(), times.begin() + std::ptrdiff_t(wanted - 1), times.end());
      cutoff = times[wanted - 1];
    }
  }
  const auto by_arrival = [](const Request& a, const Request& b) {
    return a.arrival_s < b.arrival_s;
  };
  std::stable_sort(out.begin(), out.end(), by_arrival);
  out.resize(wanted);
  if (past_turns) std::stable_sort(past_turns->begin(), past_turns->end(), by_arrival);
  return out;
}

std::optional<std::vector<Request>> prefix_request_stream(const ServingWorkload& w,
                                                          int context_tokens,
                                                          std::vector<Request>* past_turns) {
  if (!w.trace.empty()) {
    // The first line tells the format; read under the input-file rule, as the readers are.
    TraceLines lines(w.trace);
    std::string first;
    lines.next(first);
    const auto b = first.find_first_not_of(" \t");
    if (b != std::string::npos && first[b] == '{')
      return read_mooncake_trace(w.trace, w.requests, context_tokens, w.prefix_block_tokens);
    if (first.find("conversation_id") != std::string::npos)
      return read_conversation_trace(w.trace, w.requests, context_tokens, w.prefix_block_tokens);
    return std::nullopt;
  }
  if (synthetic_sessions_apply(w)) return synthetic_sessions(w, context_tokens, past_turns);
  return std::nullopt;
}

}  // namespace tiersim::sim
