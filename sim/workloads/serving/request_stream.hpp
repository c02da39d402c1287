#pragma once
// The requests a serving run replays: when each arrives and how many tokens it brings and asks
// for. Synthetic streams are drawn from a seeded generator whose every step is defined here (the
// standard library's distributions differ between implementations), so the same seed gives the
// same requests on every machine.
#include <cstdint>
#include <string>
#include <vector>

#include "model/scenario.hpp"

namespace tiersim::sim {

struct Request {
  double arrival_s = 0;
  int prompt_tokens = 1;
  int output_tokens = 1;  // generated tokens; the first comes out of prefill
  // Prefix structure (prefix_stream.hpp): the hash of each KV block of workload.prefix_block_tokens
  // tokens, in order, from the first token; equal hashes mean equal contents and equal prefixes
  // (Mooncake's hash_ids). May run past the prompt into the output (a conversation's next turn
  // reuses it). Empty: nothing known about reuse.
  std::vector<std::uint64_t> block_hashes;
  std::uint64_t session = 0;  // the conversation it belongs to (a key; 0 = none known)
};

// A 64-bit generator with the distributions the request stream needs. std::mt19937_64 is fully
// specified by the standard; the transforms below are written out so they are too.
class StreamRandom {
 public:
  explicit StreamRandom(std::uint64_t seed) : state_(seed) {}
  double uniform();                 // in (0, 1)
  double normal();                  // standard normal (Box-Muller)
  double exponential(double mean);  // inverse transform
  // Gamma with the given mean and coefficient of variation (shape 1/cv^2; Marsaglia and Tsang,
  // "A simple method for generating gamma variables", ACM TOMS 26(3), 2000). cv 0 gives `mean`.
  double gamma(double mean, double cv);

 private:
  std::uint64_t next();  // SplitMix64 (Steele, Lea and Flood, OOPSLA 2014)
  std::uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0;
};

// One length from a prompt or output distribution (fixed, uniform in [min_value, value], or
// lognormal with median `value`).
int draw_length(StreamRandom& rng, ServingWorkload::Lengths dist, int value, int min_value,
                double sigma);

// The scenario's requests: read from workload.trace, or drawn from the arrival process and length
// distributions. Throws ConfigError naming the trace file and line for a bad trace row, and the
// key for lengths beyond the model's context. `past_turns`, where given, receives the turns that
// synthetic sessions made before time 0 (prefix_stream.hpp synthetic_sessions).
std::vector<Request> request_stream(const Scenario& s, std::vector<Request>* past_turns = nullptr);

// Reads a request trace: Azure's LLM inference trace (header TIMESTAMP, ContextTokens,
// GeneratedTokens; the 2023 files' "2023-11-16 18:17:03.9799600" and the 2024 files'
// "2024-05-10 00:00:00.009930+00:00" timestamps) or a plain CSV with header
// arrival_s,prompt_tokens,output_tokens. Arrivals are relative to the first request. At most
// `max_requests` rows are read. `context_tokens` > 0 bounds prompt + output of every row.
std::vector<Request> read_trace(const std::string& path, int max_requests, int context_tokens);

}  // namespace tiersim::sim
