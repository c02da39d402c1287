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

}  // namespace

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
