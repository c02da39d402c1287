#pragma once
// Requests that carry their prefix structure: which KV blocks of a prompt another request already
// computed. Three sources, each seeded and deterministic:
//   - Mooncake's trace (Qin et al., "Mooncake", FAST 2025; kvcache-ai/Mooncake FAST25-release
//     traces): JSON lines {"timestamp": ms since the first request, "input_length",
//     "output_length", "hash_ids": one id per 512-token block of the input, equal ids = equal
//     prefix}. Other keys (a "session_id" in NVIDIA's derived traces) are ignored.
//   - a conversation CSV: conversation_id,turn,arrival_s,prompt_tokens,output_tokens, the prompt
//     being the whole input of the turn (the history plus the new message), turns numbered 1, 2,
//     ... in arrival order within a conversation;
//   - synthetic sessions: conversations with a geometric number of turns and exponential think
//     times (above a floor, workload.think_time_min, where given), each opening with a system prompt drawn from a shared pool with a Zipf popularity;
//     sessions start as a Poisson (or gamma) process that has been running since long before
//     the first request, so the stream is stationary from its start, as a production trace is.
// A conversation's token stream is append-only (each turn's prompt = the previous prompt, its
// answer and the new message), so block i of a conversation has the same contents in every turn
// that holds it: its hash is block_hash(conversation key, i). Blocks wholly inside a shared system
// prompt hash by the prompt's key instead, so sessions that share it share them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/workloads/serving/request_stream.hpp"

namespace tiersim::sim {

// The hash of block `index` of the token stream named by `stream` (SplitMix64 finalisers; a
// collision between two streams' blocks is a 2^-64 event).
std::uint64_t block_hash(std::uint64_t stream, std::uint64_t index);

// Mooncake JSONL: `block_tokens` must be 512, the traces' block. Errors name the file, the line and
// the JSON key.
std::vector<Request> read_mooncake_trace(const std::string& path, int max_requests,
                                         int context_tokens, int block_tokens);
// Conversation CSV (header conversation_id,turn,arrival_s,prompt_tokens,output_tokens).
std::vector<Request> read_conversation_trace(const std::string& path, int max_requests,
                                             int context_tokens, int block_tokens);
// Synthetic sessions: the first `w.requests` turns at or after time 0, in arrival order, of
// sessions that start at w.arrival_rate / w.turns per second (so that turns arrive at
// w.arrival_rate). Session starts begin session_burn_in_s(w) before time 0, so that the stream is
// stationary from its first request: the sessions in progress, their histories and the turn rate
// are those of a service that has been up for long. `past_turns`, where given, receives the turns
// before time 0 (arrival_s < 0), in arrival order: the KV blocks a server has cached by time 0.
std::vector<Request> synthetic_sessions(const ServingWorkload& w, int context_tokens,
                                        std::vector<Request>* past_turns = nullptr);
// How long before time 0 the session starts begin [s]: ten mean lifetimes of a multi-turn
// session (think_time x turns), so that all but exp(-10) of the sessions live at 0 have begun.
double session_burn_in_s(const ServingWorkload& w);

// Whether the scenario's synthetic requests are sessions (synthetic_sessions): turns that resend
// their history, or prompts that open with a shared prefix. Their prompts are then longer than
// workload.prompt_tokens, and partly cached.
inline bool synthetic_sessions_apply(const ServingWorkload& w) {
  return w.turns > 1 || w.shared_prefixes > 0;
}

// The requests of a scenario whose stream has prefix structure (a Mooncake or conversation trace,
// or synthetic sessions: workload.turns > 1 or workload.shared_prefixes > 0); nullopt otherwise,
// where the plain readers and generator of request_stream.hpp apply.
// `past_turns`: as for synthetic_sessions (traces have none).
std::optional<std::vector<Request>> prefix_request_stream(
    const ServingWorkload& w, int context_tokens, std::vector<Request>* past_turns = nullptr);

}  // namespace tiersim::sim
