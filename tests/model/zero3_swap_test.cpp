#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
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
  const Zero3Settings z;
  const auto layer = zero3_hook_steps(opt, modules[1], z);
  REQUIRE(layer);
  REQUIRE(layer->size() == 11);
  CHECK((*layer)[1].empty());                 // the norm persists at the default threshold
  CHECK((*layer)[3] == std::vector<int>{0});  // q_proj, after the layer, its norm and self_attn
  CHECK((*layer)[9].empty());                 // activation_fn between fc1 and fc2
  // Threshold 0 (FlexGen's hf_opt.py): nothing persists, so the norms' hooks fetch them and each
  // Linear's hook its bias with its weight.
  Zero3Settings none = z;
  none.param_persistence_threshold = 0;
  const auto all = zero3_hook_steps(opt, modules[1], none);
  REQUIRE(all);
  const int small = static_cast<int>(modules[1].tensors.size()) - 1;
  REQUIRE(std::string(modules[1].tensors.back().name) == "norms_biases");
  CHECK((*all)[1] == std::vector<int>{small});
  CHECK((*all)[3] == std::vector<int>{0, small});
  LlmSpec bloom = opt;
  bloom.family = "bloom";
  const auto fused = zero3_hook_steps(bloom, modules[1], z);
  REQUIRE(fused);
  CHECK((*fused)[3] == std::vector<int>{0, 1, 2});  // query_key_value: one parameter
  LlmSpec llama = opt;
  llama.family = "llama";
  CHECK_FALSE(zero3_hook_steps(llama, modules[1], z));
  CHECK(zero3_hook_steps(llama, modules.front(), z));  // the embedding's hook is the same
}

TEST_CASE("v0.7's gather calls: own parameters not yet gathered, then the bucket's prefetch",
          "[model][zero3]") {
  // A param-less hook, then two Linears of 6e7-element weights with 7168-element biases
  // (parameters numbered weight, bias, weight, bias).
  const std::vector<std::vector<double>> hooks = {{}, {6e7, 7168}, {6e7, 7168}};
  Zero3Settings z;  // DeepSpeed's defaults: persistence 1e5, bucket 5e7, max live 1e9
  // The biases persist: the prefetch of each hook takes the next weight, alone (a bucket full).
  CHECK(zero3_v07_gather_call_sizes(hooks, z) == std::vector<int>{1, 0, 1, 0});
  // A bucket of two weights takes both in one call, skipping the persistent bias between.
  Zero3Settings wide = z;
  wide.prefetch_bucket_size = 1.3e8;
  CHECK(zero3_v07_gather_call_sizes(hooks, wide) == std::vector<int>{2, 0, 2, 0});
  // Persistence 0 (FlexGen's hf_opt.py): the prefetch still takes each weight alone, and the
  // Linear's own hook gathers the bias it left behind, alone too.
  Zero3Settings none = z;
  none.param_persistence_threshold = 0;
  CHECK(zero3_v07_gather_call_sizes(hooks, none) == std::vector<int>{1, 1, 1, 1});
  // Without prefetch each Linear's hook gathers weight and bias in one call.
  none.prefetch_bucket_size = 0;
  CHECK(zero3_v07_gather_call_sizes(hooks, none) == std::vector<int>{2, 2, 2, 2});
  // max_live_parameters bounds the prefetch by what the gathered parameters leave.
  Zero3Settings tight = wide;
  tight.max_live_parameters = 6e7;
  CHECK(zero3_v07_gather_call_sizes(hooks, tight) == std::vector<int>{1, 0, 1, 0});
}

TEST_CASE("v0.7's gather copies depend on the call's parameters and the ranks", "[model][zero3]") {
  CHECK(zero3_v07_gather_copies(0, 1) == 0);  // persistent: never gathered
  CHECK(zero3_v07_gather_copies(1, 1) == 1);  // NCCL's one-rank copy, input to output
  CHECK(zero3_v07_gather_copies(1, 4) == 0);  // the all-gather writes the parameter's buffer
  CHECK(zero3_v07_gather_copies(2, 1) == 2);  // both torch.cat's, whole
  CHECK(zero3_v07_gather_copies(3, 4) == Approx(1.25));  // a quarter in, the whole out
}

TEST_CASE("v0.7's gather copies per tensor follow the pass's calls", "[model][zero3]") {
  Policy pol;
  LlmSpec opt;
  opt.family = "opt";
  opt.layers = 4;
  opt.hidden = 7168;  // OPT-30B's layer
  opt.heads = 56;
  opt.kv_heads = 56;
  opt.ffn = 4 * 7168;
  opt.vocab = 50272;
  opt.learned_positions = true;
  const auto modules = weight_modules(opt, pol);
  // The layer's parameters as the hooks fetch them add up to the layer.
  double layer_elements = 0;
  for (const auto& hook : zero3_module_params(opt, modules[1]))
    for (const auto& p : hook) layer_elements += p.elements;
  CHECK(layer_elements == Approx(modules[1].elements()));
  const auto index = [&](const char* name) {
    for (std::size_t i = 0; i < modules[1].tensors.size(); ++i)
      if (std::string(modules[1].tensors[i].name) == name) return i;
    FAIL("no tensor " << name);
    return std::size_t{0};
  };
  const auto layer = static_cast<std::size_t>(WeightModule::Kind::kLayer);
  Zero3Settings z;
  // DeepSpeed's defaults: every weight is gathered alone (each at least a bucket), the biases
  // and norms persist; but the position table (2048 x 7168, under a bucket) is prefetched with
  // layer 0's q_proj in one call, so one q_proj of the four layers takes 1 + 1/ranks copies.
  for (int ranks : {1, 2, 4}) {
    const auto copies = zero3_v07_tensor_gather_copies(opt, modules, z, ranks);
    const double alone = ranks == 1 ? 1.0 : 0.0, with_table = 1.0 + 1.0 / ranks;
    CHECK(copies[layer][index("q_proj")] == Approx((3 * alone + with_table) / 4));
    CHECK(copies[layer][index("ffn_down")] == alone);
    CHECK(copies[layer][index("norms_biases")] == 0);
  }
  // Without prefetch and persistence each Linear gathers weight and bias together.
  z.param_persistence_threshold = 0;
  z.prefetch_bucket_size = 0;
  const auto together = zero3_v07_tensor_gather_copies(opt, modules, z, 4);
  CHECK(together[layer][index("q_proj")] == Approx(1.25));
  CHECK(together[layer][index("norms_biases")] == Approx(1.25));
}

}  // namespace model_zero3_swap_test
