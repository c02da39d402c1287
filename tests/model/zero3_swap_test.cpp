#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "model/errors.hpp"
#include "model/layout.hpp"
#include "model/llm.hpp"
#include "model/zero3_swap.hpp"

namespace model_zero3_swap_test {

using namespace tiersim;
using Kind = Zero3SwapAction::Kind;

// A decoder layer's hooks as zero3_hook_steps gives them for OPT (q, k, v, o, fc1, fc2 with the
// param-less hooks between), over `layers` layers: the parameters' elements and the hooks.
struct Pass {
  std::vector<double> elements;
  std::vector<int> hooks;
};
Pass opt_like(int layers, double hidden, double ffn) {
  Pass p;
  const double h2 = hidden * hidden, hf = hidden * ffn;
  for (int l = 0; l < layers; ++l)
    for (double e : {-1.0, -1.0, -1.0, h2, h2, h2, h2, -1.0, hf, -1.0, hf}) {
      if (e < 0) {
        p.hooks.push_back(-1);
        continue;
      }
      p.hooks.push_back(static_cast<int>(p.elements.size()));
      p.elements.push_back(e);
    }
  return p;
}

// The most reads in flight (issued, not yet waited for) while a parameter is copied to the GPU.
int reads_beside_copies(const std::vector<Zero3SwapAction>& actions) {
  int in_flight = 0, most = 0;
  for (const auto& a : actions) {
    if (a.kind == Kind::kIssue) ++in_flight;
    if (a.kind == Kind::kWait) in_flight = 0;
    if (a.kind == Kind::kGather) most = std::max(most, in_flight);
  }
  return most;
}

// Every parameter is gathered once, in order, and only after a wait that followed its read.
void check_well_formed(const std::vector<Zero3SwapAction>& actions, std::size_t params) {
  std::vector<int> state(params, 0);  // 0 on NVMe, 1 reading, 2 read, 3 gathered
  int gathered = 0;
  for (const auto& a : actions) {
    if (a.kind == Kind::kWait) {
      for (int& s : state)
        if (s == 1) s = 2;
      continue;
    }
    const auto p = static_cast<std::size_t>(a.param);
    REQUIRE(p < params);
    if (a.kind == Kind::kIssue) {
      CHECK(state[p] == 0);
      state[p] = 1;
    } else {
      CHECK(state[p] == 2);
      CHECK(a.param == gathered++);
      state[p] = 3;
    }
  }
  CHECK(gathered == static_cast<int>(params));
}

TEST_CASE("without prefetching each parameter is read, waited for and gathered in its hook",
          "[model][zero3]") {
  const Pass p = opt_like(2, 1024, 4096);
  Zero3Settings z;
  z.prefetch_bucket_size = 0;
  const auto actions = zero3_v07_swap_schedule(p.elements, p.hooks, z, 5);
  REQUIRE(actions.size() == 3 * p.elements.size());
  for (std::size_t i = 0; i < p.elements.size(); ++i) {
    CHECK(actions[3 * i].kind == Kind::kIssue);
    CHECK(actions[3 * i + 1].kind == Kind::kWait);
    CHECK(actions[3 * i + 2].kind == Kind::kGather);
    CHECK(actions[3 * i + 2].param == static_cast<int>(i));
  }
}

TEST_CASE("parameters gathered ahead keep their swap buffers, so few buffers read one at a time",
          "[model][zero3]") {
  // OPT-30B's layers at DeepSpeed's defaults: the gather prefetch, run by every hook, stays
  // ahead of the hooks using the parameters, and the parameters it gathered hold their buffers
  // until their modules ran; with 5 buffers one read at a time is left beside the copies, with
  // 16 several are.
  const Pass p = opt_like(8, 7168, 28672);
  const Zero3Settings z;  // bucket 5e7, max live 1e9
  const auto five = zero3_v07_swap_schedule(p.elements, p.hooks, z, 5);
  check_well_formed(five, p.elements.size());
  CHECK(reads_beside_copies(five) == 1);
  const auto sixteen = zero3_v07_swap_schedule(p.elements, p.hooks, z, 16);
  check_well_formed(sixteen, p.elements.size());
  CHECK(reads_beside_copies(sixteen) >= 3);
}

TEST_CASE("stage3_max_live_parameters stopping the gather prefetch frees buffers for reads",
          "[model][zero3]") {
  // BLOOM-176B's FFN matrices (822M elements each): with one of them gathered and in use, the
  // 1e9 live elements leave no room to gather the next ahead, so its buffer stays free and the
  // NVMe prefetch keeps more reads in flight beside the copies than with OPT-30B's layers.
  Pass bloom;
  const double h = 14336, h2 = h * h;
  for (int l = 0; l < 8; ++l)
    for (double e : {-1.0, -1.0, -1.0, 3 * h2, -1.0, h2, -1.0, -1.0, 4 * h2, -1.0, 4 * h2}) {
      bloom.hooks.push_back(e < 0 ? -1 : static_cast<int>(bloom.elements.size()));
      if (e > 0) bloom.elements.push_back(e);
    }
  const Zero3Settings z;
  const auto actions = zero3_v07_swap_schedule(bloom.elements, bloom.hooks, z, 5);
  check_well_formed(actions, bloom.elements.size());
  CHECK(reads_beside_copies(actions) >= 2);
  Zero3Settings roomy = z;
  roomy.max_live_parameters = 1e12;
  CHECK(reads_beside_copies(zero3_v07_swap_schedule(bloom.elements, bloom.hooks, roomy, 5)) == 1);
}

TEST_CASE("the swap schedule's hooks must use their parameters in order", "[model][zero3]") {
  const std::vector<double> elements = {1e6, 1e6};
  const std::vector<int> swapped = {1, 0};
  CHECK_THROWS_AS(zero3_v07_swap_schedule(elements, swapped, Zero3Settings{}, 5), ModelError);
}

TEST_CASE("module hooks follow the Hugging Face module structure", "[model][zero3]") {
  Policy pol;
  LlmSpec opt;
  opt.family = "opt";
  opt.layers = 2;
  opt.hidden = 64;
  opt.heads = 4;
  opt.kv_heads = 4;
  opt.ffn = 256;
  opt.vocab = 100;
  const auto modules = weight_modules(opt, pol);
  const auto layer = zero3_hook_steps(opt, modules[1]);
  REQUIRE(layer);
  REQUIRE(layer->size() == 11);
  CHECK((*layer)[3] == std::vector<int>{0});  // q_proj, after the layer, its norm and self_attn
  CHECK((*layer)[9].empty());                 // activation_fn between fc1 and fc2
  LlmSpec bloom = opt;
  bloom.family = "bloom";
  const auto fused = zero3_hook_steps(bloom, modules[1]);
  REQUIRE(fused);
  CHECK((*fused)[3] == std::vector<int>{0, 1, 2});  // query_key_value: one parameter
  LlmSpec llama = opt;
  llama.family = "llama";
  CHECK_FALSE(zero3_hook_steps(llama, modules[1]));
  CHECK(zero3_hook_steps(llama, modules.front()));  // the embedding's hook is the same
}

}  // namespace model_zero3_swap_test
