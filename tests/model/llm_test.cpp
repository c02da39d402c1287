// Sliding-window attention (model/llm.hpp): the keys a query attends to, averaged over the
// layers, and the query-key pairs of a causal pass under a window.
#include <catch2/catch.hpp>

#include <algorithm>

#include "model/llm.hpp"
#include "tests/support.hpp"

namespace model_llm_test {

using namespace tiersim;

namespace {

// The pairs counted one query at a time: query i (from 1) attends to the new tokens j <= i and
// the cached ones, the last `window` keys of all of them.
CausalPairs brute_force(int queries, int offset, int window) {
  CausalPairs p;
  for (int i = 1; i <= queries; ++i) {
    const int keys = window > 0 ? std::min(offset + i, window) : offset + i;
    const int fresh = std::min(i, keys);
    p.diagonal += fresh;
    p.cached += keys - fresh;
  }
  return p;
}

// The same on a chunked layer: query i (at position offset + i) attends to the keys of its own
// chunk of `chunk` tokens up to itself; the new ones among them are those from offset + 1.
CausalPairs chunked_brute_force(int queries, int offset, int chunk) {
  CausalPairs p;
  for (int i = 1; i <= queries; ++i) {
    const int position = offset + i;
    const int start = (position - 1) / chunk * chunk + 1;  // the chunk's first position
    const int keys = position - start + 1;
    const int fresh = position - std::max(start, offset + 1) + 1;
    p.diagonal += fresh;
    p.cached += keys - fresh;
  }
  return p;
}

}  // namespace

TEST_CASE("a causal pass in chunks counts each query's own chunk up to itself",
          "[model][llm][window]") {
  for (const int chunk : {1, 7, 128, 8192})
    for (const int offset : {0, 3, 127, 128, 500, 9000})
      for (const int queries : {1, 5, 128, 129, 1000, 20000}) {
        INFO("chunk " << chunk << " offset " << offset << " queries " << queries);
        const CausalPairs want = chunked_brute_force(queries, offset, chunk);
        const CausalPairs got = chunked_causal_pairs(queries, offset, chunk);
        CHECK(got.diagonal == Approx(want.diagonal));
        CHECK(got.cached == Approx(want.cached));
      }
  // Within one chunk it is the causal pass itself.
  CHECK(chunked_causal_pairs(10, 4, 8192).diagonal == causal_pairs(10, 4, 0).diagonal);
  CHECK(chunked_causal_pairs(10, 4, 8192).cached == causal_pairs(10, 4, 0).cached);
  // A decode query past the first chunk sees its own chunk's keys, not the last chunk's width
  // (Llama 4: 8,192-token chunks on three of four layers).
  LlmSpec m = test::llama7b();  // 32 layers
  m.sliding_window = 8192;
  m.full_attention_layers = 8;
  m.chunked_attention = true;
  CHECK(mean_attended_context(m, 8000) == 8000);  // within the first chunk
  CHECK(mean_attended_context(m, 8192 + 100) == Approx((8 * 8292.0 + 24 * 100.0) / 32));
  CHECK(mean_attended_context(m, 2 * 8192) == Approx((8 * 16384.0 + 24 * 8192.0) / 32));
  // What such a cache holds at most is still the whole chunk.
  CHECK(mean_window_context(m, 8192 + 100) == Approx((8 * 8292.0 + 24 * 8192.0) / 32));
  m.chunked_attention = false;  // a window: the last 8,192 keys
  CHECK(mean_attended_context(m, 8192 + 100) == mean_window_context(m, 8192 + 100));
}

TEST_CASE("a causal pass under a window counts each query's last window keys",
          "[model][llm][window]") {
  for (const int window : {0, 1, 7, 128, 4096})
    for (const int offset : {0, 3, 127, 128, 500})
      for (const int queries : {1, 5, 128, 129, 1000}) {
        INFO("window " << window << " offset " << offset << " queries " << queries);
        const CausalPairs want = brute_force(queries, offset, window);
        const CausalPairs got = causal_pairs(queries, offset, window);
        CHECK(got.diagonal == Approx(want.diagonal));
        CHECK(got.cached == Approx(want.cached));
      }
  // Without a window (or within it): the full causal triangle and every cached key.
  CHECK(causal_pairs(10, 4, 0).diagonal == 55);
  CHECK(causal_pairs(10, 4, 0).cached == 40);
  CHECK(causal_pairs(10, 4, 14).cached == 40);
}

TEST_CASE("past the window a sliding layer attends to the window, a full layer to everything",
          "[model][llm][window]") {
  LlmSpec m = test::llama7b();                    // 32 layers
  CHECK(mean_window_context(m, 10000) == 10000);  // no window
  m.sliding_window = 4096;
  CHECK(m.sliding_layers() == 32);
  CHECK(mean_window_context(m, 4000) == 4000);  // within the window: every token
  CHECK(mean_window_context(m, 10000) == 4096);
  // Half the layers full (Gemma-2, gpt-oss): the mean of the two.
  m.full_attention_layers = 16;
  CHECK(m.sliding_layers() == 16);
  CHECK(mean_window_context(m, 10000) == Approx((10000 + 4096) / 2.0));
  // Summed over the layers it is what each layer attends to.
  CHECK(32 * mean_window_context(m, 10000) == Approx(16 * 10000 + 16 * 4096));
  m.full_attention_layers = 32;
  CHECK(m.sliding_layers() == 0);
  CHECK(mean_window_context(m, 10000) == 10000);
}

}  // namespace model_llm_test
